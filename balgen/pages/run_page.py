"""
The results page of replay runs: one run alone, a modes run (its modes
compared, `sequential` the baseline) or runs compared with the first.

It shows what `balgen report` prints (`results.comparison`), for a reader
in front of a screen: what ran and how each mode was proven, the method and
the A/A floor, a per-test table sorted regressions first and filterable by
family, fill level, gas value and verdict, small multiples of the change per
family, each test's phases per run, the rejections of lying access lists
beside the valid blocks' times, and the tests that failed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy

from ..results.comparison import Comparison, LoadedRun, load_run
from ..results.confidence import COMPARISON_CONFIDENCE, Change, ChangeVerdict, delta_text, interval_text
from ..results.measurements import Role
from ..results.phases import Phase, measured_phase_ms
from ..results.rejection_times import RejectionTime, rejection_times
from ..results.schema import FixtureResult, RunResult
from . import charts
from .names import test_name
from .page_model import Card, Cell, Chart, Column, Filter, Page, Picker, Row, Section, Table

ALL_TESTS = "all tests (sum of the medians)"
"""The phase picker's first entry: every test's phases summed, per run."""
SLOWER_SOMEWHERE = "regression"
"""Significantly slower than the baseline in at least one run."""
FASTER_ONLY = "faster"
"""Significantly faster in at least one run and slower in none."""
NO_CHANGE = "no change"
SHORT_VERDICTS = {ChangeVerdict.NO_CHANGE: "same", ChangeVerdict.TOO_FEW: "too few"}
"""The per-run verdict as the table's narrow column says it (its hover says it whole)."""
PROOF_LINES = 3
"""How many distinct proof lines of a mode the page lists (the rest are counted)."""


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f}%"


def _mgas(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _has_interval(change: Change | None) -> bool:
    return change is not None and change.low == change.low and change.high == change.high


def _short_interval(change: Change | None) -> str:
    return interval_text(change, between=" … ")


def _verdict_style(change: Change | None) -> str:
    if change is None:
        return ""
    return {ChangeVerdict.FASTER: "faster", ChangeVerdict.SLOWER: "slower"}.get(change.verdict, "quiet")


def _overall(changes: Sequence[Change | None]) -> str:
    """A test's verdict over every run: slower in one is what a client team reads first."""
    if any(c is not None and c.verdict is ChangeVerdict.SLOWER for c in changes):
        return SLOWER_SOMEWHERE
    if any(c is not None and c.verdict is ChangeVerdict.FASTER for c in changes):
        return FASTER_ONLY
    return NO_CHANGE


def _distinct(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _test_filters(first: int, extra: Sequence[tuple[int, str, Sequence[str]]] = ()) -> tuple[Filter, ...]:
    """Family, fill level and gas value filters over columns `first`, `first + 1`, `first + 2`."""
    return (
        Filter(first, "family", ()),
        Filter(first + 1, "fill", ()),
        Filter(first + 2, "gas", ()),
        *(Filter(column, label, tuple(options)) for column, label, options in extra),
    )


def _with_options(table_rows: Sequence[Row], filters: Sequence[Filter]) -> tuple[Filter, ...]:
    """Each filter with the values its column holds (those given, else every distinct one, sorted)."""
    return tuple(
        f if f.options else Filter(f.column, f.label, tuple(sorted({row.cells[f.column].text for row in table_rows})))
        for f in filters
    )


def _name_cells(test_id: str, bound: float | None) -> list[Cell]:
    name = test_name(test_id)
    return [
        Cell(test_id, title=test_id),
        Cell(name.family),
        Cell(name.fill),
        Cell(name.gas, sort=float(name.gas[:-1]) if name.gas != "-" else None),
        Cell("-" if bound is None else f"{bound:.2f}x", sort=bound),
    ]


NAME_COLUMNS = (
    Column("test"),
    Column("family"),
    Column("fill", hint="how the block's gas is divided into transactions"),
    Column("gas", numeric=True, hint="the benchmark gas value"),
    Column("bound", numeric=True, hint="the dependency graph's ideal parallel speedup (block gas / critical path)"),
)


# --- what ran -------------------------------------------------------------------------------


def _sources(runs: Sequence[LoadedRun]) -> list[tuple[Path, RunResult]]:
    """Each run folder once, with its whole result: a modes run is read again, whole (`load_runs` split it by mode)."""
    paths = list(dict.fromkeys(run.path for run in runs))
    return [(path, load_run(path, check_figures=False)) for path in paths]


def _target_text(target: dict[str, object]) -> str:
    return ", ".join(f"{key} {value}" for key, value in target.items() if value not in (None, "", [], {}) and key != "mode_flags")


def run_facts(path: Path, result: RunResult) -> tuple[tuple[str, str], ...]:
    """What ran: the run's clients, their versions and build, the fixtures and when."""
    facts = [
        ("run", f"{result.label} ({path})"),
        ("client versions", "; ".join(_distinct(result.client_versions)) or "-"),
        ("client build", result.client_build or "-"),
        ("target", _target_text(result.target) or "-"),
        ("fixtures", result.fixtures_path + (f" (-k {result.keyword})" if result.keyword else "")),
        ("balgen", result.balgen_version),
        ("started, finished", f"{result.started_at}, {result.finished_at or '-'} ({result.state.value})"),
        ("tests", ", ".join(f"{count} {verdict.replace('_', ' ')}" for verdict, count in result.counts.items() if count)),
    ]
    return tuple(facts)


def mode_rows(result: RunResult) -> list[Row]:
    """Each mode of a modes run: its flags, what it switches, and how the client's log proved it."""
    rows = []
    for mode in result.modes:
        name = str(mode["name"])
        tests = [test for test in result.tests if test.mode == name]
        proof = _distinct([line for test in tests for line in test.mode_proof])
        unproven = _distinct([line for test in tests for line in test.mode_unproven])
        proven = sum(bool(test.mode_proof) for test in tests)
        shown = "; ".join(proof[:PROOF_LINES]) + (f" (+{len(proof) - PROOF_LINES} more)" if len(proof) > PROOF_LINES else "")
        switches = mode.get("switches") or {}
        rows.append(
            Row(
                (
                    Cell(name),
                    Cell(" ".join(map(str, mode.get("flags") or [])) or "(the client's default)"),
                    Cell(", ".join(f"{key} {'on' if value else 'off'}" if isinstance(value, bool) else f"{key} {value}"
                                   for key, value in switches.items()) or "-"),  # fmt: skip
                    Cell(f"{proven}/{len(tests)}", sort=proven, style="faster" if tests and proven == len(tests) else "slower"),
                    Cell(shown or "-", title="\n".join(proof)),
                    Cell("; ".join(unproven) or "-", title="\n".join(unproven)),
                )
            )
        )
    return rows


MODE_COLUMNS = (
    Column("mode"),
    Column("flags"),
    Column("switches"),
    Column("proven", numeric=True, hint="tests whose client log confirmed the mode"),
    Column("proven by (the client's own log)"),
    Column("what the log cannot show"),
)


def what_ran(runs: Sequence[LoadedRun]) -> Section:
    """The clients, versions, builds and modes, with how each mode was proven."""
    facts: list[tuple[str, str]] = []
    tables = []
    for path, result in _sources(runs):
        facts += run_facts(path, result)
        if rows := mode_rows(result):
            tables.append(Table(f"modes-{len(tables)}", MODE_COLUMNS, tuple(rows), searchable=False, what="modes"))
    return Section("ran", "What ran", facts=tuple(facts), tables=tuple(tables))


def _method_value(value: object) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{key}: {inner}" for key, inner in value.items())
    return str(value)


def method(runs: Sequence[LoadedRun], comparison: Comparison | None, noise_threshold: float) -> Section:
    """How executions were isolated and checked, how changes are judged, and the A/A floor."""
    result = runs[0].result
    facts = [(key.replace("_", " "), _method_value(value)) for key, value in result.method.items() if value is not None]
    repeat = f"auto, up to {result.repeat} (target interval width {result.ci_width})" if result.repeat_auto else str(result.repeat)
    facts += [
        ("executions per test", f"{result.warmup} warm-up, {repeat} measured"
         + (", client restarted before each" if result.cold else "") + (", page cache dropped before each" if result.drop_caches else "")),
    ]  # fmt: skip
    paragraphs = [
        "MGas/s is the block's gas over the client-side newPayload time; each test's figure is the median of its "
        "measured executions."
    ]
    tables = []
    if comparison is not None:
        paragraphs.append(
            f"Δ is the change of the median MGas/s against the baseline, {comparison.names[0]}; its "
            f"{COMPARISON_CONFIDENCE:.0%} interval is a bootstrap of the ratio of medians over every measured execution of "
            f"both runs, and a test is faster or slower only when the whole interval lies beyond ±{noise_threshold:g}%."
        )
        if comparison.noise_pairs:
            paragraphs.append(
                "The A/A floor: runs of the same build and flags (a mode listed twice) differ by noise alone; the "
                "95th percentile of their |Δ| is the smallest change this machine can tell from noise."
            )
            tables.append(Table("noise", NOISE_COLUMNS, tuple(_noise_rows(comparison)), searchable=False, what="pairs"))
    title = "Method and the A/A floor" if comparison is not None and comparison.noise_pairs else "Method"
    return Section("method", title, paragraphs=tuple(paragraphs), facts=tuple(facts), tables=tuple(tables))


NOISE_COLUMNS = (
    Column("run"),
    Column("A/A with"),
    Column("tests compared", numeric=True),
    Column("called faster or slower", numeric=True, hint="tests the pair's noise alone made significant"),
    Column("noise floor (P95 of |Δ|)", numeric=True),
)


def _noise_rows(comparison: Comparison) -> list[Row]:
    return [
        Row((
            Cell(name), Cell(earlier), Cell(str(noise.compared), sort=noise.compared),
            Cell(f"{noise.significant}/{noise.compared}", sort=noise.significant),
            Cell("-" if noise.floor is None else f"{noise.floor:.1f}%", sort=noise.floor),
        ))
        for name, earlier, noise in comparison.noise_pairs
    ]  # fmt: skip


def aa_floor(comparison: Comparison) -> float | None:
    """The largest floor of the run's A/A pairs, the band the small multiples shade."""
    floors = [noise.floor for _, _, noise in comparison.noise_pairs if noise.floor is not None]
    return max(floors) if floors else None


# --- the comparison -------------------------------------------------------------------------


def comparison_cards(comparison: Comparison) -> tuple[Card, ...]:
    """Per run against the baseline: aggregate MGas/s and its change, faster and slower counts; the A/A floor."""
    cards = []
    for summary in comparison.summaries:
        change = None
        if summary.aggregate_mgas and summary.baseline_aggregate_mgas:
            change = 100 * (summary.aggregate_mgas / summary.baseline_aggregate_mgas - 1)
        cards.append(
            Card(
                summary.name,
                _pct(change),
                f"{_mgas(summary.aggregate_mgas)} vs {_mgas(summary.baseline_aggregate_mgas)} MGas/s aggregate; "
                f"{summary.faster} faster, {summary.slower} slower of {summary.compared}",
                "faster" if (change or 0) > 0 else "slower" if (change or 0) < 0 else "",
            )
        )
    floor = aa_floor(comparison)
    if floor is not None:
        cards.append(Card("A/A floor", f"{floor:.1f}%", "the smallest change this machine tells from noise"))
    return tuple(cards)


def _bounds(runs: Sequence[LoadedRun]) -> dict[str, float]:
    return {test.test_id: test.speedup_bound for run in runs for test in run.result.tests if test.speedup_bound}


def comparison_table(comparison: Comparison, runs: Sequence[LoadedRun]) -> Table:
    """One row per test: MGas/s per run, Δ with its interval and verdict; regressions first, the largest first."""
    bounds = _bounds(runs)
    others = comparison.names[1:]
    columns = [Column("#", numeric=True, hint="regressions first, the largest first"), *NAME_COLUMNS,
               Column("verdict", hint="regression: slower in any run; faster: faster in one, slower in none"),
               Column(f"{comparison.names[0]} MGas/s", numeric=True, hint="the baseline")]  # fmt: skip
    for name in others:
        columns += [
            Column(f"{name} MGas/s", numeric=True),
            Column(f"{name} Δ", numeric=True),
            Column(f"{COMPARISON_CONFIDENCE:.0%} interval", numeric=True, hint=f"of {name}'s Δ"),
            Column(f"{name}", hint=f"{name}'s verdict"),
        ]

    def order(row: object) -> tuple[int, float]:
        changes = row.changes or ()  # type: ignore[attr-defined]
        worst = min((c.estimate for c in changes if c is not None), default=0.0)
        overall = _overall(changes)
        return ({SLOWER_SOMEWHERE: 0, FASTER_ONLY: 2, NO_CHANGE: 1}[overall], worst)

    rows = []
    for rank, compared in enumerate(sorted(comparison.rows, key=order), start=1):
        changes = compared.changes or (None,) * len(others)
        overall = _overall(changes)
        cells = [Cell(str(rank), sort=rank), *_name_cells(compared.test_id, bounds.get(compared.test_id)),
                 Cell(overall, style={SLOWER_SOMEWHERE: "slower", FASTER_ONLY: "faster"}.get(overall, "quiet")),
                 Cell(_mgas(compared.mgas[0]), sort=compared.mgas[0])]  # fmt: skip
        for mgas, change in zip(compared.mgas[1:], changes, strict=True):
            style = _verdict_style(change)
            cells += [
                Cell(_mgas(mgas), sort=mgas),
                Cell(delta_text(change), sort=None if change is None or math.isnan(change.estimate) else change.estimate, style=style),
                Cell(_short_interval(change), sort=change.low if _has_interval(change) else None),  # type: ignore[union-attr]
                Cell("-" if change is None else SHORT_VERDICTS.get(change.verdict, change.verdict.value), style=style,
                     title="" if change is None else change.verdict.value),
            ]
        rows.append(Row(tuple(cells), test=compared.test_id))
    filters = _test_filters(2, [(6, "verdict", (SLOWER_SOMEWHERE, FASTER_ONLY, NO_CHANGE))])
    return Table("tests", tuple(columns), tuple(rows), _with_options(rows, filters), what="tests")


def family_changes(comparison: Comparison) -> Chart:
    """The small multiples: per family, each run's changes as points."""
    changes = [
        charts.TestChange(
            row.test_id, test_name(row.test_id).family, index, change.estimate,
            change.low if _has_interval(change) else None, change.high if _has_interval(change) else None,
            change.verdict.value,
        )
        for row in comparison.rows
        for index, change in enumerate(row.changes or (), start=1)
        if change is not None
    ]  # fmt: skip
    floor = aa_floor(comparison)
    caption = "Each point is a test (hover for its id, change and interval); above zero is faster"
    caption += f"; the grey band is the A/A floor, ±{floor:.1f}%." if floor is not None else "."
    return Chart("families", charts.figure_json(charts.family_changes(comparison.names, changes, floor)), caption)


# --- phases and rejections ------------------------------------------------------------------


def _phase_median(test: FixtureResult | None, phase: Phase) -> float | None:
    values = [] if test is None else measured_phase_ms(test, phase)
    return float(numpy.median(values)) if values else None


def not_compared(comparison: Comparison | None) -> dict[Phase, list[tuple[str, str]]]:
    """Per phase that times different work in some run than in the baseline: (run, why) (`phase_comparability`)."""
    found: dict[Phase, list[tuple[str, str]]] = {}
    for name, comparability in (() if comparison is None else comparison.phase_comparability):
        if not comparability.comparable:
            found.setdefault(comparability.phase, []).append((name, comparability.reason or ""))
    return found


REST = "the rest of the client's own time"
"""The bar's part beyond the phases shown: its own total less them, the same work in every mode."""


def _own_median(test: FixtureResult | None) -> float | None:
    values = [] if test is None else [e.own_ms for e in test.executions if e.role is Role.MEASURED and e.own_ms is not None]
    return float(numpy.median(values)) if values else None


def _phase_ms(tests: Sequence[FixtureResult | None], shown: Sequence[Phase], rest: bool) -> dict[str, list[float | None]]:
    """Per phase shown, each run's median ms of it; with `rest`, the client's own total less them as one more part."""
    ms: dict[str, list[float | None]] = {phase.value: [_phase_median(test, phase) for test in tests] for phase in shown}
    if rest:
        ms[REST] = [
            None if (total := _own_median(test)) is None else max(0.0, total - sum(ms[p.value][i] or 0.0 for p in shown))
            for i, test in enumerate(tests)
        ]
    return ms


def phase_picker(runs: Sequence[LoadedRun], shown: Sequence[Phase], rest: bool) -> Picker | None:
    """
    Each test's `shown` phases per run, one chart at a time (with `rest`, the client's own total less
    them as one more part); first the sum over the tests every run passed.
    """
    names = [run.name for run in runs]
    by_run = [{test.test_id: test for test in run.result.tests if test.passed} for run in runs]
    tests = sorted({test_id for tests in by_run for test_id, test in tests.items() if _phase_median(test, Phase.EXECUTION) is not None})
    if not tests:
        return None
    phases = [phase.value for phase in shown] + ([REST] if rest else [])
    figures = {}
    common = [test_id for test_id in tests if all(test_id in tests_of for tests_of in by_run)]
    if len(runs) > 1 and common:
        per_test = [_phase_ms([tests_of[t] for tests_of in by_run], shown, rest) for t in common]
        sums = {part: [sum(ms[part][i] or 0.0 for ms in per_test) for i in range(len(runs))] for part in phases}
        figures[ALL_TESTS] = charts.figure_json(
            charts.phase_bars(f"{len(common)} tests every run passed: each phase's median ms, summed", names, phases, sums)
        )
    for test_id in tests:
        ms = _phase_ms([tests_of.get(test_id) for tests_of in by_run], shown, rest)
        figures[test_id] = charts.figure_json(charts.phase_bars(test_id, names, phases, ms))
    return Picker(
        "phases", "test", tuple(figures), figures=figures,
        caption="The client's own timing of the block (its slow-block log), one bar per run; choose a test above "
        "or click its row in the table.",
    )  # fmt: skip


def phase_section(runs: Sequence[LoadedRun], comparison: Comparison | None) -> Section | None:
    """
    The phases per test, only those that time the same work in every run (the others named with the
    client's reason), and the phases a client runs beside another with both times, not added up.
    """
    left_out = not_compared(comparison)
    picker = phase_picker(runs, [phase for phase in Phase if phase not in left_out], rest=bool(left_out))
    paragraphs = [
        f"{phase.value} is not shown on its own, it times different work in {', '.join(name for name, _ in reasons)} "
        f"than in the baseline ({reasons[0][0]}: {reasons[0][1]}); it is part of {REST}."
        for phase, reasons in left_out.items()
    ]
    paragraphs += [
        f"{o.name}: {o.phase.value} runs beside {o.beside.value}, {o.phase_ms:.1f} ms beside {o.beside_ms:.1f} ms "
        f"over {o.tests} tests (medians summed), so the two overlap and do not add up."
        for o in (() if comparison is None else comparison.overlaps)
    ]
    if picker is None and not paragraphs:
        return None
    return Section("phases", "Phases per test", paragraphs=tuple(paragraphs), pickers=() if picker is None else (picker,))


def rejection_section(runs: Sequence[LoadedRun]) -> Section | None:
    """The time to reject each lying access list beside the valid block's, per run."""
    rows: list[RejectionTime] = [row for run in runs for row in rejection_times(run.name, run.result.tests)]
    if not rows:
        return None
    names = [run.name for run in runs]
    bars = [charts.RejectionBar(row.test_id, names.index(row.run), row.reject_ms, row.valid_ms) for row in rows]
    chart = Chart("rejections", charts.figure_json(charts.rejection_bars(names, bars)),
                  "Per test and run: the lying block's rejection beside the valid block's execution.")  # fmt: skip
    table_rows = tuple(
        Row((
            Cell(row.test_id), Cell(row.run), Cell(f"{row.reject_ms:.2f}", sort=row.reject_ms),
            Cell("-" if row.valid_ms is None else f"{row.valid_ms:.2f}", sort=row.valid_ms),
            Cell("-" if row.ratio is None else f"{row.ratio:.2f}", sort=row.ratio),
            Cell(str(row.rejections), sort=row.rejections), Cell((row.reason or "-")[:90], title=row.reason or ""),
        ), test=row.test_id)
        for row in rows
    )  # fmt: skip
    columns = (Column("test"), Column("run"), Column("reject ms", numeric=True), Column("valid block ms", numeric=True),
               Column("reject / valid", numeric=True, hint="near 1: the client executed the block to refute the list"),
               Column("rejections", numeric=True), Column("client's reason"))  # fmt: skip
    table = Table("rejections", columns, table_rows, _with_options(table_rows, (Filter(1, "run", ()),)), what="rejections")
    return Section(
        "rejections", "Lying access lists: time to reject beside the valid block",
        paragraphs=("A validator pays this for a proposer's lie: near the valid block's time when the client must "
                    "execute the block to refute the list, near zero when a check of the list finds it.",),
        charts=(chart,), tables=(table,),
    )  # fmt: skip


FALLBACK_PARTS = (("tests", "tests"), ("aggregate", "policies"), ("families", "families"))
"""The fallback rule's three tables, in `FallbackTable.sections`' order: a key and what a row is."""


def fallback_sections(comparison: Comparison | None) -> list[Section]:
    """
    Per modes run with `sequential` and `full`, the fallback rule's three
    tables as the text report has them (`FallbackTable.sections`): what it
    chooses per test, its aggregate against always parallel and always
    sequential with its worst case, and where it does not generalise.
    """
    sections = []
    for number, table in enumerate(() if comparison is None else comparison.fallback):
        for (part, what), (title, columns, rows) in zip(FALLBACK_PARTS, table.sections(), strict=True):
            shown = tuple(
                Row(tuple(Cell(text, sort=key) for text, key in row), test=row[0][0] if part == "tests" else None) for row in rows
            )
            heads = tuple(
                Column(column, numeric=bool(rows) and all(isinstance(row[index][1], float | int) for row in rows))
                for index, column in enumerate(columns)
            )  # a column of figures is right-aligned and sorts as numbers
            sections.append(
                Section(f"fallback-{number}-{part}", title, tables=(Table(f"fallback-{number}-{part}", heads, shown,
                        searchable=part == "tests", what=what),))
            )  # fmt: skip
    return sections


def failures_section(runs: Sequence[LoadedRun]) -> Section | None:
    """Every test that failed or did not run, with why."""
    rows = tuple(
        Row((Cell(test.test_id), Cell(run.name), Cell(test.verdict.value, style="slower"), Cell(test.failure or "-", title=test.failure or "")),
            test=test.test_id)
        for run in runs for test in run.result.tests if not test.passed
    )  # fmt: skip
    if not rows:
        return None
    columns = (Column("test"), Column("run"), Column("verdict"), Column("why"))
    title = "1 test failed or did not run" if len(rows) == 1 else f"{len(rows)} tests failed or did not run"
    return Section("failures", title, tables=(Table("failures", columns, rows, what="tests"),))


# --- one run alone --------------------------------------------------------------------------


def single_run_table(run: LoadedRun) -> Table:
    """One row per test of a run alone: MGas/s, newPayload time and its spread, and the verdict."""
    columns = (*NAME_COLUMNS, Column("MGas/s", numeric=True), Column("newPayload ms", numeric=True),
               Column("P5-P95 ms", numeric=True), Column("interval width", numeric=True, hint="relative width of the median's 95% interval"),
               Column("executions", numeric=True), Column("verdict"))  # fmt: skip
    rows = []
    for test in sorted(run.result.tests, key=lambda t: (t.passed, t.median("mgas_per_second") or 0.0)):
        stats = test.statistics
        ms = None if stats is None else stats.new_payload_ns.median / 1e6
        spread = "-" if stats is None else f"{stats.new_payload_ns.p5 / 1e6:.1f}-{stats.new_payload_ns.p95 / 1e6:.1f}"
        width = test.median_interval_width
        rows.append(Row((
            *_name_cells(test.test_id, test.speedup_bound),
            Cell(_mgas(test.median("mgas_per_second")), sort=test.median("mgas_per_second")),
            Cell("-" if ms is None else f"{ms:.2f}", sort=ms), Cell(spread, sort=ms),
            Cell("-" if width is None else f"{width:.1%}", sort=width),
            Cell(str(0 if stats is None else stats.new_payload_ns.count), sort=0 if stats is None else stats.new_payload_ns.count),
            Cell(test.verdict.value, style="" if test.passed else "slower", title=test.failure or ""),
        ), test=test.test_id))  # fmt: skip
    filters = _test_filters(1, [(len(columns) - 1, "verdict", ())])
    return Table("tests", columns, tuple(rows), _with_options(rows, filters), what="tests")


def single_run_cards(run: LoadedRun) -> tuple[Card, ...]:
    seconds = run.seconds()
    gas = sum(g for g, _ in seconds.values())
    time = sum(s for _, s in seconds.values())
    counts = run.result.counts
    return (
        Card("aggregate", f"{gas / time / 1e6:,.0f} MGas/s" if time else "-", f"over {len(seconds)} measured tests"),
        Card("tests passed", f"{counts['passed']}/{len(run.result.tests)}", "",
             "faster" if counts["passed"] == len(run.result.tests) else "slower"),  # fmt: skip
    )


def mgas_chart(runs: Sequence[LoadedRun]) -> Chart:
    points = [
        (test_id, test_name(test_id).family, index, mgas)
        for index, run in enumerate(runs)
        for test_id, mgas in run.mgas().items()
    ]
    return Chart("mgas", charts.figure_json(charts.mgas_by_family([run.name for run in runs], points)),
                 "Each point is a test's median MGas/s (hover for its id).")  # fmt: skip


# --- the page -------------------------------------------------------------------------------


def headline(runs: Sequence[LoadedRun]) -> str:
    """The header's one line: the clients and builds, and how many modes the client's log proved."""
    parts = []
    for _, result in _sources(runs):
        client = "; ".join(_distinct(result.client_versions)) or str(result.target.get("kind", "client"))
        parts.append(client + (f" ({result.client_build.splitlines()[0]})" if result.client_build else ""))
        if result.modes:
            proven = sum(bool(test.mode_proof) for test in result.tests)
            parts.append(f"{len(result.modes)} modes, {proven}/{len(result.tests)} test-modes proven by the client's log")
    parts.append(f"{runs[0].result.started_at[:16].replace('T', ' ')} UTC")
    return " · ".join(_distinct(parts))


def run_page(
    runs: Sequence[LoadedRun], comparison: Comparison | None, noise_threshold: float, kind: str, title: str,
    left_out: Sequence[str] = (),
) -> Page:  # fmt: skip
    """
    The page of `runs`: compared with the first when `comparison` is given, else one run alone;
    `left_out` says which runs had nothing to compare (`comparable_runs`). The figures a meeting
    looks at come first; what ran and the method follow.
    """
    sections = []
    if left_out:
        sections.append(Section("left-out", "Left out of the comparison", paragraphs=tuple(left_out)))
    if comparison is not None:
        cards = comparison_cards(comparison)
        sections.append(Section("families", "The change per family", charts=(family_changes(comparison),)))
        sections.append(
            Section("tests", "Per test, regressions first", tables=(comparison_table(comparison, runs),),
                    paragraphs=("Click a heading to sort, a row to see that test's phases below.",))
        )  # fmt: skip
    else:
        cards = single_run_cards(runs[0])
        sections.append(Section("families", "MGas/s per family", charts=(mgas_chart(runs),)))
        sections.append(
            Section("tests", "Per test, the slowest first", tables=(single_run_table(runs[0]),),
                    paragraphs=("Click a heading to sort, a row to see that test's phases below.",))
        )  # fmt: skip
    sections += [] if (phases := phase_section(runs, comparison)) is None else [phases]
    sections += fallback_sections(comparison)
    for extra in (rejection_section(runs), failures_section(runs)):
        if extra is not None:
            sections.append(extra)
    sections += [what_ran(runs), method(runs, comparison, noise_threshold)]
    return Page(title=title, kind=kind, subtitle=headline(runs), cards=cards, sections=tuple(sections))
