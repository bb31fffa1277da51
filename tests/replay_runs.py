"""`balgen replay` run as a user runs it, for the test modules that judge its results.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def replayed_engine_x(fixtures: Path, output: Path, *args: str) -> dict:
    """`balgen replay FIXTURES --format engine_x ARGS`, the agreement only recorded; its results.json
    (exit 0 or 1: failures are judged by the caller)."""
    completed = subprocess.run(
        [sys.executable, "-m", "balgen.commands.main", "replay", str(fixtures), "--format", "engine_x",
         "--agreement", "record", "--output", str(output), *args],
        capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    assert completed.returncode in (0, 1), completed.stdout[-3000:] + completed.stderr[-2000:]
    return json.loads((output / "results.json").read_text())
