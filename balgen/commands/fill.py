"""
`balgen fill`: the pytest fillers in `fillers/` run through balgen's plugin.

Its inputs are checked first, so that a wrong fork, gas list, t8n binary or
output folder is one line and exit code 2 rather than a pytest traceback.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from ..chain.background_state import built_state
from ..chain.header import has_block_access_list
from ..chain.t8n import TransitionTool
from ..model.state_recipe import parse_recipe
from ..plumbing.command_line import BAD_INPUT_EXIT_CODE, OneLineParser, add_keyword_option, keyword_matcher, matches
from ..plumbing.errors import BadInput
from ..fill.options import DEFAULT_GAS_BENCHMARK_VALUES, DEFAULT_OUTPUT, parse_gas_benchmark_values
from ..ethereum.forks import DEFAULT_FORK, FORKS, Fork, fork_by_name
from ..generators.catalog import families, named_in, planned_workloads
from ..generators.code_set import DEFAULT_CODE_SIZES, parse_code_sizes
from ..generators.invalid_bal import FAMILY_PREFIX as INVALID_BAL_PREFIX
from ..model.workload import Placement
from ..plumbing.output_files import check_output_writable
from ..plumbing.printable import escaped
from ..fill.plugin import CollectionError, collection_errors, filled_names, filler_folder, filling_fork, missing_tools, stopped_by
from ..plumbing.stop_signals import report_stop, stop_exit_code, stop_name
from ..plumbing.toolchain import cache_root, required_tool
from .runner import run_command


def fill_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="balgen fill",
        description="Fill the BAL benchmark fixtures (extra arguments go to pytest).",
    )
    parser.add_argument(
        "--fork", default=DEFAULT_FORK.name, help=f"one of {', '.join(FORKS)} (default {DEFAULT_FORK.name})"
    )
    parser.add_argument("--gas-benchmark-values", default=DEFAULT_GAS_BENCHMARK_VALUES, help="gas values in millions, e.g. 30,60")
    parser.add_argument("--evm-bin", type=Path, default=None, help="t8n binary (default: pinned go-ethereum evm)")
    parser.add_argument("--output", type=Path, default=Path(DEFAULT_OUTPUT), help="output folder (default fixtures/)")
    parser.add_argument("--setup", choices=["blocks", "genesis"], default="blocks", help="contract placement")
    parser.add_argument(
        "--code-sizes",
        default=",".join(DEFAULT_CODE_SIZES),
        help="contract set sizes in KB for extcodesize/extcodehash/extcodecopy: 0.5,24,64 or all (default 0.5)",
    )
    parser.add_argument(
        "--state",
        default=None,
        help="put the engine_x fixtures' shared genesis into a background state: a preset (balgen state presets) "
        "or accounts=N,slots=M[,seed=S,...]; built once and cached",
    )
    add_keyword_option(parser)
    parser.add_argument("-n", dest="workers", default=None, help="parallel workers (pytest-xdist)")
    parser.add_argument(
        "--verify", action="store_true", help="then check what was written with balgen verify (geth, revm, engine)"
    )
    return parser


def validate_fill_inputs(args: argparse.Namespace) -> None:
    """Check every input up front; raises BadInput naming the option."""
    filler_folder()  # an installation without the fillers stops here, in one line
    parse_code_sizes(args.code_sizes, fork_by_name(args.fork))
    parse_gas_benchmark_values(args.gas_benchmark_values)
    keyword_matcher(args.keyword)  # pytest's own error would be two lines and exit code 4
    if args.workers is not None and not (args.workers == "auto" or args.workers.isdigit()):
        raise BadInput(f"-n: {args.workers!r} is not a number of workers")
    check_fork_has_what_the_selection_needs(args)
    if args.state is not None:
        parse_recipe(args.state)  # a bad recipe is refused before the t8n's seconds of calibration
    evm = TransitionTool(args.evm_bin or required_tool("evm", "give --evm-bin"), slow_notice=_say_waiting)
    evm.version()
    missing_tools(fork_by_name(args.fork))  # balgen-state-root, found before pytest starts
    with tempfile.TemporaryDirectory(prefix="balgen-calibration-") as scratch:
        # A t8n balgen cannot model, or one without its access tracer, stops here, once.
        filling_fork(evm, fork_by_name(args.fork), Path(scratch))
    if args.verify:
        from .verify import tools_for

        tools_for()  # every verifier's binary is there, or the fill does not start
    args.state_folder = None if args.state is None else background_state_folder(args.state, fork_by_name(args.fork))
    # Last: it creates the output folder, which no rejected command should leave behind.
    check_output_writable(args.output)


def _say_waiting(line: str) -> None:
    """A calibration t8n call that is slow, said before pytest starts (its progress is the first sign of work)."""
    print(f"balgen fill: --evm-bin: {escaped(line)}", file=sys.stderr, flush=True)


def check_fork_has_what_the_selection_needs(args: argparse.Namespace) -> None:
    """
    `BadInput` when `-k` selects `invalid_bal_*` fixtures for a fork without
    block-level access lists: their block's lie is in an access list, so
    every one of them would fail after the whole fill, the output folder left.
    """
    fork = fork_by_name(args.fork)
    if has_block_access_list(fork):
        return
    expression = keyword_matcher(args.keyword)
    gas_values = parse_gas_benchmark_values(args.gas_benchmark_values)
    placement = Placement(args.setup)
    needing = [
        planned.name
        for family in families()
        if family.name.startswith(INVALID_BAL_PREFIX) and named_in(family, args.keyword)
        for planned in planned_workloads(family, fork, gas_values, placement, parse_code_sizes(args.code_sizes, fork))
        if matches(expression, planned.name)
    ]
    if needing:
        others = f" and {len(needing) - 1} more" if len(needing) > 1 else ""
        raise BadInput(
            f"--fork {fork.name}: -k {args.keyword!r} selects {needing[0]}{others}, whose block lies in its "
            f"block-level access list, which {fork.name} blocks do not have (fill them with --fork {DEFAULT_FORK.name})"
        )


def background_state_folder(text: str, fork: Fork) -> Path:
    """The built background state `--state` names, built now if it is not in the cache (progress on stderr);
    its recipe's workload slots go to the plugin beside it (`--state-workload-slots`)."""
    from ..clients.kinds.geth import empty_genesis  # the client kinds (httpx, every client's module) only for --state

    recipe = parse_recipe(text)
    if not has_block_access_list(fork):
        raise BadInput(f"--state: {fork.name} has no block access lists; the chains over a background state are applied from them")
    state = built_state(
        recipe, text, empty_genesis(fork), cache_root(), progress=lambda line: print(f"balgen fill: --state {text}: {line}", file=sys.stderr)
    )
    return state.folder


def pytest_arguments(args: argparse.Namespace, extra: Sequence[str]) -> list[str]:
    """
    The pytest command line that fills what `args` asks for. The folder that
    holds `fillers/` is the root, so that test ids read `fillers/test_x.py::...`
    from a checkout and an installed wheel alike; no ini file or conftest.py
    outside the fillers applies (a project the venv lives in keeps its pytest
    settings to itself); the plugin is named, so that it fills even where
    plugin autoloading is off.
    """
    fillers = filler_folder()
    arguments = [
        str(fillers),
        f"--rootdir={fillers.parent}",
        f"--config-file={os.devnull}",
        f"--confcutdir={fillers}",
        "-p",
        "balgen.fill.plugin",
        "-p",
        "no:cacheprovider",
        "--tb=no",
        "-q",
        # The fillers assert nothing, and pytest would rewrite every module of
        # balgen (an entry-point plugin's distribution) in every worker: a
        # second of CPU per process.
        "--assert=plain",
        # Plugins of the venv the fillers do not use, a quarter of a CPU-second in every process and worker
        # (hypothesis's observability module, anyio's trio support); blocking a name not installed is no error.
        "-p",
        "no:hypothesispytest",
        "-p",
        "no:anyio",
        f"--fork={args.fork}",
        f"--gas-benchmark-values={args.gas_benchmark_values}",
        f"--output={args.output}",
        f"--setup={args.setup}",
        f"--code-sizes={args.code_sizes}",
    ]
    if getattr(args, "state_folder", None) is not None:
        arguments.append(f"--state-folder={args.state_folder}")
        arguments.append(f"--state-workload-slots={parse_recipe(args.state).workload_slots}")
    if args.evm_bin:
        arguments.append(f"--evm-bin={args.evm_bin}")
    if args.keyword:
        arguments += ["-k", args.keyword]
    if args.workers:
        arguments += ["-n", args.workers]
    return arguments + list(extra)


def run_fill(argv: Sequence[str]) -> int:
    checked: tuple[argparse.Namespace, list[str], bool] | None = None

    def check() -> int:
        nonlocal checked
        args, extra = fill_parser().parse_known_args(argv)
        output_existed = args.output.exists()
        validate_fill_inputs(args)  # the t8n calibration takes seconds; a stop there leaves no scratch folder
        checked = (args, extra, output_existed)
        return 0

    code = run_command("fill", check, stopped=" before filling; nothing written")
    if checked is None:
        return code
    args, extra, output_existed = checked
    if extra[:1] == ["--"]:
        extra = extra[1:]

    pytest_exit: list[int] = []

    def fill_with_pytest() -> int:
        # pytest's own usage error arrives as BadInput (PytestUsageErrors): the runner says it in one line
        try:
            pytest_exit.append(int(pytest.main(pytest_arguments(args, extra), plugins=[PytestUsageErrors()])))
        except (BadInput, KeyboardInterrupt):
            _remove_if_made_and_empty(args.output, output_existed)
            raise
        return 0

    code = run_command("fill", fill_with_pytest, stopped="; nothing partial is left")
    if not pytest_exit:
        return code  # bad input or a stop outside pytest's session, said in one line by the runner
    code = pytest_exit[0]
    stop = stopped_by()
    if stop is not None:
        _remove_if_made_and_empty(args.output, output_existed)
        report_stop(f"balgen fill: {stop_name(stop)}; the fixtures written are complete, nothing partial is left")
        return stop_exit_code(stop)
    uncollected = collection_errors()
    if uncollected:
        _remove_if_made_and_empty(args.output, output_existed)
        return report_collection_errors(uncollected)
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        _remove_if_made_and_empty(args.output, output_existed)
        print(f"balgen fill: -k {args.keyword!r} matches no fixture", file=sys.stderr)
        return BAD_INPUT_EXIT_CODE
    if code == pytest.ExitCode.OK and args.verify:
        from ..plumbing.command_line import wide_console
        from .verify import verify_filled

        return verify_filled(args.output, filled_names(), wide_console())
    return code


class PytestUsageErrors:
    """
    A pytest plugin object (given to `pytest.main`) that turns pytest's own
    usage error, an argument neither balgen fill nor pytest knows (`--state
    x`), from pytest's usage text and exit code 4 into `BadInput`: one line
    and exit code 2, as for balgen's own options.
    """

    @pytest.hookimpl(wrapper=True)
    def pytest_cmdline_parse(self, pluginmanager: pytest.PytestPluginManager, args: list[str]) -> Iterator[Any]:
        del pluginmanager, args
        try:
            return (yield)
        except pytest.UsageError as error:
            raise BadInput(usage_error_line(str(error))) from None


def usage_error_line(text: str) -> str:
    """argparse's complaint in pytest's usage error (`unrecognized arguments: --state`), else its first line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    complaint = next((line.split(": error: ", 1)[1] for line in lines if ": error: " in line), lines[0] if lines else text)
    return f"{complaint} (an option of neither balgen fill nor pytest; see balgen fill --help)"


def _remove_if_made_and_empty(output: Path, existed: bool) -> None:
    """
    The output folder the writability check made, removed when no file was
    filled into it (an interrupted fill's empty format folders with it): a
    rejected or stopped command leaves nothing.
    """
    if existed or not output.is_dir():
        return
    if any(path.is_file() or path.is_symlink() for path in output.rglob("*")):
        return
    shutil.rmtree(output, ignore_errors=True)


def report_collection_errors(errors: Sequence[CollectionError]) -> int:
    """
    One line per distinct cause of the filler modules pytest could not
    collect (it says only "N errors during collection"); exit 2 when every
    cause is bad input, else 1.
    """
    causes: dict[str, list[str]] = {}
    for error in errors:
        causes.setdefault(error.cause, []).append(error.node_id)
    for cause, modules in causes.items():
        where = modules[0] + (f" and {len(modules) - 1} more filler modules" if len(modules) > 1 else "")
        print(f"balgen fill: cannot collect {where}: {escaped(cause)}", file=sys.stderr)
    return BAD_INPUT_EXIT_CODE if all(error.bad_input for error in errors) else 1
