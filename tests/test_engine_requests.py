"""
The bytes a JSON-RPC call sends (balgen.clients.engine_client.request_body): encoded by orjson for
speed, they must be the bytes Python's `json` wrote compactly before (Engine API values are ASCII),
so that a client receives the same request whichever encoder made it.
"""

from __future__ import annotations

import json
import string
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from balgen.clients.engine_client import request_body

_HEX = st.binary(max_size=64).map(lambda data: "0x" + data.hex())
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=0, max_value=2**63) | _HEX,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(alphabet=string.ascii_letters + string.digits, max_size=12), children, max_size=5),
    max_leaves=30,
)


def _compact_json(call_id: int, method: str, params: list[Any]) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": call_id, "method": method, "params": params}, separators=(",", ":")
    ).encode()


@given(params=st.lists(_VALUES, max_size=4), call_id=st.integers(min_value=1, max_value=2**40))
def test_request_body_is_the_compact_json_of_the_call(params: list[Any], call_id: int) -> None:
    assert request_body(call_id, "engine_newPayloadV5", params) == _compact_json(call_id, "engine_newPayloadV5", params)


def test_a_benchmark_sized_payload_is_encoded_as_json_does() -> None:
    """A payload of thousands of transactions and a long access list, as `newPayload` sends it."""
    payload = {
        "parentHash": "0x" + "11" * 32,
        "transactions": ["0x02f8" + f"{index:04x}" * 60 for index in range(5000)],
        "withdrawals": [],
        "blockAccessList": "0x" + "ab" * 200_000,
        "extraData": "0x62616c67656e207369626c696e672031",
    }
    params = [payload, [], "0x" + "22" * 32, []]
    assert request_body(7, "engine_newPayloadV5", params) == _compact_json(7, "engine_newPayloadV5", params)


def test_an_integer_json_rpc_cannot_carry_is_refused_not_sent() -> None:
    """Engine API quantities are hex; an integer past 64 bits is a caller's mistake, refused before any byte goes out."""
    with pytest.raises(TypeError):
        request_body(1, "eth_call", [2**70])
