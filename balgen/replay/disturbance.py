"""
Other load during an execution: the CPU time every process but the client and balgen spent while
the client was executing the block, from the kernel's counters read just before and just after the
`newPayload`.

/proc/stat counts the busy time of every core; /proc/PID/stat the client's own (all its threads)
and balgen's. What remains of the machine's busy time is other processes' (and interrupts'): an
execution during which others ran for a large share of the window shared the cores it was timed
on. The counters tick at USER_HZ (100 per second), so a window of 50 ms sees other load in steps of
10 ms; a tick is charged to whoever runs when it fires, which makes the count unbiased over many
executions but coarse for one. In a modes run the other modes' idle nodes count as other load.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..plumbing.processes import TICK_MS, process_ticks


@dataclass(frozen=True)
class CpuSample:
    """The kernel's CPU time counters at one moment, in ticks."""

    busy: int
    """Every core's non-idle time: user, nice, system, irq, softirq, steal."""
    client: int
    """The client's user and system time, all its threads."""
    balgen: int
    """balgen's own user and system time."""


def _busy_ticks(proc: Path) -> int:
    """The `cpu` line of /proc/stat without idle and iowait (guest time is inside user already)."""
    fields = (proc / "stat").read_text().split("\n", 1)[0].split()
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(value) for value in fields[1:9])
    return user + nice + system + irq + softirq + steal


def cpu_sample(client_pid: int | None, proc: Path = Path("/proc")) -> CpuSample | None:
    """The counters now; None where they cannot be read (no /proc, a client balgen did not start, or gone)."""
    if client_pid is None:
        return None
    try:
        return CpuSample(_busy_ticks(proc), process_ticks(proc, client_pid), process_ticks(proc, "self"))
    except (OSError, ValueError, IndexError):
        return None


def other_cpu_ms(before: CpuSample | None, after: CpuSample | None) -> float | None:
    """Other processes' CPU time between two samples, in ms (never below 0: the counters tick apart)."""
    if before is None or after is None:
        return None
    others = (after.busy - before.busy) - (after.client - before.client) - (after.balgen - before.balgen)
    return max(others, 0) * TICK_MS


def disturbed(other_ms: float | None, window_ms: float, limit_percent: float | None) -> bool | None:
    """
    Whether others ran for more than `limit_percent` of one core over the execution's window
    (`--disturbance-limit`), and at least one tick: None where nothing was measured or no limit set.
    """
    if other_ms is None or limit_percent is None:
        return None
    return other_ms > max(limit_percent / 100 * window_ms, TICK_MS)
