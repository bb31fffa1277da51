"""Fixtures shared by several test modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from fill_runs import fill_fixtures


@pytest.fixture(scope="module")
def serial_chain_fill(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One small fixture (`serial_chain-max-1M`) in the three formats and its pre-alloc group, as `balgen fill` writes them."""
    return fill_fixtures(tmp_path_factory.mktemp("filled") / "fixtures", "--gas-benchmark-values", "1", "-k", "serial_chain-max")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--scale", action="store_true", help="also run the scale tests (fills at 300M and 1000M gas: hours on 2 cores)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--scale"):
        return
    skip = pytest.mark.skip(reason="a scale test: run with --scale")
    for item in items:
        if item.get_closest_marker("scale"):
            item.add_marker(skip)
