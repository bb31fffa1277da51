"""
`interact`: contracts deployed in the benchmark block itself, then called.

Variant `independent_pairs`: the block is `[deploy_0, call_0, deploy_1,
call_1, ...]`; each call runs the contract its pair's deployment created in
the same block (a keccak chain ending on its slot), so each call depends on
its deployment and pairs are independent: a client must take the new code
and storage from the access list, not from its state. Variant
`single_contract`: one deployment, then every transaction calls it, a chain
through the contract's slot. As execution-spec-tests'
`test_deploy_then_interact`; every deployment and every call has its own
sender. No contract exists before the block, so `--setup` changes nothing here.

Under EIP-8037 a deployment costs mostly state gas, and the block's gas used
is the larger of summed execution and summed state gas; a pair's share of
the block is therefore at least its deployment's state gas, and the call
takes whatever execution gas the pair has left.
"""

from __future__ import annotations

from ..ethereum.bytecode import deployment_code
from ..model.keys import create_address, sender
from ..model.workload import Origin, TxAccess, TxSpec, Workload, WorkloadParams, benchmark_workload
from ..model.family import Family
from .benchmark_calls import checked_variant
from .chains import INITIAL_SLOT_VALUE, SHARED_SLOT
from .deploy_gas import deploy_gas
from .keccak_chain import keccak_chain_contract
from .placement import funded
from .schedule import block_size_note, block_tx_capacity, envelope_bytes, tx_schedule

VARIANTS = ("independent_pairs", "single_contract")


def interact(params: WorkloadParams) -> Workload:
    """Deploy-then-call at `params`' gas value and fill level, per the variant."""
    checked_variant("interact", VARIANTS, params.variant)
    fork = params.fork
    name = params.fixture_name("interact")
    contract = keccak_chain_contract(params)
    storage = {SHARED_SLOT: INITIAL_SLOT_VALUE}
    deployment = deploy_gas(fork, contract.runtime, storage)
    call_intrinsic = fork.intrinsic_gas(b"")
    call_min = call_intrinsic + contract.min_execution_gas()
    call_cap = fork.tx_gas_cap(params.gas_benchmark_value)
    independent = params.variant == "independent_pairs"
    init_code = deployment_code(contract.runtime, storage)
    call_bytes, deploy_bytes = envelope_bytes(fork, b""), envelope_bytes(fork, init_code, create=True)
    if independent:
        pair_min = max(deployment.execution + call_min, deployment.state)
        capacity = block_tx_capacity(fork, call_bytes + deploy_bytes)
        budgets = tx_schedule(
            params.gas_benchmark_value, pair_min, deployment.execution + call_cap, params.fill, capacity
        )
        call_gas = [budget - deployment.execution for budget in budgets]
        deployers = [sender(name, "deployer", index) for index in range(len(call_gas))]
    else:
        capacity = block_tx_capacity(fork, call_bytes, deploy_bytes)
        call_gas = tx_schedule(
            params.gas_benchmark_value - deployment.execution, call_min, call_cap, params.fill, capacity
        )
        deployers = [sender(name, "deployer")]
    callers = [sender(name, "caller", index) for index in range(len(call_gas))]
    addresses = [create_address(deployer.address, 0) for deployer in deployers]

    txs: list[TxSpec] = []
    accesses: list[TxAccess] = []

    def deploy(index: int) -> None:
        txs.append(TxSpec(sender=deployers[index], nonce=0, to=None, data=init_code, gas_limit=deployment.total))
        accesses.append(
            TxAccess(
                writes={(addresses[index], slot): value for slot, value in storage.items()},
                created={addresses[index]: contract.runtime},
                origins={addresses[index]: Origin.DEPLOYED},
            )
        )

    slot_values = [INITIAL_SLOT_VALUE] * len(addresses)
    for index, (caller, gas) in enumerate(zip(callers, call_gas)):
        target = index if independent else 0
        if independent or index == 0:
            deploy(target)
        slot_values[target] = contract.next_slot_value(slot_values[target], contract.iterations(gas - call_intrinsic))
        txs.append(TxSpec(sender=caller, nonce=0, to=addresses[target], data=b"", gas_limit=gas))
        accesses.append(TxAccess(writes={(addresses[target], SHARED_SLOT): slot_values[target]}))

    return benchmark_workload(
        "interact",
        params,
        funded(s.address for s in deployers + callers),
        (),
        txs,
        accesses,
        deployments=len(addresses),
        calls=len(call_gas),
        deployment_execution_gas=deployment.execution,
        deployment_state_gas=deployment.state,
        call_gas_limits=sorted(set(call_gas)),
        loop_reserve=contract.loop.reserve,
        **block_size_note(len(call_gas), capacity),
    )


FAMILY = Family("interact", interact, VARIANTS)
