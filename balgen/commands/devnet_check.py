"""
`balgen devnet-check EXPORT --rpc-url URL [--blocks A-B | --since N]`.

Reads the exported workload (a `spamoor run` file, or an export folder for
every workload its all.yaml includes), checks that the chain fits the
export's fork, finds the workload's transactions in the blocks given and
checks them (`workload_check`). One line per workload; exit code 0 when
every workload found ran as designed, 1 on a mismatch or a chain that does
not fit (the line names the first difference, or what to change), 2 on bad
input or a URL that does not answer. It talks to no address but the URL.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..clients.engine_client import RpcClient, RpcError, RpcTransportError
from ..plumbing.command_line import OneLineParser
from ..plumbing.errors import BadInput
from ..model.workload import Origin
from ..devnet.chain_fit import chain_fit_problem
from ..devnet.chain_reader import block_range, transactions_in
from ..devnet.exported import ExportedWorkload, read_exported, workload_files
from ..devnet.matching import ChainIndex
from ..devnet.workload_check import Mismatch, NotRun, check_workload
from ..devnet.workload_check import Progress as ProgressReport
from .runner import run_command

MISMATCH_EXIT_CODE = 1
PROG = "balgen devnet-check"


def devnet_check_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        description="Check that an exported workload ran on a live chain as its model says.",
    )
    parser.add_argument("export", type=Path, metavar="EXPORT", help="a workload's spamoor file, or the export folder")
    parser.add_argument("--rpc-url", required=True, metavar="URL", help="the chain's JSON-RPC URL (the only address used)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--blocks", metavar="A-B", help="search blocks A to B")
    where.add_argument("--since", type=int, metavar="N", default=None, help="search blocks N to the head (default 1)")
    return parser


def parse_blocks(args: argparse.Namespace) -> tuple[int, int | None]:
    """(first, last or None for the head) from --blocks or --since."""
    if args.blocks is None:
        since = 1 if args.since is None else args.since
        if since < 0:
            raise BadInput(f"--since: {since} is not a block number")
        return since, None
    first, dash, last = args.blocks.partition("-")
    if not (dash and first.isdigit() and last.isdigit()):
        raise BadInput(f"--blocks: {args.blocks!r} is not a range A-B of block numbers")
    return int(first), int(last)


def needs_proxy(exported: ExportedWorkload) -> bool:
    """The workload makes contracts at the same address on every chain: through the deterministic deployment proxy."""
    return any(
        Origin.SAME_ON_EVERY_CHAIN in access.origins.values()
        for block in exported.run.workload.blocks
        for access in block.accesses
    )


MISMATCH = ": MISMATCH: "


def workload_line(
    rpc: RpcClient, item: ExportedWorkload, index: ChainIndex, miners: dict[int, bytes], blocks: str, strict: bool,
    progress: ProgressReport,
) -> tuple[str, bool]:
    """
    The workload's line, and whether it ran. Checking a folder, a workload not
    wholly in the blocks is one that was not run there; checking its own file,
    that is a mismatch.
    """
    index.claimed.clear()  # workloads may send identical transactions: each is matched on its own
    try:
        return f"{item.run.stem}: ok: {check_workload(rpc, item, index, miners, blocks, progress)}", True
    except NotRun as missing:
        if strict:
            return f"{item.run.stem}{MISMATCH}{missing}", True
        return f"{item.run.stem}: not run in blocks {blocks} ({missing})", False
    except Mismatch as error:
        return f"{item.run.stem}{MISMATCH}{error}", True


def progress_bar() -> Progress:
    """A bar on stderr while a workload is checked (none when stderr is not a terminal); lines go to stdout."""
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=Console(stderr=True), transient=True, disable=not sys.stderr.isatty(),
        redirect_stdout=False, redirect_stderr=False,
    )


def check(args: argparse.Namespace) -> int:
    """Every workload's line on stdout; the exit code."""
    first, last = parse_blocks(args)
    exported = [read_exported(path) for path in workload_files(args.export)]
    with RpcClient(args.rpc_url) as rpc:
        for fork in {item.fork.name: item.fork for item in exported}.values():
            problem = chain_fit_problem(rpc, fork, any(needs_proxy(item) for item in exported if item.fork is fork))
            if problem:
                print(f"{PROG}: the chain does not fit the {fork.name} export: {problem}", file=sys.stderr)
                return MISMATCH_EXIT_CODE
        first, last = block_range(rpc, first, last)
        txs, miners = transactions_in(rpc, first, last)
        index = ChainIndex(txs)
        blocks = f"{first}-{last}"
        lines = []
        with progress_bar() as bar:
            for item in exported:
                task = bar.add_task(item.run.stem, total=None)

                def progress(step: str, done: int, total: int) -> None:
                    bar.update(task, description=f"{item.run.stem}: {step}", completed=done, total=total)

                lines.append(workload_line(rpc, item, index, miners, blocks, not args.export.is_dir(), progress))
                bar.remove_task(task)
                print(lines[-1][0], flush=True)
    if not any(run for _, run in lines):
        print(f"{PROG}: no workload of {args.export} ran in blocks {blocks}", file=sys.stderr)
        return MISMATCH_EXIT_CODE
    mismatches = sum(1 for line, _ in lines if MISMATCH in line)
    return MISMATCH_EXIT_CODE if mismatches else 0


def run_devnet_check(argv: Sequence[str]) -> int:
    """Entry point of `balgen devnet-check`."""
    return run_command(
        "devnet-check", lambda: check(devnet_check_parser().parse_args(argv)), bad_input=(RpcTransportError, RpcError)
    )
