"""
Issue 17: hostile input that made a balgen command hang, crash or lose a
result on main 0955285, one test per case and its class (see the tables in
docs/reliability.md). Every case must end in one line on stderr naming the
file, test id and field (or option), exit code 2 for bad input or 128 + the
signal for a stop, no traceback, and leave no process, scratch folder or
`running` results file behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from balgen.cli import main as balgen_main
from balgen.errors import BadInput
from balgen.fill_options import MAX_GAS_VALUE, MIN_GAS_VALUE, parse_gas_values
from balgen.workload import gas_millions

NAME = "serial_chain-max-1M"


def one_line(err: str, command: str) -> str:
    """The single stderr line of a rejected or stopped command, checked for shape."""
    assert "Traceback" not in err, err
    assert err.count("\n") == 1 and err.endswith("\n"), f"want one line, got {err!r}"
    assert err.startswith(f"balgen {command}: "), err
    assert "\x1b" not in err, err
    return err.rstrip("\n")


def balgen(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str]:
    """`balgen ARGV` in this process: (exit code, stderr)."""
    code = balgen_main([str(argument) for argument in argv])
    return code, capsys.readouterr().err


def catches(pid: int, stop: signal.Signals) -> bool:
    """Whether process `pid` has a handler for `stop` (its SigCgt mask in /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (stop - 1) & 1)
    return False


def wait_until_catching(process: subprocess.Popen[str], stop: signal.Signals, timeout: float = 60) -> None:
    """Wait until the command has installed its stop handlers (past Python's start-up)."""
    deadline = time.monotonic() + timeout
    while not catches(process.pid, signal.SIGHUP if stop == signal.SIGINT else stop):
        assert process.poll() is None and time.monotonic() < deadline, "the command never got going"
        time.sleep(0.05)


# -- item 5: fill -k with a malformed expression -------------------------------------


@pytest.mark.parametrize("expression", ["serial_chain and", "(x", "x$"])
def test_fill_malformed_keyword_is_one_line_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], expression: str
) -> None:
    output = tmp_path / "out"
    code, err = balgen(capsys, "fill", "--gas-benchmark-values", "1", "--output", output, "-k", expression)
    line = one_line(err, "fill")
    assert code == 2 and f"-k {expression!r}: " in line, line
    assert not output.exists()


# -- items 10 and 11: one gas-value parser, one range -----------------------------------


@pytest.mark.parametrize("value", ["0.000001", "0.5", "100000", "1000.5", "1e-7"])
def test_a_gas_value_out_of_range_is_refused_alike_by_fill_and_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    fill_code, err = balgen(capsys, "fill", "--gas-benchmark-values", value, "--output", tmp_path / "fill", "-k", NAME)
    fill_line = one_line(err, "fill")
    code, err = balgen(capsys, "export", "spamoor", "--gas-benchmark-values", value, "--output", tmp_path / "export")
    export_line = one_line(err, "export spamoor")
    assert (fill_code, code) == (2, 2), (fill_line, export_line)
    assert fill_line.removeprefix("balgen fill: ") == export_line.removeprefix("balgen export spamoor: ")
    assert f"--gas-benchmark-values: {value!r}" in fill_line
    assert not (tmp_path / "fill").exists() and not (tmp_path / "export").exists()


GAS_TEXT = st.one_of(
    st.decimals(allow_nan=True, allow_infinity=True).map(str),
    st.floats().map(repr),
    st.integers(-(10**12), 10**12).map(str),
    st.from_regex(r"\A[0-9]{0,5}(\.[0-9]{0,8})?(e-?[0-9]{1,3})?\Z"),
    st.text(max_size=12),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(GAS_TEXT, min_size=1, max_size=4))
def test_fuzz_gas_values_are_whole_in_range_and_named_uniquely(parts: list[str]) -> None:
    """Any text: refused in one line, or whole gas amounts in range whose names are distinct and read back."""
    try:
        values = parse_gas_values(",".join(parts))
    except BadInput as error:
        assert "\n" not in str(error) and str(error).startswith("--gas-benchmark-values: ")
        return
    assert all(isinstance(value, int) and MIN_GAS_VALUE <= value <= MAX_GAS_VALUE for value in values), values
    names = [gas_millions(value) for value in values]
    assert len(set(names)) == len(names), names
    assert parse_gas_values(",".join(names)) == values


# -- item 10: Ctrl-C and other stop signals during a long export -------------------------

STOPS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT]


@pytest.mark.parametrize("stop", STOPS, ids=[stop.name for stop in STOPS])
def test_a_stopped_export_says_so_in_one_line_and_writes_nothing(tmp_path: Path, stop: signal.Signals) -> None:
    export = subprocess.Popen(
        [sys.executable, "-m", "balgen.cli", "export", "spamoor", "--gas-benchmark-values", "60", "--output", "out"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_until_catching(export, stop)
        time.sleep(0.5)  # inside the export's work
        export.send_signal(stop)
        _, err = export.communicate(timeout=60)
    finally:
        export.kill()
    line = one_line(err, "export spamoor")
    assert export.returncode == 128 + stop, line
    assert ("interrupted" if stop == signal.SIGINT else f"terminated ({stop.name})") in line
    assert os.listdir(tmp_path) == [], "nothing written, no temporary folder"


# -- item 12: report on meaningless runs ---------------------------------------------------


def results_document(label: str, tests: dict[str, float]) -> dict[str, Any]:
    """A finished run's results.json with one passed test per (id, MGas/s), as `balgen replay` writes it."""
    from balgen.replay.measurements import Execution, Role, benchmark_statistics
    from balgen.replay.results import FixtureResult, RunResult, RunState, Verdict

    results = []
    for test_id, mgas in tests.items():
        execution = Execution(
            test_id=test_id, role=Role.MEASURED, repetition=0, payload_index=1, block_number=1,
            block_hash="0x" + "11" * 32, gas_used=1_000_000, transaction_count=1, status="VALID",
            new_payload_ns=int(1e9 / mgas), forkchoice_updated_ns=1, known_before_send=False,
            restarted_before=False, geth=None,
        )  # fmt: skip
        results.append(
            FixtureResult(
                test_id=test_id, fixture_name=test_id, path="f.json", format="blockchain_test_engine_x",
                genesis_hash="0x" + "22" * 32, verdict=Verdict.PASSED, failure=None, benchmark_gas_used=1_000_000,
                executions=[execution], statistics=benchmark_statistics([execution]),
            )  # fmt: skip
        )
    run = RunResult(
        label=label, balgen_version="0", started_at="2026-01-01T00:00:00+00:00", fixtures_path="f", keyword=None,
        warmup=0, repeat=1, cold=False, fail_fast=False, target={"kind": "managed"}, state=RunState.COMPLETE,
        tests=results,
    )  # fmt: skip
    return json.loads(run.model_dump_json())


def write_run(folder: Path, document: dict[str, Any], raw: str | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(raw if raw is not None else json.dumps(document))
    return folder


def with_median(metric: str, literal: str) -> tuple[dict[str, Any], str]:
    """Run b with the median of `metric` replaced by a JSON literal (NaN and Infinity are not JSON numbers)."""
    document = results_document("b", {"t1": 100.0})
    document["tests"][0]["statistics"][metric]["median"] = 12345.678
    return document, json.dumps(document).replace("12345.678", literal)


def _edited_b(edit: Any) -> tuple[dict[str, Any], str | None]:
    document = results_document("b", {"t1": 100.0, "t2": 90.0})
    edit(document)
    return document, None


REPORT_CASES: dict[str, tuple[tuple[dict[str, Any], str | None], list[str]]] = {
    "runs sharing no test": (
        (results_document("b", {"other": 100.0}), None),
        ["no passed, measured test in common"],
    ),
    "NaN MGas/s": (with_median("mgas_per_second", "NaN"), ["tests.0", "t1", "statistics.mgas_per_second.median is nan"]),
    "Infinity MGas/s": (with_median("mgas_per_second", "Infinity"), ["statistics.mgas_per_second.median is inf"]),
    "negative MGas/s": (with_median("mgas_per_second", "-128"), ["statistics.mgas_per_second.median is -128"]),
    "zero MGas/s": (with_median("mgas_per_second", "0"), ["statistics.mgas_per_second.median is 0"]),
    "negative newPayload time": (with_median("new_payload_ns", "-5"), ["statistics.new_payload_ns.median is -5"]),
    "a test listed twice": (
        _edited_b(lambda d: d["tests"][1].update({"test_id": "t1"})),
        ["tests.1", "test t1 is listed twice"],
    ),
    "a test id with a newline and ESC": (
        _edited_b(lambda d: d["tests"][0].update({"test_id": "t1\n| \x1b[31mred"})),
        ["tests.0", "test id 't1\\n| \\x1b[31mred'"],
    ),
}


@pytest.mark.parametrize("case", list(REPORT_CASES))
def test_report_refuses_meaningless_runs_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    (document, raw), words = REPORT_CASES[case]
    baseline = write_run(tmp_path / "a", results_document("a", {"t1": 100.0, "t2": 100.0}))
    run = write_run(tmp_path / "b", document, raw)
    code, err = balgen(capsys, "report", baseline, run, "--output", tmp_path / "report")
    line = one_line(err, "report")
    assert code == 2, line
    for word in words:
        assert word in line, (word, line)
    assert not (tmp_path / "report").exists()


def test_report_of_sound_runs_still_works(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baseline = write_run(tmp_path / "a", results_document("a", {"t1": 100.0, "t2": 100.0}))
    run = write_run(tmp_path / "b", results_document("b", {"t1": 125.0, "t2": 80.0, "only-in-b": 1.0}))
    code, _ = balgen(capsys, "report", baseline, run, "--output", tmp_path / "report")
    assert code == 0
    assert "| t1 | 100 | 125 | +25.0% |" in (tmp_path / "report" / "report.md").read_text()


# -- item 14: inspect --plot where no image would land --------------------------------------


@pytest.fixture(scope="module")
def filled(serial_chain_fill: Path) -> Path:
    return serial_chain_fill


def engine_x_file(root: Path) -> Path:
    return next((root / "blockchain_tests_engine_x").glob(f"for_*/*/{NAME}.json"))


@pytest.mark.parametrize("case", ["an existing folder", "no extension", "an unknown extension", "a missing folder"])
def test_inspect_plot_to_a_path_it_cannot_honour_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], filled: Path, case: str
) -> None:
    target = {
        "an existing folder": tmp_path / "pictures",
        "no extension": tmp_path / "graphs",
        "an unknown extension": tmp_path / "graphs.json",
        "a missing folder": tmp_path / "nowhere" / "graphs.png",
    }[case]
    (tmp_path / "pictures").mkdir()
    code, err = balgen(capsys, "inspect", engine_x_file(filled), "--plot", target)
    line = one_line(err, "inspect")
    assert code == 2 and f"--plot {target}: " in line, line
    assert sorted(os.listdir(tmp_path)) == ["pictures"] and os.listdir(tmp_path / "pictures") == []


@pytest.mark.parametrize("name", ["graphs.png", "graphs.svg"])
def test_inspect_plot_lands_exactly_where_it_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], filled: Path, name: str
) -> None:
    code = balgen_main(["inspect", str(engine_x_file(filled)), "--plot", str(tmp_path / name)])
    assert code == 0 and f"to {tmp_path / name}" in capsys.readouterr().out.replace("\n", "")
    assert os.listdir(tmp_path) == [name]


# -- item 15: test ids that would drive the terminal -------------------------------------------


@pytest.mark.parametrize("test_id", [f"{NAME}\n| injected row", f"\x1b[2J\x1b[31m{NAME}", f"{NAME}\udcff"])
def test_inspect_refuses_a_test_id_with_control_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], filled: Path, test_id: str
) -> None:
    path = tmp_path / "fixture.json"
    document = json.loads(engine_x_file(filled).read_text())
    path.write_text(json.dumps({test_id: document[NAME]}))
    code, err = balgen(capsys, "inspect", path)
    line = one_line(err, "inspect")
    assert code == 2 and f"{path}: test id '" in line and "holds a control character" in line, line
    assert capsys.readouterr().out == ""


def test_a_file_name_with_control_characters_is_printed_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "a\x1b[31m\nb"
    code, err = balgen(capsys, "inspect", folder)
    line = one_line(err, "inspect")
    assert code == 2 and "a\\x1b[31m\\nb: does not exist" in line, line

