"""
`balgen state build RECIPE`, `balgen state export RECIPE` and `balgen state presets`: background states of a network's size, built from a recipe into a client's database once and cached.

A recipe is a preset's name (`balgen state presets` lists them and what each
imitates) or inline, `accounts=10M,slots=100M[,seed=S,contracts=N,...]`.
`build` builds it into geth's database with go-ethereum's own code
(`balgen-state-build`), in balgen's cache (`BALGEN_CACHE`, else the
checkout's `.cache/states/<recipe hash>/`), and prints what it took; a recipe
already built is only looked up.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..chain.background_state import (
    BuiltState, built_state, estimated_disk_bytes, gigabytes, state_build_tool, states_folder, write_genesis_file,
    write_reth_dump,
)
from ..chain.builder import genesis_header
from ..clients.chain_config import network_fork
from ..clients.kinds.geth import empty_genesis
from ..model.state_recipe import PRESETS, parse_recipe
from ..plumbing.command_line import OneLineParser
from ..plumbing.errors import BadInput
from ..plumbing.output_files import check_writable
from ..plumbing.toolchain import cache_root
from .runner import run_command


def state_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="balgen state", description="Background states built from a recipe.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    build = commands.add_parser("build", help="build a recipe's state into geth's database (cached)")
    build.add_argument("recipe", help=f"a preset ({', '.join(PRESETS)}) or accounts=N,slots=M[,seed=S,...]")
    build.add_argument("--fork", default="Amsterdam", help="the genesis block's fork (default Amsterdam)")
    build.add_argument("--cache", type=Path, default=None, help="cache folder (default: balgen's cache)")
    commands.add_parser("presets", help="the named recipes and what each imitates")
    export = commands.add_parser("export", help="write a recipe's state as a geth genesis.json or reth's JSON-lines dump")
    export.add_argument("recipe", help=f"a preset ({', '.join(PRESETS)}) or accounts=N,slots=M[,seed=S,...]")
    export.add_argument("--output", type=Path, required=True, help="the file to write")
    export.add_argument(
        "--format", choices=EXPORT_FORMATS, default="geth-genesis",
        help="geth-genesis: a genesis.json whose alloc is the whole state (default); reth-jsonl: the "
        "JSON-lines dump `reth init-state` reads (its root line from geth's build of the state, built if needed)",
    )  # fmt: skip
    export.add_argument("--fork", default="Amsterdam", help="the genesis block's fork (default Amsterdam)")
    export.add_argument("--cache", type=Path, default=None, help="cache folder (default: balgen's cache)")
    return parser


def depth_line(depths: Sequence[int]) -> str:
    """`mean 6.2, max 8` for a histogram of leaf depths (index: nodes walked from the root)."""
    leaves = sum(depths)
    if not leaves:
        return "no leaves"
    mean = sum(depth * count for depth, count in enumerate(depths)) / leaves
    return f"mean {mean:.1f}, max {max(depth for depth, count in enumerate(depths) if count)}"


def build_summary(name: str, state: BuiltState) -> list[str]:
    """What a person reads after a build: the state, its genesis, the tries' depths and what the build took."""
    record = state.record
    return [
        f"state {name}: {state.recipe.describe()}",
        f"  datadir        {state.datadir}",
        f"  state root     {record['state-root']}",
        f"  genesis hash   {record['genesis-hash']}",
        f"  accounts       {record['accounts']:,} ({record['contracts']:,} contracts, {record['code-bytes']:,} code bytes)",
        f"  slots          {record['slots']:,} (largest storage {record['largest-storage']:,})",
        f"  account trie   {record['account-trie-nodes']:,} nodes, leaf depth {depth_line(record['account-leaf-depths'])}",
        f"  storage tries  {record['storage-trie-nodes']:,} nodes, leaf depth {depth_line(record['storage-leaf-depths'])}",
        f"  disk           {gigabytes(record['disk-bytes'])} (estimated {gigabytes(estimated_disk_bytes(state.recipe))})",
        f"  build          {record['wall-seconds']:.0f} s wall, {record['cpu-seconds']:.0f} s CPU, "
        f"peak memory {record['peak-memory-bytes'] / 2**20:,.0f} MiB",
    ]


def run_build(recipe_text: str, fork_name: str, cache: Path | None) -> int:
    recipe = parse_recipe(recipe_text)
    fork = network_fork(fork_name)
    genesis = empty_genesis(fork)
    folder = cache or cache_root()
    print(f"balgen state: {recipe_text}: {recipe.describe()} in {states_folder(folder)}", file=sys.stderr)
    state = built_state(
        recipe, recipe_text, genesis, folder, progress=lambda line: print(f"balgen state: {line}", file=sys.stderr)
    )
    # balgen's own header code must give the genesis hash geth's code wrote: the fixtures name it.
    expected = genesis_header(fork, state.state_root).hash
    if expected != state.genesis_hash:
        raise BadInput(
            f"{state.folder}: genesis hash 0x{state.genesis_hash.hex()} in the database, balgen's header "
            f"gives 0x{expected.hex()} for its state root"
        )
    print("\n".join(build_summary(recipe_text, state)))
    return 0


EXPORT_FORMATS = ("geth-genesis", "reth-jsonl")


def run_export(recipe_text: str, output: Path, export_format: str, fork_name: str, cache: Path | None) -> int:
    recipe = parse_recipe(recipe_text)
    check_writable(output.parent if output.parent != Path("") else Path("."), "--output")
    if output.is_dir():
        raise BadInput(f"--output {output}: is a folder")
    genesis = empty_genesis(network_fork(fork_name))
    if export_format == "geth-genesis":
        write_genesis_file(state_build_tool(), recipe, genesis, output)
        print(f"balgen state: {recipe_text}: {recipe.describe()} written to {output} (geth init reads it)")
        return 0
    # The root line is the root geth's database holds for the state: reth's init-state checks its own against it.
    state = built_state(
        recipe, recipe_text, genesis, cache or cache_root(), progress=lambda line: print(f"balgen state: {line}", file=sys.stderr)
    )  # fmt: skip
    write_reth_dump(state_build_tool(), recipe, state.state_root, output)
    print(
        f"balgen state: {recipe_text}: {recipe.describe()} written to {output} as reth's JSON-lines dump, "
        f"root {state.record['state-root']} (reth init-state reads it at a block whose header has that root)"
    )
    return 0


def run_presets() -> int:
    for preset in PRESETS.values():
        print(f"{preset.name}: {preset.recipe.describe()}")
        print(f"  imitates {preset.imitates}")
        print(f"  inline   {preset.recipe.inline()}")
        print(f"  disk     about {gigabytes(estimated_disk_bytes(preset.recipe))} for geth")
    return 0


def run_state(argv: Sequence[str]) -> int:
    """`balgen state`: one line and exit code 2 on bad input, else 0."""

    def body() -> int:
        args = state_parser().parse_args(argv)
        if args.command == "presets":
            return run_presets()
        if args.command == "export":
            return run_export(args.recipe, args.output, args.format, args.fork, args.cache)
        return run_build(args.recipe, args.fork, args.cache)

    return run_command("state", body, stopped="; the unfinished build was removed")
