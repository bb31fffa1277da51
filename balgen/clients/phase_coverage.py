"""
What each phase of a client's own block timing covers, per execution path, from the client's code.

A client's block log splits a block into phases (execution, state read, state hash, commit), but
what a phase measures depends on the path the client took: go-ethereum v1.17.10 on its BAL path
hashes the state root in a goroutine beside execution and counts as "state read" only the reads
of applying the access list. Comparing such a phase across modes compares different work. Each
client's module (`kinds/<client>.py`) declares its table; `results.phase_comparability` compares
a phase across two modes only where the work is the same (the same `work` key).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

PHASES = ("execution", "state read", "state hash", "commit")
"""The phases of a block log, as `results.phases.Phase` names them."""


@dataclass(frozen=True)
class PhaseCoverage:
    """What one phase's logged time covers on one execution path."""

    work: str
    """The work timed, as a key: two paths whose phase has the same key time the same work."""
    covers: str
    """The same in words, for a reader."""
    source: str
    """Where the client's code says so, at the pinned version (file:line)."""
    beside: str | None = None
    """The phase this one runs at the same time as (its time overlaps that phase's), if any."""


@dataclass(frozen=True)
class PhaseTable:
    """A client's phases on each of its execution paths, and which path each of its modes takes."""

    version: str
    """The client's code the table was read from."""
    paths: Mapping[str, Mapping[str, PhaseCoverage]]
    """Per execution path (e.g. `sequential`, `parallel`), per phase, what it covers."""
    mode_paths: Mapping[str, str]
    """Per built-in mode, the path it takes; `None`'s path is a run without `--modes` (the client's default)."""
    default_path: str
    """The path of a run without `--modes`."""
    notes: tuple[str, ...] = ()
    """What else the table's reader needs (phases that do not add up to the total, extra log lines)."""

    def path_of(self, mode: str | None) -> str | None:
        """The path a mode takes (`full#2` as `full`); None for a mode the table does not know (user-defined)."""
        if mode is None:
            return self.default_path
        return self.mode_paths.get(mode.split("#", 1)[0])

    def coverage(self, mode: str | None, phase: str) -> PhaseCoverage | None:
        """What `phase` covers in `mode`; None where the table does not say."""
        path = self.path_of(mode)
        return None if path is None else self.paths[path].get(phase)
