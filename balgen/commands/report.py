"""
`balgen report RUN...`: compare replay runs, the first one as baseline.

Shows, in the terminal and in `report.md`, the per-run summary against the
baseline (tests significantly faster and slower, average / P95 / P99 gain
and regression, aggregate MGas/s, and the noise floor of an A/A pair), the
worst significant regressions, the measured speedup against each fixture's
ideal parallel bound, and every test's MGas/s per run with its delta, 99%
interval and verdict; `report.png` charts the per-test MGas/s and deltas
with their intervals. See `comparison` and `confidence` for the figures.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: the chart is only ever written to a file

import matplotlib.pyplot as plt  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from ..plumbing.command_line import BAD_INPUT_EXIT_CODE, OneLineParser, wide_console  # noqa: E402
from ..plumbing.errors import BadInput  # noqa: E402
from ..plumbing.output_files import check_writable, write_text_atomically  # noqa: E402
from ..plumbing.printable import escaped  # noqa: E402
from ..results.comparison import Comparison, DeltaSummary, compare, load_runs  # noqa: E402
from ..results.confidence import COMPARISON_CONFIDENCE, Change  # noqa: E402

REPORT_MD = "report.md"
REPORT_PNG = "report.png"


def report_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="balgen report",
        description="Compare balgen replay runs (the first is the baseline): MGas/s per test, deltas, regressions.",
    )
    parser.add_argument("runs", type=Path, nargs="+", help="run folders (or their results.json)")
    parser.add_argument("--output", type=Path, default=None, help="folder for report.md and report.png (default results/report-<timestamp>/)")
    parser.add_argument("--worst", type=int, default=10, help="how many worst regressions to list (default 10)")
    parser.add_argument(
        "--noise-threshold",
        type=float,
        default=0.0,
        help="percent a change's whole interval must lie beyond to count (default 0; use an A/A pair's noise floor)",
    )
    return parser


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f}%"


def _mgas(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _interval(change: Change | None) -> str:
    if change is None or change.low != change.low:  # NaN: too few executions
        return "-"
    return f"{change.low:+.1f}% to {change.high:+.1f}%"


def _verdict(change: Change | None) -> str:
    return "-" if change is None else change.verdict.value


def summary_cells(summary: DeltaSummary) -> list[str]:
    """One summary row: the report's distribution-table columns."""
    return [
        summary.name,
        _mgas(summary.baseline_aggregate_mgas),
        _mgas(summary.aggregate_mgas),
        f"{summary.faster}/{summary.compared}",
        _pct(summary.average_gain),
        _pct(summary.p95_gain),
        _pct(summary.p99_gain),
        f"{summary.slower}/{summary.compared}",
        _pct(summary.average_regression),
        _pct(summary.p95_regression),
        _pct(summary.p99_regression),
    ]


SUMMARY_COLUMNS = (
    "run",
    "baseline MGas/s",
    "MGas/s",
    "faster",
    "avg gain",
    "P95 gain",
    "P99 gain",
    "slower",
    "avg regression",
    "P95 regression",
    "P99 regression",
)
WORST_COLUMNS = ("test", "run", "baseline MGas/s", "MGas/s", "delta")
SPEEDUP_COLUMNS = ("test", "run", "ideal speedup", "measured speedup", "share of the bound", "verdict")
NOISE_COLUMNS = ("run", "tests compared", "called faster or slower", "noise floor (P95 of |Δ|)")


def _test_columns(comparison: Comparison) -> list[str]:
    columns = ["test", f"{comparison.names[0]} MGas/s"]
    for name in comparison.names[1:]:
        columns += [f"{name} MGas/s", f"{name} Δ", f"{name} {COMPARISON_CONFIDENCE:.0%} interval", f"{name} verdict"]
    return columns


def _test_cells(comparison: Comparison) -> list[list[str]]:
    rows = []
    for row in comparison.rows:
        cells = [row.test_id, _mgas(row.mgas[0])]
        changes = row.changes or (None,) * len(row.deltas)
        for mgas, delta, change in zip(row.mgas[1:], row.deltas, changes, strict=True):
            cells += [_mgas(mgas), _pct(delta), _interval(change), _verdict(change)]
        rows.append(cells)
    return rows


def _speedup_cells(comparison: Comparison) -> list[list[str]]:
    return [
        [s.test_id, s.name, f"{s.bound:.2f}x", f"{s.speedup:.2f}x", f"{s.share:.0%}", s.change.verdict.value]
        for s in comparison.speedups
    ]


def _noise_cells(comparison: Comparison) -> list[list[str]]:
    return [
        [s.name, str(s.noise.compared), f"{s.noise.significant}/{s.noise.compared}",
         "-" if s.noise.floor is None else f"{s.noise.floor:.1f}%"]
        for s in comparison.summaries
        if s.noise is not None
    ]  # fmt: skip


def _worst_cells(comparison: Comparison) -> list[list[str]]:
    return [
        [r.test_id, r.name, _mgas(r.baseline_mgas), _mgas(r.mgas), _pct(r.delta)]
        for r in comparison.worst
    ]


def _sections(comparison: Comparison) -> list[tuple[str, Sequence[str], list[list[str]]]]:
    """(title, columns, rows) of each table, shared by the terminal and Markdown."""
    baseline = comparison.names[0]
    sections: list[tuple[str, Sequence[str], list[list[str]]]] = [
        (f"Against the baseline ({baseline}), significant changes only", SUMMARY_COLUMNS,
         [summary_cells(s) for s in comparison.summaries]),
    ]  # fmt: skip
    if noise := _noise_cells(comparison):
        sections.append(("A/A noise floor (runs of the same build as the baseline)", NOISE_COLUMNS, noise))
    sections.append(("Worst significant regressions", WORST_COLUMNS, _worst_cells(comparison)))
    if speedups := _speedup_cells(comparison):
        sections.append(("Measured speedup against the dependency graph's bound", SPEEDUP_COLUMNS, speedups))
    sections.append(
        ("MGas/s per test (median of the measured executions)", _test_columns(comparison), _test_cells(comparison))
    )
    return sections


def rich_tables(comparison: Comparison) -> list[Table]:
    """The report as terminal tables."""
    tables = []
    for title, columns, rows in _sections(comparison):
        table = Table(title=title)
        for index, column in enumerate(columns):
            table.add_column(column, justify="left" if index == 0 else "right")
        for cells in rows:
            table.add_row(*(_colored(cell) for cell in cells))
        tables.append(table)
    return tables


def _colored(cell: str) -> str:
    if cell.endswith("%") and cell[0] in "+-":
        return f"[{'green' if cell[0] == '+' else 'red'}]{cell}[/]"
    return cell


def markdown(comparison: Comparison, sources: Sequence[Path], noise_threshold: float = 0.0) -> str:
    """The report as a Markdown document."""
    lines = ["# balgen replay comparison", ""]
    lines += [f"- `{name}`: `{source}`" for name, source in zip(comparison.names, sources, strict=True)]
    lines += [
        "",
        f"Baseline: `{comparison.names[0]}`. Δ is the change in median MGas/s against it; its {COMPARISON_CONFIDENCE:.0%} "
        "interval is a bootstrap of the ratio of medians over every measured execution of both runs, and a test "
        f"is faster or slower only when the whole interval lies beyond ±{noise_threshold:g}% (docs/replay.md).",
        "",
    ]
    lines += [f"![MGas/s per test and deltas]({REPORT_PNG})", ""]
    for title, columns, rows in _sections(comparison):
        lines += [f"## {title}", ""]
        lines.append("| " + " | ".join(columns) + " |")
        lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(columns))) + "|")
        lines += ["| " + " | ".join(cells) + " |" for cells in rows]
        if not rows:
            lines.append("| " + " | ".join("-" for _ in columns) + " |")
        lines.append("")
    return "\n".join(lines)


def write_chart(comparison: Comparison, path: Path) -> None:
    """MGas/s per test per run (left) and each run's delta against the baseline (right)."""
    rows = sorted(comparison.rows, key=lambda row: (row.deltas[0] is None, row.deltas[0] or 0.0))
    labels = [row.test_id for row in rows]
    height = min(300.0, 1.5 + 0.28 * len(rows) * max(1, len(comparison.names) / 2))
    figure, (left, right) = plt.subplots(1, 2, figsize=(14, height), sharey=True)
    bar = 0.8 / len(comparison.names)
    positions = range(len(rows))
    for index, name in enumerate(comparison.names):
        values = [row.mgas[index] or 0.0 for row in rows]
        left.barh([p + index * bar for p in positions], values, height=bar, label=name)
    left.invert_yaxis()
    left.set_xlabel("MGas/s (median)")
    left.legend(fontsize=8)
    ticks = [p + bar * (len(comparison.names) - 1) / 2 for p in positions]
    left.set_yticks(ticks, labels, fontsize=7)
    others = len(comparison.names) - 1
    delta_bar = 0.8 / others
    for index, name in enumerate(comparison.names[1:]):
        values = [row.deltas[index] or 0.0 for row in rows]
        changes = [row.changes[index] if row.changes else None for row in rows]
        # The interval as an error bar around the delta (none where there is no interval).
        errors = [
            [v - c.low if c is not None and c.low == c.low else 0.0 for v, c in zip(values, changes, strict=True)],
            [c.high - v if c is not None and c.high == c.high else 0.0 for v, c in zip(values, changes, strict=True)],
        ]
        offset = (index - (others - 1) / 2) * delta_bar
        # The run's colour from the left panel, so each bar is traceable to its run.
        right.barh([tick + offset for tick in ticks], values, height=delta_bar, color=f"C{index + 1}", label=name,
                   xerr=errors, error_kw={"elinewidth": 0.8, "capsize": 2})  # fmt: skip
    right.axvline(0, color="black", linewidth=0.8)
    right.set_xlabel(f"Δ MGas/s vs {comparison.names[0]} (%) with its {COMPARISON_CONFIDENCE:.0%} interval, right = faster")
    right.grid(axis="x", alpha=0.3)
    figure.suptitle("balgen replay comparison")
    figure.tight_layout()
    partial = path.with_name(f".{path.name}.tmp")
    try:
        figure.savefig(partial, dpi=100, format="png")
        os.replace(partial, path)  # whole or not at all, like the other outputs
    finally:
        plt.close(figure)
        partial.unlink(missing_ok=True)


def default_report_output(root: Path = Path("results")) -> Path:
    """`results/report-<timestamp>/`, the timestamp in UTC."""
    return root / f"report-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"


def run_report(argv: Sequence[str], console: Console | None = None) -> int:
    """`balgen report`: read the runs (exit 2 on a bad one), print and write the comparison."""
    try:
        args = report_parser().parse_args(list(argv))
        if args.worst < 0:
            raise BadInput(f"--worst {args.worst}: must be 0 or more")
        if not 0 <= args.noise_threshold < 100:  # NaN fails this too
            raise BadInput(f"--noise-threshold {args.noise_threshold}: must be a percentage from 0 to below 100")
        comparison = compare(load_runs(args.runs), worst=args.worst, noise_threshold=args.noise_threshold)
        output = args.output or default_report_output()
        if output.exists() and not output.is_dir():
            raise BadInput(f"--output {output}: is a file")
        try:
            output.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise BadInput(f"--output {output}: cannot be created ({error.strerror})") from None
        check_writable(output)
    except BadInput as error:
        print(f"balgen report: {escaped(str(error))}", file=sys.stderr)
        return BAD_INPUT_EXIT_CODE
    console = console or wide_console()
    for table in rich_tables(comparison):
        console.print(table)
    try:
        write_chart(comparison, output / REPORT_PNG)
        write_text_atomically(output / REPORT_MD, markdown(comparison, args.runs, args.noise_threshold))
    except OSError as error:  # the folder took a probe file but not the report (disk full)
        print(f"balgen report: cannot write the report to {escaped(str(output))} ({error.strerror or error})", file=sys.stderr)
        return 1
    # The folder is the user's to name: shown escaped (an ESC in it would reach the terminal) and not as markup.
    written = f"report written to {escaped(str(output / REPORT_MD))} and {escaped(str(output / REPORT_PNG))}"
    console.print(written, highlight=False, markup=False)
    return 0
