"""What one verifier concluded about one fixture."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path


class Verifier(str, Enum):
    """The verifiers, in the order rows and the summary list them."""

    GETH = "geth"
    """go-ethereum's `evm blocktest` on `blockchain_test` fixtures."""
    REVM = "revm"
    """revm's `revme blockchaintest` on `blockchain_test` fixtures."""
    ETHEREUMJS = "ethereumjs"
    """ethereumjs (`balgen.verify.ethereumjs`) on `blockchain_test` fixtures, each BAL checked against execution."""
    ENGINE = "engine"
    """An Engine API import of engine fixtures into the pinned geth."""


@dataclass(frozen=True)
class Outcome:
    """One row: a fixture, a verifier, and the first difference if it failed."""

    verifier: Verifier
    test_id: str
    path: Path
    difference: str | None
    """None when the verifier agrees with the fixture (or cannot judge it: `not_applicable`)."""
    not_applicable: str | None = None
    """Why this verifier cannot judge the fixture (it implements another schedule), when it cannot."""

    @property
    def passed(self) -> bool:
        return self.difference is None and self.not_applicable is None


def last_line(text: str) -> str:
    """A tool's last non-empty output line (its error, as a rule), or "no output"."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"
