"""Fixtures shared by several test modules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def serial_chain_fill(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One small fixture (`serial_chain-max-1M`) in the three formats and its pre-alloc group, as `balgen fill` writes them."""
    output = tmp_path_factory.mktemp("filled") / "fixtures"
    completed = subprocess.run(
        [sys.executable, "-m", "balgen.cli", "fill", "--gas-benchmark-values", "1", "-k", "serial_chain-max", "--output", str(output)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return output
