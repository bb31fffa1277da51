"""Fixtures shared by several test modules."""

from __future__ import annotations

import gc
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from fill_runs import shared_fill
from processes_left import become_subreaper, descendants, left_running

pytest_plugins = ["cpu_accounting"]

# Hypothesis runs every installed package's "hypothesis" entry point when it is imported: trio's, which
# imports trio (a fifth of a CPU-second in every pytest process) for strategies no test here draws.
os.environ.setdefault("HYPOTHESIS_NO_PLUGINS", "1")

SUBREAPER = become_subreaper()
"""Orphans of the processes a test starts are reparented to this process, where `no_process_left` finds them."""

# Started in the background of a non-interactive shell, a test run inherits SIGINT ignored, and so would
# every balgen it starts; the Ctrl-C tests need balgen to get SIGINT as a terminal sends it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def serial_chain_fill(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """
    One small fixture (`serial_chain-max-1M`) in the three formats and its
    pre-alloc group, as `balgen fill` writes them; filled once for the
    session, so users must not change it (copy it first).
    """
    completed, output = shared_fill(tmp_path_factory, "--gas-benchmark-values", "1", "-k", "serial_chain-max")
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return output


@pytest.fixture(autouse=True)
def no_process_left(request: pytest.FixtureRequest) -> Iterator[None]:
    """
    An integration test (one that starts clients, verifiers or tools) fails
    if any process started during it is still running after it, a wrapper
    script's binary included (the test process is their subreaper).
    """
    if not SUBREAPER or request.node.get_closest_marker("integration") is None:
        yield
        return
    before = set(descendants())
    yield
    left = left_running(before)
    assert not left, "processes left running after the test: " + "; ".join(
        f"{pid} {command[:200]}" for pid, command in left.items()
    )


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--scale", action="store_true", help="also run the scale tests (fills at 300M and 1000M gas: hours on 2 cores)"
    )


def integration_modules_first(items: list[pytest.Item]) -> None:
    """
    The modules holding integration tests (clients, verifiers, fills: most of
    the run's time in a few long modules) before the others, each module's
    tests together and in their order. `make test` hands out whole modules in
    this order (`--dist loadfile --no-loadscope-reorder`), so the many short
    modules come last and even out the two workers' ends; pytest-xdist's own
    order (most tests first) left a long client module for last, and one
    worker idle while it ran.
    """
    integration = {item.path for item in items if item.get_closest_marker("integration")}
    items.sort(key=lambda item: item.path not in integration)  # a stable sort: each module stays whole and in order


def pytest_collection_finish(session: pytest.Session) -> None:
    """
    What collection made (modules, test items, their parameters: most of a
    worker's heap) moved out of the garbage collector's sight: it lives to the
    end of the session, and every full collection would walk it again, the
    automatic ones as a test allocates and the two each in-process `balgen
    fill` ends its pytest session with (a fork's walks also copy the pages
    they touch). The collector's time in a run's workers and their forks went
    from 28 to 10 CPU-s.
    """
    gc.freeze()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    integration_modules_first(items)
    if config.getoption("--scale"):
        return
    skip = pytest.mark.skip(reason="a scale test: run with --scale")
    for item in items:
        if item.get_closest_marker("scale"):
            item.add_marker(skip)
