"""`make demo` ends with the time each phase took, also when a phase fails and the demo stops there."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from balgen.commands import demo
from balgen.plumbing import machine_speed


def _phases(monkeypatch: pytest.MonkeyPatch, codes: dict[str, int], arguments: dict[str, list[str]] | None = None) -> list[str]:
    ran: list[str] = []

    def phase(name: str) -> Callable[..., int]:
        def run(args: list[str], **_kwargs: object) -> int:
            ran.append(name)
            if arguments is not None:
                arguments[name] = args
            sum(range(200_000))  # some CPU time to measure
            return codes.get(name, 0)

        return run

    monkeypatch.setattr(machine_speed, "REFERENCE_LOOP", 1000)  # the line is tested, not a second of CPU per test
    monkeypatch.setattr(demo, "run_fill", phase("fill"))
    monkeypatch.setattr(demo, "run_verify", phase("verify"))
    monkeypatch.setattr(demo, "run_replay", phase("replay"))
    return ran


def _rows(output: str) -> dict[str, tuple[str, str]]:
    """Phase name -> (wall, CPU) as printed in the table."""
    time = r"(\d+ min \d\d\.\d s)"
    return {m[1]: (m[2], m[3]) for m in re.finditer(rf"│ (\w+)\s+│\s+{time} │\s+{time} │", output)}


def test_the_demo_prints_each_phase_time_and_the_total(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    ran = _phases(monkeypatch, {})
    assert demo.main() == 0
    assert ran == ["fill", "verify", "replay"]
    out = capsys.readouterr().out
    rows = _rows(out)
    assert list(rows) == ["fill", "verify", "replay", "total"]
    # and how fast the machine ran just then, without which the times compare with no other run's
    assert re.search(r"machine speed: a reference loop \(sum of i\*i for i < 1,000\) took \d+\.\d\d CPU-s", out), out[-500:]


def test_the_engine_import_is_judged_once_by_the_replay_of_the_same_engine_x_fixtures(monkeypatch: pytest.MonkeyPatch) -> None:
    """verify's engine import and the replay send the same payloads to the same geth: the demo does it once."""
    arguments: dict[str, list[str]] = {}
    _phases(monkeypatch, {}, arguments)
    assert demo.main() == 0
    verify, replay = arguments["verify"], arguments["replay"]
    assert verify[verify.index("--without") + 1] == "engine"
    assert verify[0] == str(demo.OUTPUT / "blockchain_tests"), "only blockchain_test files: no other format has a verifier left"
    assert replay[0] == str(demo.OUTPUT / "blockchain_tests_engine_x")


def test_the_demo_replay_measures_each_payload_an_odd_number_of_times_for_its_median(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fewer measured executions than a benchmark replay's 5, but a median no single outlier moves."""
    arguments: dict[str, list[str]] = {}
    _phases(monkeypatch, {}, arguments)
    assert demo.main() == 0
    replay = arguments["replay"]
    repeat = int(replay[replay.index("--repeat") + 1])
    assert repeat >= 3 and repeat % 2 == 1


def test_a_failing_phase_stops_the_demo_and_its_time_is_still_printed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _phases(monkeypatch, {"verify": 1})
    assert demo.main() == 1
    assert ran == ["fill", "verify"]
    output = capsys.readouterr().out
    assert "verify failed (exit 1)" in output
    assert list(_rows(output)) == ["fill", "verify", "total"]


def test_cpu_seconds_count_what_a_phase_burns() -> None:
    phase = demo.timed("busy", lambda: sum(range(3_000_000)) * 0)
    assert phase.exit_code == 0
    assert phase.cpu > 0.01 and phase.wall > 0


def test_only_the_fill_keeps_its_scratch_in_memory_and_a_missing_one_leaves_the_usual_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """t8n's files need no disk; a client's datadir is what the replay measures, so it stays where it was."""
    seen: dict[str, tuple[str | None, str]] = {}

    def phase(name: str) -> Callable[..., int]:
        def run(args: list[str], **_kwargs: object) -> int:
            seen[name] = (os.environ.get("TMPDIR"), tempfile.gettempdir())
            return 0

        return run

    for name in ("fill", "verify", "replay"):
        monkeypatch.setattr(demo, f"run_{name}", phase(name))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "usual"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "usual"))
    memory = tmp_path / "shm"
    memory.mkdir()
    monkeypatch.setattr(demo, "FILL_SCRATCH", memory)
    monkeypatch.setattr(demo, "FILL_SCRATCH_FREE", 1)
    assert demo.main() == 0
    usual = (str(tmp_path / "usual"), str(tmp_path / "usual"))
    assert seen == {"fill": (str(memory), str(memory)), "verify": usual, "replay": usual}
    monkeypatch.setattr(demo, "FILL_SCRATCH", tmp_path / "none")
    assert demo.main() == 0
    assert seen["fill"] == usual
