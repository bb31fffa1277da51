"""
The execution modes of a client: which of the BAL's optimisations it uses.

The BAL devnet benchmark report compares each client in three modes: A
`sequential` (no parallel execution, no parallel state root, no batch IO),
B `full` (all three), C `nobatchio` (parallel, without the access list's
batched storage reads). A mode is data: the flags that put a client in it,
and what it switches, so that the client's own log can prove the mode took
effect (`mode_evidence`). The flags are each client's own:

- reth (checked with `reth node --help` of the build in `../shared/clients/`,
  2.5.1-dev 7b3432d, and in its logs): `--engine.disable-bal-parallel-execution`,
  `--engine.disable-bal-parallel-state-root` (valid only with the first) and
  `--engine.disable-bal-batch-io`; `full` is reth's default.
- geth: `--bal.executionmode=sequential|full|nobatchio`, as the bal-devnet
  images had it; the go-ethereum releases have no such flag, balgen's
  `geth-bal-switch` build adds it (see docs/replay.md, "Modes").
- besu: the report's flags (`--Xbal-...`), not run here.
- nethermind: `--Blocks.ParallelExecution` and
  `--Blocks.ParallelExecutionBatchRead` (its `IBlocksConfig`), not run here.

A user-defined mode `NAME=FLAGS` works for any client; balgen cannot know
what it switches, so nothing is proven about it beyond that the client ran.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace

from ..plumbing.errors import BadInput


@dataclass(frozen=True)
class ModeSwitches:
    """What a mode switches on, as far as a client's log can show it."""

    parallel_execution: bool
    """Transactions executed in parallel from the block's access list."""
    batch_io: bool
    """The access list's storage reads batched ahead of execution (prefetch)."""


SEQUENTIAL = ModeSwitches(parallel_execution=False, batch_io=False)
FULL = ModeSwitches(parallel_execution=True, batch_io=True)
NO_BATCH_IO = ModeSwitches(parallel_execution=True, batch_io=False)


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


def _modes(verified: bool, **flags: str) -> dict[str, ClientMode]:
    switches = {"sequential": SEQUENTIAL, "full": FULL, "nobatchio": NO_BATCH_IO}
    return {
        name: ClientMode(name, tuple(shlex.split(text)), switches[name], verified) for name, text in flags.items()
    }


RETH_SEQUENTIAL_FLAGS = (
    "--engine.disable-bal-parallel-execution --engine.disable-bal-parallel-state-root --engine.disable-bal-batch-io"
)

MODES: dict[str, dict[str, ClientMode]] = {
    "reth": _modes(True, sequential=RETH_SEQUENTIAL_FLAGS, full="", nobatchio="--engine.disable-bal-batch-io"),
    "geth": _modes(
        False,
        sequential="--bal.executionmode=sequential",
        full="--bal.executionmode=full",
        nobatchio="--bal.executionmode=nobatchio",
    ),
    "besu": _modes(
        False,
        sequential="--Xbal-optimization-enabled=false --Xbal-perfect-parallelization-enabled=false --Xbal-trust-state-root=false",
        full="--Xbal-prefetch-reading-enabled=true --Xbal-trust-state-root=true --Xbal-perfect-parallelization-enabled=true",
        nobatchio=(
            "--Xbal-prefetch-reading-enabled=false --bonsai-cache-enabled=true --Xbal-trust-state-root=true"
            " --Xbal-perfect-parallelization-enabled=true"
        ),
    ),
    "nethermind": _modes(
        False,
        sequential="--Blocks.ParallelExecution=false --Blocks.ParallelExecutionBatchRead=false",
        full="--Blocks.ParallelExecution=true --Blocks.ParallelExecutionBatchRead=true",
        nobatchio="--Blocks.ParallelExecution=true --Blocks.ParallelExecutionBatchRead=false",
    ),
}
"""The report's three modes per preset (see the module docstring for where each flag comes from)."""

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


def parse_modes(text: str, client: str) -> tuple[ClientMode, ...]:
    """
    `--modes A,B,...` for `client`'s preset: each entry a mode the preset
    knows or `NAME=FLAGS`. A mode listed twice is an A/A pair: both run, the
    second named `NAME#2` (the third `NAME#3`), so results tell them apart.
    `BadInput` names an unknown mode and lists the known ones.
    """
    entries = [entry.strip() for entry in text.split(",")]
    if not text.strip() or any(not entry for entry in entries):
        raise BadInput(f"--modes {text!r}: a comma-separated list of modes, e.g. sequential,full,nobatchio")
    table = MODES.get(client, {})
    modes: list[ClientMode] = []
    for entry in entries:
        if "=" in entry:
            mode = _user_mode(entry)
        elif entry in table:
            mode = table[entry]
        else:
            known = ", ".join(table) if table else "none"
            raise BadInput(
                f"--modes {entry!r}: unknown mode for --client {client} (known: {known}; or define one as NAME=FLAGS)"
            )
        same = sum(existing.kind == mode.name for existing in modes)
        if same and mode.switches is None and any(m.kind == mode.name and m.flags != mode.flags for m in modes):
            raise BadInput(f"--modes: mode {mode.name!r} is defined twice with different flags")
        modes.append(replace(mode, name=f"{mode.name}#{same + 1}") if same else mode)
    return tuple(modes)


def mode_flag_names(mode: ClientMode) -> tuple[str, ...]:
    """The flags of `mode` as names (`--engine.disable-bal-batch-io`, `--bal.executionmode`), values cut off."""
    return tuple(flag.split("=", 1)[0] for flag in mode.flags if flag.startswith("-"))
