"""
Errors that end a command with one clear line.

`BadInput` covers everything the user can fix (arguments, files, binaries,
folders): the CLI prints its message alone and exits with code 2.
`FillCheckFailed` is a workload that did not behave as its generator
promised: the fill of that one test fails with the message as its reason.
(`command_line.OneLineParser` makes argparse's usage errors `BadInput` too.)
"""

from __future__ import annotations


class BadInput(Exception):
    """Input the user gave is unusable; the message says what and where."""


class FillCheckFailed(Exception):
    """A filled block does not have the behaviour its workload promises."""


class TransitionToolError(BadInput):
    """The t8n binary crashed, was killed or returned something unreadable."""
