"""
How balgen writes its output files: atomically, into folders checked first.

A secret, genesis or results file that a crash leaves half written would be
read by the next run as if it were whole (a short secret, a truncated alloc),
so every file is written under a temporary name in the same folder and
renamed into place only once it is complete and flushed to disk. A folder
that takes no files is found before any work starts (`check_writable`).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from .errors import BadInput


@contextmanager
def atomic_text_writer(path: Path, *, mode: int = 0o644) -> Iterator[TextIO]:
    """
    Yield a text stream whose content replaces `path` only if the block ends
    without an exception.

    The temporary file lives next to `path` so that the final `os.replace`
    is a rename within one file system and therefore atomic.
    """
    path = Path(path)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp_path = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(tmp_path, mode)
        os.replace(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def write_text_atomically(path: Path, text: str, *, mode: int = 0o644) -> None:
    """Replace `path` with `text` in one step (see `atomic_text_writer`)."""
    with atomic_text_writer(path, mode=mode) as stream:
        stream.write(text)


def check_writable(path: Path, option: str = "--output") -> None:
    """
    Create a file in the folder `path` and remove it, so that a folder that
    exists but takes no files is bad input now rather than a failure after
    the first test (a read-only mount, /proc, a folder owned by another user).
    """
    try:
        with tempfile.NamedTemporaryFile(dir=path, prefix=".balgen-write-probe-"):
            pass
    except OSError as error:
        raise BadInput(f"{option} {path}: not writable ({error.strerror or error})") from None


def check_output_writable(output: Path) -> None:
    """The output folder exists or can be made, and files can be created in it."""
    try:
        output.mkdir(parents=True, exist_ok=True)
        probe = output / f".balgen-write-probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        raise BadInput(f"--output: cannot write to {output}: {error.strerror or error}") from None
