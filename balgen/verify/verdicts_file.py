"""
The results file of `balgen verify --output DIR`: `DIR/verify.json`, each verifier's verdict per fixture.

One model writes and reads it, as `results.json` is for a replay: `balgen verify` writes
it beside its table, `balgen report DIR --html PAGE` reads it back to show the verdicts
next to the fixtures (their gas, transactions and dependency graph) that `fixtures_path` names.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..plumbing.errors import BadInput
from ..plumbing.user_files import read_user_text
from .outcomes import Outcome, Verifier

VERIFY_JSON = "verify.json"
"""The file of `balgen verify --output DIR` that holds its `VerifyResult`."""
VERIFY_SCHEMA_VERSION = 1

_CONFIG = ConfigDict(use_attribute_docstrings=True)


class VerdictKind(StrEnum):
    """What one verifier concluded about one fixture."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_APPLICABLE = "not applicable"
    """The verifier implements another Amsterdam than the fixture's (`verify.applicability`)."""


class FixtureVerdict(BaseModel):
    """One row of `balgen verify`'s table: a fixture, a verifier and its verdict."""

    model_config = _CONFIG

    test_id: str
    verifier: Verifier
    verdict: VerdictKind
    detail: str | None = None
    """The first difference of a failure, or why the verifier cannot judge the fixture."""
    path: str
    """The fixture file the verifier read."""


class VerifyResult(BaseModel):
    """A whole `balgen verify`: what was checked, by which verifiers at which versions, and every verdict."""

    model_config = _CONFIG

    schema_version: int = VERIFY_SCHEMA_VERSION
    balgen_version: str
    fixtures_path: str
    """The fixture file or folder verified, as given (absolute)."""
    keyword: str | None = None
    fixture_count: int
    verifiers: dict[str, str] = Field(default_factory=dict)
    """Each verifier that ran: its version and the Amsterdam it implements."""
    left_out: list[Verifier] = Field(default_factory=list)
    """The verifiers `--without` left out."""
    filled_by: str = ""
    """The t8n(s) that filled the fixtures, from their `_info`."""
    summary: str
    """The summary line `balgen verify` printed."""
    verdicts: list[FixtureVerdict] = Field(default_factory=list)


def fixture_verdict(outcome: Outcome) -> FixtureVerdict:
    """An `Outcome` as it is recorded."""
    if outcome.not_applicable is not None:
        kind, detail = VerdictKind.NOT_APPLICABLE, outcome.not_applicable
    elif outcome.passed:
        kind, detail = VerdictKind.PASSED, None
    else:
        kind, detail = VerdictKind.FAILED, outcome.difference
    return FixtureVerdict(test_id=outcome.test_id, verifier=outcome.verifier, verdict=kind, detail=detail, path=str(outcome.path))


def sorted_verdicts(outcomes: Sequence[Outcome]) -> list[FixtureVerdict]:
    """Every outcome as a verdict, by fixture and then in the verifiers' order (as the table lists them)."""
    order = list(Verifier)
    return [fixture_verdict(o) for o in sorted(outcomes, key=lambda o: (o.test_id, order.index(o.verifier)))]


def verify_file(path: Path) -> Path:
    """The `verify.json` of `path`, given as the file or the folder holding it."""
    return path / VERIFY_JSON if path.is_dir() else path


def load_verify_result(path: Path) -> VerifyResult:
    """`path`'s `verify.json`, checked against the schema; `BadInput` naming the file and field otherwise."""
    file = verify_file(path)
    if not file.is_file():
        raise BadInput(f"{path}: no {VERIFY_JSON} (not a balgen verify output)")
    try:
        result = VerifyResult.model_validate_json(read_user_text(file))
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise BadInput(f"{file}: not a verify result: {where}: {first['msg']}") from None
    if result.schema_version != VERIFY_SCHEMA_VERSION:
        raise BadInput(f"{file}: schema version {result.schema_version}, this balgen reads {VERIFY_SCHEMA_VERSION}")
    return result
