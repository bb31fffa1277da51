"""
The `balgen` command line: every subcommand in one list, each in its own module.

A user reads what balgen can do from `COMMANDS` alone; each command's module
is imported only when it runs, so `balgen report` does not pay for pytest and
the fillers. How a command ends (bad input, a stop signal) is
`runner.run_command`'s, the same for all of them.
"""

from __future__ import annotations

import importlib
import sys
from typing import Sequence

from ..plumbing.command_line import BAD_INPUT_EXIT_CODE


COMMANDS: dict[str, tuple[str, str]] = {
    "fill": ("balgen.commands.fill", "run_fill"),
    "inspect": ("balgen.commands.inspect", "run_inspect"),
    "replay": ("balgen.commands.replay", "run_replay"),
    "report": ("balgen.commands.report", "run_report"),
    "genesis": ("balgen.commands.genesis", "run_genesis"),
    "state": ("balgen.commands.state", "run_state"),
    "verify": ("balgen.commands.verify", "run_verify"),
    "export": ("balgen.commands.export", "run_export"),
    "devnet-check": ("balgen.commands.devnet_check", "run_devnet_check"),
    "devnet-genesis": ("balgen.commands.devnet_genesis", "run_devnet_genesis"),
}
"""Each command's `module, function(argv) -> exit code`, imported only when run."""


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        names = "|".join(COMMANDS)
        print(f"usage: balgen {{{names}}} ...  (balgen COMMAND --help for options)", file=sys.stderr)
        return BAD_INPUT_EXIT_CODE
    module, function = COMMANDS[argv[0]]
    return getattr(importlib.import_module(module), function)(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
