"""
What geth must count for a benchmark block, predicted from the workload
model: the client's proof that a benchmark did what its name says.

The fixture's `_info["workload"]` carries the model's numbers. Where they
determine one of geth's slow-block counters (`block_counts`), the family
declares which (`Family.predicted_counts`: `extcodesize`'s `reads.code`, as
size lookups count, from `contracts_read`; `prefetch`'s `reads.storage_slots`
from `cold_reads`; ...), and the replay checks each after every measured
execution: at least the predicted number, and at most that plus `OVERHEAD` (plus one per transaction for accounts,
each has its own sender): the rest of the block (system contracts, the
workload's own contract, the coinbase) adds a few reads and writes that do
not grow with the workload. A count outside its range fails the test with
both numbers.

geth v1.17.8 counts reads only when it executes a block sequentially. An
Amsterdam block carries its access list and geth executes it in parallel
from it (`core/state_processor_parallel.go`); its slow-block counters then
cover only the canonical state that applies the list, so reads equal writes
and code reads are 0 ("TODO(rjl) integrate it into blockchain stats").
For such blocks only the write predictions are checked; that the block was
VALID already proves its access list, which lists every account and slot
the execution touched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..clients.block_counts import BlockCounts, counter
from ..generators.catalog import family_by_name

OVERHEAD = 32
"""Reads or writes a block adds beyond its workload's own: system contracts
(EIP-4788, EIP-2935, EIP-7002, EIP-7251), the workload's contract, the
coinbase. Measured with geth v1.17.8 at 1M gas: 2 to 12 of them."""


@dataclass(frozen=True)
class Expectation:
    """One counter's range, and the model number it comes from."""

    counter: str
    """Dotted `BlockCounts` name, e.g. `reads.storage_slots`."""
    least: int
    most: int
    source: str
    """The `_info["workload"]` field, e.g. `cold_reads`."""

    @property
    def is_read(self) -> bool:
        """Whether it counts reads (not counted by geth in parallel execution)."""
        return self.counter.startswith("reads.")


def _predictions(family_name: object) -> tuple[tuple[str, str], ...]:
    """(counter, the workload field that predicts it), as the family declares them; none for a family balgen does not know."""
    try:
        return family_by_name(str(family_name)).predicted_counts
    except KeyError:
        return ()

_CODE_BYTES_OVERHEAD = 64 * 1024
"""Bytes of the few whole codes loaded besides the set's (the workload's and system contracts')."""


def _slack(counter_name: str, workload: Mapping[str, Any]) -> int:
    """How far above the prediction the counter may be (see the module docstring)."""
    if counter_name == "reads.code_bytes":
        return _CODE_BYTES_OVERHEAD
    if counter_name == "reads.accounts":
        return OVERHEAD + int(workload.get("tx_count") or 0)
    return OVERHEAD


def expected_counts(workload: Mapping[str, Any] | None, parallel_execution: bool) -> tuple[Expectation, ...]:
    """
    The predictions for a workload (`_info["workload"]`; None or another
    family: none). With `parallel_execution`, reads are left out.
    """
    if not workload:
        return ()
    expectations = []
    for counter_name, source in _predictions(workload.get("family")):
        value = workload.get(source)
        if not isinstance(value, int) or isinstance(value, bool):
            continue
        expectation = Expectation(counter_name, value, value + _slack(counter_name, workload), source)
        if not (parallel_execution and expectation.is_read):
            expectations.append(expectation)
    return tuple(expectations)


def count_mismatches(expectations: Sequence[Expectation], counts: BlockCounts) -> list[str]:
    """One message per counter outside its range, with both numbers."""
    problems = []
    for expectation in expectations:
        found = counter(counts, expectation.counter)
        if found is None or not expectation.least <= found <= expectation.most:
            problems.append(
                f"geth counted {expectation.counter} = {found:,}, the workload predicts "
                f"{expectation.least:,} to {expectation.most:,} ({expectation.source} = {expectation.least:,})"
                if found is not None
                else f"geth logged no {expectation.counter}"
            )
    return problems
