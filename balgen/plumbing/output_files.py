"""
How balgen writes its output files: atomically, into folders checked first.

A secret, genesis or results file that a crash leaves half written would be
read by the next run as if it were whole (a short secret, a truncated alloc),
so every file is written under a temporary name in the same folder and
renamed into place only once it is complete and flushed to disk. A folder
that takes no files is found before any work starts (`check_writable`).
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TextIO

from .errors import BadInput


@contextmanager
def atomic_text_writer(path: Path, *, mode: int = 0o644) -> Iterator[TextIO]:
    """
    Yield a text stream whose content replaces `path` only if the block ends
    without an exception.

    The temporary file lives next to `path` so that the final `os.replace`
    is a rename within one file system and therefore atomic.
    """
    with _atomic_stream(path, mode, binary=False) as stream:
        yield stream


@contextmanager
def _atomic_stream(path: Path, mode: int, *, binary: bool) -> Iterator[IO[Any]]:
    """`atomic_text_writer`'s stream, or one of bytes."""
    path = Path(path)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp_path = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="\n") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(tmp_path, mode)
        os.replace(tmp_path, path)
    except OSError as error:
        tmp_path.unlink(missing_ok=True)
        if error.filename is None:  # a write or flush names no file: name the one being written
            raise OSError(error.errno, error.strerror, str(path)) from None
        raise
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def write_text_atomically(path: Path, text: str, *, mode: int = 0o644) -> None:
    """Replace `path` with `text` in one step (see `atomic_text_writer`)."""
    with atomic_text_writer(path, mode=mode) as stream:
        stream.write(text)


def write_bytes_atomically(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Replace `path` with `data` in one step, as `write_text_atomically` does text (a chart's PNG)."""
    with _atomic_stream(path, mode, binary=True) as stream:
        stream.write(data)


def write_figure_atomically(figure: Any, path: Path, *, dpi: int, format: str = "png") -> None:  # noqa: A002 - matplotlib's name
    """A matplotlib figure drawn as `format` and written to exactly `path`, whole or not at all; the caller closes it."""
    drawn = io.BytesIO()
    figure.savefig(drawn, dpi=dpi, format=format)
    write_bytes_atomically(path, drawn.getvalue())


def keep_text(path: Path, text: str) -> None:
    """
    Write `text` to `path` as `write_text_atomically` does, its folder made
    first, for what balgen keeps in its cache; nothing where nothing can be
    written there (a read-only checkout), which only means working it out
    again next time.
    """
    with suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(path, text)


@dataclass
class StagedFolder:
    """Where a command writes its files (`staging`), and what ended up in the output once they were moved."""

    staging: Path
    moved: list[Path] = field(default_factory=list)


def _missing_folders(path: Path) -> list[Path]:
    """`path` and those of its parents that do not exist yet, deepest first."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing


def _undo(staged: StagedFolder, created: list[Path]) -> None:
    """Remove the staging folder, every file moved out of it, and every folder made for them."""
    shutil.rmtree(staged.staging, ignore_errors=True)
    for path in staged.moved:
        path.unlink(missing_ok=True)
    for folder in sorted(created, key=lambda path: len(path.parts), reverse=True):
        try:
            folder.rmdir()
        except OSError:
            pass


@contextmanager
def staged_folder(output: Path, *, option: str = "--output", prefix: str = ".balgen-staging-") -> Iterator[StagedFolder]:
    """
    All or nothing for a command that writes several files into `output`:
    yield a hidden staging folder inside it to write them into, and move
    them into place (renames on one file system) when the block ends
    normally. An error, a full disk or a stop signal (at any point, moving
    included) leaves `output` as it was: the staging folder, the files moved
    so far and every folder this made (`output` too) are removed. An
    `OSError` becomes `BadInput` naming `output` and the reason.
    """
    created = _missing_folders(output)
    try:
        output.mkdir(parents=True, exist_ok=True)
        staged = StagedFolder(Path(tempfile.mkdtemp(prefix=prefix, dir=output)))
    except OSError as error:
        _undo(StagedFolder(output / prefix), created)
        raise BadInput(f"{option} {output}: not writable ({error.strerror or error})") from None
    try:
        yield staged
        for source in sorted(staged.staging.rglob("*")):
            target = output / source.relative_to(staged.staging)
            if source.is_dir():
                created += _missing_folders(target)
                target.mkdir(exist_ok=True)
            else:
                source.replace(target)
                staged.moved.append(target)
    except BaseException as error:
        _undo(staged, created)
        if isinstance(error, OSError):
            raise BadInput(f"{option} {output}: cannot write ({error.strerror or error}); nothing written") from None
        raise
    finally:
        shutil.rmtree(staged.staging, ignore_errors=True)


def resolved_path(path: Path, option: str = "--output") -> Path:
    """
    `path` with its symbolic links followed; `BadInput` naming the option for
    a loop of links (Python's `resolve` raises RuntimeError there, before 3.13).
    """
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        raise BadInput(f"{option} {path}: a loop of symbolic links") from None


def check_not_a_dangling_link(path: Path, option: str = "--output") -> None:
    """A symbolic link that leads nowhere (or round in a loop) cannot become the folder asked for: `BadInput`."""
    if path.is_symlink() and not path.exists():
        resolved_path(path, option)
        raise BadInput(f"{option} {path}: a symbolic link to {os.readlink(path)}, which does not exist")


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
