"""
The command-line options that name an execution client, defined once for every command that takes them.

`--client` is a name of the registry (`balgen.clients.kinds`); the others
say how to start a client balgen has no preset for, or what to add to one.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..clients.genesis_files import GenesisFormat
from ..clients.kind import ClientKind
from ..clients.kinds import DEFAULT, KINDS, geth, kind_named
from ..plumbing.errors import BadInput

ALL = "all"


def add_client_choice(parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, several: bool = False) -> None:
    """`--client NAME` (with `several`: also a comma-separated list or `all`, and required)."""
    names = ", ".join(KINDS)
    if several:
        parser.add_argument("--client", required=True, help=f"one of {names}, a comma-separated list, or {ALL}")
    else:
        parser.add_argument("--client", default=None, help=f"preset: {names} (default {DEFAULT.name})")


def chosen_kinds(text: str) -> tuple[ClientKind, ...]:
    """The clients `--client` names (comma-separated, or `all`), in the order given."""
    if text.strip().lower() == ALL:
        return tuple(KINDS.values())
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise BadInput("--client: no client named")
    return tuple(dict.fromkeys(kind_named(name) for name in names))


GENESIS_FORMATS: dict[str, GenesisFormat] = {
    kind.preset.genesis_format.name: kind.preset.genesis_format for kind in KINDS.values()
}
"""The genesis file formats of the clients balgen knows, by name."""


def genesis_format_named(name: str | None) -> GenesisFormat:
    """`--genesis-format NAME` (one of `GENESIS_FORMATS`, which argparse checked), the default client's if not given."""
    return DEFAULT.preset.genesis_format if name is None else GENESIS_FORMATS[name]


def add_started_client_options(parser: argparse.ArgumentParser) -> None:
    """The options of a client balgen starts: which one, its binary, its extra flags, its modes."""
    tools = ", ".join(f"tools/bin/{kind.tool}" for kind in KINDS.values() if kind.tool is not None)
    with_modes = ", ".join(kind.name for kind in KINDS.values() if kind.modes)
    started = parser.add_argument_group(f"a client balgen starts per genesis group (default: the pinned {DEFAULT.name})")
    add_client_choice(started)
    started.add_argument("--client-bin", type=Path, default=None, help=f"its binary (default: {tools})")
    started.add_argument(
        "--geth-bin", type=Path, default=None, help=f"the same as --client {geth.KIND.name} --client-bin PATH"
    )
    started.add_argument(
        "--client-cmd",
        default=None,
        help="any other client: its node command, with {bin} {genesis} {datadir} {engine_port} {rpc_port} {p2p_port} {jwt}",
    )
    started.add_argument("--client-init", default=None, help="with --client-cmd: a command run once on the fresh datadir first")
    started.add_argument(
        "--genesis-format",
        choices=tuple(GENESIS_FORMATS),
        default=None,
        help=f"with --client-cmd: the genesis file {{genesis}} is written in (default {DEFAULT.preset.genesis_format})",
    )
    started.add_argument("--client-args", default=None, help='extra flags for it, e.g. "--cache 4096" (quoted, split like a shell)')
    started.add_argument("--cold", action="store_true", help="restart the client before each measured execution")
    started.add_argument(
        "--modes",
        default=None,
        help=f"one client per mode, measured in interleaved rounds: modes of the preset ({with_modes}: "
        "sequential, full, nobatchio) or NAME=FLAGS, comma-separated; a mode listed twice is an A/A pair",
    )
