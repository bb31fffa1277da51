"""
docs/bal-modes.md's executionless table from a geth modes run: per test, the MGas/s of `sequential`,
`full` and `executionless`, and executionless's change against each of the two with its verdict beyond
the run's own A/A floor (`full#2` against `full`, per-round ratios), as `balgen report` judges a change.

    .venv/bin/python benchmarks/executionless_table.py out/bal-modes/geth-modes [-k 30M]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from balgen.results.comparison import LoadedRun, compare, load_runs
from balgen.results.confidence import Change, delta_text


def mode(runs: list[LoadedRun], name: str) -> LoadedRun:
    """The run of the mode called `name` in a modes run (its runs are named `<label>-<mode>`)."""
    found = [run for run in runs if run.name.rsplit("-", 1)[-1] == name]
    if len(found) != 1:
        sys.exit(f"executionless_table: no single {name!r} mode among {', '.join(run.name for run in runs)}")
    return found[0]


def shown(change: Change | None) -> str:
    """A change with its verdict: `+812.3% faster`, `-2.1% no significant change`."""
    return "-" if change is None else f"{delta_text(change)} {change.verdict.value}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a modes run with sequential, full, executionless and full again")
    parser.add_argument("-k", dest="keyword", default="", help="only tests whose id contains this text")
    args = parser.parse_args()
    runs = load_runs([args.run])
    sequential, full, executionless, again = (mode(runs, name) for name in ("sequential", "full", "executionless", "full#2"))
    ((_, _, noise),) = compare([full, again]).noise_pairs
    floor = noise.floor or 0.0
    against = {
        name: {row.test_id: row.changes[0] for row in compare([baseline, executionless], noise_threshold=floor).rows}
        for name, baseline in (("sequential", sequential), ("full", full))
    }
    speeds = [run.mgas() for run in (sequential, full, executionless)]
    print(f"A/A floor (full#2 against full, per-round ratios): {floor:.1f}% over {noise.compared} tests")
    print("| test | sequential MGas/s | full MGas/s | executionless MGas/s | executionless against sequential | against full |")
    print("|---|---:|---:|---:|---|---|")
    for test in sorted(set(speeds[2]) & set(speeds[0]) & set(speeds[1])):
        if args.keyword in test:
            figures = " | ".join(f"{speed[test]:.0f}" for speed in speeds)
            print(f"| {test} | {figures} | {shown(against['sequential'][test])} | {shown(against['full'][test])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
