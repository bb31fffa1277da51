"""
Issue 34's findings on the commands added in the second round (`report`,
`devnet-check`, `devnet-genesis`, `genesis`, `export --check-chain`): each
test fails on dd375dc and passes now; docs/reliability.md has a row for each.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_reliability_hostile import balgen, one_line, results_document, write_run

# -- finding 2: a passed test without statistics ---------------------------------------------


def test_report_compares_around_a_passed_test_without_statistics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`statistics: null` on a passed test (the schema allows it) leaves that test out of every table."""
    baseline = write_run(tmp_path / "a", results_document("a", {"t1": 100.0, "t2": 100.0}))
    document = results_document("b", {"t1": 125.0, "t2": 50.0})
    document["tests"][1]["statistics"] = None
    run = write_run(tmp_path / "b", document)
    code, err = balgen(capsys, "report", baseline, run, "--output", tmp_path / "report")
    assert code == 0, err
    report = (tmp_path / "report" / "report.md").read_text()
    assert "| t1 | 100 | 125 | +25.0% |" in report
    assert "-50.0%" not in report, "t2 has no statistics in b: nothing to compare"


# -- finding 6: runs of different fixtures under the same test id -----------------------------


def test_report_refuses_runs_of_different_fixtures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baseline = write_run(tmp_path / "a", results_document("a", {"t1": 100.0, "t2": 100.0}))
    document = results_document("b", {"t1": 38.0, "t2": 38.0})
    for test in document["tests"]:
        test["genesis_hash"] = "0x" + "33" * 32
    run = write_run(tmp_path / "b", document)
    code, err = balgen(capsys, "report", baseline, run, "--output", tmp_path / "report")
    line = one_line(err, "report")
    assert code == 2, line
    assert "replayed different fixtures: test t1 has genesis 0x3333" in line, line
    assert "(and 1 more tests)" in line and "compare runs of the same fixtures" in line, line
    assert not (tmp_path / "report").exists()
