"""
Files the user names (fixtures, a client's config, a JWT secret, results, an export), checked before they are read.

A path can name a FIFO (the reader blocks for ever), a device such as
`/dev/zero` (read until memory runs out) or a folder; and a regular file can
be larger than the memory balgen may use. Every file a user gives is
therefore looked at with `stat` first: it must be a regular file (a symlink
to one is fine), and one that is read whole must fit in memory (a quarter of
`memory_limit`, since parsed text takes several times its size), else one
line names it. It is then read only up to the size `stat` gave.
"""

from __future__ import annotations

import stat
from pathlib import Path

from .errors import BadInput
from .memory_limit import memory_limit

MAX_FILE_FRACTION_OF_MEMORY = 0.25
"""A file read whole takes several times its size once parsed (JSON as Python objects: about 3.4
times); one larger than a quarter of the memory balgen may still use would end in MemoryError, or
in the OOM killer under a cgroup limit, instead of a line saying why."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    return "a socket" if stat.S_ISSOCK(mode) else "a device"


def checked_regular_file(path: Path, what: str = "") -> int:
    """
    The size of `path`, which must be a regular file (a symlink to one is
    fine), else `BadInput` starting with `what` (the option that named it)
    and the path. Neither a FIFO nor a device is ever opened.
    """
    where = f"{what} {path}".lstrip()
    try:
        status = Path(path).stat()
    except FileNotFoundError:
        raise BadInput(f"{where}: does not exist") from None
    except OSError as error:
        raise BadInput(f"{where}: cannot be read ({error.strerror})") from None
    if not stat.S_ISREG(status.st_mode):
        raise BadInput(f"{where}: not a regular file ({_kind(status.st_mode)})")
    return status.st_size


def memory_budget() -> int | None:
    """Bytes of a file that may be held at once (see `MAX_FILE_FRACTION_OF_MEMORY`), None without a known limit."""
    limit = memory_limit()
    return None if limit is None else int(limit.available * MAX_FILE_FRACTION_OF_MEMORY)


def fits_in_memory(size: int) -> bool:
    """Whether `size` bytes of a file may be held and parsed at once."""
    budget = memory_budget()
    return budget is None or size <= budget


def too_large(where: str, size: int, held: str = "") -> BadInput:
    """
    The one line refusing a file of `size` bytes (`held`: the part of it
    that would be held, when that is not all of it) for the memory limit.
    """
    limit = memory_limit()
    bound = limit.describe() if limit is not None else "unknown"
    return BadInput(
        f"{where}: {size:,} bytes{held}, more than a quarter of the {bound} balgen may still use; "
        "reading it would run out of memory"
    )


def checked_file_to_read(path: Path, what: str = "") -> int:
    """The size of the regular file `path`, which must fit in memory to be read whole (`too_large`)."""
    size = checked_regular_file(path, what)
    if not fits_in_memory(size):
        raise too_large(f"{what} {path}".lstrip(), size)
    return size


def read_user_file(path: Path, what: str = "") -> bytes:
    """
    The bytes of the file the user named `path` (with the option `what`),
    after `checked_file_to_read`, read up to the size `stat` gave.
    """
    size = checked_file_to_read(path, what)
    where = f"{what} {path}".lstrip()
    try:
        with open(path, "rb") as stream:
            data = stream.read(size + 1)
    except FileNotFoundError:
        raise BadInput(f"{where}: does not exist") from None
    except OSError as error:
        raise BadInput(f"{where}: cannot be read ({error.strerror})") from None
    if len(data) > size:
        raise BadInput(f"{where}: grew while it was read")
    return data


def read_user_text(path: Path, what: str = "", encoding: str = "utf-8") -> str:
    """`read_user_file` decoded; text that is not `encoding` is `BadInput` naming the file."""
    data = read_user_file(path, what)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        raise BadInput(f"{f'{what} {path}'.lstrip()}: not {encoding.upper()} text") from None

