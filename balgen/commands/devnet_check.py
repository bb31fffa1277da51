"""
`balgen devnet-check EXPORT --rpc-url URL [--blocks A-B | --since N | --last N] [--spamoor-key KEY]`.

Reads the exported workload (a `spamoor run` file, or an export folder for
every workload its all.yaml includes), checks that the chain fits the
export's fork, finds every workload's transactions in the blocks given (by
default the last DEFAULT_LAST_BLOCKS) at once (`matching.match_all`; with
spamoor's root key, each workload's from its own spammer's wallets only) and
checks each complete run (`workload_check`). One line per run; exit code 0
when every workload found ran as designed, 1 on a mismatch or a chain that
does not fit (the line names the first difference, or what to change), 3
when a run is not yet complete (spamoor's last transactions not mined), 2 on
bad input or a URL that does not answer. It talks to no address but the URL.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape as markup_escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ..clients.engine_client import RpcClient, RpcError, RpcTransportError
from ..devnet.chain_fit import chain_fit_problem
from ..devnet.chain_reader import ChainTx, blocks_in, head_number
from ..devnet.exported import ExportedWorkload, read_exported, workload_files
from ..devnet.matching import ChainIndex, Wallets, match_all
from ..devnet.spamoor_wallets import root_key, spammer_wallets
from ..devnet.workload_check import Mismatch, WorkloadRuns, check_run, workload_runs
from ..model.workload import Origin
from ..plumbing.command_line import OneLineParser
from ..plumbing.errors import BadInput
from ..plumbing.printable import escaped
from ..replay.targets import check_http_url
from .runner import run_command

MISMATCH_EXIT_CODE = 1
NOT_COMPLETE_EXIT_CODE = 3
"""No mismatch, but a run only partly on the chain: spamoor's last transactions not mined yet (check again)."""
PROG = "balgen devnet-check"
DEFAULT_LAST_BLOCKS = 5_000
"""Blocks searched without --blocks/--since/--last: one call each, a few minutes at most, and more than a
whole export's run at 1M took (2,114 wallets funded in 356 blocks on a loaded 2-core machine)."""
MAX_BLOCKS = 1_000_000
"""The most blocks one check reads: hours at one call per block; a longer range is narrowed first."""
PROGRESS_LINE_SECONDS = 10.0
"""How often the block reading is reported as a plain line when stderr is not a terminal."""


def devnet_check_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        description="Check that an exported workload ran on a live chain as its model says.",
    )
    parser.add_argument("export", type=Path, metavar="EXPORT", help="a workload's spamoor file, or the export folder")
    parser.add_argument("--rpc-url", required=True, metavar="URL", help="the chain's JSON-RPC URL (the only address used)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--blocks", metavar="A-B", help="search blocks A to B")
    where.add_argument("--since", type=int, metavar="N", default=None, help="search blocks N to the head")
    where.add_argument(
        "--last", type=int, metavar="N", default=None,
        help=f"search the last N blocks up to the head (default {DEFAULT_LAST_BLOCKS:,})",
    )  # fmt: skip
    parser.add_argument(
        "--spamoor-key", metavar="KEY", default=None,
        help="the root private key spamoor ran with (its -p): each run is matched by its own spammer's wallets, so a "
        "run of another export of the same workloads in the blocks is not taken for this one's",
    )  # fmt: skip
    return parser


@dataclass(frozen=True)
class BlockWindow:
    """The blocks asked for: a first block (or the last N) and a last block (None: the head)."""

    first: int | None
    last: int | None
    last_count: int | None = None

    def on(self, head: int) -> tuple[int, int]:
        """[first, last] on a chain whose head is `head`; bad input past the head or over MAX_BLOCKS."""
        last = head if self.last is None else self.last
        first = max(1, head - self.last_count + 1) if self.last_count is not None else self.first or 0
        if first > last or last > head:
            raise BadInput(f"--blocks/--since: blocks {first}-{last} are not on the chain (head {head})")
        if last - first + 1 > MAX_BLOCKS:
            raise BadInput(
                f"--blocks/--since: blocks {first}-{last} are {last - first + 1:,} blocks, more than the {MAX_BLOCKS:,} "
                "one check reads (one call per block); narrow it with --blocks A-B or --since N around the run"
            )
        return first, last


def parse_blocks(args: argparse.Namespace) -> BlockWindow:
    """The window from --blocks, --since or --last (default: the last DEFAULT_LAST_BLOCKS)."""
    if args.since is not None:
        if args.since < 0:
            raise BadInput(f"--since: {args.since} is not a block number")
        return BlockWindow(args.since, None)
    if args.blocks is not None:
        first, dash, last = args.blocks.partition("-")
        if not (dash and first.isdigit() and last.isdigit()):
            raise BadInput(f"--blocks: {args.blocks!r} is not a range A-B of block numbers")
        return BlockWindow(int(first), int(last))
    count = DEFAULT_LAST_BLOCKS if args.last is None else args.last
    if count < 1:
        raise BadInput(f"--last: {count} is not a number of blocks (1 or more)")
    return BlockWindow(None, None, count)


def needs_proxy(exported: ExportedWorkload) -> bool:
    """The workload makes contracts at the same address on every chain: through the deterministic deployment proxy."""
    return any(
        Origin.SAME_ON_EVERY_CHAIN in access.origins.values()
        for block in exported.run.workload.blocks
        for access in block.accesses
    )


MISMATCH = ": MISMATCH: "
NOT_COMPLETE = ": run not yet complete"


def progress_bar() -> Progress:
    """A bar on stderr while blocks are read and a workload is checked (none when stderr is not a terminal)."""
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TimeRemainingColumn(), console=Console(stderr=True), transient=True, disable=not sys.stderr.isatty(),
        redirect_stdout=False, redirect_stderr=False,
    )  # fmt: skip


def read_blocks(rpc: RpcClient, first: int, last: int, bar: Progress) -> tuple[list[ChainTx], dict[int, bytes]]:
    """
    Every transaction of blocks first..last in chain order, and each block's
    fee recipient; the bar shows the reading, and without a terminal a plain
    line every PROGRESS_LINE_SECONDS says how far it got.
    """
    txs: list[ChainTx] = []
    miners: dict[int, bytes] = {}
    task = bar.add_task(f"reading blocks {first}-{last}", total=last - first + 1)
    reported = time.monotonic()
    for block in blocks_in(rpc, first, last):
        miners[block.number] = block.miner
        txs += block.transactions
        bar.advance(task)
        if bar.disable and time.monotonic() - reported >= PROGRESS_LINE_SECONDS:
            reported = time.monotonic()
            done = block.number - first + 1
            print(f"{PROG}: read {done:,} of {last - first + 1:,} blocks ({block.number} of {first}-{last})",
                  file=sys.stderr, flush=True)  # fmt: skip
    bar.remove_task(task)
    return txs, miners


def workload_lines(
    rpc: RpcClient, item: ExportedWorkload, runs: WorkloadRuns, miners: dict[int, bytes], blocks: str, at_head: bool,
    strict: bool, bar: Progress,
) -> list[str]:
    """
    The workload's lines: one per complete run (ok or the first mismatch),
    one for a run not yet complete, or that it did not run in the blocks
    (a mismatch when its own file is checked).
    """
    stem = item.run.stem
    lines = []
    for number, run in enumerate(runs.complete, start=1):
        name = stem if len(runs.complete) == 1 else f"{stem} (run {number} of {len(runs.complete)})"
        task = bar.add_task(name, total=None)
        reported = [time.monotonic()]

        def progress(step: str, done: int, total: int, unit: str = "transactions") -> None:
            """
            The bar, or off a terminal a plain line every PROGRESS_LINE_SECONDS:
            tracing a run takes minutes. The step may quote the chain (why it
            traces transaction by transaction): printed escaped.
            """
            bar.update(task, description=markup_escape(escaped(f"{name}: {step}")), completed=done, total=total)
            if bar.disable and time.monotonic() - reported[0] >= PROGRESS_LINE_SECONDS:
                reported[0] = time.monotonic()
                print(f"{PROG}: {escaped(name)}: {escaped(step)} {done:,} of {total:,} {unit}", file=sys.stderr, flush=True)

        try:
            lines.append(f"{name}: ok: {check_run(rpc, item, run, miners, progress)}")
        except Mismatch as error:
            lines.append(f"{name}{MISMATCH}{error}")
        bar.remove_task(task)
    if runs.missing is not None:
        if at_head:
            lines.append(
                f"{stem}{NOT_COMPLETE} in blocks {blocks}: {runs.missing}; if spamoor is still sending or its last "
                "transactions are not mined yet, wait and check again"
            )
        else:
            lines.append(f"{stem}{NOT_COMPLETE} in blocks {blocks}: {runs.missing}; search a range that ends later")
    elif not runs.complete:
        first = item.run.payloads[0]
        missing = f"{first.name} tx 0 ({first.txs[0].origin.label}) is not in blocks {blocks}"
        lines.append(f"{stem}{MISMATCH}{missing}" if strict else f"{stem}: not run in blocks {blocks} ({missing})")
    return lines


def own_wallets(exported: Sequence[ExportedWorkload], key: bytes) -> list[Wallets]:
    """Each workload's spammer's wallets: its seed names the file (and so the gas value) it was run from."""
    return [spammer_wallets(key, item.config.seed, item.config.max_wallets) for item in exported]


NAMED_AT_MOST = 5


def ambiguity_note(stems: Sequence[str]) -> str:
    """
    What a check without spamoor's key cannot tell, named for the workloads
    it concerns (more than one run, or one not complete): another export of
    the same workloads at another gas value sends many of the same payloads
    byte for byte, so its runs may be among them.
    """
    named = ", ".join(stems[:NAMED_AT_MOST]) + (f" and {len(stems) - NAMED_AT_MOST} more" if len(stems) > NAMED_AT_MOST else "")
    return (
        f"runs are found by what they send, and an export of the same workloads at another gas value sends many of "
        f"the same payloads: the runs of {named} may be another export's (extra runs, or runs not complete for good); "
        "--spamoor-key KEY (spamoor's -p) matches each run by its own spammer's wallets"
    )


def check(args: argparse.Namespace) -> int:
    """Every workload's lines on stdout; the exit code."""
    window = parse_blocks(args)
    url = check_http_url(args.rpc_url, "--rpc-url")
    exported = [read_exported(path) for path in workload_files(args.export)]
    wallets = None if args.spamoor_key is None else own_wallets(exported, root_key(args.spamoor_key, "--spamoor-key"))
    with RpcClient(url) as rpc:
        for fork in {item.fork.name: item.fork for item in exported}.values():
            problem = chain_fit_problem(rpc, fork, any(needs_proxy(item) for item in exported if item.fork is fork))
            if problem:
                print(f"{PROG}: the chain does not fit the {fork.name} export: {escaped(problem)}", file=sys.stderr)
                return MISMATCH_EXIT_CODE
        head = head_number(rpc)
        first, last = window.on(head)
        blocks = f"{first}-{last}"
        if window.last_count is not None:
            print(
                f"{PROG}: searching the last {last - first + 1:,} blocks ({blocks}, head {head}); "
                "--since N, --blocks A-B or --last N search others", file=sys.stderr, flush=True,
            )  # fmt: skip
        lines: list[str] = []
        with progress_bar() as bar:
            txs, miners = read_blocks(rpc, first, last, bar)
            index = ChainIndex(txs)
            matches = match_all([item.run.payloads for item in exported], index, wallets)
            uncertain: list[str] = []
            for number, item in enumerate(exported):
                runs = workload_runs(item, matches, number)
                if len(runs.complete) > 1 or runs.missing is not None:
                    uncertain.append(item.run.stem)
                for line in workload_lines(rpc, item, runs, miners, blocks, last == head, not args.export.is_dir(), bar):
                    lines.append(line)
                    print(escaped(line), flush=True)
    if wallets is None and uncertain:
        print(f"{PROG}: {ambiguity_note(uncertain)}", file=sys.stderr)
    if not any(MISMATCH in line or ": ok: " in line or NOT_COMPLETE in line for line in lines):
        whose = "" if wallets is None else " from the wallets --spamoor-key derives (is it the key spamoor ran with?)"
        print(f"{PROG}: no workload of {args.export} ran in blocks {blocks}{whose}", file=sys.stderr)
        return MISMATCH_EXIT_CODE
    if any(MISMATCH in line for line in lines):
        return MISMATCH_EXIT_CODE
    return NOT_COMPLETE_EXIT_CODE if any(NOT_COMPLETE in line for line in lines) else 0


def run_devnet_check(argv: Sequence[str]) -> int:
    """Entry point of `balgen devnet-check`."""
    return run_command(
        "devnet-check", lambda: check(devnet_check_parser().parse_args(argv)), bad_input=(RpcTransportError, RpcError)
    )
