"""
YAML text, byte-for-byte the same for the same data, with comment headers.

spamoor reads the files with go-yaml v3; PyYAML's safe dumper writes plain
block YAML that it reads the same way (it quotes every string YAML could
take for a number, such as `0x...`). Keys keep the order they are given in,
lines are never folded (hex data stays on one line), and comments, which
PyYAML cannot write, are prepended as `#` lines.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

import yaml

COMMENT_WIDTH = 100
NO_FOLDING = 2**31 - 1

Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def yaml_block(data: Any) -> str:
    """`data` as block-style YAML in the given key order."""
    return yaml.dump(data, Dumper=Dumper, sort_keys=False, default_flow_style=False, width=NO_FOLDING)


VERBATIM = "    "
"""A paragraph starting with this (a command line) is written as it is, never wrapped."""


def wrapped(paragraph: str, width: int) -> list[str]:
    """A paragraph's lines: verbatim ones whole, others wrapped at spaces only (names keep their hyphens)."""
    if paragraph.startswith(VERBATIM):
        return [paragraph]
    return textwrap.wrap(paragraph, width, break_on_hyphens=False, break_long_words=False) or [""]


def comment(paragraphs: Sequence[str], bullet: str = "") -> str:
    """Each paragraph as `#` lines; a bullet marks each paragraph's first line."""
    lines = []
    indent = " " * len(bullet)
    for paragraph in paragraphs:
        lines += [
            f"# {bullet if i == 0 else indent}{line}".rstrip()
            for i, line in enumerate(wrapped(paragraph, COMMENT_WIDTH - 2 - len(bullet)))
        ]
    return "".join(f"{line}\n" for line in lines)


def counted(count: int, noun: str) -> str:
    """`1 wallet`, `2 wallets`: counts in comments read as English."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
