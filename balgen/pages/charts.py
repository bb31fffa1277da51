"""
The page's charts as plotly figures, each returned as its JSON for plotly.js.

plotly draws SVG a reader can hover (each point names its test), zoom and
save, and the same figure is readable at 6 tests or 300: a family's changes
are a box of points, not a bar per test, and a test's phases are one chart
chosen from a list. Every figure uses the empty template and the page's own
light styling, so 300 figures do not each carry plotly's 10 kB default theme.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go
import plotly.io
from plotly.colors import qualitative
from plotly.subplots import make_subplots

PALETTE = qualitative.Plotly
"""One colour per run, in the runs' order (the baseline first)."""
PHASE_COLOURS = {"execution": "#4C78A8", "state read": "#F58518", "state hash": "#54A24B", "commit": "#B279A2"}
"""A colour per phase, the same on every chart; any other part (the rest of the client's own time) grey."""
OTHER_PART = "#BAB0AC"
VERDICT_COLOURS = {"passed": "#2E9E5B", "failed": "#D62728", "not applicable": "#B8B8B8"}
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
GRID = "#E6E8EB"
PANEL_HEIGHT = 250
"""Pixels per row of small multiples."""
PANELS_PER_ROW = 4
SPACING = 80
"""Pixels between rows of small multiples: the mode names under one row and the titles of the next."""


def _layout(**extra: object) -> dict[str, object]:
    """The page's plain chart style, with `extra` on top."""
    axis = {"gridcolor": GRID, "zerolinecolor": "#9AA0A6", "linecolor": "#C9CDD2", "automargin": True}
    return {
        "template": "none",
        "font": {"family": FONT, "size": 12, "color": "#1F2328"},
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "margin": {"l": 10, "r": 10, "t": 36, "b": 10},
        "xaxis": dict(axis),
        "yaxis": dict(axis),
        "hoverlabel": {"font": {"family": FONT}},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
        **extra,
    }


def figure_json(figure: go.Figure) -> str:
    """The figure as the JSON plotly.js draws (checked by plotly's validators as it was built)."""
    return plotly.io.to_json(figure, pretty=False, engine="json")


def run_colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


@dataclass(frozen=True)
class TestChange:
    """One test's change in one run against the baseline, for the small multiples."""

    test_id: str
    family: str
    run_index: int
    """Which run (1 = the first after the baseline)."""
    change: float
    low: float | None
    high: float | None
    verdict: str


def family_changes(names: Sequence[str], changes: Sequence[TestChange], floor: float | None) -> go.Figure:
    """
    Per family, one panel: each run's changes against the baseline as a box with
    every test a point (hover names it), zero marked, and the A/A floor shaded
    when there is one: a point inside the band is within what the same build differs by.
    """
    families = sorted({change.family for change in changes})
    columns = min(PANELS_PER_ROW, max(1, len(families)))
    rows = max(1, math.ceil(len(families) / columns))
    figure = make_subplots(
        rows=rows, cols=columns, subplot_titles=families, shared_yaxes=True,
        horizontal_spacing=0.03, vertical_spacing=SPACING / _height(rows),
    )  # fmt: skip
    for position, family in enumerate(families):
        row, column = position // columns + 1, position % columns + 1
        for run_index, name in enumerate(names[1:], start=1):
            mine = [c for c in changes if c.family == family and c.run_index == run_index]
            if not mine:
                continue
            figure.add_trace(
                go.Box(
                    y=[c.change for c in mine],
                    x=[name] * len(mine),
                    name=name,
                    showlegend=False,
                    boxpoints="all",
                    jitter=0.45,
                    pointpos=0,
                    marker={"color": run_colour(run_index), "size": 6, "opacity": 0.8},
                    line={"color": run_colour(run_index), "width": 1.2},
                    fillcolor="rgba(0,0,0,0)",
                    customdata=[[c.test_id, c.verdict, _interval_text(c.low, c.high)] for c in mine],
                    hovertemplate="%{customdata[0]}<br>%{y:+.1f}% (%{customdata[2]})<br>%{customdata[1]}<extra>"
                    + name + "</extra>",
                ),
                row=row, col=column,
            )  # fmt: skip
        if floor is not None:
            figure.add_hrect(y0=-floor, y1=floor, fillcolor="#9AA0A6", opacity=0.15, line_width=0, row=row, col=column)
        figure.add_hline(y=0, line={"color": "#5F6368", "width": 1}, row=row, col=column)
    figure.update_xaxes(showticklabels=True, gridcolor=GRID, tickfont={"size": 11})  # the mode under its box: no legend
    figure.update_yaxes(gridcolor=GRID, zerolinecolor="#9AA0A6", ticksuffix="%")
    figure.update_yaxes(title_text=f"Δ MGas/s vs {names[0]}", col=1)
    figure.update_layout(_layout(height=_height(rows), margin={"l": 10, "r": 10, "t": 40, "b": 10}))
    figure.update_annotations(font={"size": 13})
    return figure


def _height(rows: int) -> int:
    """Pixels of `rows` rows of small multiples, the gaps between them room for the modes under each box."""
    return PANEL_HEIGHT * rows + 60


def _interval_text(low: float | None, high: float | None) -> str:
    if low is None or high is None or low != low or high != high:
        return "no interval"
    return f"{low:+.1f}% to {high:+.1f}%"


def phase_bars(title: str, names: Sequence[str], phases: Sequence[str], ms: Mapping[str, Sequence[float | None]]) -> go.Figure:
    """
    One horizontal bar per run, its phases' median milliseconds stacked:
    `ms[phase][i]` is run `i`'s time (None where that run has no timing of it).
    """
    figure = go.Figure()
    for phase in phases:
        values = ms[phase]
        figure.add_trace(
            go.Bar(
                y=list(names), x=[0.0 if v is None else v for v in values], name=phase, orientation="h",
                marker={"color": PHASE_COLOURS.get(phase, OTHER_PART)},
                hovertemplate="%{y}: " + phase + " %{x:.2f} ms<extra></extra>",
            )
        )  # fmt: skip
    figure.update_layout(
        _layout(
            title={"text": title, "font": {"size": 14}, "x": 0, "xanchor": "left", "y": 0.98, "yanchor": "top"},
            barmode="stack",
            height=150 + 42 * len(names),
            margin={"l": 10, "r": 10, "t": 70, "b": 40},
            legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0, "traceorder": "normal"},
        )
    )
    figure.update_yaxes(autorange="reversed")
    figure.update_xaxes(title_text="the client's own time, median ms", rangemode="tozero")
    return figure


def mgas_by_family(names: Sequence[str], points: Sequence[tuple[str, str, int, float]]) -> go.Figure:
    """MGas/s per family, a box of points per run: `points` are (test id, family, run index, MGas/s)."""
    figure = go.Figure()
    for index, name in enumerate(names):
        mine = [p for p in points if p[2] == index]
        figure.add_trace(
            go.Box(
                x=[p[1] for p in mine], y=[p[3] for p in mine], name=name, boxpoints="all", jitter=0.4, pointpos=0,
                marker={"color": run_colour(index), "size": 6}, line={"color": run_colour(index), "width": 1.2},
                fillcolor="rgba(0,0,0,0)", text=[p[0] for p in mine],
                hovertemplate="%{text}<br>%{y:,.0f} MGas/s<extra>" + name + "</extra>",
            )
        )  # fmt: skip
    figure.update_layout(_layout(boxmode="group", height=420, margin={"l": 10, "r": 10, "t": 40, "b": 10}))
    figure.update_yaxes(title_text="MGas/s (median of the measured executions)", rangemode="tozero")
    return figure


@dataclass(frozen=True)
class RejectionBar:
    """One run's time to reject a test's lying block, beside its valid block's time."""

    test_id: str
    run_index: int
    reject_ms: float
    valid_ms: float | None


def rejection_bars(names: Sequence[str], bars: Sequence[RejectionBar]) -> go.Figure:
    """Per test and run (rows), the rejection of the lying block (red) beside the valid block's execution (grey)."""
    ordered = sorted(bars, key=lambda bar: (bar.test_id, bar.run_index))
    labels = [f"{bar.test_id} · {names[bar.run_index]}" for bar in ordered]
    figure = go.Figure()
    figure.add_trace(
        go.Bar(y=labels, x=[bar.valid_ms or 0.0 for bar in ordered], orientation="h", name="valid block",
               marker={"color": "#B8BEC6"}, hovertemplate="%{y}<br>valid block %{x:.2f} ms<extra></extra>")
    )  # fmt: skip
    figure.add_trace(
        go.Bar(y=labels, x=[bar.reject_ms for bar in ordered], orientation="h", name="lying block rejected",
               marker={"color": "#D62728"}, hovertemplate="%{y}<br>rejected in %{x:.2f} ms<extra></extra>")
    )  # fmt: skip
    figure.update_layout(_layout(barmode="group", height=120 + 34 * len(ordered), margin={"l": 10, "r": 10, "t": 50, "b": 40}))
    figure.update_yaxes(autorange="reversed")
    figure.update_xaxes(title_text="newPayload, median ms", rangemode="tozero")
    return figure


def fixture_scatter(points: Sequence[tuple[str, str, int, float, int]]) -> go.Figure:
    """
    Each fixture's transactions against its dependency graph's speedup bound, a
    colour per family: `points` are (test id, family, transactions, bound, gas used).
    """
    figure = go.Figure()
    for index, family in enumerate(sorted({p[1] for p in points})):
        mine = [p for p in points if p[1] == family]
        figure.add_trace(
            go.Scatter(
                x=[p[2] for p in mine], y=[p[3] for p in mine], mode="markers", name=family,
                marker={"color": run_colour(index), "size": 9, "opacity": 0.85, "line": {"width": 0.5, "color": "white"}},
                customdata=[[p[0], p[4] / 1e6] for p in mine],
                hovertemplate="%{customdata[0]}<br>%{x} transactions, %{customdata[1]:.1f} Mgas<br>speedup ≤ %{y:.2f}<extra></extra>",
            )
        )  # fmt: skip
    figure.update_layout(_layout(height=420, margin={"l": 10, "r": 10, "t": 50, "b": 10}))
    figure.update_xaxes(title_text="transactions in the benchmark block", type="log")
    figure.update_yaxes(title_text="ideal parallel speedup (block gas / critical path)", rangemode="tozero")
    return figure


def verdict_counts(verifiers: Sequence[str], counts: Mapping[str, Sequence[int]]) -> go.Figure:
    """Per verifier, its fixtures passed, failed and not applicable, stacked: `counts[verdict][i]` for verifier i."""
    figure = go.Figure()
    for verdict, values in counts.items():
        figure.add_trace(
            go.Bar(
                y=list(verifiers), x=list(values), name=verdict, orientation="h",
                marker={"color": VERDICT_COLOURS.get(verdict, "#888888")},
                hovertemplate="%{y}: %{x} " + verdict + "<extra></extra>",
            )
        )  # fmt: skip
    figure.update_layout(_layout(barmode="stack", height=120 + 40 * len(verifiers), margin={"l": 10, "r": 10, "t": 50, "b": 40}))
    figure.update_yaxes(autorange="reversed")
    figure.update_xaxes(title_text="fixtures")
    return figure
