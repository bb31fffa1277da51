"""
`forked_map` (`balgen/plumbing/forked_map.py`): a function over items on several cores gives what the plain
loop gives, raises what it raises, survives a fork that dies, and leaves no fork behind, stopped or not.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from balgen.plumbing.errors import BadInput
from balgen.plumbing.forked_map import forked_map
from processes_left import descendants


def _square_with_pid(number: int) -> tuple[int, int]:
    return number * number, os.getpid()


def test_the_results_are_the_loop_s_in_order_and_the_work_is_shared() -> None:
    results = forked_map(_square_with_pid, list(range(9)), workers=3)
    assert [square for square, _ in results] == [number * number for number in range(9)]
    assert len({pid for _, pid in results}) == 3 and os.getpid() in {pid for _, pid in results}
    assert not descendants()


def _refusing(number: int) -> int:
    if number in (3, 4):
        raise BadInput(f"item {number}: refused")
    return number


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_the_first_item_s_error_in_order_is_raised_whichever_process_met_it(workers: int) -> None:
    """Item 3 falls to a fork with two or three workers (to this process with one), item 4 elsewhere: 3's error wins."""
    with pytest.raises(BadInput, match=r"^item 3: refused$"):
        forked_map(_refusing, list(range(8)), workers=workers)
    assert not descendants()


def _dying_in_a_fork(parent_and_number: tuple[int, int]) -> int:
    parent, number = parent_and_number
    if os.getpid() != parent and number == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return number


def test_the_items_of_a_fork_that_died_are_done_here() -> None:
    items = [(os.getpid(), number) for number in range(6)]
    assert forked_map(_dying_in_a_fork, items, workers=2) == list(range(6))
    assert not descendants()


def _slow_in_a_fork(parent_and_number: tuple[int, int]) -> int:
    parent, number = parent_and_number
    if os.getpid() != parent:
        time.sleep(60)
    elif number == 2:
        raise KeyboardInterrupt  # Ctrl-C reaching this process while the fork still works
    return number


def test_a_stop_in_this_process_kills_and_reaps_the_forks_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        forked_map(_slow_in_a_fork, [(os.getpid(), number) for number in range(4)], workers=2)
    assert time.monotonic() - started < 10 and not descendants()
