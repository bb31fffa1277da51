"""
Which cores the client and balgen run on (`--client-cpus`, `--balgen-cpus`), and the client's own
thread settings as the kernel and its environment show them, recorded with each test.

On a 2-core machine balgen's own work between executions (reading the client's log, writing the
results) and the client's background work after a block compete for the same cores unless each has
its own. The client is pinned when it starts (`taskset -c`, so its runtime sizes its thread pools
for the cores it has: Go's GOMAXPROCS defaults to the CPUs in its affinity mask, reth's rayon pool
to the available parallelism); balgen pins itself with `os.sched_setaffinity`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..plumbing.errors import BadInput

THREAD_VARIABLES = ("GOMAXPROCS", "GOGC", "GOMEMLIMIT", "RAYON_NUM_THREADS", "TOKIO_WORKER_THREADS")
"""The environment variables by which Go and Rust clients size their threads and collector."""


def parse_cpu_list(text: str, option: str) -> tuple[int, ...]:
    """A taskset-style list (`0`, `1-3`, `0,2`) of cores this machine has; `BadInput` naming `option` otherwise."""
    cpus: set[int] = set()
    for part in text.split(","):
        first, _, last = part.strip().partition("-")
        try:
            low, high = int(first), int(last or first)
        except ValueError:
            raise BadInput(f"{option} {text!r}: a list of cores like 0 or 1-3 or 0,2") from None
        if low < 0 or high < low:
            raise BadInput(f"{option} {text!r}: {part.strip()} is no range of cores")
        cpus.update(range(low, high + 1))
    available = os.sched_getaffinity(0)
    missing = sorted(cpus - available)
    if missing:
        raise BadInput(f"{option} {text!r}: core {missing[0]} is not one balgen may use (it may use {cpu_list(available)})")
    return tuple(sorted(cpus))


def cpu_list(cpus: set[int] | tuple[int, ...]) -> str:
    """Cores as taskset writes them: `0,1`."""
    return ",".join(str(cpu) for cpu in sorted(cpus))


def pinned_command(node_command: str, cpus: tuple[int, ...]) -> str:
    """A preset's node command started on `cpus` only (`taskset` execs the client: the pid stays the client's)."""
    return f"taskset -c {cpu_list(cpus)} {node_command}"


def pin_balgen(cpus: tuple[int, ...]) -> None:
    """Keep balgen (this process, and the threads it starts from now on) on `cpus`."""
    os.sched_setaffinity(0, cpus)


def client_threads(pid: int | None, proc: Path = Path("/proc")) -> dict[str, str] | None:
    """
    The client's cores and thread settings as they are: `cpus_allowed` and `threads` from
    /proc/PID/status, and each of `THREAD_VARIABLES` its environment sets (unset: the runtime's
    default, sized from `cpus_allowed`). None for a client balgen did not start or that is gone.
    """
    if pid is None:
        return None
    try:
        status = (proc / str(pid) / "status").read_text()
        environment = (proc / str(pid) / "environ").read_bytes().split(b"\0")
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    facts = {"cpus_allowed": fields.get("Cpus_allowed_list", "").strip(), "threads": fields.get("Threads", "").strip()}
    settings = dict(entry.decode(errors="replace").split("=", 1) for entry in environment if b"=" in entry)
    for variable in THREAD_VARIABLES:
        facts[variable] = settings.get(variable, "unset")
    return facts
