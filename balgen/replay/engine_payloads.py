"""
A fixture's `engineNewPayloads`, checked and reduced to what a replay needs.

Every entry is checked before the first one is sent: a fixture whose
payload 7 is malformed must be rejected as bad input, not fail half-way
through a run with the client's chain left at block 6.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ..plumbing.errors import BadInput
from ..fixtures.models import FixtureEngineNewPayload
from ..fixtures.reading import validation_problem

VALID = "VALID"
INVALID = "INVALID"
ERROR = "ERROR"
"""The status recorded for a JSON-RPC error the fixture expects (`errorCode`)."""


@dataclass(frozen=True)
class PayloadDirective:
    """One `engineNewPayloads` entry, checked, with the facts results need."""

    index: int
    """Position in the fixture's `engineNewPayloads`."""
    params: list[Any]
    new_payload_version: int
    forkchoice_updated_version: int
    phase: Any
    """The fixture's "setup" / "testing" label; None if it has none (checked by `check_phases`)."""
    block_number: int
    block_hash: str
    parent_hash: str
    gas_used: int
    transaction_count: int
    validation_error: str | None
    """Set when the fixture expects the client to reject the payload."""
    error_code: int | None
    """Set when the fixture expects a JSON-RPC error instead of a status."""

    @property
    def expected_status(self) -> str:
        """What `newPayload` must answer: VALID, INVALID, or a JSON-RPC ERROR."""
        if self.error_code is not None:
            return ERROR
        return INVALID if self.validation_error is not None else VALID

    @property
    def method(self) -> str:
        """The Engine API method that carries this payload, for messages."""
        return f"engine_newPayloadV{self.new_payload_version}"


_HEX = re.compile(r"0[xX][0-9a-fA-F]*")
_HASH = re.compile(r"0[xX][0-9a-fA-F]{64}")


def is_hash(value: Any) -> bool:
    """Whether `value` is a 32-byte hash as JSON-RPC writes it (`0x` and 64 hex digits)."""
    return isinstance(value, str) and _HASH.fullmatch(value) is not None


def check_engine_values(params: list[Any], where: str) -> None:
    """
    Every value in a payload's params must be `0x` hex (Engine API
    quantities and data are nothing else), or an object or list of them.

    Checked here so that a mistyped field is bad input naming the field,
    not a client's "invalid argument" half-way through a run. The walk is a
    loop, not a recursion: a deeply nested value must not exhaust the stack.
    """
    pending: list[tuple[str, Any]] = [(f"{where}.params", params)]
    while pending:
        path, value = pending.pop()
        if isinstance(value, str):
            if _HEX.fullmatch(value) is None:
                raise BadInput(f"{path}: {value!r:.80} is not 0x-prefixed hex")
        elif isinstance(value, Mapping):
            pending.extend(reversed([(f"{path}.{key}", item) for key, item in value.items()]))
        elif isinstance(value, list):
            pending.extend(reversed([(f"{path}[{i}]", item) for i, item in enumerate(value)]))
        elif value is not None:
            raise BadInput(f"{path}: {value!r:.80} is not 0x-prefixed hex")


def _error_code(value: str | None, where: str) -> int | None:
    """The expected JSON-RPC error code, which fixtures write as number or text."""
    if value is None:
        return None
    try:
        return int(value, 0)
    except ValueError:
        raise BadInput(f"{where}.errorCode: {value!r} is not a number") from None


def parse_payload_directive(index: int, entry: Any, where: str) -> PayloadDirective:
    """Check one `engineNewPayloads` entry through its model and pull out what the replay needs."""
    if not isinstance(entry, Mapping):
        raise BadInput(f"{where}: not an object")
    params = entry.get("params")
    if not isinstance(params, list) or not params or not isinstance(params[0], Mapping):
        raise BadInput(f"{where}: params must be a list starting with the execution payload")
    check_engine_values(params, where)
    try:
        model = FixtureEngineNewPayload.model_validate(entry)
    except ValidationError as error:
        raise BadInput(validation_problem(error, where)) from None
    payload = model.params[0]
    return PayloadDirective(
        index=index,
        params=list(params),  # sent as the fixture has them, once the model accepted them
        new_payload_version=int(model.new_payload_version),
        forkchoice_updated_version=int(model.forkchoice_updated_version),
        phase=model.phase,
        block_number=payload.block_number,
        block_hash="0x" + payload.block_hash.hex(),
        parent_hash="0x" + payload.parent_hash.hex(),
        gas_used=payload.gas_used,
        transaction_count=len(payload.transactions),
        validation_error=model.validation_error,
        error_code=_error_code(model.error_code, where),
    )


def parse_payload_directives(fixture: Mapping[str, Any]) -> tuple[PayloadDirective, ...]:
    """All payload entries of a fixture, checked before any is sent."""
    entries = fixture.get("engineNewPayloads")
    if not isinstance(entries, list) or not entries:
        raise BadInput("no engineNewPayloads")
    directives = tuple(
        parse_payload_directive(index, entry, f"engineNewPayloads[{index}]")
        for index, entry in enumerate(entries)
    )
    check_phases(directives)
    return directives


SETUP_PHASE, TESTING_PHASE = "setup", "testing"


def is_timed_rejection(directive: PayloadDirective) -> bool:
    """Whether the replay times the client's rejection of this payload: the fixture labels it
    `testing` and expects it rejected (it comes just before the benchmark payload)."""
    return directive.phase == TESTING_PHASE and directive.expected_status != VALID


def check_phases(directives: Sequence[PayloadDirective]) -> None:
    """
    The replay measures the last payload and sends the others once: where a
    fixture labels its payloads with `phase` (balgen's do), the labels must
    say the same, or the wrong block would be measured without a word. The
    payloads just before the last may be `testing` too when the fixture
    expects them rejected: their rejection is timed (`is_timed_rejection`).
    """
    labelled = [directive for directive in directives if directive.phase is not None]
    for directive in labelled:
        if directive.phase not in (SETUP_PHASE, TESTING_PHASE):
            raise BadInput(
                f"engineNewPayloads[{directive.index}].phase: {directive.phase!r:.80} is not "
                f"{SETUP_PHASE!r} or {TESTING_PHASE!r}"
            )
    if not labelled:
        return
    testing = [directive.index for directive in labelled if directive.phase == TESTING_PHASE]
    rejections = [directive.index for directive in directives[:-1] if is_timed_rejection(directive)]
    rejections_last = rejections == list(range(len(directives) - 1 - len(rejections), len(directives) - 1))
    if testing != [*rejections, directives[-1].index] or not rejections_last:
        raise BadInput(
            f"engineNewPayloads: phase {TESTING_PHASE!r} must mark the last payload (the benchmark "
            f"block) and only payloads just before it that the fixture expects rejected, not {testing or 'none'}"
        )
