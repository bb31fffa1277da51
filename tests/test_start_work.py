"""
A started client is timed only once its own start-up work is done (`clients.start_work`): the wait
on real processes, and on the release geth, whose KZG set-up runs in the background at every start.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from balgen.clients.kinds.geth import PRESET as GETH, empty_genesis
from balgen.clients.process import ClientProcess
from balgen.clients.start_work import IDLE_SHARE, wait_until_idle
from balgen.ethereum.forks import AMSTERDAM
from balgen.plumbing.processes import TICK_MS, process_ticks
from balgen.plumbing.toolchain import pinned_geth

BUSY_THEN_IDLE = "import time\nend = time.monotonic() + {busy}\nwhile time.monotonic() < end: pass\ntime.sleep(60)"


@contextmanager
def child(busy_seconds: float) -> Iterator[subprocess.Popen[bytes]]:
    """A Python process that keeps a core busy for `busy_seconds`, then sleeps."""
    process = subprocess.Popen([sys.executable, "-c", BUSY_THEN_IDLE.format(busy=busy_seconds)])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_the_wait_ends_when_the_process_goes_idle_not_before() -> None:
    with child(busy_seconds=1.0) as process:
        settled = wait_until_idle(process.pid, limit=20)
    assert settled.idle and settled.last_share <= IDLE_SHARE
    assert 0.9 <= settled.seconds < 5, settled


def test_a_process_busy_past_the_limit_ends_the_wait_at_the_limit_and_says_so() -> None:
    with child(busy_seconds=30.0) as process:
        settled = wait_until_idle(process.pid, limit=0.8)
    # Busy, whatever share of a core it got: on a loaded machine a busy loop can get under IDLE_SHARE in a
    # window (0.08 in one run of make test), and is still not idle, as its thread waits for a core.
    assert not settled.idle, settled
    assert 0.8 <= settled.seconds < 2


def test_a_process_that_is_gone_ends_the_wait_at_once() -> None:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    assert wait_until_idle(process.pid, limit=20).seconds < 0.5


@pytest.mark.integration
def test_the_release_geth_is_idle_when_balgen_first_talks_to_it(tmp_path: Path) -> None:
    """The release runs its KZG set-up beside whatever comes first after a start; the wait outlasts it."""
    genesis = tmp_path / "genesis.json"
    genesis.write_text(json.dumps(empty_genesis(AMSTERDAM)))
    with ClientProcess(GETH, pinned_geth(), genesis, settle_limit=30, temp_parent=tmp_path) as node:
        (settled,) = node.settled
        assert node.pid is not None
        before = process_ticks(Path("/proc"), node.pid)
        time.sleep(1.0)
        after_ms = (process_ticks(Path("/proc"), node.pid) - before) * TICK_MS
        log = node.log_tail(400)
    assert "Initializing the KZG library" in log, "the release starts its set-up at every start"
    assert settled.idle, settled
    assert after_ms <= 150, f"geth used {after_ms:.0f} ms of CPU in the second after the wait: its set-up was still running"
