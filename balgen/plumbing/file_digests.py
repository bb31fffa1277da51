"""
SHA-256 of a tool's binary, read once per build of it rather than once per process.

balgen keys what it knows of a tool by the digest of its binary (the gas
rules a t8n implements) and checks a tool is the one installed by it (the
`node` ethereumjs runs on). Every fill process and each of its workers asked
again: 58 MB of `evm`, 56 ms each, tens of times in a test run. The digest
is kept in balgen's cache under the file's identity, which changes with any
write to the file: its device and inode, size, and modification and change
times in nanoseconds. The change time is set by the kernel on every write,
rename or metadata change and cannot be set back by a user, so a kept digest
is never that of other bytes.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .output_files import keep_text
from .toolchain import cache_root

_CHUNK = 1 << 20


def _identity(stat: os.stat_result) -> str:
    """What changes whenever the file's bytes can have: where it is, how long, when written or changed."""
    return f"{stat.st_dev}:{stat.st_ino}:{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}"


def _read_sha256(path: Path) -> str:
    """SHA-256 of the bytes of `path`, hex, read now."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """
    SHA-256 of the bytes of `path`, hex: the one kept for the file's
    identity, or read now and kept (when the file did not change while it
    was read; a cache that takes no files just means reading every time).
    """
    identity = _identity(path.stat())
    kept = cache_root() / "file-digests" / hashlib.sha256(f"{path.resolve()}|{identity}".encode()).hexdigest()[:32]
    try:
        text = kept.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        text = ""
    if len(text) == 64 and all(c in "0123456789abcdef" for c in text):
        return text
    digest = _read_sha256(path)
    if _identity(path.stat()) == identity:
        keep_text(kept, digest)
    return digest
