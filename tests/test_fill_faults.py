"""
Faults during a fill: a full disk leaves no partial fixture and names the test.

A fill writes each workload's files (three formats, and its pre-alloc group)
under temporary names and renames them only when all are complete. Here the
disk really fills: the output is a small tmpfs, a 0.5 KB contract set fits in
it and a 64 KB one does not. Where mounting is not allowed, the same writer
is given a failing write instead. (t8n killed mid-fill: tests/test_fill_cli.py.)
"""

from __future__ import annotations

import errno
import json
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from balgen.errors import BadInput
from balgen.fill import write_all_or_nothing

FORMATS = ("blockchain_tests", "blockchain_tests_engine", "blockchain_tests_engine_x")


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 24 MiB tmpfs, unmounted afterwards; skipped where this process may not mount."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount_point)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


def test_a_full_disk_fails_the_fixture_that_does_not_fit_and_keeps_the_others_whole(tiny_disk: Path, tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "balgen.cli", "fill", "--gas-benchmark-values", "1", "--setup", "genesis",
         "--code-sizes", "0.5,64", "-k", "extcodesize-greedy", "--output", str(tiny_disk)],
        capture_output=True, text=True, cwd=tmp_path, check=False,
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
        write_all_or_nothing(files)
    assert [path for path in tmp_path.rglob("*") if path.is_file()] == []
