"""
The known specs' gas tables and the generators' use of them, without a t8n:
the two go-ethereum Amsterdams differ exactly by EIP-8038's 2026-08-04 revision,
and a workload built for either spec is sized by that spec's costs.
"""

from __future__ import annotations

import dataclasses

from balgen.ethereum.forks import AMSTERDAM
from balgen.ethereum.gas_costs import AMSTERDAM_GAS, AMSTERDAM_V1_17_5_GAS
from balgen.generators.serial_chain import serial_chain_contract
from balgen.generators.state_root import write_loop_gas
from balgen.model.workload import FillLevel, WorkloadParams

EARLIER = dataclasses.replace(AMSTERDAM, gas=AMSTERDAM_V1_17_5_GAS)


def test_the_two_amsterdams_differ_by_the_eip_8038_revision_only() -> None:
    differing = {
        name for name, value in AMSTERDAM_GAS.rules().items() if AMSTERDAM_V1_17_5_GAS.rules()[name] != value
    }
    # COLD_STORAGE_ACCESS 3000 -> 2100 (cold SLOAD, cold SSTORE) and CREATE_ACCESS 11000 -> 12000
    # (CREATE2, a creation's base); MaxTxTotalGas arrived with v1.17.6.
    assert differing == {
        "cold_sload", "sstore_update_cold", "sstore_set_cold", "tx_create_base", "create2_base", "tx_gas_limit_total_cap"
    }
    assert AMSTERDAM_V1_17_5_GAS.cold_sload - AMSTERDAM_GAS.cold_sload == 900
    assert AMSTERDAM_GAS.rules_hash() != AMSTERDAM_V1_17_5_GAS.rules_hash()


def test_workloads_are_sized_with_the_rules_they_are_given() -> None:
    def min_gas(fork) -> int:  # type: ignore[no-untyped-def]
        return serial_chain_contract(WorkloadParams(fork, 1_000_000, FillLevel.MAX)).min_execution_gas()

    # serial_chain's one cold SLOAD; state_root's cold SSTORE per unit.
    assert min_gas(EARLIER) - min_gas(AMSTERDAM) == 900
    earlier = write_loop_gas(EARLIER, EARLIER.gas.sstore_update_cold).iteration
    assert earlier - write_loop_gas(AMSTERDAM, AMSTERDAM.gas.sstore_update_cold).iteration == 900


def test_max_tx_gas_limit_follows_the_spec() -> None:
    assert AMSTERDAM.max_tx_gas_limit == 2**32 - 1
    assert EARLIER.max_tx_gas_limit is None
