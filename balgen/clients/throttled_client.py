"""
A deliberately slowed client: a launcher script that runs a client binary
with only a share of the CPU, by stopping and continuing it on a fixed
period as `cpulimit` does.

A benchmark's verdicts are worth something only if a real slowdown is
called one: `benchmarks/aa_pair.py` and `tests/test_measurement_geth.py`
replay the same client build through it as `--client-bin`, started, rolled
back and measured by its preset like any other binary, and expect
"significantly slower".
"""

from __future__ import annotations

import sys
from pathlib import Path

_LAUNCHER = """\
import os, signal, subprocess, sys, time

# {binary} with the given arguments, running {share:.0%} of every {period} s.
child = subprocess.Popen([{binary!r}, *sys.argv[1:]])


def forward(signum, _frame):
    os.kill(child.pid, signal.SIGCONT)
    child.send_signal(signum)


for stop_signal in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(stop_signal, forward)
try:
    while child.poll() is None:
        os.kill(child.pid, signal.SIGCONT)
        time.sleep({period} * {share})
        os.kill(child.pid, signal.SIGSTOP)
        time.sleep({period} * (1 - {share}))
except ProcessLookupError:
    pass
finally:
    if child.poll() is None:
        os.kill(child.pid, signal.SIGCONT)
sys.exit(child.wait())
"""


def write_throttled_client(binary: Path, path: Path, share: float = 0.1, period: float = 0.01) -> Path:
    """
    Write an executable at `path` that runs `binary` (with its arguments)
    for `share` of every `period` seconds and keeps it stopped the rest;
    stop signals reach the client, continued first so it can act on them.
    The period is short against a block's execution (a 1M block takes
    milliseconds): with a long one, a block that fits in one running slice
    would not be slowed at all, and the slowdown would depend on luck.
    """
    if not 0 < share < 1:
        raise ValueError(f"share {share}: must be between 0 and 1")
    path.write_text(f"#!{sys.executable}\n" + _LAUNCHER.format(binary=str(binary), share=share, period=period))
    path.chmod(0o755)
    return path
