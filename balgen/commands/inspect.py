"""
`balgen inspect PATH`: the dependency graph of each fixture's benchmark block.

balgen's fixtures carry the graph in `_info["dependency-graph"]` (traced and
checked against the workload model when they were filled); for any other
blockchain fixture, or with `--retrace`, the graph is computed here by
running the fixture's blocks through t8n and tracing the benchmark block
(see `balgen.analysis.retrace`). The table shows, per fixture, how much of
the block could run in parallel; `--plot` draws the graphs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from rich.console import Console
from rich.table import Table

from ..analysis import INFO_KEY, DependencyGraph
from ..analysis.fixture_chain import chain_format, fixture_chain, fixture_network
from ..fixtures.formats import FixtureFormat
from ..analysis.retrace import retrace
from ..chain.t8n import TransitionTool, probe_version
from ..plumbing.command_line import OneLineParser, add_keyword_option, keyword_matcher, matches
from ..plumbing.errors import BadInput
from ..fixtures.files import fixture_files
from ..fixtures.reading import read_fixture_document
from ..plumbing.printable import check_test_id
from ..plumbing.toolchain import required_tool
from ..replay.discovery import GenesisResolver
from .runner import run_command

WIDE = 160
"""Table width when the output is not a terminal (rich would wrap at 80)."""
FROM_INFO = "_info"
FROM_TRACE = "t8n trace"


@dataclass(frozen=True)
class InspectedFixture:
    """One fixture's graph and where it came from."""

    path: Path
    name: str
    format: FixtureFormat
    graph: DependencyGraph
    source: str


def inspect_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="balgen inspect",
        description="Show the dependency graph of each fixture's benchmark block.",
    )
    parser.add_argument("path", type=Path, help="a fixture file or a folder of them")
    add_keyword_option(parser)
    parser.add_argument("--plot", type=Path, default=None, metavar="FILE.png", help="draw the graphs into this image")
    parser.add_argument("--evm-bin", type=Path, default=None, help="t8n binary for tracing (default: pinned go-ethereum evm)")
    parser.add_argument("--retrace", action="store_true", help="trace with t8n even when the fixture records its graph")
    return parser


class GraphSource:
    """Where graphs come from: a fixture's `_info`, else a t8n trace (t8n started on first need)."""

    def __init__(self, evm_bin: Path | None, retrace: bool, scratch: Path) -> None:
        self._evm_bin = evm_bin
        self._retrace = retrace
        self._scratch = scratch
        self._t8n: TransitionTool | None = None

    def t8n(self) -> TransitionTool:
        if self._t8n is None:
            binary = self._evm_bin or required_tool("evm", "give --evm-bin")
            probe_version(binary)
            self._t8n = TransitionTool(binary)
        return self._t8n

    def graph(self, path: Path, name: str, fixture: Mapping[str, Any]) -> tuple[DependencyGraph, str]:
        """The fixture's graph and its source."""
        where = f"{path}: test {name}"
        info = fixture.get("_info")
        recorded = info.get(INFO_KEY) if isinstance(info, Mapping) else None
        if recorded is not None and not self._retrace:
            try:
                return DependencyGraph.from_info(recorded), FROM_INFO
            except ValueError as error:
                raise BadInput(f"{where}: _info.{INFO_KEY}: {error}") from None
        chain = fixture_chain(path, name, fixture)
        workdir = Path(tempfile.mkdtemp(prefix="fixture-", dir=self._scratch))
        return retrace(self.t8n(), chain, workdir, label=where).graph, FROM_TRACE


def fixtures_under(path: Path, keyword: str | None) -> Iterator[tuple[Path, str, Mapping[str, Any]]]:
    """(file, name, fixture) for every fixture under `path` whose name matches `keyword`."""
    expression = keyword_matcher(keyword)
    for file in fixture_files(path):
        for name, fixture in read_fixture_document(file).items():
            check_test_id(name, str(file))
            if not matches(expression, name):
                continue
            if not isinstance(fixture, Mapping):
                raise BadInput(f"{file}: test {name}: not a JSON object")
            yield file, name, fixture


def check_group_genesis(groups: GenesisResolver, path: Path, name: str, fixture: Mapping[str, Any]) -> None:
    """
    An engine_x fixture's pre-alloc group must hold the genesis its first
    payload builds on, as `replay`, `genesis` and `verify` require: a graph
    shown over another group's state would be shown without a word.
    """
    where = f"{path}: test {name}"
    try:
        parent = fixture["engineNewPayloads"][0]["params"][0]["parentHash"]
    except (KeyError, IndexError, TypeError):
        raise BadInput(f"{where}: engineNewPayloads[0].params[0].parentHash: missing") from None
    if not isinstance(parent, str):
        raise BadInput(f"{where}: engineNewPayloads[0].params[0].parentHash: {parent!r:.80} is not a hash")
    groups.group_genesis(path, name, fixture, fixture_network(fixture, where), parent)


def check_plot_path(path: Path) -> None:
    """
    `--plot` names an image file balgen can write, checked before any work:
    matplotlib would write into `DIR.png` beside a folder, and add `.png` to
    a name without an extension, so the picture would not be where it was said to be.
    """
    from matplotlib.backend_bases import FigureCanvasBase

    if path.is_dir():
        raise BadInput(f"--plot {path}: is a folder; give an image file name such as {path / 'graphs.png'}")
    kinds = FigureCanvasBase.get_supported_filetypes()
    if path.suffix.lower().lstrip(".") not in kinds:
        raise BadInput(f"--plot {path}: the file name must end in an image type ({', '.join(f'.{k}' for k in sorted(kinds))})")
    if not path.parent.is_dir():
        raise BadInput(f"--plot {path}: folder {path.parent} does not exist")


def inspect_fixtures(args: argparse.Namespace, scratch: Path) -> list[InspectedFixture]:
    """The graph of every selected fixture, in file order."""
    source = GraphSource(args.evm_bin, args.retrace, scratch)
    groups = GenesisResolver()
    inspected = []
    for path, name, fixture in fixtures_under(args.path, args.keyword):
        chain_of = chain_format(fixture, f"{path}: test {name}")
        if chain_of.pre_in_group:
            check_group_genesis(groups, path, name, fixture)
        graph, origin = source.graph(path, name, fixture)
        inspected.append(InspectedFixture(path, name, chain_of, graph, origin))
    if not inspected:
        detail = f"-k {args.keyword!r} matches no fixture" if args.keyword else "no fixture"
        raise BadInput(f"{detail} under {args.path}")
    return inspected


def graph_table(fixtures: Sequence[InspectedFixture]) -> Table:
    """The summary table, one row per fixture."""
    table = Table(title="Dependency graphs of the benchmark blocks")
    table.add_column("fixture", no_wrap=True)
    table.add_column("format", no_wrap=True)
    for column in ("txs", "edges", "components", "largest", "critical-path gas", "block gas", "speedup ≤"):
        table.add_column(column, justify="right")
    table.add_column("graph from")
    for fixture in fixtures:
        graph = fixture.graph
        table.add_row(
            fixture.name,
            fixture.format.short_name,
            f"{graph.transactions:,}",
            f"{len(graph.edges):,}",
            f"{len(graph.components):,}",
            f"{graph.largest_component:,}",
            f"{graph.critical_path_gas:,}",
            f"{graph.block_gas:,}",
            f"{graph.speedup_bound:,.2f}",
            fixture.source,
        )
    return table


def plot(fixtures: Sequence[InspectedFixture], path: Path, console: Console) -> None:
    """Draw each test's graph once (a fill writes every test in several formats)."""
    from ..analysis.plot import MAX_PLOTS, plot_graphs

    unique: dict[str, DependencyGraph] = {}
    for fixture in fixtures:
        unique.setdefault(fixture.name, fixture.graph)
    try:
        drawn = plot_graphs(list(unique.items()), path)
    except (OSError, ValueError) as error:
        raise BadInput(f"--plot: cannot write {path}: {getattr(error, 'strerror', None) or error}") from None
    left_out = len(unique) - drawn
    note = f" (the first {MAX_PLOTS}; {left_out} more left out, narrow them with -k)" if left_out else ""
    console.print(f"plotted {drawn} graphs to {path}{note}")


def run_inspect(argv: Sequence[str]) -> int:
    """`balgen inspect`: print the graphs (exit 2 with one line on any bad input)."""
    console = Console()
    if not console.is_terminal:
        console = Console(width=WIDE)

    def show() -> int:
        args = inspect_parser().parse_args(list(argv))
        if args.plot is not None:
            check_plot_path(args.plot)
        with tempfile.TemporaryDirectory(prefix="balgen-inspect-") as scratch:
            fixtures = inspect_fixtures(args, Path(scratch))
        console.print(graph_table(fixtures))
        if args.plot is not None:
            plot(fixtures, args.plot, console)
        return 0

    return run_command("inspect", show)


if __name__ == "__main__":
    sys.exit(run_inspect(sys.argv[1:]))
