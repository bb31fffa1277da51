"""
Everything balgen knows of one kind of execution client, as one value.

Each client has its own module in `balgen/clients/kinds/` that declares a
`ClientKind`: how to start it (its preset, which names its genesis format),
its modes and the proof of each from its log, its own block log and what
the time it logs covers, what its rejection messages mean, the tool it is
found as and how `web3_clientVersion` names it. The generic code (the
replay, the commands) reads these values from the registry
(`balgen.clients.kinds`) and never tests a client's name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .mode_evidence import ModeNotInEffect, ModeProof
from .modes import ClientMode
from .phase_coverage import PhaseTable
from .presets import ClientPreset
from .slow_block_log import ClientBlockTiming

TimingsOfLines = Callable[[list[str]], list[ClientBlockTiming]]
"""A client's block-log parser: the entries among whole log lines, each with what the lines around it add."""


@dataclass(frozen=True)
class BlockLog:
    """What a client logs of each block it executes, and how balgen reads it."""

    description: str
    """What the figures are, as results.json records them (`target.figures`)."""
    own_time: str
    """What the client's own time for a block (`ClientBlockTiming.own_ms`) covers."""
    timings: TimingsOfLines
    logs_insertion: bool = False
    """Whether a line after the block's entry completes it (reth's whole insertion): the reader waits for it."""
    timer_after_intake: bool = True
    """Whether the own time starts after the client decoded the payload (geth's `total_ms`), so that the
    client's intake may be measured apart and allowed for in the agreement; False where it includes it."""


ProveMode = Callable[[ClientMode, Sequence[ClientBlockTiming]], ModeProof]
"""A client's proof of one of its modes from its entries of a test's sibling executions."""


@dataclass(frozen=True)
class UncheckedReasons:
    """A client whose rejection messages balgen cannot map to execution-specs' exceptions, and why."""

    why: str


@dataclass(frozen=True, eq=False)
class ClientKind:
    """One execution client as balgen knows it (one module of `balgen/clients/kinds/` each); there is one
    value per client, so it compares and hashes by identity."""

    preset: ClientPreset
    """How balgen starts it (`--client NAME`), its genesis format included."""
    version_prefix: str
    """The first word of its `web3_clientVersion` (`Geth` of `Geth/v1.17.8-stable/...`), any case."""
    rejection_reasons: Mapping[str, re.Pattern[str]] | UncheckedReasons
    """Per execution-specs `BlockException` name, what its INVALID message matches; or why none is checked."""
    block_log: BlockLog | None = None
    """Its own per-block log, if balgen reads one (else client-side latency only)."""
    modes: Mapping[str, ClientMode] = field(default_factory=dict)
    """Its built-in modes by name (`--modes`), each with the flags that select it."""
    prove: ProveMode | None = None
    """The proof of its built-in modes from its block log; None where the log shows none of them."""
    tool: str | None = None
    """The name of the build `make tools` puts in tools/bin (`--client-bin` defaults to it)."""
    modes_tool: str | None = None
    """The build with its modes' flags, where that is another one (used for `--modes`)."""
    benchmarkoor_client: str | None = None
    """Its client type in benchmarkoor's configuration (`pkg/config`, `validClients`); None where benchmarkoor has none."""
    reference: bool = False
    """The reference client (exactly one): a replay's default, the one `make tools` builds."""
    phases: PhaseTable | None = None
    """What each phase of its block log covers on each of its execution paths (`phase_coverage`); None where unread."""

    @property
    def name(self) -> str:
        """Its name on balgen's command line and in results (`--client NAME`)."""
        return self.preset.name

    @property
    def verified(self) -> bool:
        """Whether its preset was run here with a real binary."""
        return bool(self.preset.verified)

    def names_version(self, client_version: str | None) -> bool:
        """Whether `web3_clientVersion` (`Geth/v1.17.8-stable/...`) is this client's."""
        return (client_version or "").split("/", 1)[0].strip().lower() == self.version_prefix.lower()


def prove_mode(kind: ClientKind | None, mode: ClientMode, timings: Sequence[ClientBlockTiming]) -> ModeProof:
    """
    Check `timings` (the client's entries of a test's sibling executions)
    against what `mode` switches, with the client's own proof;
    `ModeNotInEffect` naming the mode if they contradict it.
    """
    if mode.switches is None:
        return ModeProof((), (f"mode {mode.name} is user-defined: what its flags switch is not known",))
    if not timings:
        return ModeProof((), ("no sibling execution with the client's own entry to judge the mode by",))
    if kind is None or kind.prove is None:
        who = "the client" if kind is None else kind.name
        return ModeProof((), (f"parallel execution: {who}'s log does not show it", f"batch IO: {who}'s log does not show it"))
    try:
        return kind.prove(mode, timings)
    except ModeNotInEffect as error:
        raise ModeNotInEffect(f"mode {mode.name} ({' '.join(mode.flags) or 'no flags'}): {error}") from None
