"""
geth's own per-block timing, read from its slow-block log.

Started with `--debug.logslowblock 0`, go-ethereum (v1.17.8,
`core/blockchain_stats.go`, `ExecuteStats.logSlow`) logs one JSON object per
block it executes on its own (`newPayload` imports one block at a time), as
the message of a WARN line:

    WARN [05-10|12:00:00.123] {"level":"warn","msg":"Slow block","block":{"number":2,
        "hash":"0x…","gas_used":…,"tx_count":…},"timing":{"execution_ms":…,
        "state_read_ms":…,"state_hash_ms":…,"commit_ms":…,"total_ms":…},
        "throughput":{"mgas_per_sec":…},"state_reads":{…},"state_writes":{…},"cache":{…}}

`total_ms` is the whole `ProcessBlock` (execution, validation, state root,
database commit): what geth spends on the block once `newPayload` has
decoded it, without the Engine API's JSON decoding, block hashing and HTTP.
`execution_ms` excludes the state reads that go-ethereum counts apart;
`state_hash_ms` is the account/storage trie updates and hashing;
`commit_ms` the trie and database commits. With `--log.format json` the
same object comes as a JSON-quoted `msg`; both forms are read. The entry's
read, write and cache counters are kept too (`block_counts`).

reth logs the same fields (`reth::slow_block`), and two more lines the
reader joins to a block's entry by its hash:

- `Block added to canonical chain number=N hash=0x… elapsed=…`: the whole
  insertion of the block into reth's tree, which the slow-block timer does
  not cover entirely. On a cache miss reth first allocates a fresh
  cross-block execution cache (`--engine.cross-block-cache-size`, 4,096 MB by
  default) outside that timer: about a second in the unoptimised build,
  a few ms in the release build. It is `insert_ms`, reth's own time for
  the block that a client-side latency is compared with.
- `Executed block via BAL path elapsed=…` or `Executed block elapsed=…`
  (target `engine::tree::payload_validator`, at debug level, which the reth
  preset switches on for that target alone): whether reth executed the
  block in parallel from its access list or sequentially, `execution_path`.
  That line names no block; it belongs to the slow-block entry after it.
"""

from __future__ import annotations

import json
import re
import time
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from .block_counts import BlockCounts, block_counts

_MARKER = '{"level":"warn","msg":"Slow block"'
_QUOTED_MARKER = json.dumps(_MARKER)[:-1]

_RETH_MARKER = "reth::slow_block: Slow block "
_RETH_INSERTED = re.compile(r"Block added to (?:canonical|fork) chain number=\d+ hash=(0x[0-9a-fA-F]{64}).*? elapsed=([0-9.]+)(ns|µs|us|ms|s)\b")
_RETH_EXECUTED = re.compile(r"engine::tree::payload_validator: Executed block( via BAL path)? elapsed=")
_GETH_NO_BATCH_IO = "Executing block in parallel without BAL batch IO"
"""What balgen's geth-bal-switch logs before a block it runs on the BAL path without batch IO
(`--bal.executionmode=nobatchio`); the stock geth and the other modes never log it."""
_DURATION_MS = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}
_RETH_FIELD = re.compile(r'([a-z0-9_.]+)=("(?:[^"\\]|\\.)*"|\S+)')
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def _reth_entry(line: str) -> dict[str, Any] | None:
    """
    reth's slow-block line (`--engine.slow-block-threshold 0`, reth 2.5
    `reth::slow_block`) as geth's nested entry: its `key.sub=value` fields
    carry geth's names (`block.hash`, `timing.total_ms`, `state_reads.code`,
    `cache.account.hits`). reth logs a block twice: once executed (no
    `timing.commit_ms`: its database commit runs later, in the background),
    and again once persisted.
    """
    line = _ANSI_ESCAPE.sub("", line)
    start = line.find(_RETH_MARKER)
    if start < 0:
        return None
    entry: dict[str, Any] = {}
    for key, value in _RETH_FIELD.findall(line, start + len(_RETH_MARKER)):
        *parents, leaf = key.split(".")
        node = entry
        for parent in parents:
            child = node.setdefault(parent, {})
            if not isinstance(child, dict):
                return None
            node = child
        node[leaf] = value.strip('"')
    return entry


class ExecutionPath(StrEnum):
    """How a client says it executed a block."""

    BAL = "bal"
    """In parallel, from the block's access list."""
    SEQUENTIAL = "sequential"
    """One transaction after the other."""


def _reth_insert_times(lines: list[str]) -> dict[str, float]:
    """reth's whole insertion time (ms) of each block hash its `Block added` lines in `lines` name."""
    inserted: dict[str, float] = {}
    for line in lines:
        if (added := _RETH_INSERTED.search(_ANSI_ESCAPE.sub("", line))) is not None:
            inserted.setdefault(added[1].lower(), float(added[2]) * _DURATION_MS[added[3]])
    return inserted


def _execution_path(line: str) -> ExecutionPath | None:
    """The path an `Executed block` line of reth names; None for any other line."""
    executed = _RETH_EXECUTED.search(line)
    if executed is None:
        return None
    return ExecutionPath.BAL if executed[1] else ExecutionPath.SEQUENTIAL


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
    without_batch_io_logged: bool | None = None
    """geth: whether it logged running the block without BAL batch IO (geth-bal-switch's `nobatchio`)."""

    @property
    def own_ms(self) -> float:
        """The client's own time for the block, the most it accounts for: reth's insertion, else the total."""
        return self.total_ms if self.insert_ms is None else self.insert_ms


def _entry_object(line: str) -> dict[str, Any] | None:
    """The slow-block JSON object in a log line, in either log format, or None."""
    if "reth::slow_block" in line:
        return _reth_entry(line)
    start = line.find(_MARKER)
    decoder = json.JSONDecoder()
    try:
        if start >= 0:
            entry, _ = decoder.raw_decode(line, start)
            return entry if isinstance(entry, dict) else None
        start = line.find(_QUOTED_MARKER)
        if start >= 0:
            message, _ = decoder.raw_decode(line, start)
            entry = json.loads(message)
            return entry if isinstance(entry, dict) else None
    except (json.JSONDecodeError, TypeError):
        return None
    return None


def parse_slow_block_line(line: str) -> ClientBlockTiming | None:
    """The timing a slow-block log line carries; None for any other line."""
    entry = _entry_object(line)
    if entry is None:
        return None
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
    except (KeyError, TypeError, ValueError):
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

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
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
        return _timings(lines)

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
            entries = [
                timing for timing in self._peek() if timing.block_hash == wanted
            ]
            complete = entries and (not needs_insert or entries[0].insert_ms is not None)
            if complete or time.monotonic() >= deadline:
                self._pending = []
                return entries[0] if entries else None
            time.sleep(self.POLL_INTERVAL)

    def _peek(self) -> list[ClientBlockTiming]:
        """The entries of the pending lines, leaving the lines pending (the caller has just read them)."""
        return _timings(self._pending)


def _timings(lines: list[str]) -> list[ClientBlockTiming]:
    """The slow-block entries among `lines`, with what reth's other lines add to each."""
    inserted = _reth_insert_times(lines)
    timings = []
    path: ExecutionPath | None = None
    no_batch_io = False
    for line in lines:
        # reth's `Executed block` line and geth-bal-switch's no-batch-IO line name no block hash
        # (reth's span at that level names only the parent, geth abbreviates hashes): each belongs
        # to the slow-block entry that follows it, logged by the same insertion.
        path = _execution_path(line) or path
        no_batch_io = no_batch_io or _GETH_NO_BATCH_IO in line
        timing = parse_slow_block_line(line)
        if timing is None:
            continue
        update: dict[str, Any] = {"insert_ms": inserted.get(timing.block_hash), "execution_path": path}
        if "reth::slow_block" not in line:
            update["without_batch_io_logged"] = no_batch_io
        timings.append(timing.model_copy(update=update))
        path, no_batch_io = None, False
    return timings
