"""
Large storages read packed (`chain.packed_storage`): everything written from them must be what the dict gave.

An allocation's account with more than `PACKED_SLOTS` slots is read packed,
64 bytes a slot, and written to alloc files and fixtures from there. Each
test packs the same storage and compares with the dict of hex strings it
stands for: its items and lookups, the alloc file's bytes, and a fixture's
text in both layouts (its hash is taken over the keys' text order, the file
lists them by number).
"""

from __future__ import annotations

import json
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from balgen.chain.alloc import (
    account_text, fixture_alloc, iter_alloc, iter_alloc_packing, normalised_account, write_alloc_entries,
    write_sorted_alloc,
)
from balgen.analysis.tracer import PreState
from balgen.chain.packed_storage import PackedStorage
from balgen.plumbing.spooled_json import RenderedValues
from balgen.plumbing.streamed_json import StreamedObject, compact_sorted_chunks, indented_chunks
from balgen.ethereum.hextypes import zero_padded_hex

# Small and full-width numbers: keys of every byte length, whose text order is not their numeric order.
numbers = st.one_of(st.integers(0, 70_000), st.integers(0, 2**256 - 1))
storages = st.dictionaries(numbers, numbers, max_size=40)


def as_hex(storage: dict[int, int]) -> dict[str, str]:
    """The storage as an alloc balgen wrote spells it: sorted by slot, zero-padded hex."""
    return {zero_padded_hex(slot): zero_padded_hex(value) for slot, value in sorted(storage.items())}


@settings(max_examples=100, deadline=None)
@given(storages, st.randoms(use_true_random=False))
def test_a_packed_storage_reads_as_its_dict(storage: dict[int, int], random) -> None:
    """Items in slot order, lookups, length, equality and the keys' text order are the dict's."""
    slots = list(storage.items())
    random.shuffle(slots)
    packed = PackedStorage.of(slots)
    expected = as_hex(storage)
    assert list(packed.items()) == list(expected.items()) and list(packed) == list(expected) and len(packed) == len(expected)
    assert packed == expected and expected == packed and packed == PackedStorage.of(sorted(storage.items()))
    for key, value in expected.items():
        assert packed[key] == value
    with pytest.raises(KeyError):
        packed[zero_padded_hex(max(storage, default=0) + 1)]
    assert [key for key, _ in packed.json_ordered_items()] == sorted(expected)
    assert dict(packed.json_ordered_items()) == expected
    assert packed.without_zeros() == {key: value for key, value in expected.items() if value != "0x00"}
    for slot in (*storage, max(storage, default=0) + 1, 0):
        assert packed.value_of(slot) == storage.get(slot, 0)


def test_a_slot_given_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="given twice"):
        PackedStorage.of([(5, 1), (3, 1), (5, 2)])


accounts = st.fixed_dictionaries(
    {"nonce": numbers.map(hex), "balance": numbers.map(hex), "code": st.binary(max_size=4).map(lambda code: "0x" + code.hex())},
    optional={"storage": storages.map(lambda storage: {hex(slot): hex(value) for slot, value in storage.items()})},
)
allocs = st.dictionaries(st.binary(min_size=20, max_size=20).map(lambda address: "0x" + address.hex()), accounts, max_size=5)


@settings(max_examples=60, deadline=None)
@given(alloc=allocs, packed_from=st.integers(0, 10))
def test_an_alloc_read_packing_is_the_alloc_read_whole(
    alloc: dict[str, dict], packed_from: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """t8n's spelling, storage packed past `packed_from` slots: the same accounts once normalised, and the
    same sorted post-state file as before packing."""
    folder = tmp_path_factory.mktemp("alloc")
    (folder / "t8n.json").write_text(json.dumps(alloc, indent=2))
    whole = list(iter_alloc(folder / "t8n.json"))
    packing = list(iter_alloc_packing(folder / "t8n.json", packed_from))
    # A small file is parsed whole, a large one event by event: the same accounts either way.
    assert list(iter_alloc(folder / "t8n.json", held_bytes=0)) == whole
    assert [(address, normalised_account(account)) for address, account in packing] == [
        (address, normalised_account(account)) for address, account in iter_alloc_packing(folder / "t8n.json", packed_from, held_bytes=0)
    ]
    assert [address for address, _ in packing] == [address for address, _ in whole]
    for (_, mine), (_, theirs) in zip(packing, whole):
        assert normalised_account(mine) == normalised_account(theirs)
        storage = mine.get("storage", {})
        assert isinstance(storage, PackedStorage) == (len(storage) > packed_from)
    # The traced check looks values up in the packed storage where it is.
    held, packed = PreState(dict(whole)), PreState(dict(packing))
    streamed = PreState(iter_alloc_packing(folder / "t8n.json", packed_from))  # as the traced check reads it
    for address, account in whole:
        for item in ("balance", "nonce", *map(lambda key: int(key, 16), account.get("storage", {})), 2**256 - 1):
            key = (bytes.fromhex(address[2:]), item)
            assert packed.value(key) == streamed.value(key) == held.value(key)
    # write_sorted_alloc reads packing; its file must be what the dict-held normalisation wrote.
    write_sorted_alloc(folder / "t8n.json", folder / "sorted.json")
    write_alloc_entries(folder / "expected.json", sorted((a.lower(), normalised_account(e)) for a, e in whole))
    assert (folder / "sorted.json").read_bytes() == (folder / "expected.json").read_bytes()


@settings(max_examples=60, deadline=None)
@given(alloc=allocs)
def test_a_fixture_writes_a_packed_storage_as_the_dict(alloc: dict[str, dict], tmp_path_factory: pytest.TempPathFactory) -> None:
    """An alloc file written from packed storages is byte for byte the one written from dicts, and a fixture's
    `pre` streamed from it is the same text, indented and compact sorted, as from the dicts."""
    folder = tmp_path_factory.mktemp("fixture")
    normalised = sorted((address, normalised_account(entry)) for address, entry in alloc.items())
    packed = [
        (address, {**account, "storage": PackedStorage.of((int(k, 16), int(v, 16)) for k, v in account["storage"].items())})
        for address, account in normalised
    ]
    write_alloc_entries(folder / "dicts.json", normalised)
    write_alloc_entries(folder / "packed.json", packed)
    assert (folder / "packed.json").read_bytes() == (folder / "dicts.json").read_bytes()

    def rendered(value: StreamedObject) -> tuple[str, str, str, str]:
        document = {"pre": value}
        with RenderedValues(folder / str(id(value))) as values:
            values.render_all(document)
            spooled = ("".join(values.indented_chunks(document)), values.compact_sha256(document))
        return (*spooled, "".join(indented_chunks(document)), "".join(compact_sorted_chunks(document)))

    held = rendered(StreamedObject(lambda: iter_alloc(folder / "dicts.json"), floatless=True))
    # Every storage packed, however small.
    streamed = rendered(StreamedObject(lambda: fixture_alloc(iter_alloc_packing(folder / "packed.json", -1)), floatless=True))
    assert streamed == held
    assert held[3] == json.dumps({"pre": dict(normalised)}, sort_keys=True, separators=(",", ":"))



def test_a_deleted_account_beside_a_packed_one_is_written_as_null(tmp_path) -> None:
    """The applied chain's replacements name deleted accounts as null, next to packed storages."""
    packed = {"nonce": "0x01", "balance": "0x00", "code": "0x", "storage": PackedStorage.of([(1, 2), (256, 3)])}
    write_alloc_entries(tmp_path / "alloc.json", [("0x" + "01" * 20, None), ("0x" + "02" * 20, packed)])
    assert json.loads((tmp_path / "alloc.json").read_text()) == {
        "0x" + "01" * 20: None,
        "0x" + "02" * 20: {**packed, "storage": {"0x01": "0x02", "0x0100": "0x03"}},
    }


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**300), 2**300) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(), json_values, max_size=5))
def test_an_unpacked_account_is_written_as_compact_json_writes_it(account: dict) -> None:
    """orjson writes the common account; big integers and text past ASCII or with DEL (a fixture read back) get json's very text."""
    assert "".join(account_text(account)) == json.dumps(account, separators=(",", ":"))
