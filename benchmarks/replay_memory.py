"""
balgen's own peak memory replaying the largest contract set: `extcodesize-greedy-64KB-30M`.

At 30M gas the benchmark block reads about 9,300 unique 64 KB contracts: the
genesis `pre` holds 0.6 GB of code, 1.2 GB as hex text, in each fixture that
carries it (the `blockchain_test` and `blockchain_test_engine` files and the
engine_x pre-alloc group). `balgen replay` has to check that alloc before the
run and convert it into the client's genesis file; this measures what that
costs balgen itself.

For each run it starts `balgen replay FIXTURES -k NAME --warmup 0 --repeat 1`
(the pinned geth, started by balgen on 127.0.0.1) in a process of its own,
which prints its peak resident size (`VmHWM` of /proc/self/status: balgen's
process alone, not geth's, which is a child with its own), and prints the
wall time of the whole replay (discovery, genesis file, geth's start and
import, the payloads). The median and the spread (min-max) over `--runs`.

    .venv/bin/python benchmarks/replay_memory.py [FIXTURES] [--runs 3] [--keep DIR]

FIXTURES is a `balgen fill` output folder holding the test; without it the
test is filled first (`balgen fill --code-sizes 64 --setup genesis
--gas-benchmark-values 30`, about 3.7 GB on disk, 9 minutes here under load), into
`--keep DIR` or a temporary folder deleted afterwards.

Figures on this machine (2 cores, shared with other engineers' fills and
test suites while measured, so the wall times are noisy), median (min-max):

- before (main f9abd9a, every fixture file read whole with `json.load`):
  balgen peak RSS 3,573 MiB (3,573.2-3,573.5, 3 runs); wall 566 s (540-595 s)
- after (415fe9b, `pre` read one account at a time with ijson, accounts validated by
  the fixture models): balgen peak RSS 80 MiB (2 runs, the second stopped
  after the peak when geth's genesis init hit balgen's 600 s limit under
  load); wall 676 s (1 run, under about three times the load)

docs/replay.md#memory has the table.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from extcodesize_scale import FILL_AND_REPORT_PEAK as RUN_AND_REPORT_PEAK  # any balgen command, then its VmHWM

NAME = "extcodesize-greedy-64KB-30M"

def fill(output: Path) -> None:
    """Fill the test (genesis setup: its contracts are in the genesis alloc)."""
    command = [
        sys.executable, "-c", RUN_AND_REPORT_PEAK, "fill", "--code-sizes", "64", "--setup", "genesis",
        "--gas-benchmark-values", "30", "-k", NAME, "--output", str(output),
    ]  # fmt: skip
    print(f"filling {NAME} into {output} ...", flush=True)
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        sys.exit(f"fill of {NAME} failed:\n{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}")


def replay_once(fixtures: Path, scratch: Path) -> tuple[float, int]:
    """One replay: (wall seconds, balgen's peak resident bytes)."""
    results = Path(tempfile.mkdtemp(prefix="results-", dir=scratch))
    command = [
        sys.executable, "-c", RUN_AND_REPORT_PEAK, "replay", str(fixtures), "-k", NAME,
        "--warmup", "0", "--repeat", "1", "--output", str(results / "run"),
    ]  # fmt: skip
    started = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    shutil.rmtree(results, ignore_errors=True)
    if completed.returncode != 0:
        sys.exit(f"replay of {NAME} failed:\n{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}")
    peak = next(int(line.split()[1]) for line in completed.stderr.splitlines() if line.startswith("balgen-peak-kib"))
    return wall, peak * 1024


def spread(values: list[float], unit: str, scale: float = 1.0) -> str:
    """`median (min-max) unit`."""
    scaled = [value / scale for value in values]
    return f"{statistics.median(scaled):,.1f} ({min(scaled):,.1f}-{max(scaled):,.1f}) {unit}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("fixtures", nargs="?", type=Path, help="a balgen fill output holding the test")
    parser.add_argument("--runs", type=int, default=3, help="replays to measure (default 3)")
    parser.add_argument("--keep", type=Path, default=None, help="fill into this folder and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="balgen-replay-memory-") as scratch:
        fixtures = args.fixtures
        if fixtures is None:
            fixtures = args.keep or Path(scratch) / "fixtures"
            fill(fixtures)
        walls, peaks = [], []
        for run in range(args.runs):
            wall, peak = replay_once(fixtures, Path(scratch))
            walls.append(wall)
            peaks.append(peak)
            print(f"run {run + 1}: wall {wall:,.1f} s, balgen peak {peak / 2**20:,.0f} MiB", flush=True)
    print(f"{NAME}, {args.runs} replays into the pinned geth (median (min-max)):")
    print(f"  balgen peak RSS: {spread(peaks, 'MiB', 2**20)}")
    print(f"  wall time:       {spread(walls, 's')}")


if __name__ == "__main__":
    main()
