"""
Record a client's own block-log lines in each of its built-in modes, from a real replay, as test data.

    .venv/bin/python scripts/record_mode_logs.py FIXTURES CLIENT BINARY OUTPUT [-k EXPR] [--entries N]

replays FIXTURES once per built-in mode of CLIENT (`--modes` one at a time,
`--warmup 0 --repeat 3`, every check but the agreement, and the mode's proof, on) with BINARY,
and writes OUTPUT/<client>-<mode>.log: the last N batches of log lines that
held a block entry, as balgen's reader read them (ANSI colour removed). The
test data of tests/test_mode_proofs.py was written with it; the README next
to that data says which fixtures, binaries and commands.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from collections.abc import Callable
from pathlib import Path

from balgen.clients.kinds import KINDS, kind_named
from balgen.clients.slow_block_log import ClientBlockTiming
from balgen.replay.discovery import discover
from balgen.replay.runner import ReplayOptions, replay_suite
from balgen.replay.targets import ManagedClient

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class _Failures:
    """The replay's observer: keeps each failed test's reason, shows nothing else."""

    def __init__(self) -> None:
        self.failures: list[str] = []

    def group_started(self, group: object, client_version: str | None) -> None:
        del group, client_version

    def test_started(self, ref: object, executions: int) -> None:
        del ref, executions

    def execution_done(self, execution: object) -> None:
        del execution

    def test_finished(self, result: object) -> None:
        failure = getattr(result, "failure", None)
        if failure:
            self.failures.append(f"{getattr(result, 'test_id', '?')}: {failure}")


def _recording(timings: Callable[[list[str]], list[ClientBlockTiming]], batches: list[list[str]]) -> Callable[[list[str]], list[ClientBlockTiming]]:
    """`timings`, keeping every batch of lines that held an entry."""

    def record(lines: list[str]) -> list[ClientBlockTiming]:
        found = timings(lines)
        if found:
            batches.append([_ANSI.sub("", line) for line in lines])
        return found

    return record


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fixtures", type=Path)
    parser.add_argument("client")
    parser.add_argument("binary", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("-k", dest="keyword", default=None)
    parser.add_argument("--entries", type=int, default=6, help="batches with an entry kept per mode")
    args = parser.parse_args(argv)
    kind = kind_named(args.client)
    assert kind.block_log is not None, f"{kind.name} has no block log to record"
    suite = discover(args.fixtures, args.keyword, "auto")
    args.output.mkdir(parents=True, exist_ok=True)
    for mode in kind.modes.values():
        batches: list[list[str]] = []
        block_log = dataclasses.replace(kind.block_log, timings=_recording(kind.block_log.timings, batches))
        KINDS[kind.name] = dataclasses.replace(kind, block_log=block_log)
        observer = _Failures()
        try:
            target = ManagedClient(kind.preset, args.binary, mode.flags)
            replay_suite(suite, [(mode, target)], ReplayOptions(warmup=0, repeat=3, agreement_check=False), observer)
        finally:
            KINDS[kind.name] = kind
        if observer.failures:
            print(f"{kind.name} {mode.name}: " + "; ".join(observer.failures), file=sys.stderr)
            return 1
        lines = [line for batch in batches[-args.entries :] for line in batch]
        (args.output / f"{kind.name}-{mode.name}.log").write_text("\n".join(lines) + "\n")
        print(f"{kind.name} {mode.name}: {len(lines)} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
