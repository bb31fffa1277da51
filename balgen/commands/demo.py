"""
`make demo`: fill the default suite, verify it, replay it against a local geth, show the result.

The demo is the shortest proof that the fixtures are real and the shortest
tour of the main commands: `balgen fill` writes the default suite, `balgen
verify fixtures/blockchain_tests` runs every `blockchain_test` through three
EVMs (geth's, revm's and ethereumjs, which also checks every BAL against its
own execution; `VERIFIED` says why only those files), but not
the engine import into geth: the replay after it is that import (the same
geth, payloads and checks: `verify/engine_import.py` is a replay with one
execution), so it is not done twice. `balgen replay`
sends every `blockchain_test_engine_x` group to the pinned
geth on 127.0.0.1 through the Engine API, checks every step (genesis hash,
every status, the head at `lastblockhash`, every rollback, no known block
resent) and measures the benchmark payload of each fixture (one warm-up and
`DEMO_REPEAT` measured executions), ending with the summary table, the time each
phase took (wall and CPU: on a shared machine the CPU seconds are what compare) and how fast the machine
ran Python just then (`plumbing.machine_speed`: the same demo costs a fifth to a half more CPU when it is slow).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..fixtures.models import BlockchainFixture
from ..plumbing.machine_speed import reference_line
from ..plumbing.processes import cpu_seconds
from .fill import run_fill
from .replay import run_replay
from ..replay.outputs import default_output
from .verify import run_verify

OUTPUT = Path("fixtures")

VERIFIED = OUTPUT / BlockchainFixture.fixture_format.folder
"""What the demo's `balgen verify` reads: the `blockchain_test` files, the only format that geth's evm, revme
and ethereumjs judge. The engine formats are judged by the engine import alone, which the demo leaves to its
replay: reading them as well (two thirds of the fixtures' bytes, through balgen's JSON event loop, before any
verifier starts) judged nothing and kept one core busy and the other idle for about 15 CPU seconds."""

DEMO_REPEAT = 3
"""Measured executions per fixture in the demo's replay (`balgen replay`'s default is 5). Where the replay's
CPU goes (2026-11-29, the default suite, geth's rusage per process): geth about 84% of it, nearly all
executing the setup, intake, warm-up and measured payloads (each node start is about 3 CPU-s, most of it
go-ethereum's KZG set-up, and since the contract sets joined the shared group there is one node, not 19:
`fill.pre_alloc_groups.joins_shared_group`); `geth init` 5%; balgen itself 10% (reading the fixtures,
checking each payload, the features of each block). The measured executions' `newPayload` calls are 42 of the 77 s
that geth spent answering payloads in the quiet demo, so each execution left out is about a tenth of
the phase; three still give a median that one outlier cannot move and the p5-p95 spread the summary
prints, and every check (each payload VALID, the head, the agreement of each execution with geth's own
block time) is the same."""


FILL_SCRATCH = Path("/dev/shm")
"""Where the demo's fill keeps its scratch files, when it is a writable folder with `FILL_SCRATCH_FREE` bytes
free: t8n's inputs and outputs and a trace file per transaction (some 70,000 files made, read and removed),
none of which the fixtures depend on. On a RAM-backed file system they cost no disk: on this 2-core machine
under load (2026-11-29) the fill took 146 CPU-s (15 of them system) and 99 s instead of 190 (40) and 387 s
with the scratch on the disk, byte-identical fixtures; the scratch peaked at 81 MB. The fixtures are written
to `OUTPUT` as ever, and the verify and replay phases keep the usual temporary folder: a client's datadir
there is what the replay measures."""

FILL_SCRATCH_FREE = 1 << 30


@contextlib.contextmanager
def fill_scratch() -> Iterator[None]:
    """The fill's temporary files (its own and its xdist workers', through `TMPDIR`) in `FILL_SCRATCH` while the block runs."""
    try:
        usable = os.access(FILL_SCRATCH, os.W_OK | os.X_OK) and shutil.disk_usage(FILL_SCRATCH).free >= FILL_SCRATCH_FREE
    except OSError:
        usable = False
    if not usable:
        yield
        return
    previous_env, previous_dir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"], tempfile.tempdir = str(FILL_SCRATCH), str(FILL_SCRATCH)
    try:
        yield
    finally:
        tempfile.tempdir = previous_dir
        if previous_env is None:
            del os.environ["TMPDIR"]
        else:
            os.environ["TMPDIR"] = previous_env


def run_fill_in_scratch(argv: list[str]) -> int:
    """`balgen fill` with its scratch in `FILL_SCRATCH` (see there)."""
    with fill_scratch():
        return run_fill(argv)


@dataclass(frozen=True)
class PhaseTime:
    """How long one phase of the demo took: wall seconds, and CPU seconds (user + system) of balgen and its children."""

    name: str
    wall: float
    cpu: float
    exit_code: int


def timed(name: str, phase: Callable[[], int]) -> PhaseTime:
    """Run `phase` and measure it."""
    wall, cpu = time.monotonic(), cpu_seconds()
    code = phase()
    return PhaseTime(name, time.monotonic() - wall, cpu_seconds() - cpu, code)


def phase_table(phases: list[PhaseTime]) -> Table:
    """Each phase's wall and CPU time, and the total."""
    table = Table(title="demo: time per phase", title_justify="left")
    for column in ("phase", "wall", "CPU (user+sys)"):
        table.add_column(column, justify="left" if column == "phase" else "right")
    for phase in phases:
        table.add_row(phase.name, _minutes(phase.wall), _minutes(phase.cpu))
    table.add_row("total", _minutes(sum(p.wall for p in phases)), _minutes(sum(p.cpu for p in phases)), style="bold")
    return table


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:04.1f} s"


def main() -> int:
    console = Console(width=max(110, Console().width))
    steps: list[tuple[str, str, Callable[[], int]]] = [
        ("fill", "[bold]1/3 filling the default suite[/] (balgen fill -n 2)",
         lambda: run_fill_in_scratch(["--output", str(OUTPUT), "-n", "2"])),
        ("verify", "[bold]2/3 verifying it[/] (balgen verify: geth's evm blocktest, revm's revme, ethereumjs; "
         "the engine import into geth is step 3)",
         lambda: run_verify([str(VERIFIED), "--without", "engine"], console=console)),
        ("replay", "[bold]3/3 replaying it against geth[/] (pinned v1.17.10, 127.0.0.1, one node per genesis group: "
         "the engine verifier, every payload VALID and the head at lastblockhash, then measured)",
         lambda: run_replay([str(OUTPUT / "blockchain_tests_engine_x"), "--label", "demo", "--repeat", str(DEMO_REPEAT), "--output", str(default_output("demo"))])),
    ]  # fmt: skip
    phases: list[PhaseTime] = []
    for name, heading, step in steps:
        console.print(heading)
        phases.append(timed(name, step))
        if phases[-1].exit_code != 0:
            console.print(f"[red]{name} failed (exit {phases[-1].exit_code})[/]")
            break
    console.print(phase_table(phases))
    console.print(reference_line(), highlight=False)
    return phases[-1].exit_code


if __name__ == "__main__":
    sys.exit(main())
