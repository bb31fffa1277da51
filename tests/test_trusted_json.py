"""
`FixtureModel.trusted_json` writes a block's transactions and access-list
accounts from values already of the fields' types, without validating them:
it must give exactly the JSON the model itself dumps (`json_dict`), keys in
the same order, for every value the model accepts; and the hex spelling they use.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import Field

from balgen.fixtures.models import BalAccountChange, FixtureModel, FixtureTransaction
from balgen.ethereum.hextypes import zero_padded_hex

words = st.integers(0, 2**256 - 1)
indices = st.integers(0, 2**16)
pairs = st.lists(st.tuples(indices, words), max_size=3)
accounts = st.tuples(
    st.binary(min_size=20, max_size=20),
    pairs,
    pairs,
    st.lists(st.tuples(indices, st.binary(max_size=40)), max_size=2),
    st.lists(st.tuples(words, pairs), max_size=3),
    st.lists(words, max_size=3),
)
transactions = st.tuples(
    st.just(2), st.integers(1, 2**64 - 1), st.integers(0, 2**64 - 1), words, words, st.integers(21_000, 2**64 - 1),
    st.binary(min_size=20, max_size=20) | st.just(b""), words, st.binary(max_size=64), st.just(()),
    st.integers(0, 1), words, words, st.binary(min_size=20, max_size=20),
)


def _as_model_arguments(model: type[FixtureModel], values: tuple) -> dict[str, Any]:
    """`values` (fields in order; nested models as tuples) as the model's keyword arguments."""
    arguments = {}
    for (name, info), value in zip(model.model_fields.items(), values):
        nested = getattr(info.annotation, "__args__", (None,))[0]
        if isinstance(nested, type) and issubclass(nested, FixtureModel):
            value = [_as_model_arguments(nested, item) for item in value]
        arguments[name] = value
    return arguments


def _json_by_model(model: type[FixtureModel], values: tuple) -> dict[str, Any]:
    return model(**_as_model_arguments(model, values)).json_dict()


@settings(max_examples=200, deadline=None)
@given(accounts)
def test_an_access_list_account_is_written_as_the_model_dumps_it(values: tuple) -> None:
    written = BalAccountChange.trusted_json(values)
    assert written == _json_by_model(BalAccountChange, values)
    assert list(written) == ["address", "nonceChanges", "balanceChanges", "codeChanges", "storageChanges", "storageReads"]


@settings(max_examples=200, deadline=None)
@given(transactions)
def test_a_transaction_is_written_as_the_model_dumps_it(values: tuple) -> None:
    written = FixtureTransaction.trusted_json(values)
    assert written == _json_by_model(FixtureTransaction, values)
    assert list(written) == list(_json_by_model(FixtureTransaction, values))


def test_a_streamed_member_takes_its_field_s_place() -> None:
    streamed = object()
    written = BalAccountChange.trusted_json((b"\x01" * 20, (), (), (), (), ()), storage_reads=streamed)
    assert written["storageReads"] is streamed and list(written)[-1] == "storageReads"


def test_values_not_one_per_field_are_refused_naming_the_model() -> None:
    with pytest.raises(TypeError, match=r"BalAccountChange: 5 values for its 6 fields"):
        BalAccountChange.trusted_json((b"\x01" * 20, (), (), (), ()))


def test_a_field_without_a_serializer_is_refused_naming_it() -> None:
    class Unwritable(FixtureModel):
        count: int = Field(alias="Count")

    with pytest.raises(TypeError, match=r"Unwritable\.count: a <class 'int'> field cannot be written unvalidated"):
        Unwritable.trusted_json((1,))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**300))
def test_a_zero_padded_hex_has_whole_bytes_and_no_more_and_reads_back(value: int) -> None:
    """`0x00`, `0x0100`: an even number of digits, the fewest that hold the value, as execution-spec-tests spells it."""
    text = zero_padded_hex(value)
    digits = text.removeprefix("0x")
    assert int(digits, 16) == value and len(digits) % 2 == 0
    assert len(digits) == 2 or not digits.startswith("00")


def test_a_negative_value_has_no_zero_padded_hex() -> None:
    with pytest.raises(OverflowError):
        zero_padded_hex(-1)
