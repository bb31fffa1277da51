"""
Every module of balgen imports: a name moved between modules (as `run_fill` did in the
architecture step, breaking `make demo` unseen) fails here, not in front of a user.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import balgen

MODULES = sorted(info.name for info in pkgutil.walk_packages(balgen.__path__, prefix="balgen."))


def test_the_package_has_its_commands() -> None:
    assert {"balgen.commands.demo", "balgen.commands.main", "balgen.commands.fill"} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_the_module_imports(module: str) -> None:
    importlib.import_module(module)
