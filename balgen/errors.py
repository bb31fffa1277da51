"""
Errors that end a command with one clear line.

`BadInput` covers everything the user can fix (arguments, files, binaries,
folders): the CLI prints its message alone and exits with code 2.
`FillCheckFailed` is a workload that did not behave as its generator
promised: the fill of that one test fails with the message as its reason.
`OneLineParser` makes argparse's own usage errors `BadInput` too, so that a
missing argument is the same one line and exit code 2 as a missing file.
"""

from __future__ import annotations

import argparse
from typing import NoReturn


class BadInput(Exception):
    """Input the user gave is unusable; the message says what and where."""


class FillCheckFailed(Exception):
    """A filled block does not have the behaviour its workload promises."""


class TransitionToolError(BadInput):
    """The t8n binary crashed, was killed or returned something unreadable."""


class OneLineParser(argparse.ArgumentParser):
    """
    argparse, but a usage error is `BadInput` rather than usage text on
    stderr and `SystemExit`: the command prints it as its one line.
    """

    def error(self, message: str) -> NoReturn:
        raise BadInput(message)
