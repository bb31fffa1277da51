"""
Atomic file writes shared by the replay modules.

A secret or genesis file that a crash leaves half written would be read by
the next run as if it were whole (a short secret, a truncated alloc), so
every file is written under a temporary name in the same folder and renamed
into place only once it is complete and flushed to disk.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


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
