"""
What each path given to `balgen report --html` is: a replay run (its
`results.json`), a `balgen verify --output` (its `verify.json`) or a fill's
output (fixture files), and the page built from them.

Paths of different kinds, or of no kind, are bad input (one line naming the
path), as are runs of different fixtures (`results.comparison.compare`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from enum import StrEnum
from pathlib import Path

from ..fixtures.files import fixture_files
from ..plumbing.errors import BadInput
from ..results.comparison import comparable_runs, compare, load_runs
from ..results.schema import RESULTS_JSON
from ..verify.verdicts_file import VERIFY_JSON, load_verify_result
from .fixture_page import fill_page, verify_page
from .page_model import Page
from .run_page import run_page


class SourceKind(StrEnum):
    """What a path holds."""

    RUN = "replay run"
    VERIFY = "verify output"
    FILL = "fill output"


def source_kind(path: Path) -> SourceKind:
    """The kind of `path` (a folder or the file that says what it is); `BadInput` for none."""
    if not path.exists():
        raise BadInput(f"{path}: does not exist")
    if path.is_dir():
        if (path / RESULTS_JSON).is_file():
            return SourceKind.RUN
        if (path / VERIFY_JSON).is_file():
            return SourceKind.VERIFY
        if fixture_files(path):
            return SourceKind.FILL
        raise BadInput(
            f"{path}: not a balgen replay run, fill or verify output (no {RESULTS_JSON}, {VERIFY_JSON} or fixture file in it)"
        )
    if path.name == RESULTS_JSON:
        return SourceKind.RUN
    if path.name == VERIFY_JSON:
        return SourceKind.VERIFY
    if path.suffix == ".json":
        return SourceKind.FILL
    raise BadInput(f"{path}: not a balgen replay run, fill or verify output (give its folder)")


def page_of(paths: Sequence[Path], noise_threshold: float = 0.0, worst: int = 10) -> Page:
    """The page of `paths`: runs compared (a modes run's modes among them), one run, a fill or a verify."""
    kinds = [source_kind(path) for path in paths]
    if len(set(kinds)) > 1:
        other, other_kind = next((path, kind) for path, kind in zip(paths, kinds, strict=True) if kind is not kinds[0])
        raise BadInput(f"{other} is a {other_kind}, {paths[0]} a {kinds[0]}: give outputs of one kind")
    kind = kinds[0]
    if kind is not SourceKind.RUN and len(paths) > 1:
        raise BadInput(f"{paths[1]}: one {kind} at a time (only replay runs are compared)")
    if kind is SourceKind.FILL:
        return fill_page(paths[0])
    if kind is SourceKind.VERIFY:
        return verify_page(load_verify_result(paths[0]), paths[0])
    runs = load_runs(paths)
    if len(runs) == 1:
        return run_page(runs, None, noise_threshold, "replay run", runs[0].name)
    kind, title = "comparison", ""
    if len(paths) == 1:  # a modes run: its runs are its modes, named as such
        first = runs[0].result
        title = first.label.removesuffix(f"-{first.tests[0].mode}") if first.tests else runs[0].name
        runs = [replace(run, name=run.name.removeprefix(f"{title}-")) for run in runs]
        kind = "modes run"
    runs, left_out = comparable_runs(runs)
    comparison = compare(runs, worst=worst, noise_threshold=noise_threshold)
    title = title or f"{runs[0].name} against {', '.join(run.name for run in runs[1:])}"
    return run_page(runs, comparison, noise_threshold, kind, title, left_out)
