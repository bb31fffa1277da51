"""
A function mapped over items on every core, in forks of this process that never outlive the call.

Reading a suite's fixture files before any verifier starts is pure Python on one core while the
others idle (the default suite's 574 MB of `blockchain_test` files: about 9 CPU-s), so the files
are dealt to forks. A fork holds nothing to clean up (no file written, no process started), so it
takes the default action of every stop signal: Ctrl-C or a SIGTERM to the process group ends it at
once, while this process unwinds as it always does and kills and reaps any fork still there.
"""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable, Sequence
from typing import TypeVar

from .stop_signals import STOP_SIGNALS

Item = TypeVar("Item")
Result = TypeVar("Result")

_Outcomes = dict[int, tuple[bool, object]]
"""Per item index: (True, its result) or (False, the exception it raised)."""


def forked_map(function: Callable[[Item], Result], items: Sequence[Item], workers: int) -> list[Result]:
    """
    `[function(item) for item in items]`, the items dealt in turn to `workers` processes (this one
    and `workers - 1` forks). Raises what the loop would raise: the exception of the first item in
    order that raised one. An item whose fork died without answering is done here instead.
    `function`'s results and exceptions must pickle.
    """
    if workers <= 1 or len(items) <= 1:
        return [function(item) for item in items]
    shares = [range(first, len(items), workers) for first in range(min(workers, len(items)))]
    forks: list[tuple[int, int]] = []
    try:
        for share in shares[1:]:
            forks.append(_fork_for(function, items, share))
        outcomes = _outcomes(function, items, shares[0])
        for pid, pipe in forks:
            outcomes.update(_answer(pipe))
    finally:
        for pid, pipe in forks:
            _end(pid, pipe)
    missing = [index for index in range(len(items)) if index not in outcomes]
    outcomes.update(_outcomes(function, items, missing))
    results: list[Result] = []
    for index in range(len(items)):
        done, value = outcomes[index]
        if not done:
            raise value  # type: ignore[misc]
        results.append(value)  # type: ignore[arg-type]
    return results


def _outcomes(function: Callable[[Item], Result], items: Sequence[Item], indices: Sequence[int]) -> _Outcomes:
    """Each item's result, up to the first that raises (the loop would stop there too)."""
    outcomes: _Outcomes = {}
    for index in indices:
        try:
            outcomes[index] = (True, function(items[index]))
        except Exception as error:  # noqa: BLE001 - re-raised by forked_map in the items' order
            outcomes[index] = (False, error)
            break
    return outcomes


def _fork_for(function: Callable[[Item], Result], items: Sequence[Item], share: Sequence[int]) -> tuple[int, int]:
    """A fork doing `share` and writing its outcomes, pickled, to a pipe: (its pid, the pipe's read end)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the fork's coverage is not collected
        status = 1
        try:
            os.close(read_end)
            for signum in (signal.SIGINT, *STOP_SIGNALS):
                signal.signal(signum, signal.SIG_DFL)
            outcomes = _outcomes(function, items, share)
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(_pickled(outcomes))
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    return pid, read_end


def _pickled(outcomes: _Outcomes) -> bytes:
    """`outcomes` pickled; an exception that does not pickle becomes the RuntimeError naming it."""
    try:
        return pickle.dumps(outcomes)
    except Exception:  # noqa: BLE001 - an exception class of a library, say, with arguments pickle cannot rebuild
        plain = {i: (done, value if done else RuntimeError(repr(value))) for i, (done, value) in outcomes.items()}
        return pickle.dumps(plain)


def _answer(pipe: int) -> _Outcomes:
    """A fork's outcomes; none if it died before it wrote them all."""
    chunks = []
    while chunk := os.read(pipe, 1 << 20):
        chunks.append(chunk)
    try:
        return pickle.loads(b"".join(chunks))  # noqa: S301 - written by a fork of this process
    except Exception:  # noqa: BLE001 - cut short: the fork died mid-write
        return {}


def _end(pid: int, pipe: int) -> None:
    """Kill the fork if it is still running, reap it and close its pipe."""
    try:
        if os.waitpid(pid, os.WNOHANG) == (0, 0):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    finally:
        os.close(pipe)
