"""
Filling at hundreds of millions of gas: large transaction lists and the protocol limits that bind there.

A 300M `max` block has over 10,000 transactions; the pinned t8n silently ran
none of them when given as one RLP list over 1 MiB, so a large list is run
through the real t8n here. The limits a client enforces (EIP-7934's block
size, EIP-7928's access-list item bound) are checked by name on synthetic
blocks. The fills at 300M and 1000M themselves are heavy (minutes per
fixture): they run only with `--scale` (see `test_every_family_fills_at_scale`).
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path
from random import Random
from unittest import mock

import pytest
import rlp
from hypothesis import given, settings
from hypothesis import strategies as st

from balgen.chain.alloc import (
    genesis_entries, iter_alloc, iter_alloc_among, read_alloc, state_diff, write_alloc_entries, write_sorted_alloc,
)
from balgen.chain.bal import AccountChanges, access_list_changers, iter_block_access_list
from balgen.chain.buckets import by_first_byte
from balgen.chain.builder import BuiltBlock, block_env, genesis_header, genesis_state_root
from balgen.chain.signed_txs import SignedTxFile, raw_envelopes
from balgen.chain import alloc as alloc_module
from balgen.chain import t8n as t8n_module
from balgen.chain.t8n import T8nResult, TransitionTool
from balgen.chain.tx_json import write_transactions_input
from balgen.fill.checks import check_access_list_items, check_block_size
from balgen.plumbing.errors import FillCheckFailed, TransitionToolError
from balgen.fill.predicted_bal import PredictedAccount, access_events, first_difference_in_order, predicted_in_order
from balgen.ethereum.forks import AMSTERDAM, MAX_RLP_BLOCK_SIZE, OSAKA
from balgen.generators import mixed_dep
from balgen.model.keys import sender
from balgen.plumbing.toolchain import pinned_evm
from balgen.model.transactions import SignedTx, sign
from balgen.model.workload import ETHER, Account, FillLevel, Phase, Placement, TxSpec, WorkloadParams

from fill_runs import run_fill

ONE_MIB = 1 << 20


@pytest.mark.integration
@pytest.mark.parametrize("count, given_as", [(10_000, "txs.json"), (4_000, "txs.rlp")])
def test_a_transaction_list_over_one_mib_runs_every_transaction(tmp_path: Path, count: int, given_as: str) -> None:
    """Over t8n's 1 MiB RLP limit the list is given as JSON; well under it, as RLP: either way every transaction runs."""
    fork = OSAKA
    payer, payee = sender("scale", "payer"), sender("scale", "payee")
    txs = [
        sign(TxSpec(sender=payer, nonce=nonce, to=payee.address, data=b"", gas_limit=21_000), 1)
        for nonce in range(count)
    ]
    assert (sum(len(tx.raw) for tx in txs) > ONE_MIB) == (given_as == "txs.json")
    alloc = tmp_path / "genesis.json"
    write_alloc_entries(alloc, genesis_entries(fork, [(payer.address, Account(balance=ETHER))]))
    t8n = TransitionTool(pinned_evm())
    genesis = genesis_header(fork, genesis_state_root(t8n, alloc, tmp_path / "root"))
    user_before = t8n.user_seconds
    result = t8n.transition(
        fork, alloc, block_env(fork, genesis, [genesis]), (tx.raw for tx in txs), tmp_path / "block", label="large"
    )
    assert t8n.user_seconds > user_before and t8n.system_seconds > 0, "the speed benchmark's CPU split counts each run"
    assert [path.name for path in (tmp_path / "block").glob("txs.*")] == [given_as]
    assert not result.rejected
    assert [receipt["transactionHash"] for receipt in result.receipts] == ["0x" + tx.hash.hex() for tx in txs]
    assert result.gas_used == 21_000 * len(txs)


def test_a_small_list_given_as_rlp_holds_typed_transactions_as_strings_and_legacy_ones_as_lists(tmp_path: Path) -> None:
    """As a block body holds them, which is how t8n decodes the list (any fixture's transactions may be retraced)."""
    legacy = rlp.encode([0, 1, 21_000, b"\x11" * 20, 0, b"", 27, 1, 2])
    typed = sign(TxSpec(sender=sender("scale", "payer"), nonce=0, to=b"\x22" * 20, data=b"", gas_limit=21_000), 1).raw
    path = write_transactions_input(tmp_path, [legacy, typed])
    assert path.name == "txs.rlp"
    assert bytes.fromhex(json.loads(path.read_text())[2:]) == rlp.encode([rlp.decode(legacy), typed])


def test_traces_are_matched_to_receipts_and_a_missing_one_is_named(tmp_path: Path) -> None:
    receipts = t8n_module.Receipts()
    hashes = ["0x" + f"{index:02x}" * 32 for index in range(3)]
    for tx_hash in hashes:
        receipts.append({"status": "0x1", "gasUsed": "0x5208", "transactionHash": tx_hash})
    for index in (0, 2):
        (tmp_path / f"trace-{index}-{hashes[index]}.json").write_text(json.dumps({"index": index}))
    with pytest.raises(TransitionToolError, match=f"block 7: t8n wrote no trace for transaction {hashes[1]}$"):
        t8n_module.read_traces(tmp_path, receipts, 0, "block 7")
    (tmp_path / f"trace-1-{hashes[1]}.json").write_text(json.dumps({"index": 1}))
    assert list(t8n_module.read_traces(tmp_path, receipts, 0, "block 7")) == [{"index": i} for i in range(3)]


def test_a_large_access_list_is_kept_in_a_file_and_read_back_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    accounts = [[bytes([index]) * 20, [], [], [], [[1, 1]], [[1, bytes(64)]]] for index in range(1, 40)]
    encoded = rlp.encode(accounts)
    (tmp_path / "result.json").write_text(json.dumps({"stateRoot": "0x" + "00" * 32, "receipts": [], "blockAccessList": "0x" + encoded.hex()}))
    monkeypatch.setattr(t8n_module, "HELD_ACCESS_LIST_BYTES", len(encoded) - 1)
    result = T8nResult(result=t8n_module.read_result(tmp_path / "result.json"), alloc_path=tmp_path / "alloc.json")
    assert result.access_list_source == tmp_path / t8n_module.ACCESS_LIST_FILE
    assert result.block_access_list == encoded
    block = dataclasses.replace(synthetic_block(), access_list_source=result.access_list_source, t8n=result)
    assert block.block_access_list == encoded
    assert [entry.address for entry in block.access_list_accounts()] == [account[0] for account in accounts]
    monkeypatch.setattr(t8n_module, "HELD_ACCESS_LIST_BYTES", len(encoded))
    assert t8n_module.read_result(tmp_path / "result.json")["blockAccessList"] == encoded


def synthetic_block(txs: tuple[SignedTx, ...] = (), access_list: list | None = None) -> BuiltBlock:
    """A block with the given transactions and access list RLP, for the limit checks (no t8n)."""
    header = genesis_header(AMSTERDAM, bytes(32)).model_copy(update={"number": 1})
    return BuiltBlock(
        header=header,
        phase=Phase.TESTING,
        txs=txs,
        requests=(),
        access_list_source=rlp.encode(access_list or []),
        t8n=T8nResult(result={}, alloc_path=Path("alloc.json")),
    )


def test_a_block_over_the_eip7934_size_is_refused_naming_the_limit() -> None:
    spec = TxSpec(sender=sender("scale", "big"), nonce=0, to=None, data=b"", gas_limit=1)
    within = SignedTx(spec=spec, chain_id=1, v=0, r=0, s=0, raw=b"\x02" + bytes(MAX_RLP_BLOCK_SIZE - 4096))
    check_block_size(AMSTERDAM, synthetic_block((within,)))
    over = SignedTx(spec=spec, chain_id=1, v=0, r=0, s=0, raw=b"\x02" + bytes(MAX_RLP_BLOCK_SIZE))
    with pytest.raises(FillCheckFailed, match=r"block 1: RLP size \d+ bytes exceeds EIP-7934's maximum block size of 8388608"):
        check_block_size(AMSTERDAM, synthetic_block((over,)))


def test_an_access_list_over_the_eip7928_item_bound_is_refused_naming_it() -> None:
    # Two accounts with two storage keys each (one written, one read): 6 items.
    accounts = [[bytes([n]) * 20, [[1, [[1, 5]]]], [2], [], [], []] for n in (1, 2)]
    block = synthetic_block(access_list=accounts)
    check_access_list_items(AMSTERDAM, block, 6 * 2000)
    with pytest.raises(FillCheckFailed, match="6 items, over EIP-7928's bound of 5 for a block of 11999 gas"):
        check_access_list_items(AMSTERDAM, block, 6 * 2000 - 1)
    check_access_list_items(OSAKA, block, 1)  # no access lists before Amsterdam, so no bound


def signed_with_envelope(raw: bytes) -> SignedTx:
    spec = TxSpec(sender=sender("scale", "big"), nonce=0, to=None, data=b"", gas_limit=1)
    return SignedTx(spec=spec, chain_id=1, v=0, r=0, s=0, raw=raw)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=70), max_size=40), st.sampled_from([0, 60_000]))
def test_a_block_streamed_in_pieces_is_its_rlp(envelopes: list[bytes], padding: int) -> None:
    """The pieces a fixture's `rlp` is written from, and the size EIP-7934 is checked on, are the block's RLP
    (short and long length prefixes, one-byte envelopes included)."""
    block = synthetic_block(tuple(signed_with_envelope(raw) for raw in [*envelopes, bytes(padding)]))
    whole = rlp.encode([block.header.rlp_fields(), [tx.raw for tx in block.txs], [], []])
    assert b"".join(block.rlp_pieces()) == whole
    assert block.rlp_size == len(whole)


words = st.integers(0, 2**256 - 1)
slot_changes = st.lists(st.tuples(words, st.lists(st.tuples(st.integers(0, 99), words), max_size=2)), max_size=3)
account_entries = st.tuples(
    st.binary(min_size=20, max_size=20), slot_changes, st.lists(words, max_size=3),
    st.lists(st.tuples(st.integers(0, 99), st.integers(0, 2**96)), max_size=2),
    st.lists(st.tuples(st.integers(0, 99), st.integers(0, 2**64 - 1)), max_size=2),
    st.lists(st.tuples(st.integers(0, 99), st.binary(max_size=600)), max_size=1),
)
"""Access-list entries; those with long code pass `bal.RUSTY_ENTRY_BYTES` and take pyrlp's decoder, long ones
without code (several slots) rusty-rlp's."""


@settings(max_examples=60, deadline=None)
@given(st.lists(account_entries, max_size=6))
def test_an_access_list_decoded_account_by_account_is_the_encoded_one(accounts: list[tuple]) -> None:
    encoded = rlp.encode([list(account) for account in accounts])
    expected = [
        AccountChanges(
            address=address,
            storage_changes={slot: list(changes) for slot, changes in storage},
            storage_reads=tuple(reads),
            balance_changes=tuple(balances),
            nonce_changes=tuple(nonces),
            code_changes=tuple(codes),
        )
        for address, storage, reads, balances, nonces, codes in accounts
    ]
    assert list(iter_block_access_list(encoded)) == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(account_entries, max_size=6))
def test_which_accounts_change_state_is_read_from_the_rlp_as_decoding_tells(accounts: list[tuple]) -> None:
    """An account read-only in the list (reads, or nothing) is told apart from one with any change, undecoded."""
    encoded = rlp.encode([list(account) for account in accounts])
    assert list(access_list_changers(encoded)) == [
        (entry.address, entry.changes_state) for entry in iter_block_access_list(encoded)
    ]


def test_signed_transactions_kept_in_a_file_are_the_ones_signed(tmp_path: Path) -> None:
    """A block's signed transactions, written to its folder as they are signed, read back as the same transactions."""
    payee = sender("scale", "payee").address
    specs = [
        TxSpec(sender=sender("scale", "file", index), nonce=index, to=payee if index % 2 else None, data=bytes(index * 40),
               gas_limit=100_000 + index)
        for index in range(6)
    ]
    kept = SignedTxFile.signing(specs, 1, tmp_path / "signed.bin")
    signed = [sign(spec, 1) for spec in specs]
    assert list(kept) == signed and kept[4] == signed[4] and len(kept) == len(signed)
    assert list(raw_envelopes(kept)) == [tx.raw for tx in signed]


def changes(address: bytes, reads: tuple[int, ...] = ()) -> AccountChanges:
    return AccountChanges(address, {}, reads, (), (), ())


def test_access_lists_walked_in_address_order_name_their_first_difference() -> None:
    """The exact access-list check walks the prediction and t8n's list side by side, in address order."""
    a, b, c = (bytes([byte]) * 20 for byte in (1, 2, 3))
    predicted = [(a, PredictedAccount()), (c, PredictedAccount(storage_reads={7}))]
    assert first_difference_in_order(predicted, [changes(a), changes(c, (7,))]) is None
    assert first_difference_in_order(predicted, [changes(a), changes(b), changes(c, (7,))]) == (
        f"0x{b.hex()} is in the access list but not in the design"
    )
    assert first_difference_in_order(predicted, [changes(a)]) == f"0x{c.hex()} is missing from the access list"
    assert first_difference_in_order(predicted, [changes(a), changes(c)]) == f"0x{c.hex()}: missing read of slot 0x7"
    assert first_difference_in_order(predicted, [changes(c, (7,)), changes(a)]) == (
        f"0x{a.hex()} is missing from the access list"
    )
    assert first_difference_in_order(predicted[:1], [changes(a), changes(a)]) == (
        f"0x{a.hex()} is out of address order in the access list"
    )


t8n_accounts = st.dictionaries(
    st.binary(min_size=20, max_size=20).map(lambda address: "0x" + address.hex()),
    st.fixed_dictionaries(
        {"nonce": st.integers(0, 9).map(hex), "balance": st.integers(0, 2**70).map(hex)},
        optional={"storage": st.dictionaries(st.integers(0, 5).map(hex), st.integers(0, 3).map(hex), max_size=3)},
    ),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(accounts=t8n_accounts, random=st.randoms(use_true_random=False), only_some=st.booleans())
def test_a_post_state_sorted_in_buckets_is_the_one_read_whole(
    accounts: dict[str, dict], random: Random, only_some: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A fixture's post-state, sorted a 256th at a time from t8n's unordered alloc, is the whole alloc sorted."""
    folder = tmp_path_factory.mktemp("sorted")
    entries = list(accounts.items())
    random.shuffle(entries)
    write_alloc_entries(folder / "alloc.json", entries)
    only = set(sorted(accounts)[::2]) if only_some else None
    write_sorted_alloc(folder / "alloc.json", folder / "sorted.json", only)
    assert dict(iter_alloc(folder / "sorted.json")) == read_alloc(folder / "alloc.json", only)
    assert list(iter_alloc(folder / "sorted.json")) == sorted(iter_alloc(folder / "sorted.json"))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 255), st.integers()), max_size=40), st.integers(0, 45))
def test_buckets_spilled_to_files_are_the_buckets_held(items: list[tuple[int, int]], held_items: int) -> None:
    """Whether `by_first_byte` holds its items or spills them into files, it gives the same buckets in byte order."""
    with tempfile.TemporaryDirectory() as folder:
        buckets = [list(bucket) for bucket in by_first_byte(items, lambda item: item[0], Path(folder), held_items)]
    expected = [[item for item in items if item[0] == byte] for byte in sorted({item[0] for item in items})]
    assert buckets == expected


def test_a_prediction_gathered_in_spilled_buckets_is_the_one_gathered_whole(tmp_path: Path) -> None:
    """The predicted access list is the same, in address order, whether its facts are held or spilled by first byte."""
    workload = mixed_dep.FAMILY.generator(WorkloadParams(AMSTERDAM, 1_000_000, FillLevel.MAX, Placement.GENESIS, "group2"))
    header = genesis_header(AMSTERDAM, bytes(32))
    facts = sum(1 for _ in access_events(AMSTERDAM, workload.benchmark_block, header))
    whole = list(predicted_in_order(AMSTERDAM, workload.benchmark_block, header, tmp_path / "held", held_items=facts))
    spilled = list(predicted_in_order(AMSTERDAM, workload.benchmark_block, header, tmp_path / "spilled", held_items=facts // 4))
    assert len(list((tmp_path / "spilled").iterdir())) > 1 and not (tmp_path / "held").exists()
    assert [address for address, _ in whole] == sorted(address for address, _ in whole)
    assert spilled == whole


small_allocs = st.dictionaries(st.sampled_from([f"0x{index:040x}" for index in range(8)]), st.sampled_from([{"nonce": "0x00"}, {"nonce": "0x01"}]))


@settings(max_examples=100, deadline=None)
@given(small_allocs, small_allocs, st.none() | st.sets(st.sampled_from([f"0x{index:040x}" for index in range(8)])))
def test_a_streamed_state_diff_is_every_candidate_that_changed(pre: dict, post: dict, candidates: set | None) -> None:
    """Walking both sorted allocs side by side gives each changed candidate's new account, or null if deleted."""
    addresses = pre.keys() | post.keys() if candidates is None else candidates
    expected = {address: post.get(address) for address in sorted(addresses) if pre.get(address) != post.get(address)}
    assert dict(state_diff(sorted(pre.items()), sorted(post.items()), candidates)) == expected


@pytest.mark.parametrize("indexed_bytes", [alloc_module.INDEXED_ALLOC_BYTES, 0], ids=["held-by-address", "gone-through"])
@settings(max_examples=50, deadline=None)
@given(alloc=small_allocs, addresses=st.sets(st.sampled_from([f"0x{index:040x}" for index in range(8)])))
def test_the_accounts_among_addresses_are_the_alloc_s_own(indexed_bytes: int, alloc: dict, addresses: set) -> None:
    """Reading only some accounts of a balgen-written alloc, its lines unparsed, gives them as the JSON reader does,
    whether the file is small enough to be held by address or is gone through."""
    with tempfile.TemporaryDirectory() as folder, mock.patch.object(alloc_module, "INDEXED_ALLOC_BYTES", indexed_bytes):
        path = Path(folder) / "alloc.json"
        write_alloc_entries(path, sorted(alloc.items()))
        assert list(iter_alloc_among(path, addresses)) == [(a, account) for a, account in iter_alloc(path) if a in addresses]


def test_an_alloc_held_by_address_is_read_again_once_written_again(tmp_path: Path) -> None:
    path = tmp_path / "alloc.json"
    address = f"0x{1:040x}"
    write_alloc_entries(path, [(address, {"balance": "0x01"})])
    assert list(iter_alloc_among(path, {address})) == [(address, {"balance": "0x01"})]
    write_alloc_entries(path, [(address, {"balance": "0x0200"})])
    assert list(iter_alloc_among(path, {address})) == [(address, {"balance": "0x0200"})]


@pytest.mark.parametrize("indexed_bytes", [alloc_module.INDEXED_ALLOC_BYTES, 0], ids=["held-by-address", "gone-through"])
def test_an_alloc_not_one_account_per_line_is_refused_naming_the_line(tmp_path: Path, indexed_bytes: int) -> None:
    path = tmp_path / "t8n-alloc.json"
    path.write_text('{\n  "0x%s": {\n    "balance": "0x1"\n  }\n}\n' % ("00" * 20))
    with mock.patch.object(alloc_module, "INDEXED_ALLOC_BYTES", indexed_bytes), pytest.raises(
        ValueError, match=r"t8n-alloc\.json:2: not one account per line"
    ):
        list(iter_alloc_among(path, {f"0x{0:040x}"}))


SCALE_GAS_VALUES = "300,1000"
SCALE_FILL_TIMEOUT = 4 * 3600
SCALE_FAMILIES = (
    "mixed_dep-{fill}-group2", "interact-{fill}-single_contract", "state_root-{fill}-single_contract",
    "prefetch-{fill}-", "serial_chain-{fill}-", "keccak_chain-{fill}-", "extcodesize-{fill}-0.5KB",
    "extcodehash-{fill}-0.5KB", "extcodecopy-{fill}-0.5KB",
)


@pytest.mark.integration
@pytest.mark.scale
def test_every_family_fills_at_scale_and_geth_imports_it(tmp_path: Path) -> None:
    """Every family at `greedy` and `max`, 300M and 1000M: filled (every check passed) and VALID in geth."""
    from balgen.commands.replay import run_replay

    names = [pattern.format(fill=fill) for pattern in SCALE_FAMILIES for fill in ("greedy", "max")]
    output = tmp_path / "fixtures"
    completed = run_fill(
        "--output", output, "--gas-benchmark-values", SCALE_GAS_VALUES, "-k", " or ".join(names), "-n", "2",
        timeout=SCALE_FILL_TIMEOUT,
    )
    assert completed.returncode == 0, completed.stdout[-3000:]
    filled = sorted(path.stem for path in (output / "blockchain_tests_engine").glob("for_*/*/*.json"))
    assert len(filled) == 2 * len(names)
    code = run_replay([str(output), "--format", "engine", "--warmup", "0", "--repeat", "1", "--output", str(tmp_path / "run")])
    assert code == 0


def test_a_result_parsed_whole_is_the_result_parsed_as_a_stream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """t8n's result.json reads the same whether it is small enough to parse whole or streamed."""
    receipts = [
        {"type": "0x2", "status": hex(i % 2), "gasUsed": hex(21000 + i), "logsBloom": "0x" + "00" * 256,
         "transactionHash": "0x" + f"{i:064x}", "logs": [{"address": "0x" + "11" * 20, "topics": []}]}
        for i in range(5)
    ]
    document = {
        "stateRoot": "0x" + "ab" * 32, "receipts": receipts, "rejected": [{"index": 5, "error": "nonce too low"}],
        "requests": ["0x00", "0x01aa"], "blockAccessList": "0xc0", "gasUsed": "0x5208", "currentBaseFee": "0x7",
    }
    path = tmp_path / "result.json"
    path.write_text(json.dumps(document, indent=1))
    whole = t8n_module.read_result(path)
    monkeypatch.setattr(t8n_module, "HELD_RESULT_BYTES", 0)
    streamed = t8n_module.read_result(path)
    for result in (whole, streamed):
        result["receipts"] = list(result["receipts"])
    assert whole == streamed
    assert [receipt["status"] for receipt in whole["receipts"]] == ["0x0", "0x1", "0x0", "0x1", "0x0"]
    assert whole["blockAccessList"] == bytes.fromhex("c0") and whole["rejected"][0]["error"] == "nonce too low"
