"""
`balgen report ... --html PAGE`: one self-contained page for a modes run, one run alone,
runs compared, a fill and a verify; bad input refused with one line and no page; and
the page opened in a real headless chromium (sorted, filtered, its charts drawn).
"""

from __future__ import annotations

import io
import json
import re
import struct
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rich.console import Console

from balgen.analysis import INFO_KEY, DependencyGraph
from balgen.commands.report import run_report
from balgen.commands.verify import run_verify
from balgen.pages.run_page import REST
from balgen.results.confidence import delta_text, interval_text, paired_change
from balgen.results.schema import RunResult
from balgen.verify.outcomes import Verifier
from balgen.verify.verdicts_file import VERIFY_JSON, FixtureVerdict, VerdictKind, VerifyResult, load_verify_result

from browser import HEIGHT, WIDTH, chromium, missing, open_page
from report_runs import SLOWED, modes_run, single_runs

EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//|@import|url\(\s*["']?(?:https?:)?//""", re.IGNORECASE)
"""Anything that would make the page fetch from the network."""


class _Rows(HTMLParser):
    """The `data-test` of each row of each table, in page order, keyed by the table's block."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[str]] = {}
        self._table: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "div" and found.get("data-table"):
            self._table = found["data-table"]
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None and found.get("data-test"):
            self.tables[self._table].append(found["data-test"] or "")


def _rows(page: Path) -> dict[str, list[str]]:
    parser = _Rows()
    parser.feed(page.read_text())
    return parser.tables


def _data(page: Path) -> dict:
    """The figures and pictures the page carries for its script."""
    found = re.search(r'<script type="application/json" id="balgen-data">(.*?)</script>', page.read_text(), re.S)
    assert found is not None
    return json.loads(found.group(1))


def _report(*args: str | Path) -> int:
    return run_report([str(arg) for arg in args])


MODES_RUN_TESTS = 30
"""The tests of the modes run whose page is read and opened in chromium: every family and fill at 30M, and
the first four families' at 60M (`prefetch-max-60M` among them); the invalid-BAL one comes beside them."""


@pytest.fixture(scope="module")
def modes_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """`balgen report` of a modes run with `--html` and `--output`, made once (about 2 CPU-s) for the tests
    that read the page and the one that opens it in chromium: the page and report.md."""
    folder = tmp_path_factory.mktemp("modes-page")
    page = folder / "page.html"
    assert _report(modes_run(folder / "run", count=MODES_RUN_TESTS), "--html", page, "--output", folder / "md") == 0
    return page, folder / "md" / "report.md"


def test_a_modes_run_page_stands_alone_with_regressions_first(modes_page: tuple[Path, Path]) -> None:
    page, _ = modes_page
    text = page.read_text()
    markup = re.sub(r"<script[^>]*>.*?</script>", "", text, flags=re.S)
    assert not EXTERNAL.search(markup), f"the page fetches from the network: {EXTERNAL.search(markup)}"
    assert "<script src" not in text and "<link" not in text
    assert "Plotly.react" in text and len(text) > 1_000_000, "plotly.js is inlined, not linked"
    rows = _rows(page)
    assert rows["tests"][0] == SLOWED, "the one test slower in a mode is listed first"
    assert len(rows["tests"]) == MODES_RUN_TESTS + 1, "every test compared (and the invalid-BAL one)"
    for mode in ("sequential", "full", "nobatchio", "full#2"):
        assert f"<td>{mode}</td>" in text, f"mode {mode} listed with its flags and proof"
    assert "slow-block log: mode full confirmed" in text
    assert "invalid_bal_missing_read/mixed_dep-max-30M" in rows["rejections"]
    assert rows["failures"] == ["prefetch-max-group39-60M"]
    data = _data(page)
    assert set(data["charts"]) == {"families", "rejections"}
    parts = [trace["name"] for trace in data["pickers"]["phases"]["figures"][SLOWED]["data"]]
    assert parts == ["commit", REST], "geth's phases that time other work in full than in sequential are not set side by side"
    assert "state hash is not shown on its own" in text and "state hash runs beside execution" in text


def test_one_run_alone_and_two_runs_compared(tmp_path: Path) -> None:
    sequential, full = single_runs(tmp_path, count=18)
    alone, compared = tmp_path / "alone.html", tmp_path / "compared.html"
    assert _report(sequential, "--html", alone) == 0
    assert "replay run" in alone.read_text() and len(_rows(alone)["tests"]) == 19
    assert _report(sequential, full, "--html", compared) == 0
    text = compared.read_text()
    assert "geth-sequential against geth-full" in text
    assert _rows(compared)["tests"][0] == SLOWED


def _fixture_folder(folder: Path) -> tuple[Path, DependencyGraph]:
    """A fill's output as balgen writes it: one fixture file, its graph in `_info` (a chain 0-1-2 beside a lone 3)."""
    graph = DependencyGraph((21_000, 50_000, 80_000, 30_000), ((0, 1), (1, 2)))
    folder.mkdir()
    for format_name in ("blockchain_test", "blockchain_test_engine_x"):
        fixture = {"_info": {"fixture-format": format_name, INFO_KEY: graph.info()}}
        (folder / f"{format_name}.json").write_text(json.dumps({"serial_chain-max-1M": fixture, "prefetch-half-1M": fixture}))
    return folder, graph


def test_a_fill_page_shows_each_fixture_once_with_its_graph(tmp_path: Path) -> None:
    fixtures, graph = _fixture_folder(tmp_path / "fill")
    page = tmp_path / "fill.html"
    assert _report(fixtures, "--html", page) == 0
    text = page.read_text()
    assert _rows(page)["fixtures"] == ["prefetch-half-1M", "serial_chain-max-1M"], "a test written in two formats is one row"
    assert f"{graph.speedup_bound:.2f}x" in text and "blockchain, engine_x" in text
    images = _data(page)["pickers"]["graphs"]["images"]
    assert sorted(images) == ["prefetch-half-1M", "serial_chain-max-1M"], "a dependency graph picture per fixture"
    assert all(image.startswith("data:image/png;base64,iVBORw0KGgo") for image in images.values())


def test_a_verify_page_lists_the_failed_check_first(tmp_path: Path) -> None:
    fixtures, _ = _fixture_folder(tmp_path / "fill")
    output = tmp_path / "verified"
    output.mkdir()
    verdicts = [
        FixtureVerdict(test_id=name, verifier=verifier, verdict=verdict, path=str(fixtures / "blockchain_test.json"),
                       detail="post state root differs" if verdict is VerdictKind.FAILED else None)
        for name, verdict in (("prefetch-half-1M", VerdictKind.PASSED), ("serial_chain-max-1M", VerdictKind.FAILED))
        for verifier in (Verifier.GETH, Verifier.REVM)
    ]  # fmt: skip
    result = VerifyResult(balgen_version="0.1.0", fixtures_path=str(fixtures), fixture_count=2,
                          verifiers={"geth": "evm 1.17.10", "revm": "revme 43.0.3"}, summary="2 fixtures: geth 1/2, revm 1/2",
                          verdicts=verdicts)  # fmt: skip
    (output / VERIFY_JSON).write_text(result.model_dump_json())
    page = tmp_path / "verify.html"
    assert _report(output, "--html", page) == 0
    rows = _rows(page)
    assert rows["fixtures"][0] == "serial_chain-max-1M", "the failed fixture first"
    assert rows["failed"] == ["serial_chain-max-1M", "serial_chain-max-1M"]
    assert "post state root differs" in page.read_text()


@pytest.mark.integration
def test_a_real_fill_and_its_verify_have_pages(serial_chain_fill: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fill_page = tmp_path / "fill.html"
    assert _report(serial_chain_fill, "--html", fill_page) == 0
    assert _rows(fill_page)["fixtures"] == ["serial_chain-max-1M"]
    assert "serial_chain-max-1M" in _data(fill_page)["pickers"]["graphs"]["images"]
    verify = [str(serial_chain_fill), "--without", "revm,ethereumjs", "--output"]
    quiet = Console(file=io.StringIO(), width=200)
    assert run_verify([*verify, "/proc/balgen-verified"], console=quiet) == 2, "an output folder that takes no file"
    assert "cannot write to /proc/balgen-verified" in capsys.readouterr().err
    assert run_verify([*verify, str(tmp_path / "verified")], console=quiet) == 0
    result = load_verify_result(tmp_path / "verified")
    assert {(v.test_id, v.verifier, v.verdict) for v in result.verdicts} == {
        ("serial_chain-max-1M", Verifier.GETH, VerdictKind.PASSED), ("serial_chain-max-1M", Verifier.ENGINE, VerdictKind.PASSED),
    }  # fmt: skip
    assert result.left_out == [Verifier.REVM, Verifier.ETHEREUMJS] and result.summary.startswith("1 fixtures: geth 1/1")
    verify_page = tmp_path / "verify.html"
    assert _report(tmp_path / "verified", "--html", verify_page) == 0
    assert _rows(verify_page)["fixtures"] == ["serial_chain-max-1M"] and "failed" not in _rows(verify_page)


def _one_line_exit_2(capsys: pytest.CaptureFixture[str], *args: str | Path) -> str:
    assert _report(*args) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1, error
    return error


def test_bad_input_is_one_line_and_no_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "out" / "page.html"
    page.parent.mkdir()
    stray = tmp_path / "notes"
    stray.mkdir()
    (stray / "notes.txt").write_text("not a run")
    assert "notes: not a balgen replay run, fill or verify output" in _one_line_exit_2(capsys, stray, "--html", page)
    first = modes_run(tmp_path / "a", count=4, failed=False, rejections=False)
    other = RunResult.model_validate_json((modes_run(tmp_path / "b", count=4, failed=False, rejections=False) / "results.json").read_text())
    for test in other.tests:
        test.genesis_hash = "0x" + "cd" * 32
    (tmp_path / "b" / "results.json").write_text(other.model_dump_json())
    assert "replayed different fixtures" in _one_line_exit_2(capsys, first, tmp_path / "b", "--html", page)
    fixtures, _ = _fixture_folder(tmp_path / "fill")
    assert "give outputs of one kind" in _one_line_exit_2(capsys, first, fixtures, "--html", page)
    assert "cannot write" in _one_line_exit_2(capsys, first, "--html", "/proc/balgen-page.html")
    assert "is a folder" in _one_line_exit_2(capsys, first, "--html", page.parent)
    assert "does not exist" in _one_line_exit_2(capsys, first, "--html", tmp_path / "nowhere" / "page.html")
    assert list(page.parent.iterdir()) == [], "no page, no temporary file left"


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", header[16:24])


@pytest.mark.integration
@pytest.mark.skipif(missing() is not None, reason=missing() or "")
def test_the_page_works_in_chromium(modes_page: tuple[Path, Path], tmp_path: Path) -> None:
    page, report = modes_page
    markdown = report.read_text()
    with chromium() as driver:
        open_page(driver, page)
        errors = [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]
        assert errors == [], errors
        fetched = driver.execute_script("return performance.getEntriesByType('resource').map((entry) => entry.name)")
        assert fetched == [], "the page loads nothing beside itself"
        shot = tmp_path / "page.png"
        assert driver.save_screenshot(str(shot))
        assert _png_size(shot) == (WIDTH, HEIGHT)

        def shown(column: int) -> list[str]:
            return driver.execute_script(
                "return Array.from(document.querySelectorAll('[data-table=tests] tbody tr'))"
                ".filter((row) => !row.hidden).map((row) => row.cells[arguments[0]].dataset.sort ?? row.cells[arguments[0]].textContent)",
                column,
            )

        headers = driver.execute_script("return Array.from(document.querySelectorAll('[data-table=tests] th')).map((th) => th.textContent)")
        delta = headers.index("full Δ")
        driver.execute_script("document.querySelectorAll('[data-table=tests] th')[arguments[0]].click()", delta)
        ascending = [float(value) for value in shown(delta)]
        assert ascending == sorted(ascending) and ascending[0] < 0, "sorted by full's change, the regression first"
        driver.execute_script("document.querySelectorAll('[data-table=tests] th')[arguments[0]].click()", delta)
        assert [float(value) for value in shown(delta)] == sorted(ascending, reverse=True)

        family = headers.index("family")
        driver.execute_script(
            "const select = document.querySelector('[data-table=tests] select.filter[data-column=\"' + arguments[0] + '\"]');"
            "select.value = 'prefetch'; select.dispatchEvent(new Event('change'));",
            family,
        )
        families = shown(family)
        assert families and set(families) == {"prefetch"}
        count = driver.execute_script("return document.querySelector('[data-table=tests] .count').textContent")
        assert count == f"{len(families)} of {MODES_RUN_TESTS + 1} tests"

        driver.execute_script("document.querySelector('[data-table=tests] tr[data-test=\"prefetch-max-60M\"]').click()")
        chosen = driver.execute_script("return document.querySelector('[data-picker=phases] select').value")
        assert chosen == "prefetch-max-60M", "a click on a row shows its phases"
        title = driver.execute_script("return document.querySelector('[data-picker=phases] .gtitle').textContent")
        assert title == "prefetch-max-60M"

        def fallback(part: str) -> list[list[str]]:
            return driver.execute_script(
                "return Array.from(document.querySelectorAll('[data-table=\"fallback-0-' + arguments[0] + '\"] tbody tr'))"
                ".filter((row) => !row.hidden).map((row) => Array.from(row.cells).map((cell) => cell.textContent.trim()))",
                part,
            )

        for part in ("tests", "aggregate", "families"):
            rows = fallback(part)
            assert rows and all("| " + " | ".join(row) + " |" in markdown for row in rows), f"the page's {part} are report.md's"
        policies = {row[0]: row for row in fallback("aggregate")}
        assert {"always parallel", "always sequential"} < policies.keys()
        assert policies["always parallel"][4] == SLOWED, "always parallel's worst case: the test parallel slows down"
        assert len(fallback("tests")) == MODES_RUN_TESTS + 1 and {row[0] for row in fallback("families")} >= {"serial_chain", "prefetch"}
        loss = driver.execute_script(
            "return Array.from(document.querySelectorAll('[data-table=\"fallback-0-tests\"] th')).map((th) => th.textContent)"
        ).index("loss")
        for _ in range(2):  # ascending, then descending
            driver.execute_script("document.querySelectorAll('[data-table=\"fallback-0-tests\"] th')[arguments[0]].click()", loss)
        assert fallback("tests")[0][0] == SLOWED, "sorted by loss, the test the rule chose wrong for first"
        assert [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"] == []


def test_a_test_with_too_few_executions_says_what_is_missing_in_text_and_page(tmp_path: Path) -> None:
    """Issue 40: where a test has too few executions for an interval, both reports say how many it had, never `nan`."""
    sequential, full = single_runs(tmp_path, count=6)
    run = RunResult.model_validate_json((full / "results.json").read_text())
    short = run.tests[0]
    short.executions = short.executions[:2]
    (full / "results.json").write_text(run.model_dump_json())
    page = tmp_path / "page.html"
    assert _report(sequential, full, "--html", page, "--output", tmp_path / "report") == 0
    text = (tmp_path / "report" / "report.md").read_text()
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith(f"| {short.test_id} | ")]
    (test_row,) = [row for row in rows if len(row) == 6 and row[1].replace(",", "").isdigit()]  # test, MGas/s × 2, Δ, interval, verdict
    assert test_row[4:] == ["n/a: 2 executions, 3 needed", "too few executions |"], test_row
    assert all(row[-2] == "n/a: 2 executions, 3 needed" for row in rows if len(row) == 8), "its phases alike"
    assert "nan" not in text
    assert "n/a: 2 executions, 3 needed" in page.read_text() and "nan%" not in page.read_text()
    no_round = paired_change([])
    assert (delta_text(no_round), interval_text(no_round)) == ("n/a: 0 paired rounds, 3 needed",) * 2
    assert interval_text(paired_change([1.01])) == "n/a: 1 paired round, 3 needed"
