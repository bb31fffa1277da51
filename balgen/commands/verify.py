"""
`balgen verify PATH [-k EXPR]`: every fixture under PATH, balgen's or
execution-spec-tests', checked by geth's `evm blocktest`, revm's `revme
blockchaintest` and ethereumjs (each `blockchain_test`; ethereumjs also
compares the BAL it builds with the fixture's) and by an engine import into the
pinned geth (each engine fixture, engine_x preferred where a test comes in both).
ethereumjs applies balgen's setup blocks from their BAL instead of executing them
(`--execute-setup` executes them), since geth and revm execute every block.

One row per fixture per verifier, with the first difference when one fails,
and a summary line `N fixtures: geth N/N, revm N/N, ethereumjs N/N, engine N/N`;
a verifier implementing another Amsterdam than the fixture's says "not
applicable" (`verify.applicability`) rather than fail. Exit code 0
when every check passed, 1 when any failed, 2 for bad input (one line, before
anything runs), 130 on Ctrl-C. With `--output DIR` the verdicts are also written to
`DIR/verify.json` (`verify.verdicts_file`), which `balgen report DIR --html PAGE` shows.
"""

from __future__ import annotations

import argparse
import os
import threading
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..plumbing.command_line import (
    KeywordExpression, OneLineParser, add_keyword_option, keyword_matcher, matches, wide_console,
)
from ..plumbing.errors import BadInput
from ..plumbing.forked_map import forked_map
from ..fixtures.files import fixture_files, fixture_format, format_names, formats_where, known_format
from ..fixtures.reading import read_fixture_values
from ..replay.discovery import Suite
from ..plumbing.toolchain import required_tool
from ..verify.engine_import import engine_outcomes, engine_suite
from ..verify.evm_runners import RunningVerifiers
from ..verify.applicability import REVME_VERSION, Filled, Specs
from ..verify.ethereumjs import (
    EthereumjsInstall, EthereumjsRuns, batches, deadline_for, fixture_blocks_gas,
    located_ethereumjs, work_from_bal,
)
from ..verify.outcomes import Outcome, Verifier
from ..verify.verdicts_file import VERIFY_JSON, VerifyResult, sorted_verdicts
from .. import __version__
from ..plumbing.output_files import check_output_writable, write_text_atomically
from .runner import run_command

PASSED, FAILED = 0, 1
COMMAND_VERIFIERS = tuple(Verifier)
"""The verifiers `balgen verify` runs and `--without` names."""


def verify_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="balgen verify",
        description=(
            "Check fixtures with three EVMs (geth's evm blocktest, revm's revme blockchaintest, ethereumjs) "
            "and an engine import into geth."
        ),
    )
    parser.add_argument("path", type=Path, help="fixture file or folder (balgen's or execution-spec-tests')")
    add_keyword_option(parser)
    parser.add_argument(
        "--without",
        default="",
        help="verifiers to leave out, comma-separated: geth, revm, ethereumjs, engine (e.g. --without ethereumjs where node is missing)",
    )
    parser.add_argument(
        "--execute-setup",
        action="store_true",
        help=(
            "ethereumjs executes balgen's setup blocks too (by default it applies them from their BAL and "
            "checks the state root they give; geth and revm execute every block either way)"
        ),
    )
    parser.add_argument("--evm-bin", type=Path, default=None, help="evm binary (default: the pinned go-ethereum evm)")
    parser.add_argument("--revme-bin", type=Path, default=None, help=f"revme binary (default: the pinned revme {REVME_VERSION})")
    parser.add_argument("--geth-bin", type=Path, default=None, help="geth binary (default: the pinned v1.17.10)")
    parser.add_argument(
        "--output", type=Path, default=None, metavar="DIR",
        help=f"also write every verdict to DIR/{VERIFY_JSON} (for `balgen report DIR --html PAGE`)",
    )  # fmt: skip
    return parser


@dataclass(frozen=True)
class Selection:
    """Which tests to verify: those `-k` matches, and if `names` is given only those."""

    keyword: str | None = None
    names: frozenset[str] | None = None
    expression: KeywordExpression | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # A malformed -k is bad input before anything runs.
        object.__setattr__(self, "expression", keyword_matcher(self.keyword))

    def __call__(self, test_id: str) -> bool:
        if self.names is not None and test_id not in self.names:
            return False
        return matches(self.expression, test_id)


@dataclass(frozen=True)
class Tools:
    """The binary of each verifier that runs; None for one left out."""

    evm: Path | None
    revme: Path | None
    geth: Path | None
    ethereumjs: EthereumjsInstall | None = None

    def runs(self, verifier: Verifier) -> bool:
        return {
            Verifier.GETH: self.evm, Verifier.REVM: self.revme, Verifier.ETHEREUMJS: self.ethereumjs,
            Verifier.ENGINE: self.geth,
        }[verifier] is not None  # fmt: skip

    @property
    def blockchain_verifiers(self) -> int:
        return sum(self.runs(verifier) for verifier in (Verifier.GETH, Verifier.REVM, Verifier.ETHEREUMJS))


def _binary(given: Path | None, what: str, without: str) -> Path:
    """
    The binary given, or else the one on balgen's tool search path, checked to
    run; else `BadInput` saying how to get it or go on without it.
    """
    if given is None:
        return required_tool(what, f"leave it out with --without {without}")
    path = given
    if not path.is_file():
        raise BadInput(f"{what} {path}: not built (run `make tools`), or leave it out with --without {without}")
    if not os.access(path, os.X_OK):
        raise BadInput(f"{what} {path}: is not executable")
    return path


def tools_for(
    without: str = "", evm_bin: Path | None = None, revme_bin: Path | None = None, geth_bin: Path | None = None
) -> Tools:
    """The verifiers' binaries (the pinned ones by default), checked; `without` leaves some out."""
    left_out = {name.strip() for name in without.split(",") if name.strip()}
    unknown = left_out - {verifier.value for verifier in COMMAND_VERIFIERS}
    if unknown:
        raise BadInput(f"--without {without!r}: unknown verifier {sorted(unknown)[0]!r} (geth, revm, ethereumjs, engine)")
    if left_out == {verifier.value for verifier in COMMAND_VERIFIERS}:
        raise BadInput("--without: every verifier left out, nothing would be checked")
    return Tools(
        evm=None if "geth" in left_out else _binary(evm_bin, "evm", "geth"),
        revme=None if "revm" in left_out else _binary(revme_bin, "revme", "revm"),
        geth=None if "engine" in left_out else _binary(geth_bin, "geth", "engine"),
        ethereumjs=None if "ethereumjs" in left_out else _ethereumjs(),
    )


def _ethereumjs() -> EthereumjsInstall:
    """The installed ethereumjs verifier; `BadInput` saying how to get it or go on without it."""
    try:
        return located_ethereumjs()
    except BadInput as error:
        raise BadInput(f"{error}, or leave it out with --without ethereumjs") from None


@dataclass(frozen=True)
class Plan:
    """What will run: the blockchain tests by file, and the engine suite."""

    blockchain: dict[Path, list[str]]
    engine: Suite | None
    fixture_count: int
    """Distinct test ids over every format verified."""
    filled: dict[str, Filled] = field(default_factory=dict)
    """Per test id, what filled it and for which network and gas schedule."""
    gas: dict[Path, int] = field(default_factory=dict)
    """Per blockchain_test file, the gas its blocks use (every fixture of it: ethereumjs runs them all)."""
    setup_known: frozenset[Path] = frozenset()
    """blockchain_test files whose every fixture is balgen's: each block before the last is setup."""
    work_from_bal: dict[Path, int] = field(default_factory=dict)
    """Per file of `setup_known`, ethereumjs's work when it applies the setup from the BAL (`work_from_bal`):
    how its batches are balanced, since the setup's gas (the contract sets' deployments) says little there."""

    @property
    def blockchain_count(self) -> int:
        return sum(len(names) for names in self.blockchain.values())

    @property
    def engine_count(self) -> int:
        return 0 if self.engine is None else self.engine.test_count


@dataclass(frozen=True)
class _PlannedFixture:
    """What the plan needs of one fixture, read in a fork (`forked_map`) and sent back small."""

    test_id: str
    readers: frozenset[Verifier]
    blocks_gas: list[int]
    """The gas of each block, for a fixture ethereumjs reads (its batches are balanced by it); else [0]."""
    balgens: bool
    filled: Filled


def _planned_fixture(test_id: str, fixture: Any) -> _PlannedFixture:
    readers = verifiers_of(fixture)
    blocks_gas = (fixture_blocks_gas(fixture) or [0]) if Verifier.ETHEREUMJS in readers else [0]
    return _PlannedFixture(test_id, readers, blocks_gas, balgens(fixture), Filled.of(fixture))


def _planned_fixtures(file: Path) -> list[_PlannedFixture]:
    """The fixtures of one file, in the file's order."""
    return [_planned_fixture(test_id, fixture) for test_id, fixture in read_fixture_values(file).items()]


def plan(path: Path, selection: Selection, tools: Tools) -> Plan:
    """
    Find what to verify under `path`; `BadInput` when it is nothing. The files are read on every
    core (`forked_map`): reading is pure Python, and no verifier can start before the plan is made.
    """
    blockchain: dict[Path, list[str]] = {}
    ids: set[str] = set()
    has_engine = False
    filled: dict[str, Filled] = {}
    gas: dict[Path, int] = {}
    executed: dict[Path, int] = {}
    others: set[Path] = set()
    files = fixture_files(path)
    for file, fixtures in zip(files, forked_map(_planned_fixtures, files, os.cpu_count() or 1), strict=True):
        for fixture in fixtures:
            test_id, readers = fixture.test_id, fixture.readers
            if Verifier.ETHEREUMJS in readers:
                gas[file] = gas.get(file, 0) + sum(fixture.blocks_gas)
                executed[file] = executed.get(file, 0) + fixture.blocks_gas[-1]  # the last block: the one ethereumjs executes
                if not fixture.balgens:
                    others.add(file)
            if not selection(test_id) or not readers:
                continue
            filled[test_id] = fixture.filled
            if readers - {Verifier.ENGINE} and tools.blockchain_verifiers:
                blockchain.setdefault(file, []).append(test_id)
                ids.add(test_id)
            elif Verifier.ENGINE in readers and tools.geth:
                has_engine = True
    engine = engine_suite(path, selection.keyword, selection) if has_engine else None
    if engine is not None:
        ids.update(ref.test_id for group in engine.groups for ref in group.tests)
    if not ids:
        what = f"-k {selection.keyword!r} matches no" if selection.keyword else f"{path}: no"
        verified = format_names(formats_where(lambda known: bool(known.verifiers)))
        raise BadInput(f"{what} {', '.join(verified[:-1])} or {verified[-1]} fixture to verify")
    setup_known = frozenset(gas.keys() - others)
    from_bal = {file: work_from_bal(executed[file], file.stat().st_size) for file in setup_known}
    return Plan(blockchain, engine, len(ids), filled, gas, setup_known, from_bal)


def balgens(fixture: dict[str, Any]) -> bool:
    """
    Whether balgen filled the fixture (`_info.generator`): then its last block is the benchmark block
    and every one before it setup (as its engine formats' `phase` says).
    """
    info = fixture.get("_info")
    generator = info.get("generator") if isinstance(info, dict) else None
    return isinstance(generator, str) and generator.startswith("balgen ")


def verifiers_of(fixture: object) -> frozenset[Verifier]:
    """The verifiers that read `fixture`'s format (the format registry says): none for a format no verifier reads."""
    known = known_format(fixture_format(fixture)) if isinstance(fixture, dict) else None
    return frozenset(Verifier(name) for name in known.verifiers) if known else frozenset()


class _Progress:
    """A progress bar over every check; without a terminal, a plain line at each tenth of the way."""

    def __init__(self, console: Console, total: int) -> None:
        self.console = console
        self.total = total
        self.finished = 0
        self._bar = Progress(
            TextColumn("[bold]verify[/]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("{task.description}"), console=console, transient=True, disable=not console.is_terminal,
        )  # fmt: skip
        self._task = self._bar.add_task("", total=total)
        self._lock = threading.Lock()

    def __enter__(self) -> _Progress:
        self._bar.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._bar.stop()

    def doing(self, what: str) -> None:
        self._bar.update(self._task, description=what)

    def done(self, outcome: Outcome) -> None:
        del outcome
        self.advance(1)

    def advance(self, checks: int) -> None:
        """`checks` more done (from any thread: ethereumjs's runs end on their own)."""
        with self._lock:
            before, self.finished = self.finished, self.finished + checks
            self._bar.advance(self._task, checks)
            tenth = max(1, self.total // 10)
            if not self.console.is_terminal and (before // tenth < self.finished // tenth or self.finished == self.total):
                self.console.print(f"verify: {self.finished}/{self.total} checks done", highlight=False)


def run_checks(
    checks: Plan, tools: Tools, specs: Specs, progress: _Progress, execute_setup: bool = False
) -> list[Outcome]:
    """
    Every check of the plan. ethereumjs, by far the slowest, runs on every core in batches of
    files (`EthereumjsRuns`, the heaviest batch first) from the start, while geth and revm go through the
    files side by side and the engine groups are imported; a file whose every test ethereumjs
    cannot judge is not run there. ethereumjs applies balgen's setup blocks from their BAL unless
    `execute_setup`: geth and revm execute them.
    """
    outcomes: list[Outcome] = []
    with EthereumjsRuns(tools.ethereumjs, workers=os.cpu_count() or 1) if tools.ethereumjs else nullcontext() as runs:
        ethereumjs_files = (
            _queued_for_ethereumjs(checks, specs, runs, progress, execute_setup) if runs is not None else []
        )
        for file, names in checks.blockchain.items() if tools.evm is not None or tools.revme is not None else ():
            progress.doing(file.name)
            with RunningVerifiers(tools.evm, tools.revme, file, names) as running:
                outcomes += [_judged(outcome, checks, specs, progress) for outcome in running.outcomes()]
        if checks.engine is not None and tools.geth is not None:
            progress.doing("engine import")
            outcomes += [
                specs.judged(outcome, checks.filled.get(outcome.test_id, Filled(None, None, None)))
                for outcome in engine_outcomes(checks.engine, tools.geth, progress.done)
            ]
        if runs is not None:
            progress.doing("ethereumjs")
            for run in runs.finished():
                specs.confirm_ethereumjs(run.version)
                outcomes += [specs.judged(o, checks.filled[o.test_id]) for o in run.outcomes]
            for file, names in checks.blockchain.items():
                if file not in ethereumjs_files:
                    outcomes += [_judged(_not_run(file, name, checks, specs), checks, specs, progress) for name in names]
    return outcomes


def _queued_for_ethereumjs(
    checks: Plan, specs: Specs, runs: EthereumjsRuns, progress: _Progress, execute_setup: bool
) -> list[Path]:
    """
    Queue every file with a test ethereumjs can judge, in batches of about equal work, one node
    process each (`batches`), the heaviest first; the files queued.
    """
    judged = [
        file for file, names in checks.blockchain.items()
        if any(specs.reason(Verifier.ETHEREUMJS, checks.filled[name]) is None for name in names)
    ]  # fmt: skip
    for setup_from_bal in (True, False):
        alike = [file for file in judged if (not execute_setup and file in checks.setup_known) == setup_from_bal]
        for batch in batches(alike, checks.work_from_bal if setup_from_bal else checks.gas, runs.workers):
            runs.submit(
                batch, deadline_for(sum(checks.gas[file] for file in batch)),
                names={file: checks.blockchain[file] for file in batch},
                on_progress=progress.advance, setup_from_bal=setup_from_bal,
            )  # fmt: skip
    return judged


def _judged(outcome: Outcome, checks: Plan, specs: Specs, progress: _Progress) -> Outcome:
    progress.done(outcome)
    return specs.judged(outcome, checks.filled[outcome.test_id])


def _not_run(file: Path, name: str, checks: Plan, specs: Specs) -> Outcome:
    """The ethereumjs outcome of a test it cannot judge, and so was not run on: not applicable."""
    return Outcome(Verifier.ETHEREUMJS, name, file, None, specs.reason(Verifier.ETHEREUMJS, checks.filled[name]))


def rows_table(outcomes: Sequence[Outcome]) -> Table:
    """One row per fixture per verifier, failures with their first difference."""
    table = Table(title="balgen verify", title_justify="left")
    for column in ("fixture", "verifier", "result", "first difference"):
        table.add_column(column, overflow="fold")
    order = list(Verifier)
    for outcome in sorted(outcomes, key=lambda o: (o.test_id, order.index(o.verifier))):
        if outcome.not_applicable is not None:
            result, difference = "[yellow]n/a[/]", outcome.not_applicable
        else:
            result = "[green]pass[/]" if outcome.passed else "[red]FAIL[/]"
            difference = "" if outcome.passed else f"{outcome.path}: {outcome.difference}"
        table.add_row(outcome.test_id, outcome.verifier.value, result, difference)
    return table


def summary_line(fixture_count: int, outcomes: Sequence[Outcome], tools: Tools) -> str:
    """`N fixtures: geth N/N, revm N/N, ethereumjs N/N, engine N/N` (left out, or not applicable, says so)."""
    parts = []
    for verifier in COMMAND_VERIFIERS:
        if not tools.runs(verifier):
            parts.append(f"{verifier.value} left out")
            continue
        mine = [o for o in outcomes if o.verifier is verifier]
        judged = [o for o in mine if o.not_applicable is None]
        skipped = len(mine) - len(judged)
        parts.append(
            f"{verifier.value} {sum(o.passed for o in judged)}/{len(judged)}"
            + (f" ({skipped} not applicable)" if skipped else "")
        )
    return f"{fixture_count} fixtures: " + ", ".join(parts)


def versions_line(checks: Plan, specs: Specs, tools: Tools) -> str:
    """The t8n(s) that filled the fixtures next to each verifier's version and the Amsterdam it implements."""
    filled: dict[tuple[str | None, str | None], int] = {}
    for fixture in checks.filled.values():
        key = (fixture.tool, fixture.spec)
        filled[key] = filled.get(key, 0) + 1
    fills = "; ".join(
        f"{tool or 'an unnamed t8n'} for {spec or 'an unrecorded schedule'} ({count})"
        for (tool, spec), count in sorted(filled.items(), key=lambda item: -item[1])
    )
    verifiers = "; ".join(
        f"{verifier.value}: {specs.versions[verifier] or '-'} ({specs.implemented[verifier] or 'schedule not known'})"
        for verifier in COMMAND_VERIFIERS
        if tools.runs(verifier)
    )
    return f"filled by {fills}\nverified by {verifiers}"


def verify(
    path: Path, selection: Selection, tools: Tools, console: Console, output: Path | None = None,
    execute_setup: bool = False,
) -> int:  # fmt: skip
    """
    Verify what `selection` picks under `path`: print rows and summary (and write them to `output`); the
    exit code. `execute_setup`: ethereumjs executes balgen's setup blocks rather than applying them from their BAL.
    """
    checks = plan(path, selection, tools)
    specs = Specs.of(tools.evm, tools.geth)
    with _Progress(console, checks.blockchain_count * tools.blockchain_verifiers + checks.engine_count) as progress:
        outcomes = run_checks(checks, tools, specs, progress, execute_setup)
    console.print(rows_table(outcomes))
    versions = versions_line(checks, specs, tools)
    summary = summary_line(checks.fixture_count, outcomes, tools)
    console.print(versions, highlight=False)
    console.print(summary, highlight=False)
    if output is not None:
        write_verify_result(output, path, selection, tools, specs, versions, summary, checks, outcomes)
        console.print(f"verdicts written to {output / VERIFY_JSON}", highlight=False, markup=False)
    return PASSED if all(o.passed or o.not_applicable is not None for o in outcomes) else FAILED


def write_verify_result(
    output: Path, path: Path, selection: Selection, tools: Tools, specs: Specs, versions: str, summary: str,
    checks: Plan, outcomes: Sequence[Outcome],
) -> None:  # fmt: skip
    """`output/verify.json`: what `verify` printed, as `VerifyResult` (written whole or not at all)."""
    result = VerifyResult(
        balgen_version=__version__,
        fixtures_path=str(path.resolve()),
        keyword=selection.keyword,
        fixture_count=checks.fixture_count,
        verifiers={
            verifier.value: f"{specs.versions[verifier] or '-'} ({specs.implemented[verifier] or 'schedule not known'})"
            for verifier in COMMAND_VERIFIERS
            if tools.runs(verifier)
        },
        left_out=[verifier for verifier in COMMAND_VERIFIERS if not tools.runs(verifier)],
        filled_by=versions.splitlines()[0].removeprefix("filled by "),
        summary=summary,
        verdicts=sorted_verdicts(outcomes),
    )
    write_text_atomically(output / VERIFY_JSON, result.model_dump_json(indent=1) + "\n")


def run_verify(argv: Sequence[str], console: Console | None = None) -> int:
    """`balgen verify`'s entry point; Ctrl-C, SIGTERM, SIGHUP and SIGQUIT stop it alike (`stop_signals`)."""

    def check() -> int:
        args = verify_parser().parse_args(argv)
        if not args.path.exists():
            raise BadInput(f"{args.path}: does not exist")
        selection = Selection(args.keyword)
        tools = tools_for(args.without, args.evm_bin, args.revme_bin, args.geth_bin)
        if args.output is not None:
            check_output_writable(args.output)  # before the checks run, not after
        return verify(args.path, selection, tools, console or wide_console(), args.output, args.execute_setup)

    return run_command("verify", check)


def verify_filled(output: Path, names: frozenset[str], console: Console) -> int:
    """`balgen fill --verify`: the fixtures the fill just wrote, by every verifier."""
    return run_command("fill --verify", lambda: verify(output, Selection(names=names), tools_for(), console))
