"""
The conventions every `balgen` command shares.

A user who scripts balgen relies on the same exit code meaning the same thing
in every command (2: bad input; 128 + the signal when stopped, see `stop_signals`), on
usage errors being one line like any other bad input, on `-k` selecting tests
as pytest does, and on tables that are not cut to 80 columns in a log file.
These live here, below every command, so that no command takes them from
another command or from the pytest plugin.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from _pytest.mark.expression import Expression
from rich.console import Console

from .errors import BadInput

BAD_INPUT_EXIT_CODE = 2
"""Input the user can fix; pytest's own usage-error code, which `balgen fill` keeps."""


class OneLineParser(argparse.ArgumentParser):
    """
    argparse, but a usage error is `BadInput` rather than usage text on
    stderr and `SystemExit`: the command prints it as its one line.
    """

    def error(self, message: str) -> NoReturn:
        raise BadInput(message)


def keyword_matcher(expression: str | None) -> Expression | None:
    """pytest's `-k` grammar (and, or, not, parentheses over substrings)."""
    if expression is None:
        return None
    try:
        return Expression.compile(expression)
    except SyntaxError as error:
        raise BadInput(f"-k {expression!r}: {error.msg}") from None


def matches(expression: Expression | None, test_id: str) -> bool:
    """Whether a test id matches `-k`, case-insensitively by substring, as pytest does."""
    if expression is None:
        return True
    name = test_id.lower()
    return expression.evaluate(lambda word, /, **_: word.lower() in name)


def wide_console() -> Console:
    """
    A console for tables: the terminal's width, or 200 columns when the
    output is a file or pipe (rich's 80 would truncate every cell).
    """
    console = Console()
    return console if console.is_terminal else Console(width=200)
