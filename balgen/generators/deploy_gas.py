"""
The gas of a contract-creation transaction, split as Amsterdam's block gas counts it.

Under EIP-8037 a block's gas used is the larger of its transactions' summed
execution gas and summed state gas, and a deployment is mostly state gas
(the new account, its code bytes, its storage slots). A generator that
deploys in its benchmark block needs both parts exactly to size the block;
before Amsterdam everything is execution gas and the state part is zero.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ethereum.bytecode import deployment_code, deployment_items, static_gas
from ..ethereum.forks import Fork
from ..ethereum.gas_costs import words


@dataclass(frozen=True)
class DeployGas:
    """Execution and state gas of one deployment transaction."""

    execution: int
    state: int

    @property
    def total(self) -> int:
        """The gas limit that covers the deployment exactly."""
        return self.execution + self.state


def deploy_gas(fork: Fork, runtime: bytes, storage: dict[int, int]) -> DeployGas:
    """Gas of a transaction deploying `runtime` with `storage` set by its init code."""
    gas = fork.gas
    new_slots = sum(1 for value in storage.values() if value)
    execution = (
        fork.intrinsic_gas(deployment_code(runtime, storage), create=True)
        + static_gas(deployment_items(runtime, storage))
        + new_slots * gas.sstore_set_cold
        + gas.copy_word * words(len(runtime))
        + gas.memory_expansion(len(runtime))
        + gas.code_deposit_byte * len(runtime)
        + gas.code_deposit_word * words(len(runtime))
    )
    state = gas.account_creation_state + new_slots * gas.sstore_set_state + gas.code_deposit_state_byte * len(runtime)
    return DeployGas(execution, state)
