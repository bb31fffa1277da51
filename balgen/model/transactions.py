"""
Signing and encoding of transaction specs.

Signatures are deterministic (RFC 6979), so the same spec always gives the same
bytes; that is what makes fixtures byte-identical between runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import rlp
from rlp.codec import consume_length_prefix, encode_raw, length_prefix
from rlp.sedes import CountableList, List, big_endian_int, binary
from ..ethereum.keccak import keccak
from coincurve import PrivateKey
from coincurve.context import GLOBAL_CONTEXT

from .workload import TxSpec

DYNAMIC_FEE_TX_TYPE = 2

_ACCESS_LIST = CountableList(List([binary, CountableList(binary)]))
UNSIGNED_FIELDS = (*[big_endian_int] * 5, binary, big_endian_int, binary, _ACCESS_LIST)
"""A type-2 transaction's fields before the signature, by their sedes: `rlp.encode` would
otherwise infer them for every field of every transaction (most of a fill's signing time)."""
SIGNATURE_FIELDS = (big_endian_int, big_endian_int, big_endian_int)
"""The signature's y parity, r and s, which follow the unsigned fields."""
SIGNED_LIST = List((*UNSIGNED_FIELDS, *SIGNATURE_FIELDS))


def encoded_fields(fields: list, sedes: tuple) -> bytes:
    """
    `rlp.encode(fields, List(sedes))`: each field serialized by its own sedes,
    the list encoded by `rlp.codec.encode_raw`. `List.serialize` wraps every
    call in generic checks that took most of the encoding time.
    """
    return encode_raw([field_sedes.serialize(value) for field_sedes, value in zip(sedes, fields, strict=True)])


@dataclass(frozen=True)
class SignedTx:
    """A signed type-2 transaction with the values fixtures print."""

    spec: TxSpec
    chain_id: int
    v: int
    r: int
    s: int
    raw: bytes

    @property
    def hash(self) -> bytes:
        """Transaction hash (keccak of the typed envelope)."""
        return keccak(self.raw)


def _unsigned_fields(tx: TxSpec, chain_id: int) -> list:
    return [
        chain_id,
        tx.nonce,
        tx.max_priority_fee_per_gas,
        tx.max_fee_per_gas,
        tx.gas_limit,
        tx.to if tx.to is not None else b"",
        tx.value,
        tx.data,
        [],
    ]


def envelope_size_bound(tx: TxSpec) -> int:
    """The most bytes `tx`'s signed envelope can take on any chain (a chain id of up to 8
    bytes, r and s at their full 32)."""
    return 1 + len(rlp.encode([*_unsigned_fields(tx, 2**64 - 1), 1, 2**256 - 1, 2**256 - 1]))


class SigningKey(PrivateKey):
    """
    A private key that only signs. coincurve's derives both of its public keys
    when it is made, two thirds of the cost of signing a sender's one
    transaction, and signing uses neither (a sender's address is derived once,
    in `keys.sender`).
    """

    def __init__(self, secret: bytes) -> None:
        self.secret = secret
        self.context = GLOBAL_CONTEXT


def sign(tx: TxSpec, chain_id: int) -> SignedTx:
    """Sign `tx` with its sender's key for `chain_id`."""
    unsigned = encoded_fields(_unsigned_fields(tx, chain_id), UNSIGNED_FIELDS)
    digest = keccak(bytes([DYNAMIC_FEE_TX_TYPE]) + unsigned)
    signature = SigningKey(tx.sender.key).sign_recoverable(digest, hasher=None)
    r = int.from_bytes(signature[:32], "big")
    s = int.from_bytes(signature[32:64], "big")
    v = signature[64]
    raw = bytes([DYNAMIC_FEE_TX_TYPE]) + extended_list(unsigned, encoded_fields([v, r, s], SIGNATURE_FIELDS))
    return SignedTx(spec=tx, chain_id=chain_id, v=v, r=r, s=s, raw=raw)


def extended_list(encoded: bytes, more: bytes) -> bytes:
    """The RLP list `encoded` with the items of the RLP list `more` after its own: a signed
    transaction's fields are its unsigned ones', already encoded to sign them, and the signature."""
    payload = encoded[consume_length_prefix(encoded, 0)[3] :] + more[consume_length_prefix(more, 0)[3] :]
    return length_prefix(len(payload), 0xC0) + payload


def signed_envelope(spec: TxSpec, chain_id: int, raw: bytes) -> SignedTx:
    """`spec` as `sign` signed it for `chain_id`, from its envelope `raw` (its signature read back, not made again)."""
    # Decoded without sedes, only the signature read as integers: the fill reads back every
    # transaction of every block, and deserializing each field took twice as long.
    v, r, s = (int.from_bytes(value, "big") for value in rlp.decode(raw[1:])[-3:])
    return SignedTx(spec=spec, chain_id=chain_id, v=v, r=r, s=s, raw=raw)
