"""
The fork table: every fork fact that is not data of an upgrade is derived
from the upgrades a fork runs, so the limits, system contracts and gas
tables here follow from the EIPs in force, as the EIPs define them.
"""

from __future__ import annotations

import pytest

from balgen.plumbing.errors import BadInput
from balgen.ethereum.forks import AMSTERDAM, FORKS, OSAKA, PRAGUE, UPGRADES, fork_by_name
from balgen.ethereum.gas_costs import AMSTERDAM_GAS, AMSTERDAM_V1_17_5_GAS, LEGACY_GAS


def test_a_fork_runs_every_upgrade_up_to_its_own() -> None:
    assert [fork.name for fork in FORKS.values()] == ["Prague", "Osaka", "Amsterdam"]
    assert [upgrade.name for upgrade in AMSTERDAM.upgrades] == [upgrade.name for upgrade in UPGRADES]
    assert OSAKA.includes("Cancun") and not OSAKA.includes("BPO1") and not PRAGUE.includes("Osaka")
    with pytest.raises(ValueError, match="'Paris' is no upgrade"):
        PRAGUE.includes("Paris")


def test_limits_come_with_the_eips_that_set_them() -> None:
    """EIP-7825's gas cap and EIP-7934's block size from Osaka on, EIP-7954's code size and EIP-7928's item cost on Amsterdam."""
    assert (PRAGUE.tx_gas_limit_cap, PRAGUE.max_block_rlp_size, PRAGUE.bal_item_cost) == (None, None, None)
    assert (OSAKA.tx_gas_limit_cap, OSAKA.max_block_rlp_size, OSAKA.bal_item_cost) == (2**24, 8_388_608, None)
    assert [fork.max_code_size for fork in FORKS.values()] == [24_576, 24_576, 65_536]
    assert AMSTERDAM.max_bal_items(60_000_000) == 30_000


def test_system_contracts_accumulate_over_the_upgrades() -> None:
    assert PRAGUE.system_contracts == OSAKA.system_contracts == ("eip4788", "eip2935", "eip7002", "eip7251")
    assert AMSTERDAM.system_contracts[4:] == ("eip8282_deposit", "eip8282_exit", "eip7997")
    assert AMSTERDAM.predeploys_deterministic_deployer and not OSAKA.predeploys_deterministic_deployer


def test_the_default_gas_table_comes_first() -> None:
    assert AMSTERDAM.known_gas == (AMSTERDAM_GAS, AMSTERDAM_V1_17_5_GAS)
    assert OSAKA.known_gas == (LEGACY_GAS,)


def test_an_unknown_fork_name_is_bad_input_naming_where() -> None:
    assert fork_by_name("osaka") is OSAKA
    with pytest.raises(BadInput, match=r"^--fork: unknown fork 'Cancun' \(known: Prague, Osaka, Amsterdam\)$"):
        fork_by_name("Cancun")
