"""
`serial_chain`: every transaction reads and writes one slot first, then burns its gas.

The shared slot is incremented by the first opcodes of every transaction, so
each transaction depends on the one before it from its first instruction: a
fully serial block, the baseline a parallel executor must not lose against.
The rest of the gas goes to a keccak loop seeded with the counter, so the
work after the conflict depends on it too.
"""

from __future__ import annotations

from ..ethereum.bytecode import ADD, DUP1, MSTORE, PUSH0, SLOAD, SSTORE, STOP, push, static_gas
from ..model.workload import Workload, WorkloadParams
from ..model.family import Family
from .chains import ChainContract, chain_workload
from .keccak_loop import KeccakLoop, reserve_for


def serial_chain_contract(params: WorkloadParams) -> ChainContract:
    """slot0 += 1; mem[0] = slot0; keccak loop until the gas runs out."""
    gas = params.fork.gas
    before = [PUSH0, SLOAD, push(1), ADD, DUP1, PUSH0, SSTORE, PUSH0, MSTORE]
    after = [STOP]
    return ChainContract(
        before_loop=before,
        loop=KeccakLoop(reserve_for(0, gas.keccak_word), gas.keccak_word),
        after_loop=after,
        gas_before_loop=static_gas(before) + gas.cold_sload + gas.sstore_update_warm + gas.memory_word,
        gas_after_loop=0,
        next_slot_value=lambda value, _iterations: value + 1,
    )


def serial_chain(params: WorkloadParams) -> Workload:
    """The serial chain workload at `params`' fork, gas value and fill level."""
    return chain_workload(params, "serial_chain", serial_chain_contract(params))


FAMILY = Family("serial_chain", serial_chain)
