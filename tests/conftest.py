"""Fixtures shared by several test modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from fill_runs import fill_fixtures


@pytest.fixture(scope="module")
def serial_chain_fill(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One small fixture (`serial_chain-max-1M`) in the three formats and its pre-alloc group, as `balgen fill` writes them."""
    return fill_fixtures(tmp_path_factory.mktemp("filled") / "fixtures", "--gas-benchmark-values", "1", "-k", "serial_chain-max")
