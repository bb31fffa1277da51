"""
An access list's busiest accounts left as views of its RLP: they must read as the decoded ones everywhere.

A billion-gas block's list holds one account with hundreds of thousands of
storage reads or changes, which `bal.iter_block_access_list` keeps as views
(`EncodedSlots`, `EncodedSlotChanges`) decoded a slot at a time. Each test
decodes the same canonical list both ways (`lazy_bytes=-1` makes every
storage field a view) and checks that what each consumer sees is the same:
the values, the exact access-list check's verdict, the shared chain's
question and the fixture's JSON.
"""

from __future__ import annotations

from unittest.mock import patch

import pytest
import rlp
from hypothesis import given, settings
from hypothesis import strategies as st

from balgen.chain.applied_chain import _changed_at
from balgen.chain.bal import EncodedSlotChanges, EncodedSlots, iter_block_access_list
from balgen.fixtures import render
from balgen.plumbing.spooled_json import RenderedValues
from balgen.plumbing.streamed_json import StreamedArray, indented_chunks
from balgen.fill.predicted_bal import PredictedAccount, first_difference_in_order, merged_in_order, OutOfOrder

EAGER = 1 << 30
LAZY = -1
words = st.integers(0, 2**256 - 1)
changes = st.lists(st.tuples(st.integers(0, 99), words), min_size=1, max_size=3).map(sorted)
canonical_accounts = st.tuples(
    st.binary(min_size=20, max_size=20),
    st.dictionaries(words, changes, max_size=6).map(lambda storage: sorted(storage.items())),
    st.sets(words, max_size=6).map(sorted),
    st.dictionaries(st.integers(0, 99), st.integers(0, 2**96), max_size=2).map(lambda by_index: sorted(by_index.items())),
    st.dictionaries(st.integers(0, 99), st.integers(0, 2**64 - 1), max_size=2).map(lambda by_index: sorted(by_index.items())),
    st.lists(st.tuples(st.integers(0, 99), st.binary(max_size=80)), max_size=1),
)
canonical_lists = st.dictionaries(st.binary(min_size=20, max_size=20), canonical_accounts, max_size=4).map(
    lambda accounts: rlp.encode([[address, *list(account)[1:]] for address, account in sorted(accounts.items())])
)


@settings(max_examples=80, deadline=None)
@given(canonical_lists)
def test_an_account_left_as_views_reads_as_the_decoded_one(encoded: bytes) -> None:
    """Values, lengths, order, lookups and equality (both ways) of the views are the decoded account's."""
    for lazy, eager in zip(iter_block_access_list(encoded, LAZY), iter_block_access_list(encoded, EAGER), strict=True):
        assert isinstance(lazy.storage_reads, EncodedSlots) and isinstance(lazy.storage_changes, EncodedSlotChanges)
        assert isinstance(eager.storage_reads, tuple) and isinstance(eager.storage_changes, dict)
        assert list(lazy.storage_reads) == list(eager.storage_reads) and len(lazy.storage_reads) == len(eager.storage_reads)
        assert list(lazy.storage_changes.items()) == list(eager.storage_changes.items())
        assert list(lazy.storage_changes.values()) == list(eager.storage_changes.values())
        assert list(lazy.storage_changes) == list(eager.storage_changes) and len(lazy.storage_changes) == len(eager.storage_changes)
        for slot, slot_changes in eager.storage_changes.items():
            assert lazy.storage_changes[slot] == slot_changes
        for index, slot in enumerate(eager.storage_reads):
            assert lazy.storage_reads[index] == slot and lazy.storage_reads[-1 - index] == eager.storage_reads[-1 - index]
        assert lazy == eager and eager == lazy and lazy.changes_state == eager.changes_state
        assert lazy.storage_reads[1:] == list(eager.storage_reads[1:])
        indices = range(1, 50)
        assert _changed_at(lazy, indices) == _changed_at(eager, indices)


@settings(max_examples=40, deadline=None)
@given(canonical_lists, canonical_lists)
def test_views_of_two_lists_are_equal_exactly_when_their_accounts_are(first: bytes, second: bytes) -> None:
    """Views compare by their RLP; that is the decoded accounts' equality (RLP is canonical)."""
    for mine, theirs, mine_decoded, theirs_decoded in zip(
        iter_block_access_list(first, LAZY), iter_block_access_list(second, LAZY),
        iter_block_access_list(first, EAGER), iter_block_access_list(second, EAGER),
    ):
        assert (mine == theirs) == (mine_decoded == theirs_decoded)


def predicted_from(account: tuple) -> PredictedAccount:
    """The prediction that matches a decoded account exactly."""
    _, storage, reads, balances, nonces, codes = account
    return PredictedAccount(
        storage_changes={slot: list(slot_changes) for slot, slot_changes in storage},
        storage_reads=set(reads),
        balance_changes={index for index, _ in balances},
        nonce_changes=list(nonces),
        code_changes=list(codes),
    )


@settings(max_examples=80, deadline=None)
@given(canonical_accounts, st.sets(words, max_size=3), st.sets(words, max_size=3), st.sets(words, max_size=2))
def test_the_access_list_check_finds_the_same_difference_in_views_as_in_decoded_accounts(
    account: tuple, designed_reads: set[int], designed_writes: set[int], unwritten: set[int]
) -> None:
    """The exact check walks a view's slots in order and names the first difference the decoded account gives."""
    address = account[0]
    encoded = rlp.encode([list(account)])
    predicted = predicted_from(account)
    assert first_difference_in_order([(address, predicted)], iter_block_access_list(encoded, LAZY)) is None
    predicted.storage_reads = (predicted.storage_reads ^ designed_reads) - predicted.storage_changes.keys()
    for slot in designed_writes:
        predicted.write(1, slot, None)
    for slot in unwritten:
        predicted.storage_changes.pop(slot, None)
    assert first_difference_in_order([(address, predicted)], iter_block_access_list(encoded, LAZY)) == (
        first_difference_in_order([(address, predicted)], iter_block_access_list(encoded, EAGER))
    )


def test_reads_out_of_slot_order_are_named() -> None:
    """EIP-7928 orders an account's reads: a list that does not is reported, not compared as a set."""
    address = bytes(20)
    encoded = rlp.encode([[address, [], [5, 3], [], [], []]])
    predicted = [(address, PredictedAccount(storage_reads={3, 5}))]
    assert first_difference_in_order(predicted, iter_block_access_list(encoded, LAZY)) == (
        f"0x{address.hex()}: slot 0x3 is out of slot order in the access list"
    )


def test_two_ordered_lists_are_merged_by_key() -> None:
    """Each key once, with the entry of each side that has it; an observed key going back raises."""
    merged = list(merged_in_order([(1, "a"), (3, "c")], [(2, "B"), (3, "C")]))
    assert merged == [(1, (1, "a"), None), (2, None, (2, "B")), (3, (3, "c"), (3, "C"))]
    walk = merged_in_order([(1, "a")], [(1, "A"), (1, "A")])
    assert next(walk) == (1, (1, "a"), (1, "A"))
    try:
        next(walk)
    except OutOfOrder as disorder:
        assert disorder.key == 1
    else:
        raise AssertionError("a repeated key was merged")


@settings(max_examples=40, deadline=None)
@given(encoded=canonical_lists)
def test_an_account_of_views_is_written_as_the_decoded_one(encoded: bytes, tmp_path_factory: pytest.TempPathFactory) -> None:
    """
    A fixture's `blockAccessList` is the same text, indented and compact,
    from views streamed change by change and read by read (as a busy
    account is) as from decoded accounts held whole.
    """
    texts = []
    for lazy_bytes, held_changes in ((LAZY, -1), (EAGER, render.HELD_CHANGES)):
        value = StreamedArray(
            lambda lazy_bytes=lazy_bytes: (
                render.fixture_account_changes(account) for account in iter_block_access_list(encoded, lazy_bytes)
            ),
            floatless=True,
        )
        document = {"blockAccessList": value}
        with patch.object(render, "HELD_CHANGES", held_changes):
            with RenderedValues(tmp_path_factory.mktemp("rendered")) as values:
                values.render_all(document)
                texts.append(("".join(values.indented_chunks(document)), values.compact_sha256(document)))
            assert texts[-1][0] == "".join(indented_chunks(document))
    assert texts[0] == texts[1]
