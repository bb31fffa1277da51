"""
Which Amsterdam each verifier implements, and whether a fixture filled for another one is for it.

Amsterdam is still moving: go-ethereum v1.17.5 charges other gas than v1.17.6-v1.17.10
(`ethereum.gas_costs`). A fixture filled by v1.17.5's t8n run by a verifier of the later schedule
fails on its first cold read, which says nothing about the fixture or the verifier: it is "not
applicable", and `balgen verify` says so instead of calling it a failure. The fixture's schedule is
`_info["gas-rules"]["spec"]`, as the fill recorded it; a verifier's is measured where it can be (the
evm's by calibration, ethereumjs's from the prices its version record prints) and stated where it
cannot (revm 43.0.3, whose post-states agree with go-ethereum v1.17.6-v1.17.10's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..ethereum.gas_costs import AMSTERDAM_GAS, AMSTERDAM_V1_17_5_GAS, GasCosts

AMSTERDAM_SPECS: tuple[GasCosts, ...] = (AMSTERDAM_GAS, AMSTERDAM_V1_17_5_GAS)
"""The Amsterdam schedules balgen knows, by the prices that tell them apart."""

REVME_VERSION = "43.0.3"
"""The revme `make tools` builds (scripts/install-tools.sh pins the same)."""
REVM_SPEC = AMSTERDAM_GAS.spec
"""revm 43.0.3's Amsterdam: it agrees with go-ethereum v1.17.8's post-state on every default fixture
(`../shared/reference/toolchain.md`); it prints no schedule of its own."""


def spec_of_prices(cold_sload: int, create: int) -> str | None:
    """The known Amsterdam schedule charging `cold_sload` for a cold SLOAD and `create` for CREATE access."""
    for costs in AMSTERDAM_SPECS:
        if costs.cold_sload == cold_sload and costs.create2_base == create:
            return costs.spec
    return None


def filled_spec(fixture: Mapping[str, Any]) -> str | None:
    """The gas schedule a fixture was filled with (`_info["gas-rules"]["spec"]`), None where it does not say."""
    info = fixture.get("_info")
    rules = info.get("gas-rules") if isinstance(info, dict) else None
    spec = rules.get("spec") if isinstance(rules, dict) else None
    return spec if isinstance(spec, str) else None


def not_applicable(filled: str | None, implemented: str | None) -> str | None:
    """
    Why a verifier implementing `implemented` cannot judge a fixture filled for `filled`, or None:
    only two known Amsterdam schedules that differ make a fixture not applicable.
    """
    known = {costs.spec for costs in AMSTERDAM_SPECS}
    if filled in known and implemented in known and filled != implemented:
        return f"not applicable: fixture filled for {filled}, verifier implements {implemented}"
    return None
