"""
The execution modes of a client: which of the BAL's optimisations it uses.

The BAL devnet benchmark report compares each client in three modes: A
`sequential` (no parallel execution, no parallel state root, no batch IO),
B `full` (all three), C `nobatchio` (parallel, without the access list's
batched storage reads). A mode is data: the flags that put a client in it,
and what it switches, so that the client's own log can prove the mode took
effect (each client's `prove` in `balgen/clients/kinds/`). The flags are each
client's own and live in its module there.

A user-defined mode `NAME=FLAGS` works for any client; balgen cannot know
what it switches, so nothing is proven about it beyond that the client ran.
One that takes a built-in mode's name claims to be that mode: its flags must
hold the built-in's and no flag only another mode has, and its log must
prove it like the built-in's.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ..plumbing.errors import BadInput


@dataclass(frozen=True)
class ModeSwitches:
    """What a mode switches on, as far as a client's log can show it."""

    parallel_execution: bool
    """Transactions executed in parallel from the block's access list."""
    batch_io: bool
    """The access list's storage reads batched ahead of execution (prefetch)."""
    execution: bool = True
    """The block's transactions executed at all; False for geth-bal-switch's `executionless`, which
    applies the access list's post-state to the parent state and checks only the state root."""


SEQUENTIAL = ModeSwitches(parallel_execution=False, batch_io=False)
FULL = ModeSwitches(parallel_execution=True, batch_io=True)
NO_BATCH_IO = ModeSwitches(parallel_execution=True, batch_io=False)
EXECUTIONLESS = ModeSwitches(parallel_execution=False, batch_io=False, execution=False)


@dataclass(frozen=True)
class ClientMode:
    """One mode of one client: its name in results, its flags, and what it switches."""

    name: str
    flags: tuple[str, ...]
    switches: ModeSwitches | None
    """None for a user-defined mode: balgen does not know what its flags do."""
    verified: bool
    """Whether the flags were run with a real binary of the client here."""

    @property
    def kind(self) -> str:
        """The mode as defined: a repeated mode's name without its `#2` suffix."""
        return self.name.split("#", 1)[0]


def standard_modes(verified: bool, **flags: str) -> dict[str, ClientMode]:
    """The report's modes (`sequential`, `full`, `nobatchio`) of one client, and `executionless` where it has
    one, from the flags of each."""
    switches = {"sequential": SEQUENTIAL, "full": FULL, "nobatchio": NO_BATCH_IO, "executionless": EXECUTIONLESS}
    return {
        name: ClientMode(name, tuple(shlex.split(text)), switches[name], verified) for name, text in flags.items()
    }


_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


def _user_mode(entry: str) -> ClientMode:
    """`NAME=FLAGS`: a mode the user defines, its flags split like a shell does."""
    name, _, text = entry.partition("=")
    name = name.strip()
    if not _NAME.match(name):
        raise BadInput(f"--modes {entry!r}: a mode's name is a letter, then letters, digits, '_' or '-'")
    try:
        flags = tuple(shlex.split(text))
    except ValueError as error:
        raise BadInput(f"--modes {entry!r}: {error}") from None
    return ClientMode(name, flags, None, False)


def _claim(mode: ClientMode, entry: str, client: str, known: Mapping[str, ClientMode]) -> ClientMode:
    """
    A user-defined mode named after one of `known`: it is that mode only if
    its flags hold all of the built-in's and none that only the client's
    other modes have; else `BadInput` naming what is missing. It is then
    proven as the built-in is (its switches).
    """
    built_in = known[mode.name]
    missing = [flag for flag in built_in.flags if flag not in mode.flags]
    others = {flag for other in known.values() if other.name != built_in.name for flag in other.flags}
    foreign = [flag for flag in mode.flags if flag in others and flag not in built_in.flags]
    if missing or foreign:
        problem = f"lack {' '.join(missing)}" if missing else f"include {' '.join(foreign)}, which only another mode has"
        raise BadInput(
            f"--modes {entry!r}: named after {client}'s mode {built_in.name} "
            f"({' '.join(built_in.flags) or 'no flags'}), but its flags {problem}; rename it or give that mode's flags"
        )
    return replace(mode, switches=built_in.switches, verified=built_in.verified)


def parse_modes(
    text: str, client: str, known: Mapping[str, ClientMode], elsewhere: Mapping[str, Sequence[str]] | None = None
) -> tuple[ClientMode, ...]:
    """
    `--modes A,B,...` for the client `client`, whose built-in modes are
    `known`: each entry one of them or `NAME=FLAGS`. A mode listed twice is
    an A/A pair: both run, the second named `NAME#2` (the third `NAME#3`),
    so results tell them apart. `BadInput` names an unknown mode, lists the
    known ones and the clients that have it (`elsewhere`: mode -> clients).
    """
    entries = [entry.strip() for entry in text.split(",")]
    if not text.strip() or any(not entry for entry in entries):
        raise BadInput(f"--modes {text!r}: a comma-separated list of modes, e.g. sequential,full,nobatchio")
    modes: list[ClientMode] = []
    for entry in entries:
        if "=" in entry:
            mode = _user_mode(entry)
            if mode.name in known:
                mode = _claim(mode, entry, client, known)
        elif entry in known:
            mode = known[entry]
        else:
            listed = ", ".join(known) if known else "none"
            others = [other for other in (elsewhere or {}).get(entry, ()) if other != client]
            only = f"; {entry} is a mode of {', '.join(others)} only" if others else ""
            raise BadInput(
                f"--modes {entry!r}: unknown mode for --client {client} (known: {listed}{only}; or define one as NAME=FLAGS)"
            )
        same = sum(existing.kind == mode.name for existing in modes)
        if same and any(m.kind == mode.name and m.flags != mode.flags for m in modes):
            raise BadInput(f"--modes: mode {mode.name!r} is defined twice with different flags")
        modes.append(replace(mode, name=f"{mode.name}#{same + 1}") if same else mode)
    return tuple(modes)


def mode_flag_names(mode: ClientMode) -> tuple[str, ...]:
    """The flags of `mode` as names (`--engine.disable-bal-batch-io`, `--bal.executionmode`), values cut off."""
    return tuple(flag.split("=", 1)[0] for flag in mode.flags if flag.startswith("-"))
