"""
Writing an export folder all at once, or not at all.

Every file goes into a temporary folder next to the output; only when all of
them are written does that folder take the output's name, and a previous
export there is removed only after that. A crash or an error leaves the old
export (or nothing) in place, never a mix. Because a whole folder is
replaced, an existing folder is replaced only if it is empty or a previous
export (it holds the marker file this module writes).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from ..plumbing.errors import BadInput

MARKER = ".balgen-spamoor-export"
"""Written into every export, so that only an export is ever replaced."""


def check_replaceable(output: Path) -> None:
    """`output` is absent, an empty folder or a previous export; anything else is bad input."""
    if not output.exists():
        return
    if not output.is_dir():
        raise BadInput(f"--output: {output} exists and is not a folder")
    if any(output.iterdir()) and not (output / MARKER).is_file():
        raise BadInput(f"--output: {output} is not empty and is not a balgen spamoor export; not replacing it")


def write_files(folder: Path, files: Mapping[str, str]) -> None:
    """Every file under `folder`, plus the marker."""
    for relative, text in {**files, MARKER: ""}.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")


def swap_in(staged: Path, output: Path) -> None:
    """Give `staged` the name `output`, removing a previous `output` only once that worked."""
    retired = output.with_name(f"{output.name}.{os.getpid()}.old.tmp")
    had_previous = output.exists()
    if had_previous:
        os.replace(output, retired)
    try:
        os.replace(staged, output)
    except OSError:
        if had_previous:
            os.replace(retired, output)
        raise
    if had_previous:
        shutil.rmtree(retired)


def write_folder(output: Path, files: Mapping[str, str]) -> None:
    """Replace `output` with exactly `files`, atomically as far as the file system allows."""
    check_replaceable(output)
    staged = output.with_name(f"{output.name}.{os.getpid()}.tmp")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(staged, ignore_errors=True)
        write_files(staged, files)
        swap_in(staged, output)
    except OSError as error:
        raise BadInput(f"--output: cannot write {output}: {error.strerror or error}") from None
    finally:
        shutil.rmtree(staged, ignore_errors=True)
