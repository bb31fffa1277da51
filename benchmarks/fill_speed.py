"""
How fast balgen fills, compared with the time t8n itself needs.

Fills `serial_chain` and `keccak_chain` at every fill level and gas value
into a temporary folder, in-process through `balgen.fill.FillSession` (as the
pytest plugin does, without pytest), and prints per fixture and in total: wall
time, time inside t8n, their ratio, the number of t8n calls and peak memory
(balgen's own process, and the largest t8n child). balgen's target is that a
fill costs at most 1.3 times the t8n time it cannot avoid.

    .venv/bin/python benchmarks/fill_speed.py [--gas-benchmark-values 30,60] [--fork Amsterdam]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from balgen.chain.t8n import TransitionTool
from balgen.errors import BadInput
from balgen.fill import FillSession
from balgen.forks import fork_by_name
from balgen.generators.catalog import all_planned_workloads
from balgen.plugin import parse_gas_values
from balgen.toolchain import pinned_evm
from balgen.workload import Placement

TARGET_RATIO = 1.3


@dataclass
class Row:
    name: str
    txs: int | None
    gas_used: int | None
    wall: float
    t8n: float
    calls: int
    rss_self_mib: float
    rss_t8n_mib: float

    @property
    def ratio(self) -> float:
        return self.wall / self.t8n if self.t8n else float("inf")


def peak_rss_mib(who: int) -> float:
    """Peak resident set size in MiB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(who).ru_maxrss / 1024


def measure(session: FillSession, name: str, action) -> tuple[Row, object]:
    t8n_before, calls_before = session.t8n.busy_seconds, session.t8n.calls
    started = time.perf_counter()
    result = action()
    wall = time.perf_counter() - started
    row = Row(
        name=name,
        txs=getattr(result, "tx_count", None),
        gas_used=getattr(result, "gas_used", None),
        wall=wall,
        t8n=session.t8n.busy_seconds - t8n_before,
        calls=session.t8n.calls - calls_before,
        rss_self_mib=peak_rss_mib(resource.RUSAGE_SELF),
        rss_t8n_mib=peak_rss_mib(resource.RUSAGE_CHILDREN),
    )
    return row, result


def print_table(rows: list[Row], total: Row) -> None:
    header = (
        f"{'fixture':<26} {'txs':>5} {'gas used':>11} {'wall s':>8} {'t8n s':>8} "
        f"{'wall/t8n':>8} {'calls':>5} {'peak balgen':>11} {'peak t8n':>9}"
    )
    print(header)
    print("-" * len(header))
    for row in [*rows, None, total]:
        if row is None:
            print("-" * len(header))
            continue
        txs = f"{row.txs:>5}" if row.txs is not None else f"{'':>5}"
        gas = f"{row.gas_used:>11,}" if row.gas_used is not None else f"{'':>11}"
        print(
            f"{row.name:<26} {txs} {gas} {row.wall:>8.2f} {row.t8n:>8.2f} {row.ratio:>8.2f} "
            f"{row.calls:>5} {row.rss_self_mib:>8.0f} MiB {row.rss_t8n_mib:>5.0f} MiB"
        )
    print("(peak memory columns are the peak so far: balgen = this process, t8n = largest t8n child)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gas-benchmark-values", default="30,60", help="gas values in millions (default 30,60)")
    parser.add_argument("--fork", default="Amsterdam", help="fork to fill for (default Amsterdam)")
    args = parser.parse_args(argv)
    try:
        fork = fork_by_name(args.fork)
        gas_values = parse_gas_values(args.gas_benchmark_values)
        t8n = TransitionTool(pinned_evm())
        version = t8n.version()
    except BadInput as error:
        print(f"fill_speed: {error}", file=sys.stderr)
        return 2

    planned = all_planned_workloads(fork, gas_values, Placement.BLOCKS)
    output = Path(tempfile.mkdtemp(prefix="balgen-fill-speed-"))
    session = FillSession(t8n=t8n, output=output, all_gas_values=gas_values, planned=planned)
    print(f"balgen fill speed: {fork.name}, gas values {args.gas_benchmark_values}M, t8n: {version}")
    print()
    rows: list[Row] = []
    started = time.perf_counter()
    try:
        # The shared genesis of every engine_x fixture is built once, before the first fill.
        row, _ = measure(session, "(pre-alloc group)", lambda: session.pre_alloc_group(fork))
        rows.append(row)
        for item in planned:
            row, _ = measure(session, item.name, lambda: session.fill(item.build()))
            rows.append(row)
        wall = time.perf_counter() - started
    finally:
        session.close()
        shutil.rmtree(output, ignore_errors=True)

    total = Row(
        name="total",
        txs=sum(row.txs or 0 for row in rows),
        gas_used=sum(row.gas_used or 0 for row in rows),
        wall=wall,
        t8n=t8n.busy_seconds,
        calls=t8n.calls,
        rss_self_mib=peak_rss_mib(resource.RUSAGE_SELF),
        rss_t8n_mib=peak_rss_mib(resource.RUSAGE_CHILDREN),
    )
    print_table(rows, total)
    print()
    verdict = "PASS" if total.ratio <= TARGET_RATIO else "MISS"
    print(f"target: wall <= {TARGET_RATIO} x t8n: {verdict} (wall {total.wall:.2f} s = {total.ratio:.2f} x t8n {total.t8n:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
