"""
Drawing dependency graphs as arc diagrams, one panel per fixture.

Transactions sit on the x axis in block order, so a dependency is an arc
from an earlier to a later transaction and a chain reads as a run of bumps.
Each connected component has its own colour (independent transactions are
grey), the critical path is drawn over it in red, and a bar chart under the
arcs gives each transaction's gas, so the weight of the path is visible.
Arcs are line collections, so a block of thousands of transactions draws
as fast as one of thirty.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure, SubFigure
from matplotlib.ticker import MaxNLocator

from ..plumbing.output_files import write_figure_atomically
from .graph import DependencyGraph

MAX_PLOTS = 12
"""Panels per figure; more fixtures than this are left out (and the caller says so)."""
COLUMNS = 3
ARC_ROOM = 20
"""The arc area is at least (transactions / ARC_ROOM) high, so arcs between
neighbours stay bumps in a small block and a line along the axis in a large one."""
CRITICAL = "#d62728"
INDEPENDENT = "#9e9e9e"
PALETTE = tuple(colour for index, colour in enumerate(colormaps["tab10"].colors) if index not in (3, 7))
"""tab10 without its red (the critical path's) and grey (independent transactions')."""

Colour = tuple[float, ...] | str


def component_colours(graph: DependencyGraph) -> list[Colour]:
    """A colour per transaction: its component's, grey for a transaction alone."""
    colours: list[Colour] = [INDEPENDENT] * graph.transactions
    shared = [group for group in graph.components if len(group) > 1]
    for number, group in enumerate(shared):
        for index in group:
            colours[index] = PALETTE[number % len(PALETTE)]
    return colours


def arc(i: int, j: int) -> np.ndarray:
    """Points of the half circle above the axis from transaction i to j."""
    angles = np.linspace(math.pi, 0, max(16, min(64, 4 * (j - i))))
    centre, radius = (i + j) / 2, (j - i) / 2
    return np.column_stack([centre + radius * np.cos(angles), radius * np.sin(angles)])


def draw_arcs(axes: Axes, graph: DependencyGraph, colours: Sequence[Colour]) -> None:
    """Edges as arcs in their component's colour, the critical path over them in red."""
    count = max(graph.transactions, 1)
    path = graph.critical_path
    on_path = set(zip(path, path[1:]))
    others = [(i, j) for i, j in graph.edges if (i, j) not in on_path]
    width = 1.2 if count <= 200 else 0.5
    alpha = min(0.8, 20 / math.sqrt(len(others) or 1))  # thousands of arcs show as density, not a solid blob
    axes.add_collection(LineCollection([arc(i, j) for i, j in others], colors=[colours[i] for i, _ in others], linewidths=width, alpha=alpha))
    axes.add_collection(LineCollection([arc(i, j) for i, j in on_path], colors=CRITICAL, linewidths=2 * width))
    marker = 30 if count <= 60 else max(1, 3000 // count)
    axes.scatter(range(graph.transactions), [0] * graph.transactions, c=colours, s=marker, zorder=3, linewidths=0)
    axes.scatter(path, [0] * len(path), s=marker, zorder=4, facecolors="none", edgecolors=CRITICAL)
    height = max(max((j - i for i, j in graph.edges), default=1) / 2, count / ARC_ROOM)
    axes.set_xlim(-0.5, count - 0.5)
    axes.set_ylim(-0.06 * height, 1.08 * height)
    axes.set_yticks([])


def draw_gas(axes: Axes, graph: DependencyGraph, colours: Sequence[Colour]) -> None:
    """Each transaction's gas as a bar, red on the critical path."""
    critical = set(graph.critical_path)
    bar_colours = [CRITICAL if index in critical else colours[index] for index in range(graph.transactions)]
    width = 0.8 if graph.transactions <= 200 else 1.0
    axes.bar(range(graph.transactions), [value / 1e6 for value in graph.tx_gas], width=width, color=bar_colours, linewidth=0)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    axes.set_ylabel("Mgas", fontsize=7)
    axes.set_xlabel("transaction index", fontsize=7)
    axes.tick_params(labelsize=7)


def draw_graph(figure: SubFigure, name: str, graph: DependencyGraph) -> None:
    """One fixture's panel: arcs above, per-transaction gas below."""
    arcs, gas = figure.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1], "hspace": 0.05})
    colours = component_colours(graph)
    draw_arcs(arcs, graph, colours)
    draw_gas(gas, graph, colours)
    arcs.set_title(
        f"{name}\n{graph.transactions} txs · {len(graph.edges)} edges · {len(graph.components)} components · "
        f"speedup ≤ {graph.speedup_bound:g}",
        fontsize=8,
    )


def plot_graphs(graphs: Sequence[tuple[str, DependencyGraph]], path: Path) -> int:
    """Draw up to MAX_PLOTS graphs into one image at `path` (Agg, no GUI); returns how many were drawn."""
    shown = list(graphs)[:MAX_PLOTS]
    columns = min(COLUMNS, len(shown)) or 1
    rows = math.ceil(len(shown) / columns) or 1
    figure = Figure(figsize=(6 * columns, 3.6 * rows), layout="constrained")
    FigureCanvasAgg(figure)
    panels = figure.subfigures(rows, columns, squeeze=False)
    for panel, (name, graph) in zip(panels.flat, shown):
        draw_graph(panel, name, graph)
    write_figure_atomically(figure, path, dpi=120, format=path.suffix.lower().lstrip(".") or "png")  # the format `path` names
    return len(shown)


def graph_png(name: str, graph: DependencyGraph, dpi: int = 80) -> bytes:
    """One fixture's panel alone as PNG bytes (the results page shows one at a time)."""
    figure = Figure(figsize=(7.5, 3.8), layout="constrained")
    FigureCanvasAgg(figure)
    draw_graph(figure.subfigures(1, 1), name, graph)
    buffer = io.BytesIO()
    figure.savefig(buffer, dpi=dpi, format="png", metadata={"Software": None})  # no version stamp: same bytes each time
    return buffer.getvalue()
