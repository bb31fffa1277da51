"""
balgen's Go tools (t8n, `evm blocktest`) run with the collector setting of `plumbing.go_tools`; a user's
own `GOGC` wins, and balgen's own environment (which a replayed client inherits) is left as it was.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from balgen.chain.t8n import TransitionTool
from balgen.plumbing.errors import TransitionToolError
from balgen.plumbing.go_tools import GOGC_FOR_TOOLS
from balgen.verify.evm_runners import RunningVerifiers


def recording_tool(folder: Path, output: str) -> tuple[Path, Path]:
    """An `evm` that writes the `GOGC` it was given (or `unset`) to a file and prints `output`."""
    record = folder / "gogc"
    tool = folder / "evm"
    tool.write_text(f'#!/bin/bash\necho "${{GOGC-unset}}" > "{record}"\necho \'{output}\'\n')
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return tool, record


def t8n_gogc(tmp_path: Path) -> str:
    """The `GOGC` one t8n call of the fill ran with."""
    tool, record = recording_tool(tmp_path, "{}")
    alloc = tmp_path / "alloc.json"
    alloc.write_text("{}")
    with pytest.raises(TransitionToolError):  # the recording tool writes no result: the call fails after it ran
        TransitionTool(tool).transition_raw("Amsterdam", alloc, {}, [], tmp_path / "work", label="probe")
    return record.read_text().strip()


def blocktest_gogc(tmp_path: Path) -> str:
    """The `GOGC` one `evm blocktest` of `balgen verify` ran with."""
    tool, record = recording_tool(tmp_path, "[]")
    fixture = tmp_path / "f.json"
    fixture.write_text("{}")
    with RunningVerifiers(tool, None, fixture, ["t"]) as running:
        running.outcomes()
    return record.read_text().strip()


@pytest.mark.parametrize("run", [t8n_gogc, blocktest_gogc], ids=["t8n", "evm blocktest"])
def test_a_go_tool_collects_at_balgen_s_setting_and_balgen_s_environment_keeps_none(
    run: Callable[[Path], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOGC", raising=False)
    assert run(tmp_path) == GOGC_FOR_TOOLS
    assert "GOGC" not in os.environ, "a client balgen starts later in the same process (the demo's replay) inherits none"


@pytest.mark.parametrize("run", [t8n_gogc, blocktest_gogc], ids=["t8n", "evm blocktest"])
def test_a_gogc_the_user_set_reaches_the_go_tool_unchanged(
    run: Callable[[Path], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOGC", "150")
    assert run(tmp_path) == "150"
