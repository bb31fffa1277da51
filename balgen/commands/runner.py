"""
How every `balgen` command ends: the one place that turns bad input into one
line and exit code 2, and a stop signal into one line and 128 + the signal.

A user who scripts balgen relies on each command ending the same way; a
command that handled these itself would sooner or later print a traceback
for one of them (a Ctrl-C in a command that forgot it). Each command's body
is a function of its arguments that raises `BadInput` for anything the user
can fix and simply unwinds on a stop (`stop_signals`): what it leaves behind
on a stop is its own `finally` blocks' business, and what it says about it
is the `stopped` note the command gives here (appended to "interrupted").
"""

from __future__ import annotations

import errno
import resource
import sys
from collections.abc import Callable
from dataclasses import dataclass

from ..plumbing.command_line import BAD_INPUT_EXIT_CODE
from ..plumbing.errors import BadInput
from ..plumbing.printable import escaped
from ..plumbing.stop_signals import report_stop, stop_exit_code, stop_name, stop_signals_unwind


@dataclass
class StopNote:
    """
    What a stopped command says after "interrupted", when that changes as it
    runs (a replay keeps the tests it finished): text, or a function giving it.
    """

    text: str | Callable[[], str] = ""

    def __str__(self) -> str:
        return self.text() if callable(self.text) else self.text


WRITE_LIMITS = frozenset({errno.EFBIG, errno.ENOSPC, errno.EDQUOT})
"""Write errors from limits the user sets or can lift (`ulimit -f`, a full disk, a quota): their
input to fix, wherever in a command a file is written, so one line and exit 2, not a traceback."""


def write_limit_line(error: OSError) -> str:
    """What a write that hit a limit says: the file, the error, and for EFBIG the file-size limit."""
    where = f"cannot write {error.filename}" if error.filename else "cannot write a file"
    line = f"{where}: {error.strerror or error}"
    limit, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if error.errno == errno.EFBIG and limit != resource.RLIM_INFINITY:
        line += f" (the file-size limit, ulimit -f, is {limit:,} bytes)"
    return line


def run_command(
    name: str,
    body: Callable[[], int],
    *,
    stopped: str | StopNote = "",
    bad_input: tuple[type[Exception], ...] = (),
) -> int:
    """
    `body()`'s exit code, or 2 with one line `balgen NAME: what is wrong` for
    `BadInput` (and the `bad_input` exception types, e.g. a chain's answer the
    user's URL gave), or 128 + N with `balgen NAME: interrupted` and the `stopped` note when
    stopped by Ctrl-C, SIGTERM, SIGHUP or SIGQUIT.
    """
    try:
        with stop_signals_unwind():
            return body()
    except (BadInput, *bad_input) as error:
        print(f"balgen {name}: {escaped(str(error))}", file=sys.stderr)
        return BAD_INPUT_EXIT_CODE
    except OSError as error:
        if error.errno not in WRITE_LIMITS:
            raise
        print(f"balgen {name}: {escaped(write_limit_line(error))}", file=sys.stderr)
        return BAD_INPUT_EXIT_CODE
    except KeyboardInterrupt as stop:
        report_stop(f"balgen {name}: {stop_name(stop)}{stopped}")
        return stop_exit_code(stop)
