"""
A workload's per-slot state made again from its rule on every pass, not held.

`prefetch`'s list is hundreds of thousands of slots at a billion gas: its
storage, the slots each setup call writes and the keys each chase reads are
`RegeneratedMapping` and `Regenerated` sequences over the keccak chain. These
tests hold them against the list spelled out as dicts and sets, and the
mapping against the dict it stands for.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from balgen.ethereum.forks import AMSTERDAM
from balgen.generators.prefetch import POINTER_SLOT, list_head, prefetch
from balgen.ethereum.keccak import keccak
from balgen.model.workload import FillLevel, Placement, Regenerated, RegeneratedMapping, WorkloadParams


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.integers(), st.integers(), max_size=8), st.integers())
def test_a_regenerated_mapping_reads_as_its_dict(items: dict[int, int], absent: int) -> None:
    """Walking, lookups, length and equality (both ways) are those of the dict it makes."""
    mapping = RegeneratedMapping(len(items), lambda: iter(items.items()))
    assert list(mapping.items()) == list(items.items()) and list(mapping.values()) == list(items.values())
    assert list(mapping) == list(items) and len(mapping) == len(items)
    assert mapping == items and items == mapping and dict(mapping) == items
    for key, value in items.items():
        assert mapping[key] == value and key in mapping
    if absent not in items:
        assert absent not in mapping and mapping.get(absent) is None
        assert mapping != {**items, absent: 0}
    with pytest.raises(ValueError, match="made"):
        list(RegeneratedMapping(len(items) + 1, lambda: iter(items.items())))


def spelled_out(name: str, steps: int) -> list[int]:
    """k_0 .. k_steps of a prefetch list, as a list: k_0 = keccak(seed), k_(i+1) = keccak(k_i)."""
    key = keccak(f"balgen/prefetch/{name}".encode())
    keys = [int.from_bytes(key, "big")]
    for _ in range(steps):
        key = keccak(key)
        keys.append(int.from_bytes(key, "big"))
    return keys


@pytest.mark.parametrize("fill", [FillLevel.GREEDY, FillLevel.MAX])
def test_the_prefetch_list_made_on_each_pass_is_the_list_spelled_out(fill: FillLevel) -> None:
    """Setup calls write every link once, chases read every key once in list order and leave the pointer
    after it, and the genesis placement holds the same storage: as the held model had it."""
    params = WorkloadParams(AMSTERDAM, 30_000_000, fill)
    workload = prefetch(params)
    keys = spelled_out(params.fixture_name("prefetch"), workload.parameters["cold_reads"])
    assert list_head(params.fixture_name("prefetch")) == keys[0]
    links = {keys[i]: keys[i + 1] for i in range(len(keys) - 1)}
    (setup,) = workload.setup_blocks
    (deployment, *calls) = setup.accesses
    target = next(iter(deployment.created))
    assert dict(deployment.writes) == {(target, POINTER_SLOT): keys[0]}
    assert isinstance(setup.accesses, Regenerated) and list(setup.accesses) == list(setup.accesses)
    written = [key for call in calls for key in call.writes]
    assert written == [(target, key) for key in keys[:-1]]
    assert {slot: value for call in calls for (_, slot), value in call.writes.items()} == links
    chases = list(workload.benchmark_block.accesses)
    position = {key: index for index, key in enumerate(keys)}
    read = [slot for chase in chases for slot in sorted((slot for _, slot in chase.reads), key=position.__getitem__)]
    assert read == keys[:-1] and {address for chase in chases for address, _ in chase.reads} == {target}
    done = 0
    for chase in chases:
        done += len(chase.reads)
        assert chase.writes == {(target, POINTER_SLOT): keys[done]}
    genesis = prefetch(WorkloadParams(AMSTERDAM, 30_000_000, fill, Placement.GENESIS))
    assert genesis.pre[target].storage == {**links, POINTER_SLOT: keys[0]}
