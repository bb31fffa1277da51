"""
How fast `balgen fill` fills the full default suite, compared with the time t8n itself needs.

Runs the real fill path (`balgen fill` through pytest and balgen's plugin,
`-n 2` workers by default) on the default suite: every family and variant,
every fill level, 30M and 60M on Amsterdam, into a temporary folder. Prints
per fixture the time its worker spent on it (building the workload, filling,
checking, tracing and writing: pytest's setup and call durations) and the
time inside t8n, then the totals. Targets: the run's wall time at most 10
minutes, and balgen's time per fixture at most 1.3 times the t8n time it
cannot avoid (summed over all fixtures, so the workers' parallelism cancels
out of the ratio).

    .venv/bin/python benchmarks/fill_speed.py [--gas-benchmark-values 30,60] [--fork Amsterdam] [-n 2]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from balgen.cli import fill_parser, pytest_arguments

TARGET_RATIO = 1.3
TARGET_WALL_SECONDS = 600


@dataclass
class Fixture:
    name: str
    txs: int = 0
    gas_used: int = 0
    worker_seconds: float = 0.0
    t8n_seconds: float = 0.0


@dataclass
class Collector:
    """A pytest plugin gathering each fixture's timings from the (xdist) reports."""

    fixtures: dict[str, Fixture] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)

    def pytest_runtest_logreport(self, report: Any) -> None:
        name = report.nodeid.rsplit("[", 1)[-1].rstrip("]")
        entry = self.fixtures.setdefault(name, Fixture(name))
        if report.when in ("setup", "call"):
            entry.worker_seconds += report.duration
        if report.failed:
            self.failed.append(name)
        for key, value in report.user_properties:
            if key == "balgen_fixture":
                entry.txs, entry.gas_used, entry.t8n_seconds = value["txs"], value["gas_used"], value["t8n_seconds"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gas-benchmark-values", default="30,60", help="gas values in millions (default 30,60)")
    parser.add_argument("--fork", default="Amsterdam", help="fork to fill for (default Amsterdam)")
    parser.add_argument("-n", dest="workers", default="2", help="pytest-xdist workers (default 2)")
    args = parser.parse_args(argv)
    output = Path(tempfile.mkdtemp(prefix="balgen-fill-speed-"))
    fill_args = fill_parser().parse_args(
        ["--fork", args.fork, "--gas-benchmark-values", args.gas_benchmark_values, "--output", str(output),
         "-n", args.workers]
    )  # the defaults of `balgen fill` for everything else
    collector = Collector()
    print(f"balgen fill speed: {args.fork}, gas values {args.gas_benchmark_values}M, -n {args.workers}")
    started = time.perf_counter()
    try:
        code = pytest.main(pytest_arguments(fill_args, []), plugins=[collector])
        wall = time.perf_counter() - started
        size = sum(path.stat().st_size for path in output.rglob("*") if path.is_file())
    finally:
        shutil.rmtree(output, ignore_errors=True)
    filled = [f for f in collector.fixtures.values() if f.t8n_seconds]
    if code != 0 or collector.failed or not filled:
        print(f"fill_speed: the fill failed (exit {code}; failed: {', '.join(collector.failed) or '-'})", file=sys.stderr)
        return 1
    print_table(filled)
    worker = sum(f.worker_seconds for f in filled)
    t8n = sum(f.t8n_seconds for f in filled)
    ratio = worker / t8n
    peak_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print()
    print(f"fixtures {len(filled)}, files {size / 2**20:,.0f} MiB, largest worker or t8n peak RSS {peak_child:,.0f} MiB")
    print(f"wall time {wall:.1f} s with -n {args.workers}: {verdict(wall <= TARGET_WALL_SECONDS)} (target <= {TARGET_WALL_SECONDS} s)")
    print(
        f"balgen {worker:.1f} s / t8n {t8n:.1f} s = {ratio:.2f}: {verdict(ratio <= TARGET_RATIO)} "
        f"(target <= {TARGET_RATIO}; summed over fixtures)"
    )
    return 0


def print_table(fixtures: list[Fixture]) -> None:
    header = f"{'fixture':<40} {'txs':>5} {'gas used':>11} {'worker s':>9} {'t8n s':>7} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    for f in sorted(fixtures, key=lambda f: f.name):
        print(
            f"{f.name:<40} {f.txs:>5} {f.gas_used:>11,} {f.worker_seconds:>9.2f} {f.t8n_seconds:>7.2f} "
            f"{f.worker_seconds / f.t8n_seconds:>6.2f}"
        )


def verdict(met: bool) -> str:
    return "PASS" if met else "MISS"


if __name__ == "__main__":
    sys.exit(main())
