"""benchmarks/first_minutes.py's record of runs and its picture: what the README's time figures are drawn from."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT_RECORD = ROOT / "docs" / "first-minutes.csv"


def _first_minutes() -> ModuleType:
    spec = importlib.util.spec_from_file_location("first_minutes", ROOT / "benchmarks" / "first_minutes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


first_minutes = _first_minutes()


def _run(target: str, wall: float, phases: dict[str, tuple[float, float]]) -> object:
    return first_minutes.Run(target, 1, "2026-11-30T08:33Z", "8f7f3c5", wall, 655.0, 0, 0.93, 0.85, phases)


def test_runs_appended_to_a_record_read_back_with_one_header(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    first_minutes.record([_run("test", 253.4, {})], path)
    first_minutes.record([_run("demo", 354.2, {"fill": (89.0, 171.0), "verify": (157.0, 305.0), "replay": (106.0, 177.0)})], path)
    assert path.read_text().count("started,") == 1
    test, demo = first_minutes.recorded(path)
    assert (test["command"], test["wall_s"], test["fill_wall_s"]) == ("test", "253.4", "")
    assert (demo["command"], demo["wall_s"], demo["loop_before"], demo["loop_after"]) == ("demo", "354.2", "0.93", "0.85")
    assert (demo["fill_wall_s"], demo["verify_wall_s"], demo["replay_wall_s"], demo["verify_cpu_s"]) == ("89.0", "157.0", "106.0", "305.0")


def test_the_project_s_record_draws_its_picture(tmp_path: Path) -> None:
    rows = first_minutes.recorded(PROJECT_RECORD)
    assert {row["command"] for row in rows} == set(first_minutes.TARGETS)
    picture = tmp_path / "first-minutes.png"
    first_minutes.plot(rows, picture)
    assert picture.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("started,commit\n", "line 1: no column 'command'"),
        (PROJECT_RECORD.read_text().splitlines()[0] + "\n2026-11-30T08:33Z,8f7f3c5,make,1,354,655,0.9,0.8,0,,,,,,\n",
         "line 2: command 'make' is neither demo nor test"),
        (PROJECT_RECORD.read_text().splitlines()[0] + "\n2026-11-30T08:33Z,8f7f3c5,demo,1,6:00,655,0.9,0.8,0,,,,,,\n",
         "line 2: wall_s '6:00' is not a number"),
    ],
    ids=["header", "command", "wall"],
)
def test_a_record_that_is_not_one_is_one_line_and_exit_2_with_nothing_drawn(
    tmp_path: Path, text: str, said: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad, picture = tmp_path / "runs.csv", tmp_path / "runs.png"
    bad.write_text(text)
    monkeypatch.setattr(sys, "argv", ["first_minutes.py", "--runs", "0", "--record", str(bad), "--plot", str(picture)])
    assert first_minutes.main() == 2
    err = capsys.readouterr().err
    assert err.startswith(f"first_minutes: {bad}: {said}") and err.count("\n") == 1 and err.endswith("\n")
    assert not picture.exists()


def test_a_picture_for_a_folder_that_does_not_exist_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    picture = tmp_path / "no-such-folder" / "runs.png"
    monkeypatch.setattr(sys, "argv", ["first_minutes.py", "--runs", "0", "--record", str(PROJECT_RECORD), "--plot", str(picture)])
    assert first_minutes.main() == 2
    assert capsys.readouterr().err == f"first_minutes: {picture}: its folder {picture.parent} does not exist\n"
    assert list(tmp_path.iterdir()) == []
