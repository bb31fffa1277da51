"""
Sibling variants of the benchmark block: the same transactions on the same
parent, with a different `extraData`, so a block hash no client has seen.

Why: a measured execution must be the block's execution and nothing else.
Re-sending the same block needs a rollback in between (a client answers a
block it knows with VALID at once), and a rollback costs more than it
seems: restarting reth from a datadir copy makes its next `newPayload` pay
for rebuilding the 4 GiB cross-block execution cache it allocates on a
cache miss, which reth's own block timing leaves out (docs/replay.md, "The
method: sibling blocks, and the client's own time as the check"). A sibling needs no rollback: the head stays at
the parent, every sibling is a new block on it, and the client executes it
in full on the parent's state, as it would a competing block at that height.
Nothing but `extraData`, and so the hash, differs from the fixture's block:
execution, state root, receipts and access list are the same.

A misnamed sibling (`SiblingBlocks.misnamed`) claims a hash that is not its
own: the client refuses it after decoding and hashing it, before executing,
and the time of that refusal is its intake of the payload (the agreement
check's allowance for what comes before the client's own block timer).

The header is rebuilt from the Engine API payload with balgen's own header
model (`chain.header.Header`), and the rebuilt original must hash to the
payload's `blockHash` before a variant is made: a payload shape this code
does not know fails loudly instead of producing a block the client rejects.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import rlp

from ..chain.header import Header
from ..chain.ordered_trie import ordered_trie_root
from ..ethereum.hextypes import data_hex
from ..ethereum.keccak import keccak
from .engine_payloads import PayloadDirective

MAX_EXTRA_DATA = 32
"""Bytes of `extraData` every client accepts (the yellow paper's limit)."""
VARIANT_MARKER = b"balgen sibling "
"""What a variant's `extraData` starts with, followed by its number: readable in a client's log."""
INTAKE_MARKER = b"balgen intake "
"""What an intake probe's `extraData` starts with, followed by its number."""
INTAKE_REFUSAL = "BlockException.INVALID_BLOCK_HASH"
"""What a client must answer an intake probe with: INVALID for its block hash, nothing later."""


class UnknownPayloadShape(Exception):
    """The payload's header could not be rebuilt to its own `blockHash`; no variant can be made."""


class ClaimsAnotherHash(UnknownPayloadShape):
    """
    The header the payload describes hashes to another hash than its
    `blockHash`: a client refuses it at the hash, before a block exists
    (a payload whose header commits to another access list than it carries).
    """


def _bytes(value: Any) -> bytes:
    return bytes.fromhex(str(value)[2:])


def _int(value: Any) -> int:
    return int(str(value), 16)


def _withdrawal_rlp(withdrawal: Mapping[str, Any]) -> bytes:
    """One EIP-4895 withdrawal as its trie value: rlp([index, validator, address, amount])."""
    return rlp.encode(
        [
            _int(withdrawal["index"]),
            _int(withdrawal["validatorIndex"]),
            _bytes(withdrawal["address"]),
            _int(withdrawal["amount"]),
        ]
    )


def requests_hash(requests: Sequence[str]) -> bytes:
    """EIP-7685's commitment to `executionRequests` (each `type ++ data`, the empty ones left out)."""
    return hashlib.sha256(b"".join(hashlib.sha256(_bytes(request)).digest() for request in requests)).digest()


def payload_header(version: int, params: Sequence[Any]) -> Header:
    """
    The block header an `engine_newPayloadV{version}` call's `params`
    describe: the payload's fields, the transactions and withdrawals roots
    computed, and from V3 the beacon root, from V4 the requests hash, from
    V5 the access list hash and slot number. The Engine API version, not a
    fork name, decides which fields a header has: it is what the client
    reads the payload with.
    """
    payload = params[0]
    fields: dict[str, Any] = {
        "parent_hash": _bytes(payload["parentHash"]),
        "fee_recipient": _bytes(payload["feeRecipient"]),
        "state_root": _bytes(payload["stateRoot"]),
        "transactions_trie": ordered_trie_root([_bytes(tx) for tx in payload["transactions"]]),
        "receipts_root": _bytes(payload["receiptsRoot"]),
        "logs_bloom": _bytes(payload["logsBloom"]),
        "number": _int(payload["blockNumber"]),
        "gas_limit": _int(payload["gasLimit"]),
        "gas_used": _int(payload["gasUsed"]),
        "timestamp": _int(payload["timestamp"]),
        "extra_data": _bytes(payload["extraData"]),
        "prev_randao": _bytes(payload["prevRandao"]),
        "base_fee_per_gas": _int(payload["baseFeePerGas"]),
    }
    if version >= 2:
        fields["withdrawals_root"] = ordered_trie_root([_withdrawal_rlp(w) for w in payload["withdrawals"]])
    if version >= 3:
        fields["blob_gas_used"] = _int(payload["blobGasUsed"])
        fields["excess_blob_gas"] = _int(payload["excessBlobGas"])
        fields["parent_beacon_block_root"] = _bytes(params[2])
    if version >= 4:
        fields["requests_hash"] = requests_hash(params[3])
    if version >= 5:
        fields["block_access_list_hash"] = keccak(_bytes(payload["blockAccessList"]))
        fields["slot_number"] = _int(payload["slotNumber"])
    return Header(**fields)


def variant_extra_data(original: bytes, number: int, marker: bytes = VARIANT_MARKER) -> bytes:
    """
    `extraData` of variant `number` (1, 2, ...): the marker and the number,
    never the original's (the original's own bytes would give its own hash).
    """
    marked = marker + str(number).encode()
    if marked == original:
        marked = b"~" + marked
    if len(marked) > MAX_EXTRA_DATA:
        raise ValueError(f"variant {number}: extraData {marked!r} is over {MAX_EXTRA_DATA} bytes")
    return marked


@dataclass(frozen=True)
class SiblingBlocks:
    """The benchmark payload and its sibling variants, numbered from 1 (0 is the fixture's own block)."""

    original: PayloadDirective
    header: Header

    @classmethod
    def of(cls, directive: PayloadDirective) -> SiblingBlocks:
        """The variants of `directive`'s block; `UnknownPayloadShape` if its header cannot be rebuilt."""
        try:
            header = payload_header(directive.new_payload_version, directive.params)
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise UnknownPayloadShape(f"{directive.method} params: {type(error).__name__} {error}") from None
        rebuilt = data_hex(header.hash)
        if rebuilt != directive.block_hash:
            raise ClaimsAnotherHash(
                f"the header rebuilt from the {directive.method} payload hashes to {rebuilt}, "
                f"not to its blockHash {directive.block_hash}"
            )
        return cls(directive, header)

    def variant(self, number: int) -> PayloadDirective:
        """Variant `number` (0: the fixture's block itself): new `extraData`, new `blockHash`."""
        if number == 0:
            return self.original
        header = self.header.with_values(extra_data=variant_extra_data(self.header.extra_data, number))
        return self._sent_as(header, data_hex(header.hash))

    def misnamed(self, number: int) -> PayloadDirective:
        """
        Intake probe `number` (1, 2, ...): a sibling with `extraData` `balgen intake N`, sent under a
        `blockHash` that is not its hash (the hash of its hash). A client decodes the payload and
        rebuilds and hashes its block as it does for every payload, then refuses it at the hash,
        before executing anything (go-ethereum's `ExecutableDataToBlock`, reth's
        `ensure_well_formed_payload`). The time of that refusal is the client's intake of the
        payload: the part of a `newPayload` before, and outside, the client's own block timer.
        """
        header = self.header.with_values(extra_data=variant_extra_data(self.header.extra_data, number, INTAKE_MARKER))
        return replace(
            self._sent_as(header, data_hex(keccak(header.hash))), validation_error=INTAKE_REFUSAL, error_code=None
        )

    def _sent_as(self, header: Header, block_hash: str) -> PayloadDirective:
        """The benchmark payload with `header`'s `extraData`, claiming `block_hash`."""
        # Only the payload's two top-level fields change: the transactions and the list are shared, not copied.
        payload = {**self.original.params[0], "extraData": data_hex(header.extra_data), "blockHash": block_hash}
        return replace(self.original, params=[payload, *self.original.params[1:]], block_hash=block_hash)
