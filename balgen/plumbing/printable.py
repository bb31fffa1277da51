"""
Text from outside balgen, made safe to print and to write.

Test ids, file names and client messages come from files and servers balgen
does not control. Printed raw, an ESC in them drives the terminal (ANSI
injection), a newline splits the one line a bad input gets (and a row of
`report.md`), and a lone surrogate (a file name that is not UTF-8, or a
`\\udcff` escape in JSON) cannot be written as UTF-8 at all. `escaped` shows
such characters as Python escapes; a test id holding one is refused, since
it would be written into every result file.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from .errors import BadInput

_UNPRINTABLE_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})
"""Control characters (ESC, newline, ...), lone surrogates, and the Unicode line and paragraph separators."""


def _unprintable(character: str) -> bool:
    return unicodedata.category(character) in _UNPRINTABLE_CATEGORIES


def escaped(text: str) -> str:
    """`text` with every unprintable character as its Python escape (`\\x1b`, `\\n`, `\\udcff`)."""
    # In ASCII the unprintable categories are Cc alone, exactly what `isprintable` refuses there: a check in
    # C, where the per-character one took a tenth of a replay's own CPU (every `pre` address is escaped).
    if text.isascii() and text.isprintable():
        return text
    if not any(_unprintable(character) for character in text):
        return text
    return "".join(repr(character)[1:-1] if _unprintable(character) else character for character in text)


def check_test_id(test_id: str, where: str) -> None:
    """A test id that can be printed and written as it is; `BadInput` naming where it is otherwise."""
    if escaped(test_id) != test_id:
        raise BadInput(f"{where}: test id '{escaped(test_id)}' holds a control character or is not valid UTF-8")


def without_surrogates(value: Any) -> Any:
    """
    JSON-like `value` with each lone surrogate in its strings replaced by its
    escape text (`\\udcff`), so that it can be written as UTF-8 and read back:
    a result must not be lost to a file name or a client message that is not
    valid Unicode.
    """
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {without_surrogates(key): without_surrogates(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [without_surrogates(item) for item in value]
    return value
