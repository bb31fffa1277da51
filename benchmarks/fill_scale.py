"""
How `balgen fill` scales with the gas value: wall time and peak memory of balgen and of t8n.

Fills one fixture per fill level of one family (default `serial_chain`) at
each gas value (default 60, 300 and 1000M), each in a fresh process of its
own without xdist, so that the process's peak RSS is balgen's alone and its
children's peak is t8n's. Prints one row per fixture and, with `--plot`, a
figure of both peaks against the gas value, and balgen's growth in MB per
million gas. Target: balgen's peak RSS at most 500 MB at 1000M, and flat
across gas values (docs/design.md has the figures, docs/images/fill_scale.png
the plot, and what is still held per transaction).

    .venv/bin/python benchmarks/fill_scale.py [--family serial_chain] [--variant group2]
        [--gas-benchmark-values 60,300,1000] [--fills greedy,max,half] [--plot fill_scale.png] [--keep DIR]

`--variant` names a family's variant (`mixed_dep`'s `group2`, `interact`'s
`single_contract`, a contract set's `0.5KB`). `--keep DIR` keeps each
fixture in `DIR/<fixture>/` (e.g. for `balgen replay DIR`), and adds the
benchmark block's transaction count and gas used to its row.

A 1000M fixture takes many minutes (its traced benchmark block most of them):
run it nice'd on a shared machine, and say so when quoting its times.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

TARGET_BALGEN_MB = 500
TARGET_GAS_MILLIONS = 1000


@dataclass(frozen=True)
class Measurement:
    name: str
    gas_millions: int
    fill: str
    passed: bool
    wall_seconds: float
    balgen_mb: float
    t8n_mb: float
    txs: int | None = None
    gas_used: int | None = None


def benchmark_block_size(output: Path) -> tuple[int, int] | None:
    """The transaction count and gas used of the last block of the engine fixture in `output`, if there is one."""
    import ijson

    for path in sorted(output.glob("blockchain_tests_engine/**/*.json")):
        with open(path, "rb") as stream:
            last = None
            for _, test in ijson.kvitems(stream, ""):
                last = test["engineNewPayloads"][-1]["params"][0]
        if last is not None:
            return len(last["transactions"]), int(last["gasUsed"], 16)
    return None


def fill_one(name: str, gas_millions: int, keep: Path | None) -> dict[str, object]:
    """
    In this (fresh) process: fill fixture `name` (into `keep/name` if given)
    and report wall time and peak RSS of self and children.
    """
    import pytest

    from balgen.commands.main import fill_parser, pytest_arguments

    output = Path(tempfile.mkdtemp(prefix="balgen-fill-scale-")) if keep is None else keep / name
    args = fill_parser().parse_args(
        ["--gas-benchmark-values", str(gas_millions), "-k", name, "--output", str(output)]
    )
    started = time.perf_counter()
    try:
        code = pytest.main(pytest_arguments(args, []))
    finally:
        if keep is None:
            shutil.rmtree(output, ignore_errors=True)
    return {
        "passed": code == 0,
        "wall_seconds": time.perf_counter() - started,
        "balgen_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "t8n_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


def measure(family: str, variant: str | None, fill: str, gas_millions: int, keep: Path | None) -> Measurement:
    """One fixture filled in a child process of its own."""
    name = "-".join([family, fill, *([variant] if variant else []), f"{gas_millions}M"])
    child = [sys.executable, __file__, "--child", name, str(gas_millions), *(["--keep", str(keep)] if keep else [])]
    completed = subprocess.run(child, capture_output=True, text=True, check=False)
    lines = completed.stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1])
    except (IndexError, ValueError):
        print(f"fill_scale: {name}: the child failed: {completed.stderr.strip()[-500:]}", file=sys.stderr)
        return Measurement(name, gas_millions, fill, False, 0.0, 0.0, 0.0)
    size = benchmark_block_size(keep / name) if keep is not None else None
    txs, gas_used = size if size else (None, None)
    return Measurement(name, gas_millions, fill, **report, txs=txs, gas_used=gas_used)


def balgen_growth(measurements: list[Measurement]) -> float | None:
    """balgen's peak RSS growth from the smallest to the largest gas value, in MB per million gas."""
    if len(measurements) < 2:
        return None
    low, high = min(measurements, key=lambda m: m.gas_millions), max(measurements, key=lambda m: m.gas_millions)
    return (high.balgen_mb - low.balgen_mb) / (high.gas_millions - low.gas_millions)


def plot(measurements: list[Measurement], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4))
    for fill in sorted({m.fill for m in measurements}):
        mine = sorted((m for m in measurements if m.fill == fill and m.passed), key=lambda m: m.gas_millions)
        axes.plot([m.gas_millions for m in mine], [m.balgen_mb for m in mine], "o-", label=f"balgen, {fill}")
        axes.plot([m.gas_millions for m in mine], [m.t8n_mb for m in mine], "x--", label=f"t8n, {fill}")
    axes.axhline(TARGET_BALGEN_MB, color="grey", linewidth=0.8, label=f"balgen target {TARGET_BALGEN_MB} MB")
    axes.set_xlabel("gas value (M)")
    axes.set_ylabel("peak RSS (MB)")
    axes.set_title("balgen fill: peak memory by gas value")
    axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    print(f"plot: {path}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", default="serial_chain", help="family to fill (default serial_chain)")
    parser.add_argument("--variant", default=None, help="the family's variant, e.g. group2, single_contract, 0.5KB")
    parser.add_argument("--gas-benchmark-values", default="60,300,1000", help="gas values in millions")
    parser.add_argument("--fills", default="greedy,max,half", help="fill levels (default all three)")
    parser.add_argument("--plot", type=Path, default=None, help="write a PNG of peak RSS against gas value")
    parser.add_argument("--keep", type=Path, default=None, help="keep each fixture in DIR/<fixture>/")
    parser.add_argument("--child", nargs=2, metavar=("NAME", "GAS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(fill_one(args.child[0], int(args.child[1]), args.keep)))
        return 0
    gas_benchmark_values = [int(value) for value in args.gas_benchmark_values.split(",")]
    print(f"balgen fill scale: {args.family}, fills {args.fills}, gas values {args.gas_benchmark_values}M")
    header = f"{'fixture':<44} {'result':>6} {'wall s':>8} {'balgen MB':>10} {'t8n MB':>8} {'txs':>7} {'gas used':>14}"
    print(header)
    print("-" * len(header))
    measurements = []
    for gas in gas_benchmark_values:
        for fill in args.fills.split(","):
            m = measure(args.family, args.variant, fill, gas, args.keep)
            measurements.append(m)
            print(
                f"{m.name:<44} {'ok' if m.passed else 'FAILED':>6} {m.wall_seconds:>8.1f} {m.balgen_mb:>10.0f} "
                f"{m.t8n_mb:>8.0f} {'' if m.txs is None else m.txs:>7} {'' if m.gas_used is None else f'{m.gas_used:,}':>14}",
                flush=True,
            )
    if args.plot:
        plot(measurements, args.plot)
    for fill in args.fills.split(","):
        growth = balgen_growth([m for m in measurements if m.fill == fill and m.passed])
        if growth is not None:
            print(f"balgen peak RSS growth, {fill}: {growth:.3f} MB per million gas")
    at_target = [m for m in measurements if m.gas_millions >= TARGET_GAS_MILLIONS and m.passed]
    if at_target:
        peak = max(m.balgen_mb for m in at_target)
        verdict = "PASS" if peak <= TARGET_BALGEN_MB else "MISS"
        print(f"balgen peak RSS at {TARGET_GAS_MILLIONS}M: {peak:.0f} MB: {verdict} (target <= {TARGET_BALGEN_MB} MB)")
    return 0 if all(m.passed for m in measurements) else 1


if __name__ == "__main__":
    sys.exit(main())
