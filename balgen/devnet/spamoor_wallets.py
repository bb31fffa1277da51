"""
The wallets a spamoor spammer sends from, derived as spamoor derives them from its root key and the spammer's seed.

spamoor's wallet pool (`spamoor/walletpool.go`, `prepareChildWallet`, at
43cad30) makes child wallet i's private key sha256(root private key ‖
uint64 big-endian i ‖ seed), for i below the pool's size; replay-eest sizes
the pool to the spammer's `max_wallets`. balgen's export gives every
workload file its own seed (`balgen/<file name>`, the gas value in it), so
with the root key (`spamoor run -p`) the wallets of one file's run are known
exactly, and a run of another export of the same workload, whose payloads
may send byte for byte the same transactions, is told apart by its senders.
"""

from __future__ import annotations

import hashlib

from ..model.keys import SECP256K1_ORDER, key_sender
from ..model.workload import Address
from ..plumbing.errors import BadInput

KEY_BYTES = 32


def root_key(text: str, option: str) -> bytes:
    """A private key as spamoor's `-p` takes it (64 hex digits, 0x optional); bad input names `option`, never the key."""
    digits = text.strip().removeprefix("0x")
    try:
        key = bytes.fromhex(digits)
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES or not 0 < int.from_bytes(key, "big") < SECP256K1_ORDER:
        raise BadInput(f"{option}: not a private key (64 hex digits, as spamoor's -p takes it)")
    return key


def child_key(root: bytes, seed: str, index: int) -> bytes:
    """The private key of wallet `index` of the pool seeded `seed` under the root key `root`."""
    return hashlib.sha256(root + index.to_bytes(8, "big") + seed.encode()).digest()


def child_wallet(root: bytes, seed: str, index: int) -> Address:
    """The address of wallet `index` of the pool seeded `seed` under the root key `root`."""
    return key_sender(child_key(root, seed, index)).address


def spammer_wallets(root: bytes, seed: str, count: int) -> frozenset[Address]:
    """Every wallet of a spammer's pool: `count` (its `max_wallets`) children of the root key under its seed."""
    return frozenset(child_wallet(root, seed, index) for index in range(count))
