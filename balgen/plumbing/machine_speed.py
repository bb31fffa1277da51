"""
How fast this machine runs Python at this moment: the CPU time of a fixed loop, printed beside the figures
that depend on it (`make demo`'s phase table, `make test`'s CPU table).

On a shared or virtual machine the same work costs a different number of CPU seconds from one hour to
the next (this project's 2-core machine: the same demo 720 and 929 CPU-s on one day). A wall time or CPU
total compares with another only when the machine was as fast, and this loop says whether it was.
"""

from __future__ import annotations

import time

REFERENCE_LOOP = 10**7
"""Squares summed by the loop: about a second of CPU on this project's machine (0.85 to 1.34 s seen)."""


def reference_seconds() -> float:
    """CPU seconds this process takes to sum the squares below `REFERENCE_LOOP` (lower is faster)."""
    started = time.process_time()
    sum(i * i for i in range(REFERENCE_LOOP))
    return time.process_time() - started


def reference_line() -> str:
    """The measurement as one line for a report."""
    return (
        f"machine speed: a reference loop (sum of i*i for i < {REFERENCE_LOOP:,}) took {reference_seconds():.2f} CPU-s "
        "(lower is faster; compare timings only between runs with similar figures)"
    )
