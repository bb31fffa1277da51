"""
What the results page shows, as data: headline cards, sections of facts,
sortable tables, charts and per-test pickers, which `document` renders.

The builders of a run's, a fill's and a verify's page (`run_page`,
`fixture_page`) fill these in; the template only lays them out, so every
figure on the page comes from one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Cell:
    """One table cell: what is shown, what it sorts by, and a style class (`faster`, `slower`, ...)."""

    text: str
    sort: float | str | None = None
    """The sort key; the text when None. A number sorts numerically, a missing figure last."""
    style: str = ""
    title: str = ""
    """Shown on hover: the full text a cell abbreviates."""


@dataclass(frozen=True)
class Column:
    """A table column: its heading, whether it holds numbers (right-aligned), and what it means."""

    title: str
    numeric: bool = False
    hint: str = ""


@dataclass(frozen=True)
class Row:
    """One table row; `test` links it to the page's per-test pickers (a click shows that test)."""

    cells: tuple[Cell, ...]
    test: str | None = None


@dataclass(frozen=True)
class Filter:
    """A drop-down above a table that keeps the rows whose `column` cell reads one of `options`."""

    column: int
    label: str
    options: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A sortable, filterable table; its rows in the order given (the page's default order)."""

    key: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    filters: tuple[Filter, ...] = ()
    searchable: bool = True
    what: str = "rows"
    """What a row is, for the count above the table ("60 of 240 tests")."""


@dataclass(frozen=True)
class Chart:
    """A plotly figure (its JSON, `plotly.io.to_json`) and a caption under it."""

    key: str
    figure: str
    caption: str = ""


@dataclass(frozen=True)
class Picker:
    """
    A chart or picture for one item at a time, chosen from a drop-down or by
    a click on a table row: `figures` maps each item to a plotly figure's JSON,
    `images` to a picture's data URI.
    """

    key: str
    label: str
    options: tuple[str, ...]
    figures: dict[str, str] = field(default_factory=dict)
    images: dict[str, str] = field(default_factory=dict)
    caption: str = ""


@dataclass(frozen=True)
class Card:
    """A headline figure at the top of the page."""

    label: str
    value: str
    note: str = ""
    style: str = ""


@dataclass(frozen=True)
class Section:
    """A titled part of the page: paragraphs, facts (name, value), then tables, charts and pickers."""

    key: str
    title: str
    paragraphs: tuple[str, ...] = ()
    facts: tuple[tuple[str, str], ...] = ()
    tables: tuple[Table, ...] = ()
    charts: tuple[Chart, ...] = ()
    pickers: tuple[Picker, ...] = ()


@dataclass(frozen=True)
class Page:
    """The whole page."""

    title: str
    kind: str
    """What the page is of: `modes run`, `comparison`, `replay run`, `fill`, `verify`."""
    subtitle: str
    cards: tuple[Card, ...] = ()
    sections: tuple[Section, ...] = ()
