"""
Fixture files are written by balgen's own JSON renderer (`fixtures/streamed_json.py`),
which must give exactly the bytes `json.dumps` gives, so fixtures stay byte-identical
whichever renders them; a streamed member must render as if it were held.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from balgen.plumbing.spooled_json import RenderedValues
from balgen.plumbing.streamed_json import (
    StreamedArray, StreamedObject, StreamedText, compact_sorted_chunks, indented_chunks,
    compact_sorted_text, floatless_compact_sorted_text, floatless_indented_text, indented_text,
)

scalars = st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=False)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=30,
)


def streamed(members: dict[str, Any]) -> StreamedObject:
    return StreamedObject(lambda: iter(sorted(members.items())))


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_indented_rendering_is_json_dumps(value: Any) -> None:
    assert "".join(indented_chunks(value)) == json.dumps(value, indent=4)


@settings(max_examples=75, deadline=None)
@given(st.dictionaries(st.text(max_size=6), json_values, max_size=5), st.dictionaries(st.text(max_size=6), json_values, max_size=4))
def test_a_streamed_object_renders_as_the_object_it_stands_for(members: dict[str, Any], rest: dict[str, Any]) -> None:
    held = {"a": rest, "pre": dict(sorted(members.items())), "z": [rest]}
    document = {"a": rest, "pre": streamed(members), "z": [rest]}
    assert "".join(indented_chunks(document)) == json.dumps(held, indent=4)
    assert "".join(compact_sorted_chunks(document)) == json.dumps(held, sort_keys=True, separators=(",", ":"))


def streamed_items(items: list[Any]) -> StreamedArray:
    return StreamedArray(lambda: iter(items))


@settings(max_examples=75, deadline=None)
@given(
    st.lists(st.dictionaries(st.text(max_size=6), json_values, max_size=4), max_size=5),
    st.lists(st.text(max_size=8), max_size=4),
    json_values,
)
def test_streamed_arrays_and_text_render_as_what_they_stand_for(
    items: list[dict[str, Any]], pieces: list[str], rest: Any
) -> None:
    # A block as a fixture streams it: transactions as an array of objects, the RLP as text,
    # the access list as an array whose items hold a streamed object in turn.
    bal = [{"x": dict(sorted(item.items()))} for item in items]
    held = {"blocks": [{"transactions": items, "rlp": "".join(pieces), "bal": bal}], "z": rest}
    document = {
        "blocks": [
            {
                "transactions": streamed_items(items),
                "rlp": StreamedText(lambda: iter(pieces)),
                "bal": streamed_items([{"x": streamed(item)} for item in items]),
            }
        ],
        "z": rest,
    }
    assert "".join(indented_chunks(document)) == json.dumps(held, indent=4)
    assert "".join(compact_sorted_chunks(document)) == json.dumps(held, sort_keys=True, separators=(",", ":"))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=4))
def test_plain_text_of_hex_pieces_renders_as_the_escaping_encoder_would(pieces: list[bytes]) -> None:
    """Hex text (an access list's RLP) skips the escaping encoder and renders the same in both layouts."""
    hex_pieces = ["0x", *(piece.hex() for piece in pieces)]
    document = {"rlp": StreamedText(lambda: iter(hex_pieces), plain=True)}
    held = {"rlp": "".join(hex_pieces)}
    assert "".join(indented_chunks(document)) == json.dumps(held, indent=4)
    assert "".join(compact_sorted_chunks(document)) == json.dumps(held, sort_keys=True, separators=(",", ":"))


def test_a_streamed_array_is_pulled_one_item_at_a_time() -> None:
    """The writer holds one item's text at a time: the next item is made only after the previous one was yielded."""
    made: list[int] = []

    def items():
        for index in range(3):
            made.append(index)
            yield {"index": index}

    chunks = indented_chunks({"transactions": StreamedArray(items)})
    seen = ""
    while '"index": 0' not in seen:
        seen += next(chunks)
    assert made == [0]
    assert "".join([seen, *chunks]) == json.dumps({"transactions": [{"index": i} for i in range(3)]}, indent=4)


@settings(max_examples=150, deadline=None)
@given(json_values, st.integers(min_value=0, max_value=12))
def test_a_held_value_renders_in_one_piece_as_json_dumps(value: Any, level: int) -> None:
    """`indented_text` (one string, the C encoder for flat containers) is `indented_chunks`' text at any depth."""
    assert indented_text(value, level) == json.dumps(value, indent=4).replace("\n", "\n" + " " * level)
    assert compact_sorted_text(value) == json.dumps(value, sort_keys=True, separators=(",", ":"))


def test_a_value_holding_a_streamed_one_has_no_one_piece_text() -> None:
    assert indented_text({"a": [1, {"b": StreamedArray(lambda: iter([]))}]}, 0) is None


floatless_scalars = st.none() | st.booleans() | st.integers() | st.text()
floatless_values = st.recursive(
    floatless_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=150, deadline=None)
@given(floatless_values, st.integers(min_value=0, max_value=12))
def test_a_floatless_value_renders_by_the_rust_encoder_as_json_dumps(value: Any, level: int) -> None:
    """Any text (non-ASCII, DEL, control characters) and integer of any size: the same bytes as `json.dumps`."""
    assert floatless_indented_text(value, level) == json.dumps(value, indent=4).replace("\n", "\n" + " " * level)


@settings(max_examples=150, deadline=None)
@given(floatless_values | st.dictionaries(st.integers() | st.booleans(), floatless_values, max_size=3))
def test_a_floatless_value_s_compact_sorted_text_by_orjson_is_json_dumps(value: Any) -> None:
    """Any text, integers past 64 bits and non-string keys (which orjson leaves to the C encoder): `json.dumps`'s bytes."""
    assert floatless_compact_sorted_text(value) == json.dumps(value, sort_keys=True, separators=(",", ":"))


def test_a_floatless_value_holding_a_streamed_one_is_refused_as_the_c_encoder_refuses_it() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        floatless_compact_sorted_text({"a": [1, StreamedArray(lambda: iter([]))]})


@settings(max_examples=50, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=6), floatless_values, max_size=4), max_size=5))
def test_a_floatless_array_holding_streamed_values_renders_as_what_it_stands_for(items: list[dict[str, Any]]) -> None:
    held = {"bal": [{"x": dict(sorted(item.items()))} for item in items]}
    document = {"bal": StreamedArray(lambda: iter([{"x": streamed(item)} for item in items]), floatless=True)}
    with tempfile.TemporaryDirectory() as folder, RenderedValues(Path(folder)) as values:
        values.render_all(document)
        assert "".join(values.indented_chunks(document)) == json.dumps(held, indent=4)
        compact = json.dumps(held, sort_keys=True, separators=(",", ":"))
        assert values.compact_sha256(document) == hashlib.sha256(compact.encode()).hexdigest()


def test_a_busy_member_has_each_of_its_streamed_values_made_once() -> None:
    """An access list's busiest account: its slots are made from the list's RLP, once, for both layouts
    (whose key orders differ: `storageChanges` before `balanceChanges` in the file, after in the hash)."""
    made = {"storageChanges": 0, "balanceChanges": 0}

    def counted(name: str, items: list[Any]) -> StreamedArray:
        def walk() -> Any:
            made[name] += 1
            return iter(items)

        return StreamedArray(walk, floatless=True)

    slots = [{"slot": "0x01", "slotChanges": [{"postValue": "0x02"}]}, {"slot": "0x03", "slotChanges": []}]
    balances = [{"blockAccessIndex": "0x01", "postBalance": "0x0a"}]
    account = {"address": "0xaa", "storageChanges": counted("storageChanges", slots), "balanceChanges": counted("balanceChanges", balances)}
    document = {"bal": StreamedArray(lambda: iter([{"address": "0xbb"}, account]), floatless=True)}
    held = {"bal": [{"address": "0xbb"}, {"address": "0xaa", "storageChanges": slots, "balanceChanges": balances}]}
    with tempfile.TemporaryDirectory() as folder, RenderedValues(Path(folder)) as values:
        values.render_all(document)
        assert "".join(values.indented_chunks(document)) == json.dumps(held, indent=4)
        compact = json.dumps(held, sort_keys=True, separators=(",", ":"))
        assert values.compact_sha256(document) == hashlib.sha256(compact.encode()).hexdigest()
    assert made == {"storageChanges": 1, "balanceChanges": 1}
