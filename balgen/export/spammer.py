"""
The replay-eest spammer entry that runs a workload's payloads, sized from them.

spamoor rejects a config key its scenario does not declare, so the config is
a dataclass whose field names are the scenario's `yaml` tags
(`ScenarioOptions` in `scenarios/replay-eest/replayeest.go` plus
`WalletPoolConfig` in `spamoor/walletpool.go`, at 43cad30). Everything that
sizes the run follows from the payloads: every payload runs once and all of
them start within a tenth of a slot, each on wallets of its own; every
wallet is funded for the most expensive wallet's transactions at the
spammer's fee cap; and a payload may take as long as the whole export
needs, so spamoor's 30-minute default does not cut a slow one short.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..model.workload import GWEI, Workload
from .spamoor_payloads import GroupPayload

SCENARIO = "replay-eest"
BASE_FEE_GWEI = 20
"""replay-eest's default max fee per gas, made explicit because the funding is sized from it."""
TIP_FEE_GWEI = 2
"""replay-eest's default priority fee."""
STARTS_PER_PAYLOAD = 10
"""Throughput is this many times the payload count, so the limiter starts every payload within a tenth of a slot."""
FUNDING_STEP = 10**16
"""Funding is rounded up to 0.01 ETH."""
SLOT_SECONDS = 12
PAYLOAD_TIMEOUT_FLOOR_MINUTES = 30
"""spamoor's own default payload timeout; the computed one never goes below it."""


@dataclass(frozen=True)
class ReplayEestConfig:
    """The `config:` of a replay-eest spammer; every field name is a key spamoor declares."""

    seed: str
    payload_file: str
    total_count: int
    throughput: int
    max_pending: int
    max_wallets: int
    payload_timeout: str
    base_fee: int
    tip_fee: int
    refill_amount: int
    refill_balance: int


def wallet_costs(payload: GroupPayload) -> dict[str, int]:
    """Wei each wallet of `payload` may spend: gas limits at the fee cap, plus values."""
    costs: dict[str, int] = {}
    for tx in payload.txs:
        costs[tx.sender] = costs.get(tx.sender, 0) + tx.gas * BASE_FEE_GWEI * GWEI + tx.value
    return costs


def refill_amount(payloads: Sequence[GroupPayload]) -> int:
    """Funding of every wallet: the costliest wallet's spend, rounded up to 0.01 ETH."""
    most = max(cost for payload in payloads for cost in wallet_costs(payload).values())
    return -(-most // FUNDING_STEP) * FUNDING_STEP


def payload_timeout(workload: Workload, payloads: Sequence[GroupPayload]) -> str:
    """
    Twice the slots the whole workload needs on a devnet whose blocks hold its
    gas value: every gas limit packed into such blocks, plus a block per run boundary.
    """
    gas = sum(tx.gas for payload in payloads for tx in payload.txs)
    runs = max(len({tx.sender for tx in payload.txs}) for payload in payloads)
    slots = -(-gas // workload.gas_benchmark_value) + runs
    minutes = -(-2 * slots * SLOT_SECONDS // 60)
    return f"{max(PAYLOAD_TIMEOUT_FLOOR_MINUTES, minutes)}m"


def replay_eest_config(
    workload: Workload, name: str, payload_file: str, payloads: Sequence[GroupPayload]
) -> ReplayEestConfig:
    """The spammer config, seeded by its `name`, that runs every payload of `payload_file` once, side by side."""
    funding = refill_amount(payloads)
    return ReplayEestConfig(
        seed=f"balgen/{name}",
        payload_file=payload_file,
        total_count=len(payloads),
        throughput=STARTS_PER_PAYLOAD * len(payloads),
        max_pending=len(payloads),
        max_wallets=sum(payload.wallets for payload in payloads),
        payload_timeout=payload_timeout(workload, payloads),
        base_fee=BASE_FEE_GWEI,
        tip_fee=TIP_FEE_GWEI,
        refill_amount=funding,
        refill_balance=funding,
    )


def spammer_entry(name: str, description: str, config: ReplayEestConfig) -> dict[str, Any]:
    """One item of a `spamoor run` file: scenario, name, description and config, in spamoor's keys."""
    return {"scenario": SCENARIO, "name": name, "description": description, "config": asdict(config)}
