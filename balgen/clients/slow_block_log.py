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
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from .block_counts import BlockCounts, block_counts

_MARKER = '{"level":"warn","msg":"Slow block"'
_QUOTED_MARKER = json.dumps(_MARKER)[:-1]

_RETH_MARKER = "reth::slow_block: Slow block "
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


class GethBlockTiming(BaseModel):
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


def parse_slow_block_line(line: str) -> GethBlockTiming | None:
    """The timing a slow-block log line carries; None for any other line."""
    entry = _entry_object(line)
    if entry is None:
        return None
    try:
        block, timing = entry["block"], entry["timing"]
        return GethBlockTiming(
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
    Follows a geth log file from where it last stopped.

    After each `newPayload` the runner asks for the entry of the block it
    just sent. geth writes the line before it answers the call (the log is
    written synchronously by `insertChain`), so the entry is there; only
    whole lines are consumed, a partly written one is kept for next time.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._offset = 0

    def skip_to_end(self) -> None:
        """Ignore everything logged so far (e.g. blocks of earlier tests)."""
        try:
            self._offset = self.path.stat().st_size
        except FileNotFoundError:
            self._offset = 0

    def read_new(self) -> list[GethBlockTiming]:
        """Every slow-block entry logged since the last call."""
        try:
            with open(self.path, "rb") as stream:
                stream.seek(self._offset)
                data = stream.read()
        except FileNotFoundError:
            return []
        complete = data.rfind(b"\n") + 1
        self._offset += complete
        lines = data[:complete].decode("utf-8", errors="replace").splitlines()
        return [timing for line in lines if (timing := parse_slow_block_line(line)) is not None]

    def timing_of(self, block_hash: str) -> GethBlockTiming | None:
        """
        The first entry for `block_hash` among those logged since the last
        call: the execution's (reth logs a block again once persisted).
        """
        wanted = block_hash.lower()
        found = [timing for timing in self.read_new() if timing.block_hash == wanted]
        return found[0] if found else None
