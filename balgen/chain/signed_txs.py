"""
A block's signed transactions, kept in a file rather than in memory.

A billion-gas block has tens of thousands of signed transactions, and a fill
needs them several times after building the block (its RLP and size, each
fixture format's transactions, the shared-genesis chain). Each is signed
once, as its block is built, and its envelope appended to a file in the
block's folder; every later pass reads the envelopes back in order. The
blockchain fixture also prints each transaction's fields, so iterating the
file pairs each envelope with its spec, made again by the workload's block.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Iterator, Sequence

from ..model.transactions import SignedTx, sign, signed_envelope
from ..model.workload import Regenerated, TxSpec

ENVELOPE_LENGTH = struct.Struct(">I")
"""The length written before each envelope in the file."""


class SignedTxFile(Regenerated[SignedTx]):
    """The signed transactions of one block: envelopes in `path`, specs in `specs`."""

    def __init__(self, path: Path, specs: Sequence[TxSpec], chain_id: int) -> None:
        super().__init__(len(specs), self._signed)
        self._path = path
        self._specs = specs
        self._chain_id = chain_id

    @classmethod
    def signing(cls, specs: Sequence[TxSpec], chain_id: int, path: Path) -> SignedTxFile:
        """Sign every spec for `chain_id`, one at a time, into the file `path`."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as out:
            for spec in specs:
                raw = sign(spec, chain_id).raw
                out.write(ENVELOPE_LENGTH.pack(len(raw)))
                out.write(raw)
        return cls(path, specs, chain_id)

    def envelopes(self) -> Iterator[bytes]:
        """The signed envelopes, in block order, read one at a time."""
        with self._path.open("rb") as stream:
            while header := stream.read(ENVELOPE_LENGTH.size):
                (length,) = ENVELOPE_LENGTH.unpack(header)
                yield stream.read(length)

    def _signed(self) -> Iterator[SignedTx]:
        for spec, raw in zip(self._specs, self.envelopes(), strict=True):
            yield signed_envelope(spec, self._chain_id, raw)


def raw_envelopes(txs: Sequence[SignedTx]) -> Iterator[bytes]:
    """The envelopes of `txs`, read from their file when they are in one (no spec made again)."""
    if isinstance(txs, SignedTxFile):
        return txs.envelopes()
    return (tx.raw for tx in txs)
