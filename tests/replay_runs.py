"""`balgen replay` run as a user runs it, for the test modules that judge its results.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from balgen.clients.process import ClientProcess

from in_process import balgen_in_process


def replayed_engine_x(fixtures: Path, output: Path, *args: str) -> dict:
    """`balgen replay FIXTURES --format engine_x ARGS`, the agreement only recorded; its results.json
    (exit 0 or 1: failures are judged by the caller). Run in this process (`balgen_in_process`): the
    clients it starts are its children as they would be a subprocess's."""
    completed = balgen_in_process(
        "replay", fixtures, "--format", "engine_x", "--agreement", "record", "--output", output, *args
    )
    assert completed.returncode in (0, 1), completed.stdout[-3000:] + completed.stderr[-2000:]
    return json.loads((output / "results.json").read_text())


def counted_node_starts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The preset name of each client node this process starts from now on, in order (a restart is a start)."""
    starts: list[str] = []
    spawn = ClientProcess._spawn_node

    def counted(process: ClientProcess) -> None:
        starts.append(process.preset.name)
        spawn(process)

    monkeypatch.setattr(ClientProcess, "_spawn_node", counted)
    return starts
