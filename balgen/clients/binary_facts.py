"""
What a client binary says about itself before balgen starts it: the flags
it knows (its help text) and its build (its version text).

A mode's flags are checked against the help text before any node starts:
a client refuses an unknown flag only once started, and for a modes run
one node per mode starts, so a typo in the third mode would surface after
the first two had been set up. The build is recorded with the results:
the same reth commit timed in its unoptimised and its release build gives
numbers an order of magnitude apart (`Build Profile` in `reth --version`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ..plumbing import processes
from ..plumbing.errors import BadInput
from .modes import ClientMode, mode_flag_names
from .presets import ClientPreset, render_command

HELP_TIMEOUT = 60.0
"""Seconds a binary may take to print its help or version (a loaded machine, a cold JVM)."""


def _output(template: str, binary: Path) -> str | None:
    """The stdout and stderr of a `{bin}` command template, or None if it cannot be run or fails."""
    try:
        # Its own process group: a launcher script's JVM goes with it at the deadline.
        completed = processes.run(render_command(template, {"bin": str(binary)}), deadline=HELP_TIMEOUT, text=False)
    except (OSError, processes.DeadlineExceeded):
        return None
    if completed.returncode != 0:
        return None
    return (completed.stdout + completed.stderr).decode("utf-8", errors="replace")


def _lists_flag(help_text: str, flag: str) -> bool:
    """Whether `flag` appears whole in `help_text` (`--cache` is not listed by `--cache.gc` alone)."""
    return re.search(re.escape(flag) + r"(?![A-Za-z0-9._-])", help_text) is not None


def check_mode_flags(preset: ClientPreset, binary: Path, modes: Sequence[ClientMode]) -> None:
    """
    Every flag of `modes` must appear in the binary's help text; else
    `BadInput` naming the mode, the flag and the binary. Skipped for a
    preset without a help command (the client's own start then fails).
    """
    if preset.help_command is None:
        return
    text = _output(preset.help_command, binary)
    if text is None:
        raise BadInput(f"--modes: {preset.name} binary {binary} did not print its flags ({preset.help_command})")
    for mode in modes:
        for flag in mode_flag_names(mode):
            if not _lists_flag(text, flag):
                raise BadInput(
                    f"--modes {mode.name}: {binary} does not know {flag} (not in `{preset.help_command.replace('{bin}', binary.name)}`)"
                )


def client_build(preset: ClientPreset, binary: Path) -> str | None:
    """The binary's own version text (version, commit, build profile), or None if it has no version command."""
    if preset.version_command is None:
        return None
    text = _output(preset.version_command, binary)
    return None if text is None else text.strip()
