"""`balgen fill` run as a user runs it, for the test modules that need real fixtures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FILL_TIMEOUT = 300


def run_fill(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = FILL_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """`balgen fill ARGS` in a subprocess; the caller judges the outcome."""
    return subprocess.run(
        [sys.executable, "-m", "balgen.cli", "fill", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def fill_fixtures(output: Path, *args: str | Path) -> Path:
    """`balgen fill --output OUTPUT ARGS`, which must succeed; returns OUTPUT."""
    completed = run_fill("--output", output, *args)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return output
