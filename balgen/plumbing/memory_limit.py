"""
How much more memory balgen may use: the tightest of what the machine has and what it is allowed.

The machine's free memory (`MemAvailable`) is not the bound a process meets
first when it runs under `ulimit -v` (RLIMIT_AS), `ulimit -d` (RLIMIT_DATA)
or in a container or systemd unit with a cgroup v2 `memory.max`: there an
allocation fails (MemoryError, a traceback) or the kernel's OOM killer ends
the process long before the machine runs short. A size check that is to
refuse a file in one line instead must compare it with the tightest of them.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")
_CGROUP_ROOT = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class MemoryLimit:
    """Bytes balgen may still allocate, and what sets that bound (for a message)."""

    available: int
    source: str

    def describe(self) -> str:
        """`1.2 GB (the ulimit -v of the process)`: the bound in a message."""
        return f"{gigabytes(self.available)} ({self.source})"


def gigabytes(size: int) -> str:
    """A byte count for a message: `1.2 GB`, `504 MB`."""
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"


def _meminfo(field: str) -> int | None:
    """A field of /proc/meminfo in bytes."""
    try:
        for line in (_PROC / "meminfo").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _own_status(field: str, process: str = "self") -> int:
    """A size field (VmSize, VmData, VmRSS) of /proc/PROCESS/status in bytes, 0 where there is none."""
    try:
        for line in (_PROC / process / "status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def resident_bytes(pid: int) -> int:
    """The resident memory of process `pid` (VmRSS) in bytes; 0 where it cannot be read (gone, not Linux)."""
    return _own_status("VmRSS", str(pid))


def _rlimit_headroom() -> list[MemoryLimit]:
    """What RLIMIT_AS and RLIMIT_DATA leave above the process's current address space and data."""
    found = []
    for limit, used_field, name in (
        (resource.RLIMIT_AS, "VmSize", "the process's address-space limit, ulimit -v"),
        (resource.RLIMIT_DATA, "VmData", "the process's data-segment limit, ulimit -d"),
    ):
        soft, _ = resource.getrlimit(limit)
        if soft != resource.RLIM_INFINITY:
            found.append(MemoryLimit(max(0, soft - _own_status(used_field)), name))
    return found


def _cgroup_folder() -> Path | None:
    """The cgroup v2 folder of this process (`0::/path` in /proc/self/cgroup), None without cgroup v2."""
    try:
        for line in (_PROC / "self" / "cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return _CGROUP_ROOT / line[3:].lstrip("/")
    except OSError:
        pass
    return None


def _read_number(path: Path) -> int | None:
    """A cgroup file's number; None for `max` or a file that is not there."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cgroup_headroom() -> list[MemoryLimit]:
    """What `memory.max` leaves above `memory.current`, in this process's cgroup and every one above it."""
    folder = _cgroup_folder()
    found = []
    while folder is not None and folder != _CGROUP_ROOT and _CGROUP_ROOT in folder.parents:
        maximum = _read_number(folder / "memory.max")
        if maximum is not None:
            current = _read_number(folder / "memory.current") or 0
            cgroup = "/" + str(folder.relative_to(_CGROUP_ROOT))
            found.append(MemoryLimit(max(0, maximum - current), f"the memory.max of cgroup {cgroup}"))
        folder = folder.parent
    return found


def memory_limit() -> MemoryLimit | None:
    """The tightest bound on further allocation, None where none can be read (not Linux, no limit)."""
    candidates = _rlimit_headroom() + _cgroup_headroom()
    available = _meminfo("MemAvailable")
    if available is not None:
        candidates.append(MemoryLimit(available, "the machine's available memory"))
    return min(candidates, key=lambda limit: limit.available, default=None)
