"""
A client's own per-block timing, read from its log as it runs.

geth and reth (each started by its preset so that it logs every block) log
one entry per block they execute, with the same fields: the block, and a
`timing` of `execution_ms`, `state_read_ms`, `state_hash_ms`, `commit_ms`
and `total_ms` (go-ethereum's `core/blockchain_stats.go` names; reth's
`reth::slow_block` target logs them under the same names), and read, write
and cache counters (`block_counts`). How each client's lines are parsed is
in its module of `balgen/clients/kinds/` (`BlockLog.timings`); this module
holds what they parse into, and the reader that follows a log file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from .block_counts import BlockCounts, block_counts

DURATION_MS = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}
"""Milliseconds per unit of a duration as Rust's `Debug` of `Duration` prints it (`12.3ms`, `850µs`)."""


class ParallelPhases(BaseModel):
    """geth's DEBUG `Parallel block execution` line of a block run on its BAL path, in milliseconds:
    the phases its slow-block entry folds together (`kinds.geth.PHASES`)."""

    model_config = ConfigDict(frozen=True)

    system_ms: float
    """The pre- and post-execution system calls."""
    txexec_ms: float
    """The transactions on the workers and their in-order gather."""
    stateapply_ms: float
    """The root goroutine applying the BAL to the canonical state (beside the transactions)."""
    statehash_ms: float
    """The root goroutine hashing that state (beside the transactions)."""
    elapsed_ms: float
    """processParallel from start to end, the wait for the root goroutine included."""


class ExecutionPath(StrEnum):
    """How a client says it executed a block."""

    BAL = "bal"
    """In parallel, from the block's access list."""
    SEQUENTIAL = "sequential"
    """One transaction after the other."""


class ExecutionlessPhases(BaseModel):
    """geth-bal-switch's own phases of a block applied from its access list without execution, in ms."""

    model_config = ConfigDict(frozen=True)

    apply_ms: float
    """`StateDB.ApplyBlockAccessList`: the list's post-values installed over the parent state (its reads included)."""
    hash_ms: float
    """`IntermediateRoot` over the applied state: trie updates and hashing, up to the root checked against the header."""
    commit_ms: float
    """The trie and database commits of the block, as the slow-block entry's `commit_ms` counts them."""


class ClientBlockTiming(BaseModel):
    """One slow-block entry: geth's own timing of a block, in milliseconds."""

    model_config = ConfigDict(frozen=True)

    block_number: int
    block_hash: str
    gas_used: int
    execution_ms: float
    state_read_ms: float
    state_hash_ms: float
    commit_ms: float
    total_ms: float
    mgas_per_sec: float
    counts: BlockCounts | None = None
    """What geth read, wrote and found in its caches (`block_counts`); None from a geth without them."""
    insert_ms: float | None = None
    """reth: its whole insertion of the block (`Block added ... elapsed`), which `total_ms` is part of."""
    execution_path: ExecutionPath | None = None
    """reth: whether it executed the block from its access list in parallel (`bal`) or sequentially."""
    parallel: ParallelPhases | None = None
    """geth: its `Parallel block execution` line (DEBUG, logged with `--log.vmodule core/state_processor_parallel.go=4`)."""
    without_batch_io_logged: bool | None = None
    """geth: whether it logged running the block without BAL batch IO (geth-bal-switch's `nobatchio`)."""
    executionless: ExecutionlessPhases | None = None
    """geth: the phases geth-bal-switch logged for the block it applied from its access list without
    executing it (`executionless`); None when it was executed."""

    @property
    def own_ms(self) -> float:
        """The client's own time for the block, the most it accounts for: reth's insertion, else the total."""
        return self.total_ms if self.insert_ms is None else self.insert_ms


def timing_of_entry(entry: dict[str, Any]) -> ClientBlockTiming | None:
    """The timing of a slow-block entry in go-ethereum's nesting (`block`, `timing`, counters); None if incomplete."""
    try:
        block, timing = entry["block"], entry["timing"]
        return ClientBlockTiming(
            block_number=int(block["number"]),
            block_hash=str(block["hash"]).lower(),
            gas_used=int(block["gas_used"]),
            execution_ms=float(timing["execution_ms"]),
            state_read_ms=float(timing["state_read_ms"]),
            state_hash_ms=float(timing["state_hash_ms"]),
            commit_ms=float(timing.get("commit_ms", 0.0)),
            total_ms=float(timing["total_ms"]),
            mgas_per_sec=float(entry.get("throughput", {}).get("mgas_per_sec", 0.0)),
            counts=block_counts(entry),
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


class SlowBlockLogReader:
    """
    Follows a client's log file from where it last stopped.

    After each `newPayload` the runner asks for the entry of the block it
    just sent. geth writes the line before it answers the call (the log is
    written synchronously by `insertChain`); reth's logger writes from its
    own thread, so a line may land just after the answer, and the reader
    waits for it a moment (`wait`). Only whole lines are consumed, a partly
    written one is kept for next time; the lines of earlier blocks are
    consumed with the block asked for.
    """

    POLL_INTERVAL = 0.005

    def __init__(self, path: Path, timings: Callable[[list[str]], list[ClientBlockTiming]]) -> None:
        self.path = Path(path)
        self._timings = timings
        self._offset = 0
        self._pending: list[str] = []

    def skip_to_end(self) -> None:
        """Ignore everything logged so far (e.g. blocks of earlier tests)."""
        try:
            self._offset = self.path.stat().st_size
        except FileNotFoundError:
            self._offset = 0
        self._pending = []

    def _read_lines(self) -> None:
        """Append the whole lines logged since the last read to the pending ones."""
        try:
            with open(self.path, "rb") as stream:
                stream.seek(self._offset)
                data = stream.read()
        except FileNotFoundError:
            return
        complete = data.rfind(b"\n") + 1
        self._offset += complete
        self._pending += data[:complete].decode("utf-8", errors="replace").splitlines()

    def read_new(self) -> list[ClientBlockTiming]:
        """Every slow-block entry logged since the last call, with what reth's other lines add to it."""
        self._read_lines()
        lines, self._pending = self._pending, []
        return self._timings(lines)

    def timing_of(self, block_hash: str, wait: float = 0.0, needs_insert: bool = False) -> ClientBlockTiming | None:
        """
        The first entry for `block_hash` among those logged since the last
        call: the execution's (reth logs a block again once persisted).
        Waits up to `wait` seconds for it to be logged, and with
        `needs_insert` for reth's insertion line too (it follows the entry).
        """
        wanted = block_hash.lower()
        deadline = time.monotonic() + wait
        while True:
            self._read_lines()
            # A client whose entry names no block (`block_hash` empty) logs it for the block just sent.
            entries = [timing for timing in self._peek() if timing.block_hash in (wanted, "")]
            complete = entries and (not needs_insert or entries[0].insert_ms is not None)
            if complete or time.monotonic() >= deadline:
                self._pending = []
                return entries[0] if entries else None
            time.sleep(self.POLL_INTERVAL)

    def _peek(self) -> list[ClientBlockTiming]:
        """The entries of the pending lines, leaving the lines pending (the caller has just read them)."""
        return self._timings(self._pending)
