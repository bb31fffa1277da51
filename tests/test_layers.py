"""
Layers point one way (`balgen/layers.py`): every import of the package is read
and an arrow from a lower layer to a higher one fails, naming both modules.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from balgen.layers import Layer, import_graph, layer_of, upward_imports

ROOT = Path(__file__).resolve().parent.parent


def test_no_import_points_to_a_higher_layer() -> None:
    graph = import_graph(ROOT)
    assert "balgen.replay.runner" in graph and "balgen.clients.engine_client" in graph["balgen.replay.runner"]
    assert upward_imports(graph) == []


def test_only_the_fill_command_imports_the_pytest_plugin() -> None:
    """Commands share their conventions through `balgen.command_line`, not through the plugin."""
    importers = sorted(module for module, imports in import_graph(ROOT).items() if "balgen.plugin" in imports)
    assert importers == ["balgen.cli"]


def test_every_module_has_a_layer() -> None:
    for module in import_graph(ROOT):
        layer_of(module)  # raises LookupError naming the module


@pytest.mark.parametrize(
    ("low", "high"),
    [
        ("balgen.chain.header", "balgen.fixtures.render"),
        ("balgen.analysis.fixture_chain", "balgen.replay.fixtures"),
        ("balgen.fixtures.models", "balgen.fill"),
        ("balgen.clients.geth_process", "balgen.results.results"),
        ("balgen.results.measurements", "balgen.replay.runner"),
        ("balgen.workload", "balgen.chain.builder"),
    ],
)
def test_a_reversed_arrow_is_reported(low: str, high: str) -> None:
    """The rules of the issue, each as an arrow the check must refuse."""
    problems = upward_imports({low: {high}, high: set()})
    if layer_of(low) == layer_of(high):
        pytest.fail(f"{low} and {high} share a layer: the rule cannot be checked")
    assert len(problems) == 1 and problems[0].startswith(f"{low} (") and f"imports {high} (" in problems[0]


def test_a_module_in_no_layer_is_named() -> None:
    layers = (Layer("only", "a test layer", ("balgen.chain",)),)
    with pytest.raises(LookupError, match="balgen.replay.runner"):
        upward_imports({"balgen.replay.runner": set()}, layers)


def test_relative_imports_resolve_to_modules(tmp_path: Path) -> None:
    package = tmp_path / "balgen" / "replay"
    package.mkdir(parents=True)
    (tmp_path / "balgen" / "__init__.py").write_text("")
    (tmp_path / "balgen" / "clients").mkdir()
    (tmp_path / "balgen" / "clients" / "__init__.py").write_text("")
    (tmp_path / "balgen" / "clients" / "jwt_auth.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "runner.py").write_text("from ..clients import jwt_auth\nfrom .. import errors\nimport json\n")
    graph = import_graph(tmp_path)
    assert graph["balgen.replay.runner"] == {"balgen.clients", "balgen.clients.jwt_auth", "balgen"}
