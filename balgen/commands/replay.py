"""
`balgen replay PATH`: replay fixtures against a real client through the
Engine API, check every step and measure every execution.

Every input is checked before anything starts or is written (fixtures,
URLs, the JWT secret, the geth binary, the output folder): a problem is one
line on stderr and exit code 2. The run itself ends with exit code 0 when
every test passed, 1 when any failed or did not run, 130 on Ctrl-C and
143 on SIGTERM (both with every completed test kept in the output folder and
the client balgen started stopped).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from ..clients.start_work import START_SETTLE_LIMIT
from ..clients.binary_facts import check_mode_flags, client_build
from ..clients.modes import ClientMode, parse_modes
from ..clients.kinds import DEFAULT, KINDS, geth, kind_named, kind_of_preset
from ..clients.presets import ClientPreset, custom_preset, managed_flags
from ..clients.process import check_executable
from ..clients.chain_config import network_fork
from ..clients.jwt_auth import read_jwt_secret
from ..plumbing.command_line import (
    BAD_INPUT_EXIT_CODE,
    OneLineParser,
    add_keyword_option,
    wide_console,
)
from ..plumbing.errors import BadInput
from ..plumbing.output_files import resolved_path
from ..plumbing.printable import escaped
from ..results.measurements import Execution
from ..results.repeat_policy import DEFAULT_CAP, DEFAULT_TARGET_WIDTH, FIRST_DECIDABLE
from ..results.schema import FixtureResult, RunResult, RunState
from ..plumbing.toolchain import required_tool
from ..replay.cpu_placement import parse_cpu_list, pin_balgen
from ..replay.discovery import FORMAT_CHOICES, REPLAYABLE_FORMATS, FixtureRef, ReplayGroup, Suite, discover
from ..replay.outputs import ResultsNotWritten, RunWriter, default_output, prepare_output
from ..replay.page_cache import drop_caches_problem
from ..replay.progress import ReplayProgress, summary_table
from ..replay.options import ReplayObserver, ReplayOptions
from ..replay.run_header import run_header
from ..replay.runner import ModeTarget, replay_suite, without_modes
from ..replay.targets import ExternalClient, ManagedClient, check_http_url, preset_with_client_args
from .client_options import add_started_client_options, genesis_format_named
from .runner import StopNote, run_command

FAILED = 1

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def replay_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="balgen replay",
        description=(
            f"Replay {' / '.join(REPLAYABLE_FORMATS)} fixtures against a client "
            f"balgen starts (the pinned {DEFAULT.name} by default, or --client NAME, or --client-cmd) "
            "or one you run, check every step, measure every execution."
        ),
    )
    parser.add_argument("path", type=Path, help="fixture file or folder")
    add_keyword_option(parser)
    parser.add_argument(
        "--format",
        choices=tuple(FORMAT_CHOICES),
        default="auto",
        help="fixture format to replay (auto: both, engine_x where a test comes in both)",
    )
    add_started_client_options(parser)
    client = parser.add_argument_group("a client you run")
    client.add_argument("--engine-url", default=None, help="its authenticated Engine API URL")
    client.add_argument("--jwt-secret", type=Path, default=None, help="its JWT secret file (hex)")
    client.add_argument("--rpc-url", default=None, help="its HTTP JSON-RPC URL with eth and debug (default: the Engine API URL)")
    parser.add_argument(
        "--drop-caches",
        action="store_true",
        help="sync and drop the OS page cache before each measured execution (root on Linux)",
    )
    parser.add_argument("--warmup", type=int, default=1, help="discarded executions of the benchmark payload (default 1)")
    parser.add_argument(
        "--repeat",
        default="5",
        help="measured executions of the benchmark payload (default 5), or auto: until the 95%% interval "
        "of the median is --ci-width wide, at most --repeat-cap times",
    )
    parser.add_argument("--ci-width", type=float, default=DEFAULT_TARGET_WIDTH * 100, help="--repeat auto's target, in percent of the median (default 5)")
    parser.add_argument("--repeat-cap", type=int, default=DEFAULT_CAP, help=f"--repeat auto's most measured executions (default {DEFAULT_CAP})")
    parser.add_argument(
        "--agreement",
        choices=("check", "record"),
        default="check",
        help="check (default): replace an execution whose client-side time exceeds the client's own time for the "
        "block by more than 10 ms + 10%%, fail a test whose median does; record: only record it (an unoptimised build)",
    )
    noise = parser.add_argument_group("noise: keeping other work out of the timed executions (docs/replay.md, \"The noise floor\")")
    noise.add_argument("--client-cpus", default=None, help="cores the clients balgen starts run on, e.g. 1 or 2-7 (taskset)")
    noise.add_argument("--balgen-cpus", default=None, help="cores balgen itself runs on, e.g. 0")
    noise.add_argument(
        "--disturbance-limit",
        type=float,
        default=None,
        metavar="PCT",
        help="replace an execution during which other processes used more than PCT%% of one core "
        "(their CPU time is recorded for every execution either way)",
    )
    parser.add_argument(
        "--settle-limit",
        type=float,
        default=START_SETTLE_LIMIT,
        metavar="SECONDS",
        help="after each start and restart of a client balgen starts, wait at most this long for its own "
        f"start-up work (geth's KZG set-up) to end before sending anything (default {START_SETTLE_LIMIT:g}; 0: no wait)",
    )
    parser.add_argument("--fail-fast", action="store_true", help="stop at the first failed test")
    parser.add_argument("--label", default=None, help=f"name of the run (default: the client's name, {DEFAULT.name}, or external)")
    parser.add_argument("--output", type=Path, default=None, help="results folder (default results/<timestamp>-<label>/)")
    return parser


@dataclass(frozen=True)
class ReplayRequest:
    """A checked command line: what to replay, against what, how, and where to write."""

    suite: Suite
    target: ManagedClient | ExternalClient
    options: ReplayOptions
    label: str
    output: Path
    path: Path
    keyword: str | None
    modes: tuple[ClientMode, ...] = ()
    """`--modes`: one client per mode, each the target with the mode's flags added."""
    client_build: str | None = None
    """The client binary's own version text (`binary_facts.client_build`)."""

    def mode_targets(self) -> tuple[ModeTarget, ...]:
        """
        The run's targets as (mode, target) pairs: one per mode, the client with the mode's flags
        after the user's `--client-args`; without `--modes` the one target.
        """
        if not self.modes:
            return without_modes(self.target)
        assert isinstance(self.target, ManagedClient)
        return tuple(
            (mode, dataclasses.replace(self.target, client_args=self.target.client_args + mode.flags))
            for mode in self.modes
        )


MAX_EXECUTIONS = 10_000
"""Executions of one test's benchmark payload (`--warmup` + `--repeat`) at most: each is kept in
memory and in results.json (about 5 kB), which is rewritten after every test, and at 1M gas a
geth execution with its rollback takes about 40 ms, so 10,000 are already minutes per test."""


def _options(args: argparse.Namespace) -> ReplayOptions:
    if args.warmup < 0:
        raise BadInput(f"--warmup {args.warmup}: must be 0 or more")
    auto = args.repeat == "auto"
    if auto:
        repeat = args.repeat_cap
        if repeat < FIRST_DECIDABLE:
            raise BadInput(f"--repeat-cap {repeat}: must be at least {FIRST_DECIDABLE} (the fewest executions with a 95% interval of the median)")
        if not 0 < args.ci_width < float("inf"):  # NaN fails this too
            raise BadInput(f"--ci-width {args.ci_width}: must be a positive percentage of the median")
    else:
        try:
            repeat = int(args.repeat)
        except ValueError:
            raise BadInput(f"--repeat {args.repeat!r}: a count or auto") from None
        if repeat < 1:
            raise BadInput(f"--repeat {repeat}: must be 1 or more")
    if args.warmup + repeat > MAX_EXECUTIONS:
        option = f"--repeat-cap {repeat}" if auto else f"--repeat {repeat}"
        raise BadInput(f"--warmup {args.warmup} {option}: more than {MAX_EXECUTIONS:,} executions per test")
    if args.drop_caches and (problem := drop_caches_problem()) is not None:
        raise BadInput(f"--drop-caches: {problem}")
    if args.disturbance_limit is not None and not 0 <= args.disturbance_limit < float("inf"):
        raise BadInput(f"--disturbance-limit {args.disturbance_limit}: a percentage of one core, 0 or more")
    client_cpus = () if args.client_cpus is None else parse_cpu_list(args.client_cpus, "--client-cpus")
    balgen_cpus = () if args.balgen_cpus is None else parse_cpu_list(args.balgen_cpus, "--balgen-cpus")
    if client_cpus and args.engine_url is not None:
        raise BadInput("--client-cpus: only for a client balgen starts, not with --engine-url")
    if not 0 <= args.settle_limit < float("inf"):
        raise BadInput(f"--settle-limit {args.settle_limit}: seconds, 0 or more")
    return ReplayOptions(
        warmup=args.warmup,
        repeat=repeat,
        cold=args.cold,
        fail_fast=args.fail_fast,
        repeat_auto=auto,
        ci_width=args.ci_width / 100,
        drop_caches=args.drop_caches,
        agreement_check=args.agreement == "check",
        disturbance_limit=args.disturbance_limit,
        client_cpus=client_cpus,
        balgen_cpus=balgen_cpus,
    )


def _preset(args: argparse.Namespace) -> ClientPreset:
    """The preset the options name: `--client`, `--geth-bin`, or a `--client-cmd` template."""
    if args.client_cmd is not None:
        for option, value in (("--client", args.client), ("--geth-bin", args.geth_bin)):
            if value is not None:
                raise BadInput(f"{option}: not with --client-cmd (the template says how to start the client)")
        return custom_preset(args.client_cmd, args.client_init, genesis_format_named(args.genesis_format))
    for option, value in (("--client-init", args.client_init), ("--genesis-format", args.genesis_format)):
        if value is not None:
            raise BadInput(f"{option}: only with --client-cmd (a preset has its own)")
    if args.geth_bin is not None:
        if (args.client is not None and kind_named(args.client) is not geth.KIND) or args.client_bin is not None:
            raise BadInput(f"--geth-bin: the same as --client {geth.KIND.name} --client-bin; give one of them")
        args.client_bin = args.geth_bin
    return (DEFAULT if args.client is None else kind_named(args.client)).preset


def _client_binary(preset: ClientPreset, given: Path | None, modes: bool = False) -> Path:
    """
    `--client-bin`, or the client's build in tools/bin (for `--modes` the
    build with its modes' flags, where that is another one), checked to be
    runnable.
    """
    if given is not None:
        return check_executable(given, "--client-bin")
    kind = kind_of_preset(preset)
    if kind is None or kind.tool is None:
        raise BadInput(f"--client {preset.name} needs --client-bin PATH (balgen has no {preset.name} build)")
    if modes and kind.modes_tool is not None:
        return required_tool(kind.modes_tool, f"give --client-bin PATH (a {kind.name} with its modes' flags)")
    # `make tools` builds the reference client, and unpacks the shared builds of others where they exist.
    return required_tool(kind.tool, "give --client-bin PATH")


def _target(args: argparse.Namespace) -> ManagedClient | ExternalClient:
    """The client to replay against, from the options that name it."""
    if args.engine_url is None:
        for option, value in (("--jwt-secret", args.jwt_secret), ("--rpc-url", args.rpc_url)):
            if value is not None:
                raise BadInput(f"{option}: only with --engine-url")
        preset, client_args = preset_with_client_args(args.client_args, _preset(args))
        binary = _client_binary(preset, args.client_bin, modes=args.modes is not None)
        return ManagedClient(preset=preset, binary=binary, client_args=client_args)
    for option, value in (
        ("--client", args.client), ("--client-bin", args.client_bin), ("--geth-bin", args.geth_bin),
        ("--client-cmd", args.client_cmd), ("--client-init", args.client_init), ("--genesis-format", args.genesis_format),
        ("--client-args", args.client_args), ("--cold", args.cold or None), ("--modes", args.modes),
    ):  # fmt: skip
        if value is not None:
            raise BadInput(f"{option}: only for a client balgen starts, not with --engine-url")
    if args.jwt_secret is None:
        raise BadInput("--engine-url needs --jwt-secret FILE")
    engine_url = check_http_url(args.engine_url, "--engine-url")
    rpc_url = None if args.rpc_url is None else check_http_url(args.rpc_url, "--rpc-url")
    return ExternalClient(engine_url, read_jwt_secret(args.jwt_secret), rpc_url)


def check_networks(suite: Suite) -> None:
    """balgen's genesis files need a chain config for every group's network."""
    for group in suite.groups:
        try:
            network_fork(group.genesis.network)
        except BadInput as error:
            first = group.tests[0]
            raise BadInput(f"{first.path}: test {first.test_id}: {error}") from None


_COMMAND_LINE_OPTIONS = ("--client-args", "--client-cmd", "--client-init")


def _attach_client_args(argv: Sequence[str]) -> list[str]:
    """
    `--client-args "--flag value"` as `--client-args=--flag value` (and the
    same for the command templates): argparse would otherwise take a value
    that starts with `--` for an option.
    """
    arguments = list(argv)
    index = 0
    while index < len(arguments) - 1:
        if arguments[index] in _COMMAND_LINE_OPTIONS:
            arguments[index : index + 2] = [f"{arguments[index]}={arguments[index + 1]}"]
        index += 1
    return arguments


def _default_label(args: argparse.Namespace) -> str:
    """The client's preset name, `custom` for `--client-cmd`, `external` for `--engine-url`."""
    if args.engine_url is not None:
        return "external"
    if args.client_cmd is not None:
        return "custom"
    return (args.client or DEFAULT.name).lower()


def checked_request(argv: Sequence[str]) -> ReplayRequest:
    """Parse and check the whole command line; `BadInput` on the first problem."""
    args = replay_parser().parse_args(_attach_client_args(argv))
    options = _options(args)
    label = args.label or _default_label(args)
    if not _LABEL.match(label):
        raise BadInput(f"--label {label!r}: use letters, digits, '.', '_' and '-'")
    check_mode_names(args)
    target = _target(args)
    if isinstance(target, ManagedClient):
        target = dataclasses.replace(target, cpus=options.client_cpus, settle_limit=args.settle_limit)
    modes = _modes(args, target)
    suite = discover(args.path, args.keyword, args.format)
    if isinstance(target, ManagedClient):
        check_networks(suite)
    else:
        target = target.probe()
    output = args.output or default_output(label)
    check_output_outside_fixtures(output, args.path)
    # Last: it creates the output folder, which no rejected command may leave behind.
    output = prepare_output(output)
    build = client_build(target.preset, target.binary) if isinstance(target, ManagedClient) else None
    return ReplayRequest(suite, target, options, label, output, args.path, args.keyword, modes, build)


MAX_MODES = 8
"""Modes one `--modes` run may have. Every mode's node serves each test (its executions interleaved
in rounds), so all of them run at once, each with the group's whole state in memory and its own
database; the report's modes are three, four with an A/A pair. Eight nodes of a 60M group on this
2-core machine are already eight clients contending for its cores and page cache, which the
measurement must not be about; more modes go in further runs."""


def _clients_by_mode() -> dict[str, list[str]]:
    """Each built-in mode's name -> the clients that have it (for the message naming a mode a client lacks)."""
    clients: dict[str, list[str]] = {}
    for kind in KINDS.values():
        for name in kind.modes:
            clients.setdefault(name, []).append(kind.name)
    return clients


def check_mode_names(args: argparse.Namespace) -> None:
    """`--modes` against the built-in modes of the `--client` named, before its binary is looked for."""
    if args.modes is None or args.engine_url is not None or args.client_cmd is not None:
        return
    kind = kind_named(args.client or DEFAULT.name)
    parse_modes(args.modes, kind.name, kind.modes, _clients_by_mode())


def _modes(args: argparse.Namespace, target: ManagedClient | ExternalClient) -> tuple[ClientMode, ...]:
    """
    `--modes`, each mode known to the preset or defined as NAME=FLAGS, and
    every flag of them known to the client binary (its help text): a flag
    it would refuse is bad input before any node starts.
    """
    if args.modes is None:
        return ()
    assert isinstance(target, ManagedClient)  # --engine-url refuses --modes
    kind = kind_of_preset(target.preset)
    modes = parse_modes(args.modes, target.preset.name, {} if kind is None else kind.modes, _clients_by_mode())
    if len(modes) > MAX_MODES:
        raise BadInput(
            f"--modes: {len(modes)} modes, at most {MAX_MODES}: every mode's node runs at once, "
            "each holding the group's state (split them over several runs)"
        )
    check_mode_flags(target.preset, target.binary, modes)
    managed = managed_flags(target.preset)
    for mode in modes:
        for flag in mode.flags:
            if flag.startswith("-") and flag.lstrip("-").split("=", 1)[0] in managed:
                raise BadInput(f"--modes {mode.name}: {flag.split('=', 1)[0]} is set by balgen")
    return modes


def check_output_outside_fixtures(output: Path, fixtures: Path) -> None:
    """
    Results written inside the fixture folder would be read as fixtures by
    every later replay of it (`results.json` is JSON but no fixture), so
    each would fail whatever `-k` selects.
    """
    if not fixtures.is_dir():
        return  # a replay of one file reads no other
    folder = fixtures.resolve()
    if resolved_path(output).is_relative_to(folder):
        raise BadInput(f"--output {output}: inside the fixture folder {folder}; its results would be read as fixtures")


class _Fanout:
    """Passes every event to each observer in turn."""

    def __init__(self, *observers: ReplayObserver) -> None:
        self.observers = observers

    def group_started(self, group: ReplayGroup, client_version: str | None) -> None:
        for observer in self.observers:
            observer.group_started(group, client_version)

    def test_started(self, ref: FixtureRef, executions: int) -> None:
        for observer in self.observers:
            observer.test_started(ref, executions)

    def execution_done(self, execution: Execution) -> None:
        for observer in self.observers:
            observer.execution_done(execution)

    def test_finished(self, result: FixtureResult) -> None:
        for observer in self.observers:
            observer.test_finished(result)


def new_run(request: ReplayRequest) -> RunResult:
    """The header of `results.json`, before any test ran (`replay.run_header`)."""
    return run_header(
        label=request.label,
        fixtures_path=request.path,
        keyword=request.keyword,
        options=request.options,
        target=request.target,
        notes=request.suite.notes,
        modes=request.modes,
        client_build=request.client_build,
    )


def execute(request: ReplayRequest, console: Console, stopped: StopNote) -> tuple[RunResult, int]:
    """
    Run the replay, writing results as it goes; return them and the exit code.
    A stop unwinds from here with `stopped` saying how many tests were kept.
    """
    try:
        writer = RunWriter(request.output, new_run(request))
    except ResultsNotWritten as error:
        print(f"balgen replay: {escaped(str(error))}", file=sys.stderr)
        return new_run(request), BAD_INPUT_EXIT_CODE
    for note in request.suite.notes:
        console.print(f"note: {note}", highlight=False)
    state = RunState.INTERRUPTED
    writable = True
    stopped.text = lambda: f"; {len(writer.run.tests)} tests kept in {request.output}"
    if request.options.balgen_cpus:
        pin_balgen(request.options.balgen_cpus)
    try:
        with ReplayProgress(console, request.suite.test_count * max(1, len(request.modes))) as progress:
            state = replay_suite(request.suite, request.mode_targets(), request.options, _Fanout(progress, writer))
    except ResultsNotWritten as error:
        writable = False
        print(f"balgen replay: {error}; the run stopped after {len(writer.run.tests)} tests", file=sys.stderr)
        return writer.run, FAILED
    finally:
        if writable:
            try:
                writer.finish(state)
            except ResultsNotWritten as error:
                print(f"balgen replay: {escaped(str(error))}", file=sys.stderr)
    run = writer.run
    console.print(summary_table(run.tests, f"balgen replay {request.label}: {run.client_versions[0] if run.client_versions else ''}"))
    counts = run.counts
    console.print(
        f"{counts['passed']} passed, {counts['failed']} failed, {counts['not_run']} not run"
        + (" (stopped at the first failure)" if state is RunState.STOPPED else "")
        + f"; results in {request.output}",
        highlight=False,
    )
    return run, 0 if counts["passed"] == len(run.tests) else FAILED


def run_replay(argv: Sequence[str], console: Console | None = None) -> int:
    """
    `balgen replay`: check the input (exit 2 on a problem), then run it. A
    stop signal, from the first check (a slow `--engine-url` probe) to the
    last result written, unwinds: the client balgen started is stopped and
    the results say `interrupted`.
    """
    stopped = StopNote(" before the run started; nothing written")

    def replay() -> int:
        request = checked_request(argv)
        return execute(request, console or wide_console(), stopped)[1]

    return run_command("replay", replay, stopped=stopped)
