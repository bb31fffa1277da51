"""
How fast `balgen fill` fills the full default suite, compared with the time t8n itself needs.

Runs the real fill path (`balgen fill` through pytest and balgen's plugin,
`-n 2` workers by default) on the default suite: every family and variant,
every fill level, 30M and 60M on Amsterdam, into a temporary folder. Prints
per fixture the time its worker spent on it (building the workload, filling,
checking, tracing and writing: pytest's setup and call durations), the time
inside t8n, and the time of ONE t8n pass over its blocks (the setup blocks
plus the traced benchmark block: the least a fill with the traced check can
spend), with both ratios; then per family where the time goes (the fill's
stages), and the totals, with the CPU time of the one pass split between t8n's
own code and the kernel's work for it (a traced block's t8n writes a file per
transaction, in the fill's scratch folder under TMPDIR). Targets: the run's wall time at most 5 minutes, and
balgen's time at most 1.5 times one pass (summed over all fixtures, so the
workers' parallelism cancels out of the ratios).

One run can mislead: on a virtual machine the kernel's share of the one pass
moves from run to run. `--runs N` fills the suite N times back to back,
prints the details of the first, then every run's figures with their least,
median and most, and judges both targets on the worst run.

    .venv/bin/python benchmarks/fill_speed.py [--gas-benchmark-values 30,60] [--fork Amsterdam] [-n 2] [-k EXPR]
        [--runs N] [--plot fill_speed.png]

`--plot` draws the first run's family table: each family's worker seconds
stacked by stage, against its one t8n pass and 1.5 times that.

`-k` measures a part of the suite (e.g. `-k greedy`); the wall-time target
is for the whole suite.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from balgen.commands.main import fill_parser, pytest_arguments

TARGET_ONE_PASS_RATIO = 1.5
TARGET_WALL_SECONDS = 300


@dataclass
class Fixture:
    name: str
    txs: int = 0
    gas_used: int = 0
    worker_seconds: float = 0.0
    t8n_seconds: float = 0.0
    one_pass_seconds: float = 0.0
    one_pass_cpu_seconds: tuple[float, float] = (0.0, 0.0)
    stages: dict[str, float] = field(default_factory=dict)

    @property
    def family(self) -> str:
        return self.name.split("-", 1)[0]

    @property
    def build_seconds(self) -> float:
        """Worker time outside the fill's stages: building the workload (and pytest's own)."""
        return self.worker_seconds - sum(self.stages.values())


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
                entry.one_pass_seconds, entry.stages = value["one_pass_seconds"], value["stages"]
                entry.one_pass_cpu_seconds = tuple(value["one_pass_cpu_seconds"])


@dataclass(frozen=True)
class Run:
    """One fill of the suite: its wall time and the fixtures' summed times."""

    wall: float
    worker: float
    t8n: float
    one_pass: float
    one_pass_cpu: tuple[float, float]
    """t8n's own CPU time and the kernel's for it, in the one pass."""

    @property
    def own(self) -> float:
        """balgen's own worker seconds: all of them but the one pass's."""
        return self.worker - self.one_pass

    @property
    def ratio(self) -> float:
        return self.worker / self.one_pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gas-benchmark-values", default="30,60", help="gas values in millions (default 30,60)")
    parser.add_argument("--fork", default="Amsterdam", help="fork to fill for (default Amsterdam)")
    parser.add_argument("-n", dest="workers", default="2", help="pytest-xdist workers (default 2)")
    parser.add_argument("-k", dest="keyword", default=None, help="only fixtures whose name matches EXPR")
    parser.add_argument(
        "--runs", type=int, default=1, help="fills back to back (default 1); the targets are judged on the worst"
    )
    parser.add_argument(
        "--plot", type=Path, default=None, help="write a PNG of the first run's worker seconds per family and stage"
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs {args.runs}: must be 1 or more")
    if args.runs > 1 and args.workers == "0":
        parser.error("--runs: needs -n 1 or more (in-process fills after the first would reuse its caches)")
    selection = f", -k {args.keyword}" if args.keyword else ""
    print(f"balgen fill speed: {args.fork}, gas values {args.gas_benchmark_values}M, -n {args.workers}{selection}")
    runs = []
    for number in range(1, args.runs + 1):
        if args.runs > 1:
            print(f"\nrun {number} of {args.runs}")
        run = fill_once(args, details=number == 1, plot=args.plot if number == 1 else None)
        if run is None:
            return 1
        runs.append(run)
    if args.runs > 1:
        print()
        print_runs(runs)
    worst_wall = max(run.wall for run in runs)
    worst_ratio = max(run.ratio for run in runs)
    worst = "the worst of the runs" if args.runs > 1 else "the run"
    print(f"wall time {worst_wall:.1f} s ({worst}) with -n {args.workers}: "
          f"{verdict(worst_wall <= TARGET_WALL_SECONDS)} (target <= {TARGET_WALL_SECONDS} s)")
    print(f"balgen / one t8n pass {worst_ratio:.2f} ({worst}): "
          f"{verdict(worst_ratio <= TARGET_ONE_PASS_RATIO)} (target <= {TARGET_ONE_PASS_RATIO})")
    return 0


def fill_once(args: argparse.Namespace, details: bool, plot: Path | None = None) -> Run | None:
    """Fill the suite once into a temporary folder and print its figures (per fixture and family if
    `details`, drawn into `plot`); None, said why, if the fill failed."""
    output = Path(tempfile.mkdtemp(prefix="balgen-fill-speed-"))
    fill_args = fill_parser().parse_args(
        ["--fork", args.fork, "--gas-benchmark-values", args.gas_benchmark_values, "--output", str(output),
         "-n", args.workers, *(["-k", args.keyword] if args.keyword else [])]
    )  # the defaults of `balgen fill` for everything else
    collector = Collector()
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
        return None
    run = Run(
        wall=wall,
        worker=sum(f.worker_seconds for f in filled),
        t8n=sum(f.t8n_seconds for f in filled),
        one_pass=sum(f.one_pass_seconds for f in filled),
        one_pass_cpu=(sum(f.one_pass_cpu_seconds[0] for f in filled), sum(f.one_pass_cpu_seconds[1] for f in filled)),
    )
    if details:
        print_table(filled)
        print()
        print_stages(filled)
        print()
    if plot is not None:
        plot_stages(filled, plot)
    peak_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"fixtures {len(filled)}, files {size / 2**20:,.0f} MiB, largest worker or t8n peak RSS {peak_child:,.0f} MiB")
    print(f"wall time {run.wall:.1f} s with -n {args.workers}")
    print(f"balgen {run.worker:.1f} s / all t8n calls {run.t8n:.1f} s = {run.worker / run.t8n:.2f} (summed over fixtures)")
    print(f"balgen {run.worker:.1f} s / one t8n pass {run.one_pass:.1f} s = {run.ratio:.2f} (balgen's own {run.own:.1f} s)")
    print(
        f"one t8n pass: {run.one_pass_cpu[0]:.1f} s of t8n's own CPU time and {run.one_pass_cpu[1]:.1f} s of the kernel's "
        f"for it (its files: a trace per transaction) in its {run.one_pass:.1f} s"
    )
    return run


def print_runs(runs: list[Run]) -> None:
    """The runs side by side, then the least, median and most of each figure: the spread a single run hides."""
    header = f"{'run':>6} {'wall s':>8} {'worker s':>9} {'1 pass s':>9} {'t8n CPU':>8} {'kernel':>7} {'own s':>7} {'/1 pass':>8}"
    print(header)
    print("-" * len(header))
    rows = [
        (run.wall, run.worker, run.one_pass, run.one_pass_cpu[0], run.one_pass_cpu[1], run.own, run.ratio) for run in runs
    ]
    for number, row in enumerate(rows, start=1):
        print(f"{number:>6}" + _run_cells(row))
    for name, pick in (("least", min), ("median", statistics.median), ("most", max)):
        print(f"{name:>6}" + _run_cells(tuple(pick(column) for column in zip(*rows))))
    print()


def _run_cells(row: tuple[float, ...]) -> str:
    wall, worker, one_pass, user, kernel, own, ratio = row
    return f" {wall:>8.1f} {worker:>9.1f} {one_pass:>9.1f} {user:>8.1f} {kernel:>7.1f} {own:>7.1f} {ratio:>8.2f}"


def print_table(fixtures: list[Fixture]) -> None:
    header = (
        f"{'fixture':<40} {'txs':>5} {'gas used':>11} {'worker s':>9} {'t8n s':>7} {'1 pass s':>8} "
        f"{'/t8n':>5} {'/1 pass':>7}"
    )
    print(header)
    print("-" * len(header))
    for f in sorted(fixtures, key=lambda f: f.name):
        print(
            f"{f.name:<40} {f.txs:>5} {f.gas_used:>11,} {f.worker_seconds:>9.2f} {f.t8n_seconds:>7.2f} "
            f"{f.one_pass_seconds:>8.2f} {f.worker_seconds / f.t8n_seconds:>5.2f} "
            f"{f.worker_seconds / f.one_pass_seconds:>7.2f}"
        )


STAGES = ("build", "own chain", "checks", "group genesis", "shared chain", "write")


def print_stages(fixtures: list[Fixture]) -> None:
    """Worker seconds per family and stage of the fill (summed over the family's fixtures)."""
    families = sorted({f.family for f in fixtures})
    header = (
        f"{'family (worker s)':<18}" + "".join(f"{stage:>14}" for stage in STAGES)
        + f"{'total':>9}{'1 pass':>9}{'/1 pass':>8}"
    )
    print(header)
    print("-" * len(header))
    for family in families:
        row = family_stages(fixtures, family)
        one_pass = sum(f.one_pass_seconds for f in fixtures if f.family == family)
        print(
            f"{family:<18}" + "".join(f"{value:>14.1f}" for value in row)
            + f"{sum(row):>9.1f}{one_pass:>9.1f}{sum(row) / one_pass:>8.2f}"
        )


def family_stages(fixtures: list[Fixture], family: str) -> list[float]:
    """The family's worker seconds in each of `STAGES`, summed over its fixtures."""
    mine = [f for f in fixtures if f.family == family]
    return [sum(f.build_seconds if stage == "build" else f.stages.get(stage, 0.0) for f in mine) for stage in STAGES]


def plot_stages(fixtures: list[Fixture], path: Path) -> None:
    """Each family's worker seconds as a bar stacked by stage, against its one t8n pass and 1.5 times that."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    families = sorted({f.family for f in fixtures})
    stages = [family_stages(fixtures, family) for family in families]
    one_pass = [sum(f.one_pass_seconds for f in fixtures if f.family == family) for family in families]
    figure, axes = plt.subplots(figsize=(9, 4.5))
    bottoms = [0.0] * len(families)
    for index, stage in enumerate(STAGES):
        heights = [row[index] for row in stages]
        axes.bar(families, heights, bottom=bottoms, label=stage)
        bottoms = [bottom + height for bottom, height in zip(bottoms, heights)]
    positions = range(len(families))
    axes.scatter(positions, one_pass, marker="_", s=600, color="black", label="one t8n pass", zorder=3)
    axes.scatter(
        positions, [TARGET_ONE_PASS_RATIO * value for value in one_pass], marker="_", s=600, color="red",
        label=f"{TARGET_ONE_PASS_RATIO} x one pass (target)", zorder=3,
    )  # fmt: skip
    axes.set_ylabel("worker seconds (summed over the family's fixtures)")
    axes.set_title("balgen fill: where each family's time goes")
    axes.tick_params(axis="x", labelrotation=30)
    axes.legend(fontsize="small", ncols=2)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    print(f"plot: {path}")


def verdict(met: bool) -> str:
    return "PASS" if met else "MISS"


if __name__ == "__main__":
    sys.exit(main())
