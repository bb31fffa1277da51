"""
balgen's architecture as data: the layers, lowest first, and which modules
belong to each.

A module may import from its own layer and the layers below it, never from
one above: the workload model knows nothing of chains, the chain builder
nothing of fixture files, the clients nothing of a replay run, and no library
module anything of a command line. `tests/test_layers.py` reads every import
of the package and fails on an arrow that points up; the figure in
`docs/design.md` is drawn from the same table (`scripts/draw_layers.py`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Layer:
    """One layer: its name, what it is for, and the modules or packages in it."""

    name: str
    purpose: str
    members: tuple[str, ...]


LAYERS: tuple[Layer, ...] = (
    Layer(
        "foundations",
        "errors, command-line conventions, output files, hex types, fork facts, chain constants, opcodes, fixture file I/O",
        (
            "balgen", "balgen.errors", "balgen.toolchain", "balgen.command_line", "balgen.output_files",
            "balgen.fill_options", "balgen.hextypes", "balgen.keccak", "balgen.forks", "balgen.chain_constants",
            "balgen.gas_costs", "balgen.bytecode", "balgen.data", "balgen.fixtures", "balgen.fixtures.files",
            "balgen.fixtures.streamed_json",
        ),
    ),
    Layer(
        "model",
        "the workload model and the generators that build it",
        ("balgen.workload", "balgen.keys", "balgen.transactions", "balgen.footprint", "balgen.generators",
         "balgen.fixtures.test_ids"),
    ),
    Layer(
        "chain",
        "chain building through the t8n, headers, BALs, fixture format models and their reader, gas calibration",
        ("balgen.chain", "balgen.system_calls", "balgen.fixtures.models", "balgen.fixtures.reading", "balgen.calibration"),
    ),
    Layer(
        "checks",
        "what a built chain must show: predicted BALs, traced access sets, conflict graphs",
        ("balgen.analysis", "balgen.predicted_bal", "balgen.checks"),
    ),
    Layer(
        "rendering",
        "fixtures and spamoor scenarios written from the model and its chain",
        ("balgen.fixtures.render", "balgen.fill", "balgen.export"),
    ),
    Layer(
        "clients",
        "execution clients: Engine API, JWT, processes, genesis files, their logs",
        ("balgen.clients",),
    ),
    Layer(
        "results",
        "what a replay produces: results schema, measurements, statistics, comparison",
        ("balgen.results",),
    ),
    Layer(
        "replay",
        "reading fixtures and running them on a client or an EVM",
        ("balgen.replay", "balgen.verify"),
    ),
    Layer(
        "devnet",
        "checking exported workloads on a live chain through its JSON-RPC",
        ("balgen.devnet",),
    ),
    Layer(
        "commands",
        "the command lines and the pytest plugin",
        (
            "balgen.cli", "balgen.plugin", "balgen.inspect", "balgen.demo", "balgen.export.command",
            "balgen.replay.command", "balgen.replay.genesis_command", "balgen.results.report",
            "balgen.devnet.command", "balgen.devnet.genesis", "balgen.verify.command",
        ),
    ),
)


def layer_of(module: str, layers: Iterable[Layer] = LAYERS) -> int:
    """
    The index of the layer `module` belongs to: the layer that names it or
    its nearest enclosing package (the longest match wins).
    """
    best: tuple[int, int] | None = None
    for index, layer in enumerate(layers):
        for member in layer.members:
            if module == member or module.startswith(member + "."):
                if best is None or len(member) > best[1]:
                    best = (index, len(member))
    if best is None:
        raise LookupError(f"{module}: in no layer of balgen.layers.LAYERS")
    return best[0]


def module_name(path: Path, root: Path) -> str:
    """`root/balgen/chain/header.py` -> `balgen.chain.header`."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, root: Path) -> set[str]:
    """The balgen modules one source file imports, relative imports resolved."""
    module = module_name(path, root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "balgen")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "balgen":
                continue
            found.add(target)
            # `from . import x` and `from .pkg import module` import modules, not names
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                if (root / Path(*candidate.split("."))).with_suffix(".py").exists():
                    found.add(candidate)
    found.discard(module)
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """Every module of the `balgen` package under `root`, with the balgen modules it imports."""
    return {
        module_name(path, root): imported_modules(path, root)
        for path in sorted((root / "balgen").rglob("*.py"))
    }


def upward_imports(graph: Mapping[str, Iterable[str]], layers: tuple[Layer, ...] = LAYERS) -> list[str]:
    """Each import that points from a lower layer to a higher one, as one line naming both."""
    problems = []
    for module, imports in sorted(graph.items()):
        own = layer_of(module, layers)
        for target in sorted(imports):
            theirs = layer_of(target, layers)
            if theirs > own:
                problems.append(
                    f"{module} ({layers[own].name}) imports {target} ({layers[theirs].name}), a higher layer"
                )
    return problems
