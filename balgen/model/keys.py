"""
Deterministic keys and addresses.

Every account a workload uses is derived from the workload's name, a role and
an index, so that the same workload always has the same accounts, and two
workloads never share one (which lets many workloads share one genesis).
"""

from __future__ import annotations

from functools import lru_cache

import rlp
from coincurve import PublicKey

from ..ethereum.keccak import keccak
from .workload import Address, Sender

SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def derived_secret(seed: str, role: str, index: int) -> bytes:
    """A private key from (seed, role, index); always in the curve's range."""
    counter = 0
    while True:
        digest = keccak(f"balgen/{seed}/{role}/{index}/{counter}".encode())
        if 0 < int.from_bytes(digest, "big") < SECP256K1_ORDER:
            return digest
        counter += 1


@lru_cache(maxsize=1 << 16)
def sender(seed: str, role: str, index: int = 0) -> Sender:
    """
    A deterministic funded-account identity. Cached: generators name the same
    senders again each time they regenerate a block's transactions, and the
    public key is most of the cost.
    """
    return key_sender(derived_secret(seed, role, index))


def key_sender(secret: bytes) -> Sender:
    """The account of a private key: its address is the last 20 bytes of the public key's keccak."""
    public = PublicKey.from_secret(secret).format(compressed=False)[1:]
    return Sender(key=secret, address=keccak(public)[12:])


def derived_address(seed: str, role: str, index: int = 0) -> Address:
    """A deterministic address for an account placed directly in genesis."""
    return keccak(f"balgen-address/{seed}/{role}/{index}".encode())[12:]


def create_address(deployer: Address, nonce: int) -> Address:
    """Address of the contract `deployer` creates with `nonce` (CREATE)."""
    return keccak(rlp.encode([deployer, nonce]))[12:]
