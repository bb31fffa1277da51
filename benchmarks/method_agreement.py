"""
Does balgen time the block's execution and nothing else? Per run and mode,
how the client-side `newPayload` time of each benchmark execution compares
with the client's own time for the same block (geth's slow-block
`total_ms`, reth's `Block added ... elapsed`): how many executions lie
within the agreement margin (the client's intake of the payload + 10 ms +
10% of the client's time, `results.measurements.allowed_overhead_ms`), the
overhead (client-side minus own) as median, quartiles and most, and the
intake the intake probes measured (median over executions). Warm-up, measured and discarded
executions all count: the question is the method's, not a test's.

    .venv/bin/balgen replay FIXTURES --client reth --modes sequential,full,nobatchio --output RUN
    .venv/bin/python benchmarks/method_agreement.py RUN [RUN...]

Target: on an otherwise idle machine, at least 95% of the executions of
every mode within the margin.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from balgen.results.measurements import Execution, Role
from balgen.results.schema import RESULTS_JSON, RunResult

TARGET_SHARE = 0.95


def judged_executions(run: RunResult) -> dict[str, list[Execution]]:
    """The benchmark executions with the client's own time, by mode (`-` for a run without modes)."""
    by_mode: dict[str, list[Execution]] = {}
    for test in run.tests:
        for execution in test.executions:
            if execution.role not in (Role.SETUP, Role.INTAKE) and execution.within_margin is not None:
                by_mode.setdefault(test.mode or "-", []).append(execution)
    return by_mode


def summary_line(mode: str, executions: Sequence[Execution]) -> tuple[str, bool]:
    """One mode's agreement as a line, and whether it meets the target share."""
    inside = sum(bool(e.within_margin) for e in executions)
    overheads = sorted(e.overhead_ms for e in executions if e.overhead_ms is not None)
    quartiles = statistics.quantiles(overheads, n=4) if len(overheads) > 1 else [overheads[0]] * 3
    share = inside / len(executions)
    line = (
        f"  {mode:12s} within the margin {inside:4d}/{len(executions):<4d} ({share:6.1%})   overhead ms: "
        f"median {statistics.median(overheads):7.2f}  q1 {quartiles[0]:7.2f}  q3 {quartiles[2]:7.2f}  most {overheads[-1]:8.2f}"
    )
    intakes = [e.intake_ms for e in executions if e.intake_ms is not None]
    if intakes:
        line += f"   intake ms: median {statistics.median(intakes):7.2f}  most {max(intakes):8.2f}"
    return line, share >= TARGET_SHARE


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="balgen replay output folders")
    args = parser.parse_args(argv)
    met = True
    for folder in args.runs:
        run = RunResult.model_validate_json((folder / RESULTS_JSON).read_text())
        build = (run.client_build or "").replace("\n", "; ")
        print(f"{folder}: {run.client_versions[0] if run.client_versions else run.label}  {build}")
        by_mode = judged_executions(run)
        if not by_mode:
            print("  no execution with the client's own time (a client without a block log)")
        for mode, executions in by_mode.items():
            line, ok = summary_line(mode, executions)
            met = met and ok
            print(line)
    print(f"target: at least {TARGET_SHARE:.0%} of every mode's executions within the margin: {'met' if met else 'not met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
