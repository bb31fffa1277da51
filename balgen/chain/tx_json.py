"""
A block's signed transactions in the form t8n is given them.

t8n reads a block's transactions as one RLP list (`txs.rlp`: the list's hex
in a JSON string), but the pinned `evm t8n` decodes that list through an
`rlp.Stream` limited to 1 MiB and ignores the error when the list is larger:
a list over 1 MiB (about 9,000 simple transactions, a 300M `max` block)
silently runs zero transactions and t8n reports an empty block. Its JSON
input (go-ethereum's JSON form of each transaction) has no such limit, but
making it costs a decoding and an encoding per transaction. So a list well
under the limit is given as RLP, a larger one as JSON, written one
transaction at a time.
"""

from __future__ import annotations

import json
from itertools import chain
from pathlib import Path
from typing import Any, Callable, Iterable, TextIO

import rlp

from ..plumbing.errors import TransitionToolError
from .alloc import COMPACT_JSON

Field = tuple[str, Callable[[Any], Any]]


def _quantity(value: bytes) -> str:
    return hex(int.from_bytes(value, "big"))


def _data(value: bytes) -> str:
    return "0x" + value.hex()


def _recipient(value: bytes) -> str | None:
    return "0x" + value.hex() if value else None


def _access_list(entries: list) -> list[dict[str, Any]]:
    return [{"address": _data(address), "storageKeys": [_data(key) for key in keys]} for address, keys in entries]


def _authorizations(entries: list) -> list[dict[str, str]]:
    names = ("chainId", "address", "nonce", "yParity", "r", "s")
    return [
        {name: (_data(value) if name == "address" else _quantity(value)) for name, value in zip(names, entry)}
        for entry in entries
    ]


def _hashes(values: list) -> list[str]:
    return [_data(value) for value in values]


_COMMON_1559: tuple[Field, ...] = (
    ("chainId", _quantity), ("nonce", _quantity), ("maxPriorityFeePerGas", _quantity),
    ("maxFeePerGas", _quantity), ("gas", _quantity), ("to", _recipient), ("value", _quantity),
    ("input", _data), ("accessList", _access_list),
)
_SIGNATURE: tuple[Field, ...] = (("v", _quantity), ("r", _quantity), ("s", _quantity))

FIELDS_BY_TYPE: dict[int, tuple[Field, ...]] = {
    0: (("nonce", _quantity), ("gasPrice", _quantity), ("gas", _quantity), ("to", _recipient),
        ("value", _quantity), ("input", _data), *_SIGNATURE),
    1: (("chainId", _quantity), ("nonce", _quantity), ("gasPrice", _quantity), ("gas", _quantity),
        ("to", _recipient), ("value", _quantity), ("input", _data), ("accessList", _access_list), *_SIGNATURE),
    2: (*_COMMON_1559, *_SIGNATURE),
    3: (*_COMMON_1559, ("maxFeePerBlobGas", _quantity), ("blobVersionedHashes", _hashes), *_SIGNATURE),
    4: (*_COMMON_1559, ("authorizationList", _authorizations), *_SIGNATURE),
}
"""The RLP fields of each transaction type (EIP-2718 payloads), named as go-ethereum's JSON names them."""


def transaction_json(envelope: bytes) -> dict[str, Any]:
    """One signed transaction (its EIP-2718 envelope, or a legacy RLP list) as go-ethereum JSON."""
    tx_type = 0 if envelope[:1] >= b"\xc0" else envelope[0]
    fields = FIELDS_BY_TYPE.get(tx_type)
    if fields is None:
        raise TransitionToolError(f"transaction type {tx_type} cannot be given to t8n")
    values = rlp.decode(envelope if tx_type == 0 else envelope[1:])
    if len(values) != len(fields):
        raise TransitionToolError(f"a type-{tx_type} transaction has {len(values)} fields, not {len(fields)}")
    document: dict[str, Any] = {"type": hex(tx_type)}
    document.update((name, convert(value)) for (name, convert), value in zip(fields, values))
    return document


def envelopes(txs_rlp: bytes) -> list[bytes]:
    """The transactions of a block body's RLP list (typed ones are byte strings in it, legacy ones lists)."""
    return [item if isinstance(item, bytes) else rlp.encode(item) for item in rlp.decode(txs_rlp)]


def write_transactions_json(out: TextIO, txs: Iterable[bytes]) -> int:
    """Write `txs` as a JSON list, one transaction per line, as they come; returns how many."""
    count = 0
    out.write("[")
    for envelope in txs:
        out.write(("\n" if count == 0 else ",\n") + COMPACT_JSON.encode(transaction_json(envelope)))
        count += 1
    out.write("\n]\n")
    return count


RLP_INPUT_BYTES = 1 << 19
"""The most envelope bytes given to t8n as an RLP list: half its stream's 1 MiB limit, so the
list's headers can never take it over."""


def write_transactions_input(workdir: Path, txs: Iterable[bytes]) -> Path:
    """Write `txs` (signed envelopes) for t8n's `--input.txs` into `workdir`: as an RLP list
    (`txs.rlp`) while they are at most `RLP_INPUT_BYTES`, else as JSON (`txs.json`)."""
    envelopes = iter(txs)
    held: list[bytes] = []
    size = 0
    for envelope in envelopes:
        held.append(envelope)
        size += len(envelope)
        if size > RLP_INPUT_BYTES:
            path = workdir / "txs.json"
            with path.open("w") as out:
                write_transactions_json(out, chain(held, envelopes))
            return path
    # A typed transaction is a byte string in the list, a legacy one the list it is.
    items = [rlp.decode(envelope) if envelope[:1] >= b"\xc0" else envelope for envelope in held]
    path = workdir / "txs.rlp"
    path.write_text(json.dumps("0x" + rlp.encode(items).hex()))
    return path
