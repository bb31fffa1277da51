"""
balgen's architecture as data: its folders, one per layer, lowest first.

A module may import from its own folder and the folders listed below it, never
from one above: the workload model knows nothing of chains, the chain builder
nothing of fixture files, the clients nothing of a replay run, and no library
module anything of a command line. The tree is the architecture: `balgen/`
holds no module but its `__init__`, so a module's folder is its layer.
`tests/test_layers.py` reads every import of the package and fails on an
arrow that points up and on any cycle, between folders or between modules;
the figure in `docs/design.md` is drawn from the same table
(`scripts/architecture.py`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "balgen"


@dataclass(frozen=True)
class Layer:
    """One layer: the folder of `balgen/` that holds it, and what it is for."""

    folder: str
    purpose: str

    @property
    def package(self) -> str:
        return f"{PACKAGE}.{self.folder}"


LAYERS: tuple[Layer, ...] = (
    Layer("plumbing", "plain plumbing: errors, command-line conventions, output files, user files, memory limit, printable text, signals, processes, tools, streamed JSON"),
    Layer("ethereum", "Ethereum facts: forks, gas costs, hex types, keccak, chain constants, bytecode"),
    Layer("model", "the workload model: workloads, keys, transactions, footprints, test ids"),
    Layer("generators", "the workload families: pure, deterministic generators of the model"),
    Layer("chain", "chain building through the t8n: allocations, headers, BALs, state roots, system calls"),
    Layer("calibration", "the gas rules of the t8n a fill is given, measured"),
    Layer("fixtures", "execution-spec-tests' fixture formats: typed models, files, reading, rendering"),
    Layer("analysis", "traced access sets, conflict graphs and fixture chains re-traced"),
    Layer("fill", "filling: the pytest plugin, the session, pre-alloc groups, checks, the predicted BAL"),
    Layer("export", "spamoor scenarios rendered from the model"),
    Layer("clients", "execution clients: presets, processes, genesis files, Engine API, JWT, their logs"),
    Layer("results", "what a replay produces: results schema, measurements, statistics, comparison"),
    Layer("replay", "fixtures run on a client through the Engine API, checked and timed"),
    Layer("verify", "fixtures judged by independent EVMs and a client's import"),
    Layer("devnet", "exported workloads checked on a live chain through its JSON-RPC"),
    Layer("pages", "the offline HTML results page of runs, fills and verifies, its charts by plotly"),
    Layer("commands", "the `balgen` command line: one module per subcommand and the runner they share"),
)


def folder_of(module: str) -> str | None:
    """`balgen.chain.header` -> `chain`; the package itself (`balgen`) is in no folder."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def layer_of(module: str, layers: Iterable[Layer] = LAYERS) -> int:
    """
    The index of the layer `module` belongs to: that of its folder. The
    package itself holds only its version and sits below every layer (-1).
    """
    folder = folder_of(module)
    if folder is None:
        return -1
    for index, layer in enumerate(layers):
        if layer.folder == folder:
            return index
    raise LookupError(f"{module}: its folder `{folder}` is in no layer of balgen.plumbing.layers.LAYERS")


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
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != PACKAGE:
                continue
            # `from . import x` and `from .pkg import module` import modules, not the package's names
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                if (root / Path(*candidate.split("."))).with_suffix(".py").exists():
                    found.add(candidate)
                else:
                    found.add(target)
    found.discard(module)
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """Every module of the `balgen` package under `root`, with the balgen modules it imports."""
    return {
        module_name(path, root): imported_modules(path, root)
        for path in sorted((root / PACKAGE).rglob("*.py"))
    }


def loose_modules(root: Path) -> list[str]:
    """Modules directly in `balgen/` beside its `__init__`: each belongs in the folder of its layer."""
    return sorted(module_name(path, root) for path in (root / PACKAGE).glob("*.py") if path.name != "__init__.py")


def upward_imports(graph: Mapping[str, Iterable[str]], layers: tuple[Layer, ...] = LAYERS) -> list[str]:
    """Each import that points from a lower layer to a higher one, as one line naming both."""
    problems = []
    for module, imports in sorted(graph.items()):
        own = layer_of(module, layers)
        for target in sorted(imports):
            theirs = layer_of(target, layers)
            if theirs > own:
                problems.append(
                    f"{module} ({layers[own].folder}) imports {target} ({layers[theirs].folder}), a higher layer"
                )
    return problems


def folder_graph(graph: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """Which folders import which other folders, from the module graph."""
    folders: dict[str, set[str]] = {}
    for module, imports in graph.items():
        own = folder_of(module)
        if own is None:
            continue
        edges = folders.setdefault(own, set())
        edges.update(theirs for target in imports if (theirs := folder_of(target)) not in (None, own))
    return folders


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """
    Every cycle of a directed graph, as the sorted members of each strongly
    connected component with more than one member (Tarjan's algorithm,
    iterative so that deep graphs do not exhaust the stack).
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            if pending:
                successor = pending.pop(0)
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, sorted(graph.get(successor, ()))))
                elif successor in on_stack:
                    low[node] = min(low[node], index[successor])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def architecture_problems(
    root: Path, layers: tuple[Layer, ...] = LAYERS, graph: Mapping[str, Iterable[str]] | None = None
) -> list[str]:
    """
    Everything the tree under `root` must not show: loose modules, upward
    imports, and cycles of folders or modules. `graph` is `import_graph(root)`
    where the caller has it already (reading every module takes a while).
    """
    graph = import_graph(root) if graph is None else graph
    problems = [f"{module}: a loose module; move it into the folder of its layer" for module in loose_modules(root)]
    problems += upward_imports(graph, layers)
    problems += [f"folders import each other in a cycle: {' <-> '.join(cycle)}" for cycle in cycles(folder_graph(graph))]
    problems += [f"modules import each other in a cycle: {' <-> '.join(cycle)}" for cycle in cycles(graph)]
    return problems
