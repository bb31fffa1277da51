"""`balgen replay` run as a user runs it, for the test modules that judge its results.json."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from balgen.clients.process import ClientProcess
from balgen.commands.replay import checked_request
from balgen.replay.discovery import ReplayGroup
from balgen.replay.options import ReplayObserver, ReplayOptions
from balgen.replay.runner import ModeTarget, replay_group
from balgen.results.schema import FixtureResult

from in_process import balgen_in_process


def replayed_engine_x(fixtures: Path, output: Path, *args: str) -> dict:
    """`balgen replay FIXTURES --format engine_x ARGS`, the agreement only recorded and no wait for a started
    client's own start-up work (verdicts are tested, not times); its results.json (exit 0 or 1: failures are
    judged by the caller). Run in this process (`balgen_in_process`): the clients it starts are its
    children as they would be a subprocess's."""
    completed = balgen_in_process(
        "replay", fixtures, "--format", "engine_x", "--agreement", "record", "--settle-limit", "0", "--output", output, *args
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


class _KeptResults:
    """A replay observer that keeps each test's result, in order, and lets the rest of what it is told go."""

    def __init__(self) -> None:
        self.results: list[FixtureResult] = []

    def test_finished(self, result: FixtureResult) -> None:
        self.results.append(result)

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *_: None


def replayed_on_one_set_of_nodes(*command_lines: Sequence[str | Path]) -> list[list[dict]]:
    """
    Several `balgen replay` command lines over one genesis group, with the same client and modes but
    their own `-k` and options, run in order on one node per mode started once (`replayed_groups_on_one_set_of_nodes`),
    not on nodes of their own: each test as results.json would hold it, per command line.
    """
    requests = [checked_request([str(argument) for argument in line]) for line in command_lines]
    targets = requests[0].mode_targets()
    groups = [group for request in requests for group in request.suite.groups]
    assert len(groups) == len(requests), "each command line selects tests of one genesis group"
    assert all(request.mode_targets() == targets for request in requests), "the same client and modes in each"
    kept = [_KeptResults() for _ in requests]
    runs = [(group, request.options, observer) for group, request, observer in zip(groups, requests, kept, strict=True)]
    replayed_groups_on_one_set_of_nodes(targets, runs)
    return [[result.model_dump(mode="json") for result in observer.results] for observer in kept]


def replayed_groups_on_one_set_of_nodes(
    targets: Sequence[ModeTarget], runs: Sequence[tuple[ReplayGroup, ReplayOptions, ReplayObserver]]
) -> None:
    """
    Groups of one genesis, each with its own options and observer, replayed in order on one node per
    mode target started once (`replay_group` on clients opened once, where `balgen replay` starts them
    per run): a test that needs a few option sets on every mode's node is spared a start of each node
    per set (go-ethereum's KZG set-up and reth's first seconds: about 3 CPU-s a node).
    """
    assert len({group.genesis.genesis_hash for group, _, _ in runs}) == 1, "one genesis group for every run"
    with contextlib.ExitStack() as stack:
        clients = [(mode, stack.enter_context(target.open(runs[0][0].genesis))) for mode, target in targets]
        for group, options, observer in runs:
            replay_group(clients, group, options, observer)
