"""
Signals that stop a balgen command, all handled the same way.

A CI job cancelled (SIGTERM), a closed terminal or ssh session (SIGHUP) and
Ctrl-\\ (SIGQUIT) must leave what Ctrl-C leaves: no client process, no
scratch folder, no half-written file, and results that say the run was
interrupted. Python's defaults would instead end the process on the spot
(SIGTERM, SIGHUP) or dump core (SIGQUIT), skipping every `finally`. Inside
`stop_signals_unwind()` each of them raises `Stopped`, a KeyboardInterrupt,
so the code that already unwinds Ctrl-C (and pytest, which `balgen fill`
runs) unwinds these the same way; the command then exits with 128 + the
signal number, as a shell reports a command a signal ended.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
"""Handled like Ctrl-C (SIGINT, which Python already turns into KeyboardInterrupt)."""


class Stopped(KeyboardInterrupt):
    """One of `STOP_SIGNALS` arrived; unwinds like Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def stop_exit_code(stop: BaseException) -> int:
    """128 + the signal number: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP, 131 for SIGQUIT."""
    return 128 + (stop.signum if isinstance(stop, Stopped) else signal.SIGINT)


def stop_name(stop: BaseException) -> str:
    """How the command says it was stopped: 'interrupted' (Ctrl-C) or 'terminated (SIGHUP)'."""
    if isinstance(stop, Stopped):
        return f"terminated ({signal.Signals(stop.signum).name})"
    return "interrupted"


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    del frame
    for stop_signal in STOP_SIGNALS:  # once: the unwinding itself is not interrupted again
        signal.signal(stop_signal, signal.SIG_IGN)
    raise Stopped(signum)


def install_stop_handlers() -> dict[int, object]:
    """Make every stop signal raise `Stopped`; returns the previous handlers (main thread only)."""
    return {stop_signal: signal.signal(stop_signal, _raise_stopped) for stop_signal in STOP_SIGNALS}


def restore_handlers(previous: dict[int, object]) -> None:
    for stop_signal, handler in previous.items():
        signal.signal(stop_signal, handler)  # type: ignore[arg-type]


@contextlib.contextmanager
def stop_signals_unwind() -> Iterator[None]:
    """
    Within the block every stop signal raises `Stopped`. Signals can only be
    handled in the main thread; elsewhere nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = install_stop_handlers()
    try:
        yield
    finally:
        restore_handlers(previous)


def report_stop(line: str) -> None:
    """
    Say on stderr how the command was stopped; after SIGHUP the terminal may
    be gone (EIO) and the message lost, which must not turn a clean stop into
    a traceback.
    """
    try:
        print(line, file=sys.stderr, flush=True)
    except OSError:
        pass
