"""
`balgen genesis PATH --client NAME --output DIR`: the genesis files a client
needs to replay a suite it starts itself.

A suite spans many genesis groups (each contract-set workload has its own),
so a client started by hand on one genesis can replay one group at most.
This writes, per group, the file in the client's format, in one of two
layouts:

- `balgen` (default): `DIR/<group>-<genesis hash>/<file>` per group, where
  `<group>` is the pre-alloc group hash (`blockchain_test_engine_x`) or the
  fixture name (`blockchain_test_engine`), plus `DIR/README.md` with the
  tests of each group and the command that starts the client on it;
- `benchmarkoor`: `DIR/genesis/<preHash>/<go-ethereum|nethermind|besu>/<file>`,
  the tree benchmarkoor's EEST source reads (`local_genesis_dir: DIR`,
  `GetGenesisPathForGroup`), for pre-alloc groups only, and
  `DIR/benchmarkoor.yaml`, a benchmarkoor configuration with one instance
  per client and mode (`balgen.clients.benchmarkoor_config`).

The `<genesis hash>` of a pre-alloc group is the one its file gives,
computed from its `environment` and `pre` when discovery reads it; a group
file whose tests start from another is bad input.

Bad input (a path without replayable fixtures, an unknown client, an
unwritable folder, a malformed genesis) is one line and exit code 2, and
nothing is written: every file is converted into a hidden staging folder
first and moved into place only when all of them are complete.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..clients.genesis_files import GenesisFormat, write_background_genesis, write_client_genesis
from ..clients import benchmarkoor_config
from ..clients.kind import ClientKind
from ..clients.presets import ClientPreset, start_instructions
from ..plumbing.command_line import OneLineParser, add_keyword_option
from ..plumbing.errors import BadInput
from ..fixtures.files import format_names, formats_where
from ..plumbing.output_files import staged_folder, write_text_atomically
from .replay import check_networks
from ..replay.discovery import ReplayGroup, discover
from .client_options import add_client_choice, chosen_kinds
from .runner import run_command

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def genesis_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="balgen genesis",
        description="Write each genesis group's genesis file for an execution client.",
    )
    parser.add_argument("path", type=Path, help="fixture file or folder")
    add_keyword_option(parser)
    add_client_choice(parser, several=True)
    parser.add_argument("--output", type=Path, required=True, help="folder to write into (created)")
    parser.add_argument(
        "--layout",
        choices=("balgen", "benchmarkoor"),
        default="balgen",
        help="balgen: one folder per group with a README; benchmarkoor: genesis/<preHash>/<client>/",
    )
    return parser


def group_name(group: ReplayGroup) -> str:
    """The pre-alloc group hash, or the engine fixture's name made safe for a path."""
    source = group.genesis
    if source.test_id is None:
        return source.path.stem
    return _UNSAFE.sub("_", source.test_id).strip("_") or "fixture"


@dataclass(frozen=True)
class PlannedFile:
    """One genesis file to write: which group, which format, where (relative to the output)."""

    group: ReplayGroup
    genesis_format: GenesisFormat
    relative_path: Path


def balgen_layout(groups: Sequence[ReplayGroup], formats: Sequence[GenesisFormat]) -> list[PlannedFile]:
    """`<group>-<genesis hash>/<client file>`, one folder per group."""
    planned = []
    for group in groups:
        folder = Path(f"{group_name(group)}-{group.genesis.genesis_hash.removeprefix('0x')}")
        for genesis_format in formats:
            name = genesis_format.file_name if len(formats) == 1 else f"{genesis_format.name}-{genesis_format.file_name}"
            planned.append(PlannedFile(group, genesis_format, folder / name))
    return planned


def benchmarkoor_layout(groups: Sequence[ReplayGroup], formats: Sequence[GenesisFormat]) -> list[PlannedFile]:
    """`genesis/<preHash>/<benchmarkoor folder>/<file>`, pre-alloc groups only."""
    planned = []
    for group in groups:
        if group.genesis.test_id is not None:
            first = group.tests[0]
            raise BadInput(
                f"{first.path}: test {first.test_id}: --layout benchmarkoor reads genesis files per "
                f"pre-alloc group, which only {' and '.join(format_names(formats_where(lambda known: known.pre_in_group)))} "
                "fixtures have"
            )
        for genesis_format in formats:
            folder = Path("genesis") / group.genesis.path.stem / genesis_format.benchmarkoor_folder
            planned.append(PlannedFile(group, genesis_format, folder / genesis_format.file_name))
    return planned


def readme(groups: Sequence[ReplayGroup], planned: Sequence[PlannedFile], presets: Sequence[ClientPreset]) -> str:
    """What each folder holds and how to start each chosen client on it."""
    lines = ["# Genesis files written by `balgen genesis`", ""]
    lines += [
        "Each folder is one genesis group: the tests below start from its genesis. Start the client on",
        "the group's file with a fresh datadir, then replay the group's tests with",
        "`balgen replay PATH -k TEST --engine-url http://127.0.0.1:8551 --jwt-secret jwt.hex --rpc-url http://127.0.0.1:8545`",
        "(or let `balgen replay --client NAME --client-bin PATH` do all of it).",
        "",
    ]
    for group in groups:
        files = [item for item in planned if item.group is group]
        folder = files[0].relative_path.parent
        lines += [f"## {folder}", "", f"- network {group.genesis.network}, chain id {group.genesis.chain_id}"]
        lines.append(f"- genesis hash {group.genesis.genesis_hash}")
        lines.append(f"- {len(group.tests)} tests: " + ", ".join(ref.test_id for ref in group.tests))
        for preset in presets:
            file = next(item.relative_path for item in files if item.genesis_format is preset.genesis_format)
            lines += ["", f"{preset.name}:", "```"]
            lines += start_instructions(preset, Path(file))
            lines.append("```")
        lines.append("")
    return "\n".join(lines)


def fixture_folder(groups: Sequence[ReplayGroup]) -> Path:
    """The one `blockchain_tests_engine_x` folder whose `pre_alloc/` the groups come from, for benchmarkoor's source."""
    folders = {group.genesis.path.parent.parent for group in groups}
    if len(folders) != 1:
        names = ", ".join(sorted(str(folder) for folder in folders))
        raise BadInput(f"--layout benchmarkoor: benchmarkoor reads one fixture folder, these groups come from {names}")
    return folders.pop()


def write_genesis_files(
    path: Path, keyword: str | None, kinds: Sequence[ClientKind], output: Path, layout: str
) -> list[Path]:
    """Convert every group, then move the files into `output`; return what was written."""
    suite = discover(path, keyword, "engine_x" if layout == "benchmarkoor" else "auto")
    check_networks(suite)
    presets = [kind.preset for kind in kinds]
    formats = tuple(dict.fromkeys(preset.genesis_format for preset in presets))
    planned = (benchmarkoor_layout if layout == "benchmarkoor" else balgen_layout)(suite.groups, formats)
    if layout == "balgen":
        extra, text = Path("README.md"), readme(suite.groups, planned, presets)
    else:
        extra = Path(benchmarkoor_config.FILE_NAME)
        text = benchmarkoor_config.configuration(kinds, fixture_folder(suite.groups), output)
    paths = [item.relative_path for item in planned] + [extra]
    for relative in paths:
        if (output / relative).exists():
            raise BadInput(f"--output {output}: {relative} exists already; choose another folder")
    if output.exists() and not output.is_dir():
        raise BadInput(f"--output {output}: is a file")
    with staged_folder(output, prefix=".balgen-genesis-") as staged:
        for item in planned:
            target = staged.staging / item.relative_path
            target.parent.mkdir(parents=True, exist_ok=True)
            genesis = item.group.genesis
            if genesis.background is not None:
                write_background_genesis(
                    target, item.genesis_format, genesis.network, genesis.header, genesis.accounts(),
                    genesis.background, genesis.where, chain_id=genesis.chain_id,
                )  # fmt: skip
            else:
                write_client_genesis(
                    target, item.genesis_format, genesis.network, genesis.header, genesis.accounts(),
                    chain_id=genesis.chain_id,
                )  # fmt: skip
        write_text_atomically(staged.staging / extra, text)
    return staged.moved


def run_genesis(argv: Sequence[str]) -> int:
    """`balgen genesis`: one line and exit code 2 on bad input, else 0."""

    def write() -> int:
        args = genesis_parser().parse_args(argv)
        written = write_genesis_files(args.path, args.keyword, chosen_kinds(args.client), args.output, args.layout)
        print(f"balgen genesis: {len(written)} files in {args.output}")
        return 0

    return run_command("genesis", write, stopped="; nothing written")
