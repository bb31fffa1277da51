"""
Checking that no process a test started outlives it.

The test process makes itself a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`,
Linux): a process whose parent ends is then reparented to it instead of to
init, so whatever balgen leaves behind (a wrapper script's client, a
verifier of a `balgen verify` that was stopped, a tool started by a
`balgen fill` subprocess) stays among the test process's descendants, where
`left_running` finds it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from pathlib import Path

from balgen.plumbing.processes import TICK_MS, process_ticks

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants; whether the platform allowed it."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state letter) of `pid`, None if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), fields[0].decode()


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def descendants(root: int | None = None) -> dict[int, str]:
    """Every living (not zombie) descendant of `root` (this process), with its command line."""
    root = os.getpid() if root is None else root
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None and stat[1] != "Z":
            parents[int(entry)] = stat[0]
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, its_parent in parents.items():
            if its_parent == parent and pid not in found:
                found[pid] = _command_line(pid)
                frontier.append(pid)
    return found


def reap_orphans(known: set[int]) -> None:
    """Collect the exit status of ended orphans reparented here (zombies whose pid is not in `known`)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in known:
            stat = _stat(int(entry))
            if stat is not None and stat[0] == os.getpid() and stat[1] == "Z":
                try:
                    os.waitpid(int(entry), os.WNOHANG)
                except ChildProcessError:
                    pass


def left_running(before: set[int], wait: float = 3.0) -> dict[int, str]:
    """
    The descendants that did not exist in `before` and still live after up
    to `wait` seconds (a stopped process may take a moment to be gone); each
    is killed, so one test's leftovers do not fail the next.
    """
    deadline = time.monotonic() + wait
    while True:
        reap_orphans(before)
        left = {pid: command for pid, command in descendants().items() if pid not in before}
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    time.sleep(0.05)
    reap_orphans(before)
    return left


def processes_mentioning(folder: Path, name: str = "") -> list[int]:
    """
    Pids of living (not zombie) processes whose command line mentions `folder`
    (and `name`, if given): the nodes a test's replay started in its own folder.
    """
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        stat = _stat(int(entry.name))
        command = _command_line(int(entry.name))
        if stat is not None and stat[1] != "Z" and str(folder) in command and name in command:
            pids.append(int(entry.name))
    return pids


def cpu_seconds_of(pid: int) -> float:
    """User + system seconds the live process `pid` has used, all its threads (read as the replay reads a client's)."""
    return process_ticks(Path("/proc"), pid) * TICK_MS / 1000
