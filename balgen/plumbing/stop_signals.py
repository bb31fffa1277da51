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

Python runs a signal's handler at the next instruction of the main thread,
and that may be inside a finalizer (an object's `__del__`, a generator
closed by the garbage collector, a weakref callback). An exception raised
there is "ignored": written to `sys.unraisablehook` and dropped, so a Ctrl-C
landing there was lost and the command ran on to its end (exit 0), and after
a lost SIGTERM the stop signals stayed ignored. `redeliver_lost_stops`
catches such a stop at the hook and sends the signal again a moment later,
from another thread, so that it is handled outside the finalizer (again, if
it lands in another). On a loaded machine "a moment later" may still find
the main thread inside the hook, where a raised stop would be dropped once
more, and for good; so the handlers look at the frames they interrupt and,
inside the hook, send the signal again later instead of raising. They do the
same inside a function that must not be interrupted halfway
(`defer_stops_inside`): starting a process, whose caller can stop it only
once it has it.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import CodeType, FrameType

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
    if _inside_deferring_code(frame):
        _send_soon(signum)
        return
    for stop_signal in STOP_SIGNALS:  # once: the unwinding itself is not interrupted again
        signal.signal(stop_signal, signal.SIG_IGN)
    raise Stopped(signum)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C as Python's own handler answers it (KeyboardInterrupt), except inside code that defers stops."""
    if _inside_deferring_code(frame):
        _send_soon(signum)
        return
    raise KeyboardInterrupt


def install_stop_handlers() -> dict[int, object]:
    """
    Make every stop signal raise `Stopped` and Ctrl-C KeyboardInterrupt; returns the previous handlers
    (main thread only).
    """
    handlers = {signal.SIGINT: _raise_interrupt, **{stop_signal: _raise_stopped for stop_signal in STOP_SIGNALS}}
    return {signum: signal.signal(signum, handler) for signum, handler in handlers.items()}


def restore_handlers(previous: dict[int, object]) -> None:
    for stop_signal, handler in previous.items():
        signal.signal(stop_signal, handler)  # type: ignore[arg-type]


UnraisableHook = Callable[["sys.UnraisableHookArgs"], object]


class _LostStopRedelivery:
    """
    The `sys.unraisablehook` of `redeliver_lost_stops`: a stop a finalizer swallowed is sent again, its
    handlers re-installed first (`_raise_stopped` ignores the stop signals while it unwinds); other
    unraisable exceptions go to the hook that was there before.
    """

    def __init__(self, previous: UnraisableHook) -> None:
        self.previous = previous

    def __call__(self, unraisable: sys.UnraisableHookArgs) -> None:
        stop = unraisable.exc_value
        if isinstance(stop, Stopped):
            install_stop_handlers()
            _send_soon(stop.signum)
        elif isinstance(stop, KeyboardInterrupt) and callable(signal.getsignal(signal.SIGINT)):
            _send_soon(signal.SIGINT)
        else:
            self.previous(unraisable)


_DEFERRING_CODE: set[CodeType] = {_LostStopRedelivery.__call__.__code__}
"""The functions a stop must not interrupt (`defer_stops_inside`): inside them, or what they call, the
handlers send the signal again a moment later instead of raising."""


def defer_stops_inside(function: Callable[..., object]) -> None:
    """
    Make a stop that lands inside `function` (or what it calls) wait until it has returned: for a function
    whose caller can only clean up what it returns, such as a process started (`plumbing.processes.start`),
    which a stop raised between the fork and the return would leave running with no one to stop it.
    """
    _DEFERRING_CODE.add(function.__code__)


def _inside_deferring_code(frame: FrameType | None) -> bool:
    """Whether the main thread was interrupted inside `_LostStopRedelivery` or a function of `defer_stops_inside`."""
    while frame is not None:
        if frame.f_code in _DEFERRING_CODE:
            return True
        frame = frame.f_back
    return False


def redeliver_lost_stops() -> UnraisableHook:
    """
    Make `sys.unraisablehook` send a stop that a finalizer swallowed again (see the module docstring).
    Returns the hook that was there, for `restore_unraisable_hook`.
    """
    previous = sys.unraisablehook
    sys.unraisablehook = _LostStopRedelivery(previous)
    return previous


REDELIVERY_DELAY = 0.01
"""Seconds before a swallowed stop is sent again: sent at once, its handler would run inside the hook itself."""


def _send_soon(signum: int) -> None:
    """Send `signum` to this process from another thread after `REDELIVERY_DELAY` (the hook and finalizer returned)."""
    timer = threading.Timer(REDELIVERY_DELAY, signal.raise_signal, (signum,))
    timer.daemon = True
    timer.start()


def restore_unraisable_hook(previous: UnraisableHook) -> None:
    sys.unraisablehook = previous


@contextlib.contextmanager
def stop_signals_unwind() -> Iterator[None]:
    """
    Within the block every stop signal raises `Stopped`, and a stop a
    finalizer swallowed is sent again. Signals can only be handled in the
    main thread; elsewhere nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = install_stop_handlers()
    previous_hook = redeliver_lost_stops()
    try:
        yield
    finally:
        restore_unraisable_hook(previous_hook)
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
