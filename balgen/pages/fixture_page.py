"""
The results page of a fill's fixtures, and of a `balgen verify` of them.

Per test (a fill writes each in several formats), its benchmark block's gas,
transactions and dependency graph (`_info["dependency-graph"]`: components,
critical path, speedup bound), the graph's picture for the test chosen, and
for a verify each verifier's verdict, with the first difference of a failure.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..analysis import INFO_KEY, DependencyGraph
from ..analysis.plot import graph_png
from ..fixtures.files import fixture_files, fixture_format, known_format
from ..fixtures.reading import read_fixture_document
from ..model.test_ids import INFO_KEY as TEST_ID_KEY
from ..plumbing.errors import BadInput
from ..verify.outcomes import Verifier
from ..verify.verdicts_file import VerdictKind, VerifyResult
from . import charts
from .names import test_name
from .page_model import Card, Cell, Chart, Column, Filter, Page, Picker, Row, Section, Table

VERDICT_STYLES = {VerdictKind.PASSED: "faster", VerdictKind.FAILED: "slower", VerdictKind.NOT_APPLICABLE: "quiet"}


@dataclass
class FilledTest:
    """One test of a fill, over the formats it was written in."""

    name: str
    test_id: str | None
    """Its EEST-style id (`_info["test-id"]`), when the fixture records one."""
    formats: list[str] = field(default_factory=list)
    graph: DependencyGraph | None = None
    gas_used: int | None = None
    """The benchmark (last) block's `gasUsed`, from its header or payload."""
    transactions: int | None = None
    """The benchmark block's transaction count."""


def _graph(fixture: Mapping[str, Any], where: str) -> DependencyGraph | None:
    info = fixture.get("_info")
    if not isinstance(info, Mapping) or INFO_KEY not in info:
        return None
    try:
        return DependencyGraph.from_info(info[INFO_KEY])
    except ValueError as error:
        raise BadInput(f"{where}: _info.{INFO_KEY}: {error}") from None


def _quantity(value: Any) -> int | None:
    """A header or payload number (hex as the formats write it, or an int); None if it is neither."""
    if isinstance(value, int):
        return value
    try:
        return int(value, 16) if isinstance(value, str) else None
    except ValueError:
        return None


def benchmark_block(fixture: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """The last block's gas used and transaction count: a blockchain test's header, or an engine test's payload."""
    blocks = fixture.get("blocks")
    if isinstance(blocks, list) and blocks and isinstance(blocks[-1], Mapping):
        header, transactions = blocks[-1].get("blockHeader"), blocks[-1].get("transactions")
        gas = _quantity(header.get("gasUsed")) if isinstance(header, Mapping) else None
        return gas, len(transactions) if isinstance(transactions, list) else None
    payloads = fixture.get("engineNewPayloads")
    if isinstance(payloads, list) and payloads and isinstance(payloads[-1], Mapping):
        params = payloads[-1].get("params")
        payload = params[0] if isinstance(params, list) and params and isinstance(params[0], Mapping) else {}
        transactions = payload.get("transactions")
        return _quantity(payload.get("gasUsed")), len(transactions) if isinstance(transactions, list) else None
    return None, None


def filled_tests(path: Path) -> list[FilledTest]:
    """Every test under `path` (a fill's output folder or one fixture file), in name order."""
    tests: dict[str, FilledTest] = {}
    for file in fixture_files(path):
        for name, fixture in read_fixture_document(file).items():
            if not isinstance(fixture, Mapping):
                continue
            format_name = fixture_format(fixture)
            if format_name is None:
                continue
            info = fixture.get("_info") if isinstance(fixture.get("_info"), Mapping) else {}
            test = tests.setdefault(name, FilledTest(name, info.get(TEST_ID_KEY)))  # type: ignore[union-attr]
            test.formats.append(format_name)
            if test.gas_used is None:
                test.gas_used, test.transactions = benchmark_block(fixture)
            if test.graph is None:
                test.graph = _graph(fixture, f"{file}: test {name}")
    return [tests[name] for name in sorted(tests)]


def _format_label(format_name: str) -> str:
    """The format's short name, as `balgen inspect` shows it (the registry's), or its name if balgen does not know it."""
    known = known_format(format_name)
    return known.short_name if known else format_name


def _count(value: int | None, scale: float = 1.0, digits: int = 0) -> Cell:
    return Cell("-") if value is None else Cell(f"{value / scale:,.{digits}f}", sort=value)


def _graph_cells(test: FilledTest) -> list[Cell]:
    graph = test.graph
    block = [_count(test.gas_used, 1e6, 2), _count(test.transactions)]
    if graph is None:
        return block + [Cell("-")] * 4
    return [
        *block,
        Cell(f"{len(graph.edges):,}", sort=len(graph.edges)),
        Cell(f"{len(graph.components):,}", sort=len(graph.components)),
        Cell(f"{graph.critical_path_gas / 1e6:,.2f}", sort=graph.critical_path_gas),
        Cell(f"{graph.speedup_bound:.2f}x", sort=graph.speedup_bound),
    ]


NAME_COLUMNS = (
    Column("test"),
    Column("family"),
    Column("fill"),
    Column("gas", numeric=True, hint="the benchmark gas value"),
)
FIXTURE_COLUMNS = (
    Column("formats"),
    Column("Mgas used", numeric=True, hint="gas used by the benchmark block (its header's gasUsed)"),
    Column("transactions", numeric=True),
    Column("edges", numeric=True, hint="pairs of transactions that conflict"),
    Column("components", numeric=True, hint="groups of transactions that could not run apart"),
    Column("critical path Mgas", numeric=True),
    Column("speedup bound", numeric=True, hint="block gas / critical-path gas"),
)


def fixture_table(tests: Sequence[FilledTest], verdicts: Mapping[str, Mapping[Verifier, VerdictKind]] | None = None,
                  verifiers: Sequence[Verifier] = ()) -> Table:  # fmt: skip
    """One row per test; with `verdicts`, a column per verifier after the test's name (failures first)."""
    columns = [*NAME_COLUMNS, *(Column(verifier.value) for verifier in verifiers), *FIXTURE_COLUMNS]
    rows = []
    for test in tests:
        name = test_name(test.name)
        cells = [
            Cell(test.name, title=test.test_id or test.name), Cell(name.family), Cell(name.fill),
            Cell(name.gas, sort=float(name.gas[:-1]) if name.gas != "-" else None),
        ]  # fmt: skip
        for verifier in verifiers:
            verdict = (verdicts or {}).get(test.name, {}).get(verifier)
            cells.append(Cell("-" if verdict is None else verdict.value, style="" if verdict is None else VERDICT_STYLES[verdict]))
        cells += [Cell(", ".join(sorted({_format_label(f) for f in test.formats}))), *_graph_cells(test)]
        rows.append(Row(tuple(cells), test=test.name))
    if verifiers:
        rows.sort(key=lambda row: not any(cell.text == VerdictKind.FAILED for cell in row.cells))
    filters = [Filter(1, "family", ()), Filter(2, "fill", ()), Filter(3, "gas", ())]
    filters += [Filter(len(NAME_COLUMNS) + index, verifier.value, ()) for index, verifier in enumerate(verifiers)]
    filled = tuple(
        f if f.options else Filter(f.column, f.label, tuple(sorted({row.cells[f.column].text for row in rows})))
        for f in filters
    )
    return Table("fixtures", tuple(columns), tuple(rows), filled, what="fixtures")


def graph_picker(tests: Sequence[FilledTest]) -> Picker | None:
    """The dependency graph of each test, one picture at a time (arcs for conflicts, the critical path in red)."""
    images = {
        test.name: "data:image/png;base64," + base64.b64encode(graph_png(test.name, test.graph)).decode("ascii")
        for test in tests
        if test.graph is not None
    }
    if not images:
        return None
    return Picker(
        "graphs", "fixture", tuple(images), images=images,
        caption="Transactions in block order; an arc joins two that conflict, a colour per group that could not "
        "run apart, the critical path in red; below, each transaction's gas.",
    )  # fmt: skip


def fixture_scatter(tests: Sequence[FilledTest]) -> Chart | None:
    points = [
        (test.name, test_name(test.name).family, test.graph.transactions, test.graph.speedup_bound, test.gas_used or test.graph.block_gas)
        for test in tests
        if test.graph is not None and test.graph.transactions
    ]
    if not points:
        return None
    return Chart("bounds", charts.figure_json(charts.fixture_scatter(points)),
                 "Each point is a fixture (hover for its id): how many transactions, and how much of the block could run in parallel.")  # fmt: skip


def fixture_cards(tests: Sequence[FilledTest]) -> list[Card]:
    graphs = [test.graph for test in tests if test.graph is not None]
    families = {test_name(test.name).family for test in tests}
    cards = [Card("fixtures", f"{len(tests)}", f"{len(families)} families")]
    counted = [test.transactions for test in tests if test.transactions is not None]
    if counted:
        cards.append(Card("transactions", f"{sum(counted):,}", "in the benchmark blocks"))
        bounds = sorted(g.speedup_bound for g in graphs)
        cards.append(Card("speedup bound", f"{bounds[len(bounds) // 2]:.2f}x", f"median; {bounds[0]:.2f}x to {bounds[-1]:.2f}x"))
    return cards


def fill_page(path: Path) -> Page:
    """The page of a fill's output folder (or one fixture file)."""
    tests = filled_tests(path)
    if not tests:
        raise BadInput(f"{path}: no fixture in it (not a balgen fill output)")
    sections = [_fixtures_section(tests, fixture_table(tests))]
    return Page(title=f"Fixtures in {path.name or path}", kind="fill", subtitle=f"fill · {path.resolve()}",
                cards=tuple(fixture_cards(tests)), sections=tuple(sections))  # fmt: skip


def _fixtures_section(tests: Sequence[FilledTest], table: Table) -> Section:
    scatter = fixture_scatter(tests)
    picker = graph_picker(tests)
    return Section(
        "fixtures", "Fixtures",
        paragraphs=("Click a heading to sort, a row to see its dependency graph below.",),
        tables=(table,), charts=() if scatter is None else (scatter,), pickers=() if picker is None else (picker,),
    )  # fmt: skip


def verify_page(result: VerifyResult, source: Path) -> Page:
    """The page of a `balgen verify --output`: each verifier's verdict per fixture, beside the fixtures."""
    verifiers = [verifier for verifier in Verifier if verifier.value in result.verifiers]
    verdicts: dict[str, dict[Verifier, VerdictKind]] = {}
    for verdict in result.verdicts:
        verdicts.setdefault(verdict.test_id, {})[verdict.verifier] = verdict.verdict
    fixtures_path = Path(result.fixtures_path)
    tests = filled_tests(fixtures_path) if fixtures_path.exists() else []
    known = {test.name for test in tests}
    tests += [FilledTest(name, None) for name in sorted(verdicts) if name not in known]
    counts = {kind.value: [sum(v.verdict is kind and v.verifier is verifier for v in result.verdicts) for verifier in verifiers]
              for kind in VerdictKind}  # fmt: skip
    chart = Chart("verdicts", charts.figure_json(charts.verdict_counts([v.value for v in verifiers], counts)),
                  "Not applicable: the verifier implements another Amsterdam than the fixture's.")  # fmt: skip
    facts = [("fixtures", result.fixtures_path + (f" (-k {result.keyword})" if result.keyword else "")),
             ("filled by", result.filled_by or "-"), *((f"{name}", version) for name, version in result.verifiers.items()),
             ("left out", ", ".join(v.value for v in result.left_out) or "none"), ("balgen", result.balgen_version)]  # fmt: skip
    failed = tuple(
        Row((Cell(v.test_id), Cell(v.verifier.value), Cell(v.detail or "-", title=v.detail or ""), Cell(v.path)), test=v.test_id)
        for v in result.verdicts if v.verdict is VerdictKind.FAILED
    )  # fmt: skip
    sections = [
        Section("verifiers", "Verifiers", paragraphs=(result.summary,), facts=tuple(facts), charts=(chart,)),
        _fixtures_section(tests, fixture_table(tests, verdicts, verifiers)),
    ]
    if failed:
        columns = (Column("test"), Column("verifier"), Column("first difference"), Column("file"))
        sections.insert(1, Section("failed", f"{len(failed)} failed checks", tables=(Table("failed", columns, failed, what="checks"),)))
    passed = sum(v.verdict is VerdictKind.PASSED for v in result.verdicts)
    judged = sum(v.verdict is not VerdictKind.NOT_APPLICABLE for v in result.verdicts)
    cards = [Card("checks passed", f"{passed}/{judged}", result.summary, "faster" if passed == judged else "slower"),
             *fixture_cards(tests)]  # fmt: skip
    return Page(title=f"Verify of {fixtures_path.name or fixtures_path}", kind="verify",
                subtitle=f"verify · {source.resolve()}", cards=tuple(cards), sections=tuple(sections))  # fmt: skip
