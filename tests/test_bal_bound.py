"""
`bal_bound`: the benchmark block's access list as close to EIP-7928's item bound as cold reads allow,
every key distinct and full-width, and its size recorded exactly in `_info`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from balgen.chain.bal import iter_block_access_list
from balgen.ethereum.forks import AMSTERDAM
from balgen.generators.bal_bound import FAMILY, VARIANTS
from balgen.model.workload import FillLevel, WorkloadParams

from fill_runs import fill_fixtures

GAS_60M = 60_000_000


def built(variant: str, fill: FillLevel = FillLevel.GREEDY, gas: int = GAS_60M):
    return FAMILY.generator(WorkloadParams(AMSTERDAM, gas, fill, variant=variant))


@pytest.mark.parametrize(("variant", "least_share"), [("slots", 0.9), ("accounts", 0.6)])
def test_greedy_reads_come_near_the_bound_without_passing_it(variant: str, least_share: float) -> None:
    """Cold reads cost more than the 2,000 gas an item is allowed: slots come within a tenth of the bound."""
    parameters = built(variant).parameters
    bound = AMSTERDAM.max_bal_items(GAS_60M)
    assert parameters["item_bound"] == bound == 30_000
    assert least_share * bound <= parameters["workload_items"] <= bound


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_key_is_read_once_and_is_full_width(variant: str) -> None:
    workload = built(variant, FillLevel.HALF, 2_000_000)
    if variant == "slots":
        keys = [slot for access in workload.benchmark_block.accesses for _, slot in access.reads]
        assert all(slot >> 248 == 0xFF for slot in keys), "a slot key with a leading zero byte is shorter in RLP"
    else:
        keys = [address for access in workload.benchmark_block.accesses for address in access.touched]
        assert all(len(address) == 20 and address[0] != 0 for address in keys)
    assert len(keys) == len(set(keys)) == workload.parameters["cold_reads"]


def test_the_family_is_opt_in() -> None:
    assert FAMILY.opt_in and FAMILY.records_access_list


@pytest.mark.integration
def test_info_records_the_access_lists_items_and_bytes(tmp_path: Path) -> None:
    output = fill_fixtures(tmp_path / "out", "--gas-benchmark-values", "1", "-k", "bal_bound-greedy")
    files = sorted((output / "blockchain_tests_engine").rglob("bal_bound-*.json"))
    assert [path.stem for path in files] == ["bal_bound-greedy-accounts-1M", "bal_bound-greedy-slots-1M"]
    for path in files:
        (fixture,) = json.loads(path.read_text()).values()
        recorded = fixture["_info"]["block-access-list"]
        encoded = bytes.fromhex(fixture["engineNewPayloads"][-1]["params"][0]["blockAccessList"][2:])
        items = sum(1 + len(a.storage_changes) + len(a.storage_reads) for a in iter_block_access_list(encoded))
        assert recorded == {"items": items, "item-bound": 500, "bytes": len(encoded)}
        assert items >= fixture["_info"]["workload"]["cold_reads"] + 2
