"""
The shared secret and tokens that authenticate calls to the Engine API.

Execution clients serve the Engine API only to callers that present an HS256
JSON Web Token signed with a 32-byte secret both sides read from one file, and
whose `iat` (issued-at) claim is within a minute of the client's clock. The
harness owns the client it starts, so it generates a fresh secret for each run
and signs a new token for every request: a token reused across a long import
would go stale.
"""

from __future__ import annotations

import secrets
import string
import time
from pathlib import Path

import jwt

from ..plumbing.errors import BadInput
from ..plumbing.output_files import write_text_atomically
from ..plumbing.user_files import read_user_file

JWT_SECRET_LENGTH = 32
"""Bytes of secret the Engine API authentication spec requires."""

JWT_ALGORITHM = "HS256"
"""The only signing algorithm the Engine API accepts."""

_SECRET_FILE_MODE = 0o600
"""Only the owner may read a secret that grants control of the client."""


def parse_jwt_secret(text: str, *, source: str = "JWT secret") -> bytes:
    """
    Decode the hex text of a secret file into its 32 bytes.

    Surrounding whitespace and a `0x` prefix are accepted because clients
    write files both with and without them (go-ethereum writes `0x…`,
    `openssl rand -hex 32` writes bare hex and a newline).
    """
    digits = text.strip()
    if digits[:2] in ("0x", "0X"):
        digits = digits[2:]
    if not digits:
        raise BadInput(f"{source}: empty, expected {JWT_SECRET_LENGTH * 2} hex digits")
    if any(char not in string.hexdigits for char in digits):
        raise BadInput(f"{source}: not hex, expected {JWT_SECRET_LENGTH * 2} hex digits")
    if len(digits) != JWT_SECRET_LENGTH * 2:
        raise BadInput(
            f"{source}: {len(digits)} hex digits, expected {JWT_SECRET_LENGTH * 2} "
            f"({JWT_SECRET_LENGTH} bytes)"
        )
    return bytes.fromhex(digits)


def read_jwt_secret(path: Path) -> bytes:
    """Read and check the secret stored in `path`."""
    path = Path(path)
    data = read_user_file(path, "JWT secret file")  # a FIFO or /dev/zero is refused, not read
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise BadInput(f"JWT secret file {path}: not hex text") from None
    return parse_jwt_secret(text, source=f"JWT secret file {path}")


def generate_jwt_secret_file(path: Path) -> bytes:
    """
    Write a new random secret to `path` and return it.

    The file holds bare lower-case hex and a newline, the form every client
    accepts, and is only readable by its owner.
    """
    secret = secrets.token_bytes(JWT_SECRET_LENGTH)
    write_text_atomically(Path(path), secret.hex() + "\n", mode=_SECRET_FILE_MODE)
    return secret


def make_jwt_token(secret: bytes, *, issued_at: int | None = None) -> str:
    """
    Sign a token carrying only the `iat` claim, as the Engine API requires.

    `issued_at` defaults to the current Unix time; tests pass it to check
    the clock-skew behaviour deterministically.
    """
    if len(secret) != JWT_SECRET_LENGTH:
        raise BadInput(f"JWT secret: {len(secret)} bytes, expected {JWT_SECRET_LENGTH}")
    now = int(time.time()) if issued_at is None else issued_at
    return jwt.encode({"iat": now}, secret, algorithm=JWT_ALGORITHM)


def decode_jwt_token(token: str, secret: bytes) -> dict[str, int]:
    """
    Verify `token` against `secret` and return its claims.

    The harness never needs this to talk to a client; it exists so that the
    tokens `make_jwt_token` signs can be checked the way a client checks
    them, without starting one.
    """
    claims: dict[str, int] = jwt.decode(
        token, secret, algorithms=[JWT_ALGORITHM], options={"require": ["iat"]}
    )
    return claims
