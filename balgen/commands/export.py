"""
`balgen export spamoor`: every selected workload as a spamoor configuration.

Inputs are checked and every workload is mapped before anything is written,
so bad input or a workload spamoor cannot run is one line on stderr, exit
code 2 and an untouched output folder. Workloads always use set-up blocks:
a live chain has no genesis to place contracts in.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ..plumbing.command_line import BAD_INPUT_EXIT_CODE, OneLineParser, add_keyword_option
from ..plumbing.errors import BadInput
from ..fill.options import DEFAULT_GAS_BENCHMARK_VALUES, parse_gas_benchmark_values
from ..clients.engine_client import RpcClient, RpcError, RpcTransportError
from ..devnet.chain_fit import chain_fit_problem
from ..ethereum.forks import DEFAULT_FORK, FORKS, Fork, fork_by_name
from ..model.family import PlannedWorkload
from ..generators.catalog import all_planned_workloads
from ..generators.code_set import DEFAULT_CODE_SIZES, parse_code_sizes
from ..model.workload import Placement
from ..export.folder import write_folder
from ..export.spamoor_export import ALL_FILE, spamoor_export
from ..replay.targets import check_http_url
from .runner import run_command

TARGETS = ("spamoor",)
DEFAULT_OUTPUT = Path("out/spamoor")


def spamoor_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="balgen export spamoor",
        description="Write every selected workload as a `spamoor run` file, its payloads, and all.yaml.",
    )
    add_keyword_option(parser)
    parser.add_argument(
        "--gas-benchmark-values", metavar="LIST", default=DEFAULT_GAS_BENCHMARK_VALUES, help="gas values in millions, e.g. 30,60"
    )
    parser.add_argument(
        "--fork", default=DEFAULT_FORK.name, help=f"one of {', '.join(FORKS)} (default {DEFAULT_FORK.name})"
    )
    parser.add_argument(
        "--code-sizes",
        default=",".join(DEFAULT_CODE_SIZES),
        help="contract set sizes in KB for the extcode* families (default 0.5; or all)",
    )
    parser.add_argument(
        "--output", type=Path, metavar="DIR", default=DEFAULT_OUTPUT, help=f"output folder (default {DEFAULT_OUTPUT}/)"
    )
    parser.add_argument(
        "--check-chain", metavar="URL", default=None, help="refuse to export for a chain (JSON-RPC URL) of another fork"
    )
    return parser


def check_chain(url: str, fork: Fork, planned: Sequence[PlannedWorkload]) -> None:
    """The chain at `url` runs `fork` (and has the proxy a contract set needs); BadInput saying what to change."""
    needs_proxy = any(item.family.sized_by_code for item in planned)
    try:
        with RpcClient(check_http_url(url, "--check-chain")) as rpc:
            problem = chain_fit_problem(rpc, fork, needs_proxy)
    except (RpcError, RpcTransportError) as error:
        raise BadInput(f"--check-chain: {error}") from None
    if problem:
        raise BadInput(f"--check-chain: {problem}")


def export_spamoor(args: argparse.Namespace) -> int:
    """Map every selected workload, then write the folder; returns how many were exported."""
    fork = fork_by_name(args.fork)
    gas_benchmark_values = parse_gas_benchmark_values(args.gas_benchmark_values)
    code_sizes = parse_code_sizes(args.code_sizes, fork)
    planned = all_planned_workloads(fork, gas_benchmark_values, Placement.BLOCKS, args.keyword, code_sizes)
    if not planned:
        raise BadInput(f"-k {args.keyword!r} matches no workload")
    if args.check_chain:
        check_chain(args.check_chain, fork, planned)
    with export_progress(len(planned)) as progress:
        task = progress.add_task("export", total=len(planned))
        files = spamoor_export(planned, lambda _: progress.advance(task))
    write_folder(args.output, files)
    return len(planned)


def export_progress(total: int) -> Progress:
    """A progress bar with the time left on stderr (a 1,000M export takes many minutes); nothing when not a terminal."""
    console = Console(stderr=True)
    return Progress(
        TextColumn("[bold]export[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=console,
        disable=total < 2 or not console.is_terminal,
    )


def run_export(argv: Sequence[str]) -> int:
    """Entry point of `balgen export TARGET ...`; exit code 2 on bad input."""
    if not argv or argv[0] not in TARGETS:
        targets = "|".join(TARGETS)
        print(f"usage: balgen export {{{targets}}} [options]  (balgen export spamoor --help)", file=sys.stderr)
        return BAD_INPUT_EXIT_CODE

    def export() -> int:
        args = spamoor_parser().parse_args(argv[1:])
        count = export_spamoor(args)
        print(f"balgen export spamoor: {count} workloads in {args.output / ALL_FILE}")
        return 0

    return run_command("export spamoor", export, stopped="; the output folder is as it was")
