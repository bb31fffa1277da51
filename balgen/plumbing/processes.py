"""
Every process balgen starts, each the leader of its own process group, stopped with the whole group.

A client or tool may be a wrapper script that runs the real binary as its
child without `exec` (to pin CPUs, set an environment): a signal to the
process balgen started reaches only the wrapper, and the binary under it
runs on after balgen exits. So each process is started in a new session
(its own process group, which also keeps the terminal's Ctrl-C for balgen
alone) and stopping it signals the group: the polite signal, SIGKILL to
what is left after a grace period, and whatever the group still holds once
its leader has exited (a wrapper's `sleep 900 &`) is stopped the same way.
On Linux the kernel also SIGKILLs the leader of a long-running one (a
client, a verifier) if balgen dies without cleaning up (`PR_SET_PDEATHSIG`).

`start` and `stop_group` are for processes balgen talks to while they run
(clients, balgen-state-root, the verifiers); `run` is `subprocess.run` with
a deadline, for a call that is over when it returns (t8n, `--version`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .stop_signals import defer_stops_inside

_PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal the kernel sends a process when its parent dies."""

STOP_GRACE = 5.0
"""Seconds a tool's process group gets to end after the polite signal, before SIGKILL."""
_KILL_WAIT = 5.0
"""Seconds to wait for a SIGKILLed group to be gone (only a process in uninterruptible sleep takes any)."""
_POLL_INTERVAL = 0.02
_LEFTOVER_CHECK = 1.0
"""Seconds between checks, while `run` waits, of whether the command ended and left its output held open."""


def _child_setup(*, ignore_sigint: bool) -> Callable[[], None] | None:
    """
    A `preexec_fn` that makes the kernel SIGKILL the child when balgen dies
    and, with `ignore_sigint`, starts it with SIGINT ignored (see
    `ClientPreset.ignores_early_sigint`), on Linux; None elsewhere. libc's
    functions are looked up here, before the fork, so the child only makes
    system calls.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl, set_handler = libc.prctl, libc.signal
    except (OSError, AttributeError):
        return None
    set_handler.argtypes = [ctypes.c_int, ctypes.c_void_p]
    set_handler.restype = ctypes.c_void_p
    ignore = ctypes.c_void_p(int(signal.SIG_IGN))

    def set_up() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if ignore_sigint:
            set_handler(signal.SIGINT, ignore)

    return set_up


_PREEXEC = {flag: _child_setup(ignore_sigint=flag) for flag in (False, True)}


def start(
    command: Sequence[str], *, ignore_sigint: bool = False, dies_with_balgen: bool = True, **popen: Any
) -> subprocess.Popen[Any]:
    """
    `subprocess.Popen(command, **popen)` as the leader of a new session and
    process group (`stop_group` stops it and everything it started); with
    `dies_with_balgen` the kernel kills it if balgen dies, with
    `ignore_sigint` it starts with SIGINT ignored. Either needs a
    `preexec_fn`, which makes Python fork instead of vfork: 60 ms per start
    for a filling worker of 400 MB, so `run`'s short calls (hundreds of t8n
    calls per fill) go without it.
    """
    needs_setup = dies_with_balgen or ignore_sigint
    return subprocess.Popen(  # noqa: S603 - balgen's own tools and the user's chosen binaries
        list(command),
        start_new_session=True,
        preexec_fn=_PREEXEC[ignore_sigint] if needs_setup else None,  # noqa: PLW1509 - resolved before the fork
        **popen,
    )


# A stop raised between the fork and `start`'s return would leave the child running with no one holding it.
defer_stops_inside(start)


TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")
"""Milliseconds per tick of the kernel's CPU time counters (10 at USER_HZ 100)."""


def cpu_seconds(*, own: bool = True) -> float:
    """User + system CPU seconds of every child this process has waited for (and theirs, as each waited for its
    own), and with `own` of this process too: what a phase of work cost, wherever it ran."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = children.ru_utime + children.ru_stime
    if own:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        total += usage.ru_utime + usage.ru_stime
    return total


def stat_fields(stat: Path) -> list[str]:
    """The fields of a /proc `stat` file (a process's or a thread's) after its name, from its state on: the name may hold spaces, so they are read after the last ')'."""
    text = stat.read_text()
    return text[text.rindex(")") + 2 :].split()


def process_ticks(proc: Path, pid: int | str) -> int:
    """A process's utime + stime (all its threads) from /proc/PID/stat, in clock ticks."""
    fields = stat_fields(proc / str(pid) / "stat")
    return int(fields[11]) + int(fields[12])


def signal_group(process: subprocess.Popen[Any], signum: int) -> None:
    """Send `signum` to every process of `process`'s group (nothing if the group is gone)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


def group_members(group: int) -> list[int]:
    """
    The living (not zombie) processes of process group `group`. A group
    whose leader has been reaped keeps its id while any member lives, so the
    id cannot name another group meanwhile.
    """
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return []  # the common case, one system call
    except PermissionError:
        pass
    if not Path("/proc/self/stat").exists():
        return [group]
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        state, process_group = fields[0], int(fields[2])
        if process_group == group and state != b"Z":
            members.append(int(entry.name))
    return members


def _wait_for_group(process: subprocess.Popen[Any], seconds: float) -> bool:
    """Wait up to `seconds` until the leader has exited and no member of its group lives; whether that happened."""
    deadline = time.monotonic() + seconds
    while True:
        if process.poll() is not None and not group_members(process.pid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_INTERVAL)


def stop_group(process: subprocess.Popen[Any], *, signum: int = signal.SIGTERM, grace: float = STOP_GRACE) -> int:
    """
    Stop `process` and every process of its group: `signum` (and SIGCONT,
    so that a stopped process acts on it), up to `grace` seconds for all to
    end, then SIGKILL. Returns the leader's exit code (negative: the signal
    that ended it); a group that has already ended costs one system call.
    """
    if not _wait_for_group(process, 0):
        signal_group(process, signum)
        signal_group(process, signal.SIGCONT)
        if not _wait_for_group(process, grace):
            signal_group(process, signal.SIGKILL)
            _wait_for_group(process, _KILL_WAIT)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=_KILL_WAIT)
    return process.returncode


@dataclass(frozen=True)
class SlowNotice:
    """What `run` calls, once, when its command has run `after` seconds and not finished."""

    after: float
    tell: Callable[[], None]


def error_line(text: str) -> str:
    """
    The line of a tool's stderr that says why it failed: its last line, or
    for a crash of a Go program (a helper, t8n, a client), whose last lines
    are a stack trace kilobytes long, the runtime's `fatal error:` or
    `panic:` line with the `runtime:` line that explains it, and the
    address-space limit when the crash is for want of memory (`ulimit -v`).
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "(no output)"
    crash = next((line for line in lines if line.startswith(("fatal error: ", "panic: "))), None)
    if crash is None or not any(line.startswith("goroutine ") for line in lines):
        return lines[-1]
    cause = next((line for line in lines if line.startswith("runtime: ")), None)
    summary = crash if cause is None or cause in crash else f"{crash} ({cause})"
    limit, _ = resource.getrlimit(resource.RLIMIT_AS)
    if limit != resource.RLIM_INFINITY and ("memory" in summary or "address space" in summary):
        summary += f"; the address-space limit (ulimit -v) is {limit / 2**20:,.0f} MB"
    return f"{summary} (Go runtime crash; its stack trace left out)"


class DeadlineExceeded(Exception):
    """A `run` call did not finish within its deadline; its process group was stopped."""

    def __init__(self, command: Sequence[str], seconds: float) -> None:
        super().__init__(f"{command[0]} did not finish within {seconds:.0f} s")
        self.seconds = seconds


def run(
    command: Sequence[str],
    *,
    deadline: float,
    stdin: int | IO[Any] | None = subprocess.DEVNULL,
    stdout: int | IO[Any] | None = subprocess.PIPE,
    stderr: int | IO[Any] | None = subprocess.PIPE,
    text: bool = True,
    env: dict[str, str] | None = None,
    on_slow: SlowNotice | None = None,
) -> subprocess.CompletedProcess[Any]:
    """
    `command` run to its end within `deadline` seconds, its output captured
    (by default); `DeadlineExceeded` if it takes longer, and `on_slow` told
    once if it has run its seconds. However the call ends (the deadline, an
    exception, a stop signal in balgen, or the command's own exit) nothing
    of its process group is left running.
    """
    process = start(command, dies_with_balgen=False, stdin=stdin, stdout=stdout, stderr=stderr, text=text, env=env)
    try:  # at once: a stop deferred while `start` ran is raised here, where the group is stopped
        started = time.monotonic()
        ends = started + deadline
        while True:
            try:
                out, err = process.communicate(timeout=min(_LEFTOVER_CHECK, max(0.0, ends - time.monotonic())))
                break
            except subprocess.TimeoutExpired:
                if on_slow is not None and time.monotonic() - started >= on_slow.after:
                    on_slow.tell()
                    on_slow = None
                if process.poll() is not None:
                    # The command has ended; what still holds its output open is a leftover of its group.
                    stop_group(process)
                    out, err = process.communicate()
                    break
                if time.monotonic() >= ends:
                    raise DeadlineExceeded(command, deadline) from None
    finally:
        stop_group(process)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    return subprocess.CompletedProcess(list(command), process.returncode, out, err)
