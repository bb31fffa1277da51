"""
Dropping the operating system's page cache before a measured execution
(`--drop-caches`), so that what the client reads comes from the disk.

Restarting the client (`--cold`) empties its own caches, but the files of
its database stay in the kernel's page cache and a restarted client reads
them from memory. Linux drops clean cached pages when "3" is written to
`/proc/sys/vm/drop_caches` (pages, dentries and inodes); `sync` first
writes dirty pages back, so that they too can be dropped. Only root may
write that file, and it is machine-wide: every process on the machine
loses its cache, which is why balgen never does it unasked.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DROP_CACHES = Path("/proc/sys/vm/drop_caches")


def drop_caches_problem(control: Path = DROP_CACHES) -> str | None:
    """Why this process cannot drop the page cache, or None if it can."""
    if not sys.platform.startswith("linux"):
        return f"dropping the page cache needs Linux (this is {sys.platform})"
    if not control.exists():
        return f"{control} does not exist"
    if os.geteuid() != 0 or not os.access(control, os.W_OK):
        return f"writing {control} needs root (running as uid {os.geteuid()})"
    return None


def drop_page_cache(control: Path = DROP_CACHES) -> None:
    """Write dirty pages back, then drop the clean ones (raises OSError if refused)."""
    os.sync()
    with open(control, "w", encoding="ascii") as stream:
        stream.write("3\n")
