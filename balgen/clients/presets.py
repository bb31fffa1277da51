"""
How to start an execution client on one genesis, privately.

A preset is data: the genesis format the client reads, an optional init
command run once on a fresh datadir, the node command, and how a chain is
rolled back on it. Each client's preset is in its module of
`balgen/clients/kinds/`. Commands are templates
whose placeholders balgen fills for every node it starts:

    {bin}          the client binary
    {genesis}      the genesis file in the preset's format
    {datadir}      a fresh, empty data directory
    {engine_port}  the authenticated Engine API port on 127.0.0.1
    {rpc_port}     the HTTP JSON-RPC port on 127.0.0.1 (eth, debug, web3)
    {p2p_port}     a free port for the p2p listener (discovery is off)
    {jwt}          the generated JWT secret file (hex)
    {config}       the preset's config file (`ClientPreset.config_file`), for
                   settings the client takes from no flag

`--client-cmd` / `--client-init` take templates of the same form (without
`{config}`) for any other client. Every preset keeps the node on 127.0.0.1 with discovery, NAT
probing and peers off; the flags come from each client's own CLI (`--help`
of the reth build here) and from how benchmarkoor (`pkg/client/*.go`) and
hive (`clients/*/`) start it.
"""

from __future__ import annotations

import shlex
import string
import tomllib
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

import tomli_w

from ..plumbing.errors import BadInput
from ..plumbing.user_files import read_user_text
from .genesis_files import GenesisFormat
from .engine_client import ENGINE_TIMEOUT

PLACEHOLDERS = ("bin", "genesis", "datadir", "engine_port", "rpc_port", "p2p_port", "jwt")
CONFIG_PLACEHOLDER = "config"
CONFIG_FILE_NAME = "client-config.toml"

SERVER_TIMEOUT_MARGIN = 60.0
"""Seconds a client's server-side request limit is set beyond `ENGINE_TIMEOUT`,
so that balgen's own deadline, which names the call, is the one that fires."""
SERVER_TIMEOUT_SECONDS = int(ENGINE_TIMEOUT + SERVER_TIMEOUT_MARGIN)


class Rollback(StrEnum):
    """How a client's chain goes back to an earlier block between executions."""

    SET_HEAD = "debug_setHead"
    """`debug_setHead(number)` deletes the blocks above."""
    RESTORE_COPY = "restart_from_copy"
    """Stop the client, put back a copy of its datadir taken at the block, start it again."""


@dataclass(frozen=True)
class ClientPreset:
    """Everything balgen needs to run one kind of client."""

    name: str
    genesis_format: GenesisFormat
    node_command: str
    init_command: str | None
    rollback: Rollback
    init_relocatable: bool = False
    """The init command's output depends on the binary and the genesis only, not on the datadir's path:
    a node may start from the files another node's init of the same genesis wrote (`initialised_datadirs`)."""
    env_prefix: str | None = None
    """Environment variables with this prefix are dropped: the client reads its flags from them too."""
    ignores_early_sigint: bool = False
    """Start it with SIGINT ignored and re-send until `stop_acknowledged` is logged."""
    stop_acknowledged: bytes | None = None
    unclean_stop_checked_by_head: bool = False
    """A restart after an unclean stop (the node aborted or was killed when asked to stop) goes on
    when the restarted node shows the head it had (the caller checks it), instead of being refused:
    for a client that writes every block it makes head to disk as it goes, so that what an abort
    loses shows as a lower head (reth with `--engine.persistence-threshold 0`)."""
    resident_restart_bytes: int | None = None
    """A node whose resident memory exceeds this between tests is restarted there (its head checked
    after): for a client that keeps every block it executed but did not make head in memory, which a
    replay's sibling blocks pile up on one parent."""
    config_file: str | None = None
    """The text of a file written into the node's folder before it starts, at `{config}`."""
    verified: str = ""
    """What was run with a real binary here; empty if nothing was."""
    help_command: str | None = None
    """The command that lists the node's flags (`{bin}` only): a mode's flags are looked up in its output."""
    version_command: str | None = None
    """The command that prints the binary's version and build (`{bin}` only), recorded with the results."""


def check_template(template: str, option: str, known: tuple[str, ...] = PLACEHOLDERS) -> tuple[str, ...]:
    """
    A command template split like a shell would, every placeholder one of
    `known`; `BadInput` naming the option otherwise.
    """
    try:
        words = tuple(shlex.split(template))
    except ValueError as error:
        raise BadInput(f"{option} {template!r}: {error}") from None
    if not words:
        raise BadInput(f"{option}: empty command")
    for word in words:
        try:
            fields = [field for _, field, _, _ in string.Formatter().parse(word) if field is not None]
        except ValueError as error:
            raise BadInput(f"{option}: {word!r}: {error}") from None
        for field in fields:
            if field not in known:
                names = ", ".join("{" + name + "}" for name in known)
                raise BadInput(f"{option}: unknown placeholder {{{field}}} (known: {names})")
    return words


def preset_placeholders(preset: ClientPreset) -> tuple[str, ...]:
    """The placeholders `preset`'s templates may use: `{config}` only if it has a config file."""
    return PLACEHOLDERS + ((CONFIG_PLACEHOLDER,) if preset.config_file is not None else ())


def render_command(template: str, values: dict[str, str]) -> list[str]:
    """The argument list of a checked template with its placeholders (the keys of `values`) filled."""
    return [word.format(**values) for word in check_template(template, "command", tuple(values))]


def custom_preset(node_command: str, init_command: str | None, genesis_format: GenesisFormat) -> ClientPreset:
    """A preset from `--client-cmd` / `--client-init`: rollback by datadir copy (balgen reads no block log of it)."""
    check_template(node_command, "--client-cmd")
    if init_command is not None:
        check_template(init_command, "--client-init")
    return ClientPreset(
        name="custom",
        genesis_format=genesis_format,
        node_command=node_command,
        init_command=init_command,
        rollback=Rollback.RESTORE_COPY,
    )


def start_instructions(preset: ClientPreset, genesis: Path, binary: str | None = None) -> list[str]:
    """The commands that start `preset`'s client on `genesis` (its config file written first), for a README."""
    values = {
        "bin": binary or preset.name,
        "genesis": str(genesis),
        "datadir": "DATADIR",
        "engine_port": "8551",
        "rpc_port": "8545",
        "p2p_port": "30303",
        "jwt": "jwt.hex",
    }
    commands = []
    if preset.config_file is not None:
        values[CONFIG_PLACEHOLDER] = CONFIG_FILE_NAME
        commands += [f"cat > {CONFIG_FILE_NAME} <<'EOF'", *preset.config_file.splitlines(), "EOF"]
    if preset.init_command is not None:
        commands.append(shlex.join(render_command(preset.init_command, values)))
    return commands + [shlex.join(render_command(preset.node_command, values))]


def with_user_config(preset: ClientPreset, arguments: tuple[str, ...]) -> tuple[ClientPreset, tuple[str, ...]]:
    """
    `preset` and the `--client-args` `arguments`, a config file they name
    (`--config FILE`) taken out of them and merged into the one the preset
    writes: the client takes one config file, the preset's holds settings balgen
    needs (geth's Engine API write timeout), and a user's holds their own
    tuning. The preset's settings win where both set one. Only for a preset
    with a config file; for the others `--config` is an ordinary flag.
    """
    flag = next((name for name, value in _flag_values(preset) if value == "{" + CONFIG_PLACEHOLDER + "}"), None)
    if preset.config_file is None or flag is None:
        return preset, arguments
    kept: list[str] = []
    user_config: Path | None = None
    index = 0
    while index < len(arguments):
        name, equals, value = arguments[index].lstrip("-").partition("=")
        if arguments[index].startswith("-") and name == flag:
            if not equals:
                index += 1
                if index == len(arguments):
                    raise BadInput(f"--client-args: --{flag} needs a file")
                value = arguments[index]
            user_config = Path(value)
        else:
            kept.append(arguments[index])
        index += 1
    if user_config is None:
        return preset, arguments
    merged = _merged_tables(_user_tables(user_config, flag), tomllib.loads(preset.config_file))
    return replace(preset, config_file=tomli_w.dumps(merged)), tuple(kept)


def _user_tables(path: Path, flag: str) -> dict[str, Any]:
    """The user's TOML config file (given with `--flag`), or `BadInput` naming it."""
    text = read_user_text(path, f"--client-args --{flag}")  # a FIFO or /dev/zero is refused, not read
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise BadInput(f"--client-args --{flag} {path}: not a TOML file: {error}") from None


def _merged_tables(under: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`under` with `over`'s settings in it, table by table (`over`'s value where both set a key)."""
    merged = dict(under)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged_tables(merged[key], value)
        else:
            merged[key] = value
    return merged


def managed_flags(preset: ClientPreset) -> frozenset[str]:
    """
    The flags (without dashes) whose value the preset sets to a placeholder
    or to the loopback address: the ones `--client-args` may not override
    (a preset's config file is merged with the user's instead: `with_user_config`).
    """
    return frozenset(name for name, value in _flag_values(preset) if "{" in value or value == "127.0.0.1")


def _flag_values(preset: ClientPreset) -> list[tuple[str, str]]:
    """Each flag (without dashes) of the preset's node command with its value (empty for a switch)."""
    words = check_template(preset.node_command, "command", preset_placeholders(preset))
    flags = []
    for index, word in enumerate(words):
        if not word.startswith("-"):
            continue
        name, equals, value = word.lstrip("-").partition("=")
        if not equals and index + 1 < len(words) and not words[index + 1].startswith("-"):
            value = words[index + 1]
        flags.append((name, value))
    return flags
