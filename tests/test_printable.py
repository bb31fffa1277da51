"""`escaped` shows exactly the characters of the unprintable categories as escapes, with its ASCII fast path."""

from __future__ import annotations

import unicodedata

from balgen.plumbing.printable import escaped

UNPRINTABLE = {"Cc", "Cs", "Zl", "Zp"}


def test_each_ascii_character_is_escaped_exactly_when_it_is_a_control_character() -> None:
    for code in range(128):
        character = chr(code)
        shown = escaped(f"0x{character}ab")
        if unicodedata.category(character) in UNPRINTABLE:
            assert shown == f"0x{repr(character)[1:-1]}ab", code
        else:
            assert shown == f"0x{character}ab", code


def test_unprintable_characters_beyond_ascii_are_escaped_and_the_rest_kept() -> None:
    assert escaped("é\u2028\u2029\udcff\x1b") == "é\\u2028\\u2029\\udcff\\x1b"
    assert escaped("pre[0xAb…]") == "pre[0xAb…]"
