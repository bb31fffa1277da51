"""
Faults during a fill: a full disk or a SIGTERM leaves no partial fixture behind.

A fill writes each workload's files (three formats, and its pre-alloc group)
under temporary names and renames them only when all are complete. Here the
disk really fills: the output is a small tmpfs, a 0.5 KB contract set fits in
it and a 64 KB one does not. Where mounting is not allowed, the same writer
is given a failing write instead. A SIGTERM mid-fill unwinds like an
interrupt: t8n stopped, no partial fixture, the scratch folder gone, with
pytest-xdist workers too. (t8n killed mid-fill: tests/test_fill_cli.py.)
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Iterator

import pytest

from balgen.plumbing.errors import BadInput
from balgen.fill.session import write_all_or_nothing
from in_process import balgen_forked
from small_disk import mounted_tmpfs

FORMATS = ("blockchain_tests", "blockchain_tests_engine", "blockchain_tests_engine_x")


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 24 MiB tmpfs, unmounted afterwards; skipped where this process may not mount."""
    with mounted_tmpfs(tmp_path / "disk", "24m") as mount_point:
        yield mount_point


@pytest.mark.integration
def test_a_full_disk_fails_the_fixture_that_does_not_fit_and_keeps_the_others_whole(tiny_disk: Path, tmp_path: Path) -> None:
    completed = balgen_forked(  # a process of its own, without a new interpreter's imports
        "fill", "--gas-benchmark-values", "1", "--setup", "genesis", "--code-sizes", "0.5,64", "-k", "extcodesize-greedy",
        "--output", tiny_disk, cwd=tmp_path,
    )
    report = completed.stdout + completed.stderr
    assert completed.returncode == 2, report[-3000:]
    assert "Traceback" not in report
    failure_lines = [line for line in report.splitlines() if line.startswith("balgen: FAILED")]
    assert failure_lines == [
        line for line in failure_lines if "extcodesize-greedy-64KB-1M" in line and "No space left on device" in line
    ] and failure_lines, report[-3000:]

    files = [path.relative_to(tiny_disk).as_posix() for path in tiny_disk.rglob("*") if path.is_file()]
    assert not [path for path in files if path.endswith(".tmp") or "/." in "/" + path], files
    written = {Path(path).stem for path in files if not path.startswith("blockchain_tests_engine_x/pre_alloc/")}
    assert written == {"extcodesize-greedy-0.5KB-1M"}
    for format_dir in FORMATS:
        (path,) = tiny_disk.glob(f"{format_dir}/for_*/extcodesize/extcodesize-greedy-0.5KB-1M.json")
        json.loads(path.read_text())  # complete JSON, not a truncated file
    (group,) = tiny_disk.glob("blockchain_tests_engine_x/pre_alloc/*.json")
    assert json.loads(group.read_text())["testIds"] == ["extcodesize-greedy-0.5KB-1M"]


def test_a_failing_write_removes_every_file_of_the_set(tmp_path: Path) -> None:
    def filling_disk() -> Iterator[str]:
        yield '{"partial": '
        raise OSError(errno.ENOSPC, "No space left on device")

    files = [(tmp_path / "a" / "one.json", ["{}"]), (tmp_path / "b" / "two.json", filling_disk())]
    with pytest.raises(BadInput, match="cannot write fixtures to .*: No space left on device"):
        write_all_or_nothing(files, tmp_path / ".staging")
    assert [path for path in tmp_path.rglob("*") if path.is_file()] == []


def test_an_interrupted_write_removes_every_file_of_the_set(tmp_path: Path) -> None:
    def interrupted() -> Iterator[str]:
        yield '{"partial": '
        raise KeyboardInterrupt

    files = [(tmp_path / "a" / "one.json", ["{}"]), (tmp_path / "b" / "two.json", interrupted())]
    with pytest.raises(KeyboardInterrupt):
        write_all_or_nothing(files, tmp_path / ".staging")
    assert [path for path in tmp_path.rglob("*") if path.is_file()] == []


@pytest.mark.integration
@pytest.mark.parametrize(
    ("workers", "stop"),
    [("2", signal.SIGTERM), ("0", signal.SIGHUP), ("0", signal.SIGQUIT)],
    ids=["SIGTERM-n2", "SIGHUP-n0", "SIGQUIT-n0"],
)
def test_a_stop_signal_mid_fill_leaves_no_scratch_and_no_partial_fixture(
    tmp_path: Path, workers: str, stop: signal.Signals
) -> None:
    """
    SIGTERM, and since issue 17 SIGHUP (a closed terminal) and SIGQUIT, unwind like Ctrl-C:
    each signal once, and both a fill in one process and one with workers. The three take
    the same handler (tests/test_command_line.py), so one signal with workers stands for all.
    """
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "BALGEN_FILL_SCRATCH"} | {"TMPDIR": str(temp)}
    output = tmp_path / "out"
    fill = subprocess.Popen(
        [sys.executable, "-m", "balgen.commands.main", "fill", "--gas-benchmark-values", "1", "-k", "state_root",
         "--output", str(output), "-n", workers],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path, env=env,
    )
    try:
        deadline = time.monotonic() + 120
        while not list(temp.glob("balgen-fill-*/session-*/state_root-*")):  # a workload is being filled
            assert fill.poll() is None and time.monotonic() < deadline, "the fill never started a workload"
            time.sleep(0.05)
        fill.send_signal(stop)
        report, _ = fill.communicate(timeout=120)
    finally:
        fill.kill()
    assert fill.returncode == 128 + stop and f"balgen fill: terminated ({stop.name})" in report, report[-2000:]
    assert "Traceback" not in report, report[-3000:]
    assert not list(temp.glob("balgen-fill-*")), "the scratch folder outlived the fill"
    files = [path for path in output.rglob("*") if path.is_file()] if output.exists() else []
    assert not [path for path in files if path.name.startswith(".") or path.suffix == ".tmp"], files
    for path in files:
        json.loads(path.read_text())  # whatever was written before the signal is whole


def test_a_stop_pytest_cannot_describe_is_still_the_fills_stop() -> None:
    """
    A stop landing where Python keeps no line number made pytest's terminal
    report of it raise TypeError, and its end-of-session report then an
    AssertionError (seen in a SIGQUIT mid-fill, exit 1 with pytest's
    traceback, twice); the fill's hook records the stop and leaves the
    entries without a line out of what pytest describes.
    """
    from _pytest._code.code import Traceback, TracebackEntry

    from balgen.fill import plugin
    from balgen.plumbing.stop_signals import Stopped

    try:
        raise Stopped(signal.SIGQUIT)
    except Stopped:
        excinfo = pytest.ExceptionInfo.from_current()
    (raised_here,) = excinfo.traceback
    lineless = SimpleNamespace(tb_frame=raised_here.frame.raw, tb_lineno=None, tb_next=None)
    excinfo.traceback = Traceback([raised_here, TracebackEntry(lineless)])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        excinfo.getrepr(funcargs=True)  # what pytest's terminal reporter met
    plugin._stopped_by.clear()
    hook = plugin.pytest_keyboard_interrupt(excinfo)
    next(hook)
    assert "raise Stopped(signal.SIGQUIT)" in str(excinfo.getrepr(funcargs=True)), "pytest describes it now"
    with pytest.raises(StopIteration):
        hook.send(None)
    assert plugin.stopped_by() is excinfo.value
    plugin._stopped_by.clear()
