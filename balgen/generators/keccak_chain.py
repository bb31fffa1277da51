"""
`keccak_chain`: every transaction hashes until its gas nearly runs out, then touches the shared slot.

The conflict between transactions is discovered only by their last opcodes
(`slot0 += keccak result`), the worst case for speculative parallel
execution: every transaction but the first is fully executed before the
conflict forces a re-run. Same contract shape as execution-spec-tests'
`_build_keccak_chain`.
"""

from __future__ import annotations

from ..ethereum.bytecode import ADD, MLOAD, MSTORE, PUSH0, SLOAD, SSTORE, STOP, push, static_gas
from ..model.workload import Workload, WorkloadParams
from ..model.family import Family
from .chains import ChainContract, chain_workload
from .keccak_loop import KeccakLoop, hashed_word, reserve_for

WORD = 2**256


def keccak_chain_contract(params: WorkloadParams) -> ChainContract:
    """mem[0] = 1; keccak loop; slot0 += mem[0]."""
    gas = params.fork.gas
    before = [push(1), PUSH0, MSTORE]
    after = [PUSH0, MLOAD, PUSH0, SLOAD, ADD, PUSH0, SSTORE, STOP]
    gas_after = static_gas(after) + gas.cold_sload + gas.sstore_update_warm
    return ChainContract(
        before_loop=before,
        loop=KeccakLoop(reserve_for(gas_after, gas.keccak_word), gas.keccak_word),
        after_loop=after,
        gas_before_loop=static_gas(before) + gas.memory_word,
        gas_after_loop=gas_after,
        next_slot_value=lambda value, iterations: (value + hashed_word(iterations)) % WORD,
    )


def keccak_chain(params: WorkloadParams) -> Workload:
    """The keccak chain workload at `params`' fork, gas value and fill level."""
    return chain_workload(params, "keccak_chain", keccak_chain_contract(params))


FAMILY = Family("keccak_chain", keccak_chain)
