"""
A node's start-up work, finished before anything is timed: after each start and restart balgen waits
until the node's process is idle.

A node that answers its Engine API may still be busy with work of its own start. go-ethereum sets up
its KZG library in a goroutine at every start (`cmd/utils/flags.go`: gokzg's FK20 tables, about 3.3
CPU-s on this project's 2-core machine, docs/replay.md). A payload timed meanwhile shares the cores
with it, and so does the client's own block timer, so the agreement check cannot see it: the first
tests after a start, and every execution of a `--cold` run (one restart before each), were timed
beside it.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path

from ..plumbing.processes import TICK_MS, process_ticks, stat_fields

START_SETTLE_LIMIT = 30.0
"""Seconds a replay waits at most for a started node to go idle (`--settle-limit`); past it the run
goes on and says so. geth's KZG set-up ends within 2-4 s on 2 cores."""

IDLE_WINDOW = 0.25
"""Seconds of one look at the node's CPU time."""

IDLE_SHARE = 0.08
"""The node is idle once a window finds it busy for at most this share of one core (geth at rest:
about 0.13 CPU-s in 5 s, 3% of a core; its KZG set-up keeps a core or two busy) and none of its threads
waiting to run: on cores other work keeps busy, a node with work left can get little CPU in a window."""


def idle_rule() -> str:
    """When a started node counts as idle, in words (results.json's `method.client_start`)."""
    return f"at most {IDLE_SHARE:.0%} of a core over {IDLE_WINDOW:g} s, and none of its threads waiting to run"


@dataclass(frozen=True)
class Settled:
    """How a started node's wait ended: after `seconds`, idle or at the limit."""

    seconds: float
    idle: bool
    last_share: float
    """The node's CPU in its last window, as a share of one core."""


def runnable_threads(proc: Path, pid: int) -> int:
    """How many of `pid`'s threads are running or waiting for a core (state R in /proc/PID/task/TID/stat)."""
    count = 0
    for task in (proc / str(pid) / "task").iterdir():
        with contextlib.suppress(FileNotFoundError):  # a thread that ended meanwhile
            count += stat_fields(task / "stat")[0] == "R"
    return count


def wait_until_idle(pid: int, limit: float, proc: Path = Path("/proc")) -> Settled:
    """
    Look at `pid`'s CPU time every `IDLE_WINDOW` until one window finds it at most `IDLE_SHARE` of a
    core busy with no thread waiting to run, or `limit` seconds have passed. A process that cannot be read (gone, or no /proc)
    ends the wait: whatever replaced it, the caller's next call finds out.
    """
    started = time.monotonic()
    share = 0.0
    try:
        before = process_ticks(proc, pid)
        while time.monotonic() - started < limit:
            time.sleep(IDLE_WINDOW)
            after = process_ticks(proc, pid)
            share = (after - before) * TICK_MS / 1000 / IDLE_WINDOW
            if share <= IDLE_SHARE and not runnable_threads(proc, pid):
                return Settled(time.monotonic() - started, True, share)
            before = after
    except (OSError, ValueError, IndexError):
        return Settled(time.monotonic() - started, True, 0.0)
    return Settled(time.monotonic() - started, False, share)
