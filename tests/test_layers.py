"""
The tree is the architecture (`balgen/plumbing/layers.py`): every module sits
in the folder of its layer, every import points down, and nothing imports in
a cycle, between folders or between modules.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from balgen.plumbing.layers import (
    LAYERS, Layer, architecture_problems, cycles, folder_graph, import_graph, layer_of, loose_modules,
    upward_imports,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """The checkout's import graph, read once for the module's tests (a quarter of a CPU-second each time)."""
    return import_graph(ROOT)


def test_the_tree_shows_the_layers(graph: dict[str, set[str]]) -> None:
    assert "balgen.replay.runner" in graph and "balgen.clients.engine_client" in graph["balgen.replay.runner"]
    assert architecture_problems(ROOT, graph=graph) == []


def test_every_folder_of_the_package_is_one_layer() -> None:
    folders = {path.name for path in (ROOT / "balgen").iterdir() if (path / "__init__.py").exists()}
    listed = [layer.folder for layer in LAYERS]
    assert sorted(listed) == sorted(folders) and len(set(listed)) == len(listed)


def test_only_the_fill_command_imports_the_pytest_plugin(graph: dict[str, set[str]]) -> None:
    """Commands share their conventions through `balgen.commands.runner`, not through the plugin."""
    importers = sorted(module for module, imports in graph.items() if "balgen.fill.plugin" in imports)
    assert importers == ["balgen.commands.fill"]


@pytest.mark.parametrize(
    ("low", "high"),
    [
        ("balgen.chain.header", "balgen.fixtures.render"),
        ("balgen.analysis.fixture_chain", "balgen.replay.discovery"),
        ("balgen.fixtures.models", "balgen.fill.session"),
        ("balgen.clients.process", "balgen.results.schema"),
        ("balgen.results.measurements", "balgen.replay.runner"),
        ("balgen.model.workload", "balgen.chain.builder"),
        ("balgen.export.spamoor_export", "balgen.devnet.chain_fit"),
        ("balgen.replay.runner", "balgen.commands.replay"),
    ],
)
def test_a_reversed_arrow_is_reported(low: str, high: str) -> None:
    """The rules of the layering, each as an arrow the check must refuse."""
    problems = upward_imports({low: {high}, high: set()})
    assert layer_of(low) < layer_of(high), f"{low} and {high} share a layer: the rule cannot be checked"
    assert len(problems) == 1 and problems[0].startswith(f"{low} (") and f"imports {high} (" in problems[0]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # the two folder cycles the tree had before it was the architecture
        ("balgen.chain.alloc", "balgen.fixtures.models"),
        ("balgen.export.spamoor_export", "balgen.devnet.chain_fit"),
    ],
)
def test_a_folder_cycle_is_reported_whatever_the_order_of_the_layers(first: str, second: str) -> None:
    graph = {first: {second}, second: {first}}
    found = cycles(folder_graph(graph))
    assert found == [sorted([first.split(".")[1], second.split(".")[1]])]


def test_a_module_cycle_is_reported() -> None:
    graph = {"balgen.generators.catalog": {"balgen.generators.mixed_dep"},
             "balgen.generators.mixed_dep": {"balgen.generators.catalog"}, "balgen.model.workload": set()}
    assert cycles(graph) == [["balgen.generators.catalog", "balgen.generators.mixed_dep"]]


def test_a_module_in_no_layer_is_named() -> None:
    layers = (Layer("chain", "a test layer"),)
    with pytest.raises(LookupError, match="balgen.replay.runner"):
        upward_imports({"balgen.replay.runner": set()}, layers)


def test_a_loose_module_is_named(tmp_path: Path) -> None:
    (tmp_path / "balgen").mkdir()
    (tmp_path / "balgen" / "__init__.py").write_text("")
    (tmp_path / "balgen" / "helpers.py").write_text("")
    assert loose_modules(tmp_path) == ["balgen.helpers"]


def test_relative_imports_resolve_to_modules(tmp_path: Path) -> None:
    package = tmp_path / "balgen" / "replay"
    package.mkdir(parents=True)
    (tmp_path / "balgen" / "__init__.py").write_text("")
    (tmp_path / "balgen" / "clients").mkdir()
    (tmp_path / "balgen" / "clients" / "__init__.py").write_text("")
    (tmp_path / "balgen" / "clients" / "jwt_auth.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "runner.py").write_text("from ..clients import jwt_auth\nfrom .. import __version__\nimport json\n")
    graph = import_graph(tmp_path)
    assert graph["balgen.replay.runner"] == {"balgen.clients.jwt_auth", "balgen"}
