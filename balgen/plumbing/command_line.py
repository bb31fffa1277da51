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
import functools
import re
from typing import TYPE_CHECKING, Callable, NoReturn

if TYPE_CHECKING:
    import pyparsing as pp
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


KeywordExpression = Callable[[str], bool]
"""A compiled `-k` expression: whether it selects a test id (given lower-cased)."""

_IDENTIFIER_CHARACTERS = r"\w:+\-.\[\]\\/"
"""What pytest's `-k` reads as one word: letters, digits, `_ : + - . [ ] \\ /`."""


def _operator(word: str) -> pp.Regex:
    """`and`/`or`/`not` as a whole word: `and-x` is one identifier, as in pytest."""
    import pyparsing as pp

    return pp.Regex(f"{word}(?![{_IDENTIFIER_CHARACTERS}])")


def _substring(tokens: pp.ParseResults) -> KeywordExpression:
    word = str(tokens[0]).lower()
    return lambda name: word in name


def _negation(tokens: pp.ParseResults) -> KeywordExpression:
    operand = tokens[0][1]
    return lambda name: not operand(name)


def _all_of(tokens: pp.ParseResults) -> KeywordExpression:
    operands = list(tokens[0][0::2])
    return lambda name: all(operand(name) for operand in operands)


def _any_of(tokens: pp.ParseResults) -> KeywordExpression:
    operands = list(tokens[0][0::2])
    return lambda name: any(operand(name) for operand in operands)


@functools.cache
def _keyword_grammar() -> pp.ParserElement:
    """
    pytest's `-k` grammar: `not` binds tighter than `and`, `and` than `or`;
    parentheses group. Built (and pyparsing imported, a tenth of a second)
    the first time a command is given `-k`, not by every command that starts.
    """
    import pyparsing as pp

    and_, or_, not_ = _operator("and"), _operator("or"), _operator("not")
    identifier = ~(and_ | or_ | not_) + pp.Regex(f"[{_IDENTIFIER_CHARACTERS}]+")
    identifier.set_parse_action(_substring)
    return pp.infix_notation(
        identifier,
        [(not_, 1, pp.OpAssoc.RIGHT, _negation), (and_, 2, pp.OpAssoc.LEFT, _all_of), (or_, 2, pp.OpAssoc.LEFT, _any_of)],
    )


def keyword_matcher(expression: str | None) -> KeywordExpression | None:
    """
    pytest's `-k` (and, or, not, parentheses over case-insensitive substrings),
    so that every command selects as `balgen fill` does; None, or an empty
    expression, selects everything, as in pytest.
    """
    if expression is None or not expression.strip():
        return None
    import pyparsing as pp

    try:
        return _keyword_grammar().parse_string(expression, parse_all=True)[0]
    except pp.ParseBaseException as error:
        word = re.match(f"[{_IDENTIFIER_CHARACTERS}]+|\\S|$", expression[error.loc :])
        found = repr(word.group()) if word and word.group() else "end of expression"
        raise BadInput(
            f"-k {expression!r}: unexpected {found} at column {error.col} (words joined by and, or, not, parentheses)"
        ) from None


KEYWORD_HELP = (
    "only the tests whose name matches EXPR, as pytest's -k: case-insensitive words joined by "
    "and, or, not and parentheses (e.g. -k 'serial_chain and not 60M')"
)


def add_keyword_option(parser: argparse.ArgumentParser) -> None:
    """`-k EXPR`, the one selection every command takes (`args.keyword`; None when not given)."""
    parser.add_argument("-k", dest="keyword", metavar="EXPR", default=None, help=KEYWORD_HELP)


def matches(expression: KeywordExpression | None, test_id: str) -> bool:
    """Whether a test id matches `-k`, case-insensitively by substring, as pytest does."""
    return expression is None or expression(test_id.lower())


def wide_console() -> Console:
    """
    A console for tables: the terminal's width, or 200 columns when the
    output is a file or pipe (rich's 80 would truncate every cell).
    """
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=200)
