"""
Issue 43 (fourth round), item 4: the hostile cases that did not end as
promised on main a6f656a, one test per finding (see the fourth round's table in
docs/reliability.md): one line and exit code 2, or 128 + N on a signal,
nothing half-written, nothing left running.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from balgen.commands.report import run_report
from balgen.results.schema import RunResult, Verdict

from test_report_modes import _modes_run
from test_reliability_environment import balgen_subprocess, one_line

integration = pytest.mark.integration


def _edited_modes_run(folder: Path, *, failed_mode: str | None = None, renamed: tuple[str, str] | None = None) -> Path:
    """`test_report_modes`' four-mode run with one mode's every test failed, or one mode renamed."""
    _modes_run(folder)
    run = RunResult.model_validate_json((folder / "results.json").read_text())
    for test in run.tests:
        if test.mode == failed_mode:
            test.verdict, test.failure, test.statistics, test.executions = Verdict.FAILED, "the client was lost", None, []
        if renamed is not None and test.mode == renamed[0]:
            test.mode = renamed[1]
    for mode in run.modes:
        if renamed is not None and mode["name"] == renamed[0]:
            mode["name"] = renamed[1]
    (folder / "results.json").write_text(run.model_dump_json())
    return folder


def test_a_modes_run_with_one_mode_that_failed_everything_compares_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _edited_modes_run(tmp_path / "run", failed_mode="nobatchio")
    assert run_report([str(run), "--output", str(tmp_path / "report")]) == 0
    err = capsys.readouterr().err
    assert err == f"balgen report: left out geth-modes-nobatchio ({run}): no passed, measured test\n", err
    text = (tmp_path / "report" / "report.md").read_text()
    assert "| geth-modes-full | execution | 2 | 2 | 0 | -62.5% |" in text, "the other modes are still compared"
    assert f"## Left out\n\n- geth-modes-nobatchio ({run}): no passed, measured test\n" in text


def test_a_modes_run_whose_baseline_mode_failed_everything_compares_the_others_with_the_next(tmp_path: Path) -> None:
    run = _edited_modes_run(tmp_path / "run", failed_mode="sequential")
    assert run_report([str(run), "--output", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert "Baseline: `geth-modes-full`." in text and "- geth-modes-sequential (" in text


def test_two_runs_with_nothing_to_compare_are_still_refused(tmp_path: Path) -> None:
    run = _edited_modes_run(tmp_path / "run", failed_mode="full")
    only_two = json.loads((run / "results.json").read_text())
    only_two["modes"] = [mode for mode in only_two["modes"] if mode["name"] in ("sequential", "full")]
    only_two["tests"] = [test for test in only_two["tests"] if test["mode"] in ("sequential", "full")]
    (run / "results.json").write_text(json.dumps(only_two))
    completed = balgen_subprocess("report", run, "--output", tmp_path / "report")
    assert completed.returncode == 2, completed.stderr
    assert one_line(completed.stderr, "report").endswith("have no passed, measured test in common: nothing to compare")
    assert not (tmp_path / "report").exists()


def test_a_mode_name_with_escape_sequences_reaches_neither_terminal_nor_stderr(tmp_path: Path) -> None:
    run = _edited_modes_run(tmp_path / "run", renamed=("full", "full\x1b[2J[bold]x[/x]"))
    completed = balgen_subprocess("report", run, "--output", tmp_path / "report")
    assert completed.returncode == 0, completed.stderr
    assert "\x1b" not in completed.stdout and "geth-modes-full\\x1b[2J[bold]x[/x]" in completed.stdout
    assert completed.stderr == "", "no matplotlib warning (a glyph its font lacks) on stderr"
    assert "\x1b" not in (tmp_path / "report" / "report.md").read_text()


FINALIZER_STOP = """
import signal, sys, time
from balgen.commands.runner import run_command

class Finalized:
    def __del__(self):
        signal.raise_signal(signal.{signal})  # Python runs the handler at the next instruction: in here
        for _ in range(1000):
            pass

def body():
    Finalized()  # dropped at once, so its __del__ runs here
    for _ in range(100):
        time.sleep(0.01)
    print("ran to the end")
    return 0

sys.exit(run_command("demo", body))
"""


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_signal_handled_inside_a_finalizer_still_stops_the_command(stop: signal.Signals) -> None:
    """
    Finding 1's race, made deterministic: the signal is handled while a
    finalizer runs (as a garbage-collected generator's or a Popen's in the
    fill), where Python drops the exception it raises.
    """
    completed = subprocess.run(
        [sys.executable, "-c", FINALIZER_STOP.format(signal=stop.name)], capture_output=True, text=True, timeout=60
    )
    name = "interrupted" if stop == signal.SIGINT else "terminated (SIGTERM)"
    assert (completed.returncode, completed.stderr) == (128 + stop, f"balgen demo: {name}\n"), completed
    assert "ran to the end" not in completed.stdout


def test_more_modes_than_nodes_that_may_run_at_once_are_refused_before_any_starts(tmp_path: Path) -> None:
    output = tmp_path / "results"
    nine = ",".join(["sequential"] * 9)  # an A/A/A... run: sequential, sequential#2, ...
    completed = balgen_subprocess(
        "replay", tmp_path, "--client", "reth", "--client-bin", sys.executable, "--modes", nine, "--output", output
    )
    assert completed.returncode == 2, completed.stderr
    assert one_line(completed.stderr, "replay").startswith("balgen replay: --modes: 9 modes, at most 8: every mode's node runs at once")
    assert not output.exists()
