"""
`balgen report RUN...`: compare replay runs, the first one as baseline.

Shows, in the terminal and in `report.md`, the per-run summary against the
baseline (tests significantly faster and slower, average / P95 / P99 gain
and regression, aggregate MGas/s, and the noise floor of an A/A pair), the
worst significant regressions, the measured speedup against each fixture's
ideal parallel bound, and every test's MGas/s per run with its delta, 99%
interval and verdict; `report.png` charts the per-test MGas/s and deltas
with their intervals. See `comparison` and `confidence` for the figures.

`--html PAGE` writes one self-contained page instead (`balgen.pages`): of
runs compared, of one run alone, of a fill's fixtures or of a
`balgen verify --output` (docs/report-page.md); with `--output` as well, both.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..plumbing.command_line import OneLineParser, wide_console
from ..plumbing.errors import BadInput
from ..plumbing.output_files import check_writable, write_figure_atomically, write_text_atomically
from ..plumbing.printable import escaped
from ..results.comparison import Comparison, DeltaSummary, LoadedRun, comparable_runs, compare, load_runs
from ..results.phases import Phase, measured_phase_ms
from ..results.confidence import COMPARISON_CONFIDENCE, Change, delta_text, interval_text
from .runner import run_command

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..pages.page_model import Page

REPORT_MD = "report.md"
REPORT_PNG = "report.png"
PHASES_PNG = "phases.png"


def report_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="balgen report",
        description="Compare balgen replay runs (the first is the baseline): MGas/s per test, deltas, regressions.",
    )
    parser.add_argument(
        "runs", type=Path, nargs="+",
        help="run folders (or their results.json); with --html also one run alone, a fill's output or a verify's",
    )  # fmt: skip
    parser.add_argument(
        "--html", type=Path, default=None, metavar="PAGE",
        help="write one self-contained HTML page (opens offline) instead of report.md and report.png",
    )  # fmt: skip
    parser.add_argument("--output", type=Path, default=None, help="folder for report.md and report.png (default results/report-<timestamp>/)")
    parser.add_argument("--worst", type=int, default=10, help="how many worst regressions to list (default 10)")
    parser.add_argument(
        "--noise-threshold",
        type=float,
        default=0.0,
        help="percent a change's whole interval must lie beyond to count (default 0; use an A/A pair's noise floor)",
    )
    parser.add_argument(
        "--unpaired",
        action="store_true",
        help="judge modes of one modes run by their medians, not by their per-round ratios (the default)",
    )
    return parser


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f}%"


def _mgas(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


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
NOISE_COLUMNS = ("run", "A/A with", "tests compared", "called faster or slower", "noise floor (P95 of |Δ|)")
PHASE_SUMMARY_COLUMNS = (
    "run", "phase", "tests", "less time", "more time", "median Δ time", "baseline ms (sum)", "ms (sum)",
)
NOT_COMPARED_COLUMNS = ("run", "phase", "why not compared with the baseline")
OVERLAP_COLUMNS = (
    "run", "phase", "beside", "tests", "phase ms (sum)", "beside ms (sum)", "txexec ms (DEBUG line)", "root ms (DEBUG line)",
)  # fmt: skip
PHASE_TEST_COLUMNS = ("test", "run", "phase", "baseline ms", "ms", "Δ time", f"{COMPARISON_CONFIDENCE:.0%} interval", "verdict")


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
            cells += [_mgas(mgas), _pct(delta) if change is None else delta_text(change), interval_text(change), _verdict(change)]
        rows.append(cells)
    return rows


def _speedup_cells(comparison: Comparison) -> list[list[str]]:
    return [
        [s.test_id, s.name, f"{s.bound:.2f}x", f"{s.speedup:.2f}x", f"{s.share:.0%}", s.change.verdict.value]
        for s in comparison.speedups
    ]


def _noise_cells(comparison: Comparison) -> list[list[str]]:
    return [
        [name, earlier, str(noise.compared), f"{noise.significant}/{noise.compared}",
         "-" if noise.floor is None else f"{noise.floor:.1f}%"]
        for name, earlier, noise in comparison.noise_pairs
    ]  # fmt: skip


def _phase_summary_cells(comparison: Comparison) -> list[list[str]]:
    return [
        [p.name, p.phase.value, str(p.compared), str(p.less), str(p.more), _pct(p.median_change),
         f"{p.baseline_ms:.1f}", f"{p.ms:.1f}"]
        for p in comparison.phase_summaries
    ]  # fmt: skip


def _not_compared_cells(comparison: Comparison) -> list[list[str]]:
    return [[name, c.phase.value, c.reason or ""] for name, c in comparison.phase_comparability if not c.comparable]


def _overlap_cells(comparison: Comparison) -> list[list[str]]:
    return [
        [o.name, o.phase.value, o.beside.value, str(o.tests), f"{o.phase_ms:.1f}", f"{o.beside_ms:.1f}",
         "-" if o.txexec_ms is None else f"{o.txexec_ms:.1f}", "-" if o.root_ms is None else f"{o.root_ms:.1f}"]
        for o in comparison.overlaps
    ]  # fmt: skip


def _phase_test_cells(comparison: Comparison) -> list[list[str]]:
    return [
        [c.test_id, name, c.phase.value, f"{c.baseline_ms:.2f}", f"{c.ms:.2f}", delta_text(c.change),
         interval_text(c.change), c.verdict.value]
        for name, changes in zip(comparison.names[1:], comparison.phases, strict=True)
        for c in changes
    ]  # fmt: skip


def _worst_cells(comparison: Comparison) -> list[list[str]]:
    return [
        [r.test_id, r.name, _mgas(r.baseline_mgas), _mgas(r.mgas), _pct(r.delta)]
        for r in comparison.worst
    ]


REJECTION_COLUMNS = ("test", "run", "reject ms", "valid block ms", "reject / valid", "rejections", "client's reason")
REASON_CHARACTERS = 60
"""How much of a client's rejection message the table shows (go-ethereum's carry two hashes)."""


def _rejection_cells(comparison: Comparison) -> list[list[str]]:
    return [
        [
            row.test_id,
            row.run,
            f"{row.reject_ms:.2f}",
            "-" if row.valid_ms is None else f"{row.valid_ms:.2f}",
            "-" if row.ratio is None else f"{row.ratio:.2f}",
            str(row.rejections),
            escaped((row.reason or "-")[:REASON_CHARACTERS]),
        ]
        for row in comparison.rejections
    ]


def _fallback_sections(comparison: Comparison) -> list[tuple[str, Sequence[str], list[list[str]]]]:
    """Per modes run with sequential and full: the rule's choice per test, its aggregate, and each family's loss."""
    return [
        (escaped(title), columns, [[text for text, _ in row] for row in rows])
        for table in comparison.fallback
        for title, columns, rows in table.sections()
    ]


def _sections(comparison: Comparison) -> list[tuple[str, Sequence[str], list[list[str]]]]:
    """(title, columns, rows) of each table, shared by the terminal and Markdown."""
    baseline = comparison.names[0]
    sections: list[tuple[str, Sequence[str], list[list[str]]]] = [
        (f"Against the baseline ({baseline}), significant changes only", SUMMARY_COLUMNS,
         [summary_cells(s) for s in comparison.summaries]),
    ]  # fmt: skip
    if noise := _noise_cells(comparison):
        sections.append(("A/A noise floor (runs of the same build and flags, e.g. a mode listed twice)", NOISE_COLUMNS, noise))
    sections.append(("Worst significant regressions", WORST_COLUMNS, _worst_cells(comparison)))
    if speedups := _speedup_cells(comparison):
        sections.append(("Measured speedup against the dependency graph's bound", SPEEDUP_COLUMNS, speedups))
    if phases := _phase_summary_cells(comparison):
        sections.append(
            ("Which phase each run changed (the client's own timing; Δ time negative = less time)",
             PHASE_SUMMARY_COLUMNS, phases)
        )  # fmt: skip
    if not_compared := _not_compared_cells(comparison):
        sections.append(("Phases not compared: not the same work in both runs (the client's code, docs/bal-modes.md)",
                         NOT_COMPARED_COLUMNS, not_compared))  # fmt: skip
    if overlapping := _overlap_cells(comparison):
        sections.append(("Phases timed beside another (overlapping: shown side by side, not added)", OVERLAP_COLUMNS, overlapping))
    sections.append(
        ("MGas/s per test (median of the measured executions)", _test_columns(comparison), _test_cells(comparison))
    )
    if phase_tests := _phase_test_cells(comparison):
        sections.append(("Phase time per test against the baseline", PHASE_TEST_COLUMNS, phase_tests))
    if rejections := _rejection_cells(comparison):
        sections.append(("Time to reject a lying access list, beside the valid block's", REJECTION_COLUMNS, rejections))
    sections += _fallback_sections(comparison)
    return sections


def rich_tables(comparison: Comparison) -> list[Table]:
    """The report as terminal tables."""
    tables = []
    for title, columns, rows in _sections(comparison):
        table = Table(title=Text(escaped(title)))
        for index, column in enumerate(columns):
            table.add_column(Text(escaped(column)), justify="left" if index == 0 else "right")
        for cells in rows:
            table.add_row(*(_colored(cell) for cell in cells))
        tables.append(table)
    return tables


def _colored(cell: str) -> Text:
    """A cell as plain text (a test id or label is never read as markup, an ESC in it never printed raw), a delta in colour."""
    style = ("green" if cell[0] == "+" else "red") if cell.endswith("%") and cell[:1] in ("+", "-") else ""
    return Text(escaped(cell), style=style)


def markdown(comparison: Comparison, sources: Sequence[Path], noise_threshold: float = 0.0) -> str:
    """The report as a Markdown document."""
    lines = ["# balgen replay comparison", ""]
    lines += [f"- `{name}`: `{escaped(str(source))}`" for name, source in zip(comparison.names, sources, strict=True)]
    lines += [
        "",
        f"Baseline: `{comparison.names[0]}`. Δ is the change in median MGas/s against it; its {COMPARISON_CONFIDENCE:.0%} "
        "interval is a bootstrap of the ratio of medians over every measured execution of both runs, and a test "
        f"is faster or slower only when the whole interval lies beyond ±{noise_threshold:g}% (docs/replay.md).",
        "",
    ]
    if comparison.paired_runs:
        paired = ", ".join(f"`{name}`" for name in comparison.paired_runs)
        lines += [
            f"{paired}: modes of one modes run, judged by their per-round ratios to the baseline (the median "
            "ratio, with a bootstrap interval of it) where a test has at least 3 rounds both measured, else by "
            "medians; `--unpaired` judges them all by their medians.",
            "",
        ]
    lines += [f"![MGas/s per test and deltas]({REPORT_PNG})", ""]
    if comparison.phase_summaries:
        lines += [f"![Phase time per test and run]({PHASES_PNG})", ""]
    for title, columns, rows in _sections(comparison):
        lines += [f"## {title}", ""]
        lines.append("| " + " | ".join(columns) + " |")
        lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(columns))) + "|")
        lines += ["| " + " | ".join(escaped(cell) for cell in cells) + " |" for cells in rows]  # a mode name in a reason
        if not rows:
            lines.append("| " + " | ".join("-" for _ in columns) + " |")
        lines.append("")
    return "\n".join(lines)


MAX_IMAGE_INCHES = 19.5
"""The tallest picture at 100 dpi: about 2,000 pixels, readable on a screen without zooming into a strip."""
TOP_INCHES = 2.2
"""Room for the title, the legend under it and the axis labels."""


def charted_tests(ids_and_changes: Sequence[tuple[str, float, bool]], inches_per_test: float) -> list[str]:
    """
    The tests a picture has room for, `inches_per_test` each: all of them when
    they fit, else the regressions (flagged True) and then those with the
    largest change, by size (the tables list every test).
    """
    room = max(1, int((MAX_IMAGE_INCHES - TOP_INCHES) / inches_per_test))
    ranked = sorted(ids_and_changes, key=lambda item: (not item[2], -abs(item[1])))
    return [test for test, _, _ in ranked[:room]]


def _chart_title(what: str, shown: int, total: int) -> str:
    if shown == total:
        return what
    return f"{what}: the {shown} of {total} tests with the largest change (every test is in the tables)"


def _pyplot() -> ModuleType:
    """
    matplotlib's pyplot on its file-only Agg backend (no display: a chart is
    only ever written to a file), imported when a chart is drawn: about a
    CPU-second that a refused command, or an `--html` page alone, need not pay.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    return matplotlib.pyplot


def _save(figure: Figure, path: Path) -> None:
    """The chart's PNG written whole or not at all, like the other outputs."""
    try:
        write_figure_atomically(figure, path, dpi=100)
    finally:
        _pyplot().close(figure)


def write_chart(comparison: Comparison, path: Path) -> None:
    """MGas/s per test per run (left) and each run's delta against the baseline (right), at most ~2,000 px tall."""
    inches_per_test = 0.28 * max(1, len(comparison.names) / 2)
    largest = [
        (row.test_id, max((abs(d) for d in row.deltas if d is not None), default=0.0),
         any(c is not None and c.significant and c.estimate < 0 for c in row.changes or ()))
        for row in comparison.rows
    ]  # fmt: skip
    shown = set(charted_tests(largest, inches_per_test))
    rows = sorted(
        (row for row in comparison.rows if row.test_id in shown),
        key=lambda row: (row.deltas[0] is None, row.deltas[0] or 0.0),
    )
    labels = [row.test_id for row in rows]
    figure, (left, right) = _pyplot().subplots(
        1, 2, figsize=(14, TOP_INCHES + inches_per_test * len(rows)), sharey=True, layout="constrained"
    )
    bar = 0.8 / len(comparison.names)
    positions = range(len(rows))
    for index, name in enumerate(comparison.names):
        values = [row.mgas[index] or 0.0 for row in rows]
        left.barh([p + index * bar for p in positions], values, height=bar, label=name, color=f"C{index}")
    left.margins(y=0.01)
    left.invert_yaxis()
    left.set_xlabel("MGas/s (median)")
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
        right.barh([tick + offset for tick in ticks], values, height=delta_bar, color=f"C{index + 1}",
                   xerr=errors, error_kw={"elinewidth": 0.8, "capsize": 2})  # fmt: skip
    right.axvline(0, color="black", linewidth=0.8)
    right.set_xlabel(f"Δ MGas/s vs {comparison.names[0]} (%) with its {COMPARISON_CONFIDENCE:.0%} interval, right = faster")
    right.grid(axis="x", alpha=0.3)
    figure.suptitle(_chart_title("balgen replay comparison", len(rows), len(comparison.rows)))
    # Outside the axes, under them: never over a bar or the title.
    figure.legend(loc="outside lower center", ncols=min(len(comparison.names), 6), fontsize=9, frameon=False)
    _save(figure, path)


def write_phase_chart(comparison: Comparison, runs: Sequence[LoadedRun], path: Path) -> None:
    """
    Per test, each run's median time of each phase stacked into one bar, so
    which phase a mode moved is seen, not read: a bar per run, runs side by
    side; at most ~2,000 px tall (the tests whose phases moved most).
    """
    moved: dict[str, float] = {}
    for changes in comparison.phases:
        for change in changes:
            moved[change.test_id] = moved.get(change.test_id, 0.0) + abs(change.ms - change.baseline_ms)
    inches_per_test = 0.3 * len(runs)
    tests = sorted(charted_tests([(test, ms, False) for test, ms in moved.items()], inches_per_test))
    figure, axes = _pyplot().subplots(figsize=(14, TOP_INCHES + inches_per_test * len(tests)), layout="constrained")
    bar = 0.8 / len(runs)
    for run_index, run in enumerate(runs):
        by_test = {test.test_id: test for test in run.result.tests if test.passed}
        left = [0.0] * len(tests)
        for phase_index, phase in enumerate(Phase):
            widths = []
            for test_id in tests:
                test = by_test.get(test_id)
                values = [] if test is None else measured_phase_ms(test, phase)
                widths.append(float(numpy.median(values)) if values else 0.0)
            axes.barh(
                [index + run_index * bar for index in range(len(tests))], widths, height=bar, left=left,
                color=f"C{phase_index}", alpha=1.0 - 0.5 * run_index / max(1, len(runs) - 1),
                label=phase.value if run_index == 0 else None,
            )
            left = [a + b for a, b in zip(left, widths, strict=True)]
    ticks = [index + bar * (len(runs) - 1) / 2 for index in range(len(tests))]
    axes.set_yticks(ticks, tests, fontsize=7)
    axes.margins(y=0.01)
    axes.invert_yaxis()
    axes.set_xlabel("the client's own time per phase, median ms\none bar per run, top to bottom (lighter = later): " + ", ".join(
        f"{index + 1}. {run.name}" for index, run in enumerate(runs)
    ))
    figure.suptitle(_chart_title("Which phase each run moved", len(tests), len(moved)))
    figure.legend(loc="outside lower center", ncols=len(Phase), fontsize=9, frameon=False)
    _save(figure, path)


def default_report_output(root: Path = Path("results")) -> Path:
    """`results/report-<timestamp>/`, the timestamp in UTC."""
    return root / f"report-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"


def run_report(argv: Sequence[str], console: Console | None = None) -> int:
    """`balgen report`: read the runs (exit 2 on a bad one), print and write the comparison."""
    return run_command("report", lambda: report(argv, console))


def _write_page(page: Page, path: Path, console: Console) -> int:
    from ..pages.document import write_page

    write_page(page, path)
    console.print(f"page written to {escaped(str(path))}", highlight=False, markup=False)
    return 0


def report(argv: Sequence[str], console: Console | None) -> int:
    """Read the runs (`BadInput` on a bad one), print and write the comparison."""
    args = report_parser().parse_args(list(argv))
    if args.worst < 0:
        raise BadInput(f"--worst {args.worst}: must be 0 or more")
    if not 0 <= args.noise_threshold < 100:  # NaN fails this too
        raise BadInput(f"--noise-threshold {args.noise_threshold}: must be a percentage from 0 to below 100")
    console = console or wide_console()
    if args.html is not None:
        from ..pages.document import check_page_path
        from ..pages.sources import page_of  # the pages' sources (fixture pages, their graphs) only for --html

        check_page_path(args.html)
        page = page_of(args.runs, args.noise_threshold, args.worst)
        if args.output is None:
            return _write_page(page, args.html, console)
    runs, left_out = comparable_runs(load_runs(args.runs))  # a modes run gives one run per mode
    comparison = compare(runs, worst=args.worst, noise_threshold=args.noise_threshold, paired=not args.unpaired)
    output = args.output or default_report_output()
    if output.exists() and not output.is_dir():
        raise BadInput(f"--output {output}: is a file")
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BadInput(f"--output {output}: cannot be created ({error.strerror})") from None
    check_writable(output)
    if args.html is not None:  # both asked for: the page once the folder is known to take the report
        _write_page(page, args.html, console)
    for reason in left_out:
        print(f"balgen report: left out {escaped(reason)}", file=sys.stderr)
    for table in rich_tables(comparison):
        console.print(table)
    try:
        with warnings.catch_warnings():
            # matplotlib's remarks on the drawing (a glyph its font lacks, a crowded layout) are no
            # concern of the user's: the chart is written all the same.
            warnings.simplefilter("ignore", UserWarning)
            write_chart(comparison, output / REPORT_PNG)
            if comparison.phase_summaries:
                write_phase_chart(comparison, runs, output / PHASES_PNG)
        document = markdown(comparison, [run.path for run in runs], args.noise_threshold)
        if left_out:
            document += "\n## Left out\n\n" + "".join(f"- {escaped(reason)}\n" for reason in left_out)
        write_text_atomically(output / REPORT_MD, document)
    except OSError as error:  # the folder took a probe file but not the report (disk full)
        print(f"balgen report: cannot write the report to {escaped(str(output))} ({error.strerror or error})", file=sys.stderr)
        return 1
    # The folder is the user's to name: shown escaped (an ESC in it would reach the terminal) and not as markup.
    written = f"report written to {escaped(str(output / REPORT_MD))} and {escaped(str(output / REPORT_PNG))}"
    console.print(written, highlight=False, markup=False)
    return 0
