"""
A `Page` as one self-contained HTML file: the template, its style and
script, the figures' data and plotly.js itself inlined, so the page opens
from `file://` with no network and no server.

plotly.js comes from the pinned plotly package (`plotly.offline.get_plotlyjs`),
so the page's charts are the same code on every machine, offline. The file is
written under a temporary name beside the target and renamed into place: a
failure leaves no partial page.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from pathlib import Path

import jinja2
import plotly
from markupsafe import Markup
from plotly.offline import get_plotlyjs

from .. import __version__
from ..plumbing.errors import BadInput
from ..plumbing.output_files import write_text_atomically
from .page_model import Page

ASSETS = "assets"


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("balgen.pages", ASSETS),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _asset(name: str) -> str:
    return files("balgen.pages").joinpath(ASSETS, name).read_text(encoding="utf-8")


def _script_safe(text: str) -> str:
    """JSON that cannot end its `<script>` element early: every `<` written as `\\u003c`."""
    return text.replace("<", "\\u003c")


def _object(entries: dict[str, str]) -> str:
    """A JSON object of already-JSON values (the figures), without parsing them again."""
    return "{" + ",".join(f"{json.dumps(key)}:{value}" for key, value in entries.items()) + "}"


def page_data(page: Page) -> str:
    """The figures and pictures the page's script draws, as one JSON object."""
    charts = {chart.key: chart.figure for section in page.sections for chart in section.charts}
    pickers = {
        picker.key: "{" + f'"figures":{_object(picker.figures)},"images":{json.dumps(picker.images)}' + "}"
        for section in page.sections
        for picker in section.pickers
    }
    return _script_safe("{" + f'"charts":{_object(charts)},"pickers":{_object(pickers)}' + "}")


def render(page: Page) -> str:
    """The page's whole HTML text."""
    numeric = {
        table.key: {index for index, column in enumerate(table.columns) if column.numeric}
        for section in page.sections
        for table in section.tables
    }
    return _environment().get_template("page.html.j2").render(
        page=page,
        numeric=numeric,
        version=__version__,
        plotly_version=plotly.__version__,
        css=Markup(_asset("page.css")),
        js=Markup(_asset("page.js")),
        plotly_js=Markup(get_plotlyjs()),
        data=Markup(page_data(page)),
    )


def check_page_path(path: Path) -> None:
    """`--html PATH` names a file balgen can create, checked before any work; `BadInput` otherwise."""
    if path.is_dir():
        raise BadInput(f"--html {path}: is a folder; give a file name such as {path / 'report.html'}")
    folder = path.parent
    if not folder.is_dir():
        raise BadInput(f"--html {path}: folder {folder} does not exist")
    probe = folder / f".{path.name}.probe"
    try:
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        raise BadInput(f"--html {path}: cannot write in {folder} ({error.strerror or error})") from None


def write_page(page: Page, path: Path) -> None:
    """Render `page` into `path`, whole or not at all; `BadInput` naming the path when it cannot be written."""
    text = render(page)
    try:
        write_text_atomically(path, text)
    except OSError as error:
        raise BadInput(f"--html {path}: cannot write ({error.strerror or error}); no page written") from None
