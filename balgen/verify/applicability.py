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

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..calibration import calibrated_fork
from ..chain.t8n import TransitionTool
from ..ethereum.forks import AMSTERDAM, fork_by_name
from ..ethereum.gas_costs import AMSTERDAM_GAS, GasCosts
from ..plumbing.errors import BadInput
from .ethereumjs import ETHEREUMJS_VERSION, VersionRecord
from .outcomes import Outcome, Verifier

AMSTERDAM_SPECS: tuple[GasCosts, ...] = AMSTERDAM.known_gas
"""The Amsterdam schedules balgen knows (the fork's), by the prices that tell them apart."""

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


ETHEREUMJS_NETWORKS = ("Amsterdam",)
"""The networks balgen's ethereumjs verifier builds a chain for (verify.mjs): the BAL's fork."""


@dataclass(frozen=True)
class Filled:
    """What a fixture says of its making: the t8n, the network, the gas schedule (`_info`)."""

    tool: str | None
    network: str | None
    spec: str | None

    @classmethod
    def of(cls, fixture: Mapping[str, Any]) -> Filled:
        info = fixture.get("_info")
        tool = info.get("filling-transition-tool") if isinstance(info, dict) else None
        network = fixture.get("network")
        return cls(
            tool if isinstance(tool, str) else None, network if isinstance(network, str) else None, filled_spec(fixture)
        )


@dataclass
class Specs:
    """Which Amsterdam each verifier implements, and the versions that say so."""

    implemented: dict[Verifier, str | None]
    versions: dict[Verifier, str]

    @classmethod
    def of(cls, evm: Path | None, geth: Path | None) -> Specs:
        """The evm's schedule measured by calibration (cached per binary); revm's and ethereumjs's as stated."""
        evm_spec, evm_version = None, ""
        if evm is not None:
            t8n = TransitionTool(evm)
            evm_version = t8n.version()
            try:
                with tempfile.TemporaryDirectory(prefix="balgen-verify-calibration-") as scratch:
                    evm_spec = calibrated_fork(t8n, fork_by_name("Amsterdam"), Path(scratch)).gas.spec
            except BadInput:
                evm_spec = None  # an evm balgen cannot calibrate judges every fixture, as before
        same_release = geth is not None and evm is not None and geth.parent == evm.parent
        return cls(
            implemented={
                Verifier.GETH: evm_spec, Verifier.REVM: REVM_SPEC, Verifier.ETHEREUMJS: AMSTERDAM_GAS.spec,
                # the engine import's geth is the evm's release where both come from one tools folder
                Verifier.ENGINE: evm_spec if same_release else None,
            },
            versions={Verifier.GETH: evm_version, Verifier.REVM: f"revme {REVME_VERSION}",
                      Verifier.ETHEREUMJS: f"@ethereumjs/vm {ETHEREUMJS_VERSION}", Verifier.ENGINE: str(geth or "")},
        )  # fmt: skip

    def confirm_ethereumjs(self, version: VersionRecord | None) -> None:
        """ethereumjs's own record of the prices it charges decides its schedule."""
        if version is not None:
            gas = version.amsterdam_gas
            self.implemented[Verifier.ETHEREUMJS] = spec_of_prices(gas.cold_sload, gas.create)
            self.versions[Verifier.ETHEREUMJS] = version.version

    def reason(self, verifier: Verifier, filled: Filled) -> str | None:
        """Why `verifier` cannot judge a fixture `filled` so, or None when it can."""
        if verifier is Verifier.ETHEREUMJS and filled.network is not None and filled.network not in ETHEREUMJS_NETWORKS:
            return f"not applicable: network {filled.network}; the ethereumjs verifier checks {', '.join(ETHEREUMJS_NETWORKS)} blocks"
        return not_applicable(filled.spec, self.implemented.get(verifier))

    def judged(self, outcome: Outcome, filled: Filled) -> Outcome:
        """`outcome`, or a not-applicable one where the verifier cannot judge the fixture."""
        reason = self.reason(outcome.verifier, filled)
        return outcome if reason is None else Outcome(outcome.verifier, outcome.test_id, outcome.path, None, reason)
