"""
How a benchmark block's gas is split into transactions (`tx_schedule`).

The schedule decides whether a fixture measures what its name says: a
transaction below the minimum fails (or does no work), one above the cap is
rejected by Osaka and later, and a block that does not add up to its gas
value benchmarks less than advertised.
"""

from __future__ import annotations

import pytest
import rlp
from hypothesis import given, settings
from hypothesis import strategies as st

from balgen.plumbing.errors import FillCheckFailed
from balgen.ethereum.forks import AMSTERDAM, OSAKA, PRAGUE, TX_GAS_LIMIT_CAP
from balgen.generators.keccak_chain import keccak_chain
from balgen.generators.schedule import block_size_note, block_tx_capacity, envelope_bytes, tx_schedule
from balgen.generators.serial_chain import serial_chain
from balgen.model.transactions import SIGNATURE_FIELDS, SIGNED_LIST, UNSIGNED_FIELDS, encoded_fields, extended_list
from balgen.model.workload import FillLevel, WorkloadParams

FILLS = st.sampled_from(list(FillLevel))


@st.composite
def schedule_inputs(draw: st.DrawFn) -> tuple[int, int, int]:
    """(gas value, minimum transaction gas, cap) with the minimum at most the cap."""
    min_tx_gas = draw(st.integers(1, 2**25))
    # Caps close to the minimum are where the cap and the minimum fight.
    cap = draw(st.one_of(st.integers(min_tx_gas, 4 * min_tx_gas), st.integers(min_tx_gas, 2**26)))
    gas_benchmark_value = draw(st.integers(min_tx_gas, 3000 * min_tx_gas))
    return gas_benchmark_value, min_tx_gas, cap


@st.composite
def realistic_inputs(draw: st.DrawFn) -> tuple[int, int, int]:
    """Fork-shaped inputs: a few tens of thousands of gas per transaction, EIP-7825 cap or none."""
    min_tx_gas = draw(st.integers(21_000, 200_000))
    gas_benchmark_value = draw(st.integers(min_tx_gas, 200_000_000))
    cap = draw(st.sampled_from([min(TX_GAS_LIMIT_CAP, gas_benchmark_value), gas_benchmark_value]))
    return gas_benchmark_value, min_tx_gas, cap


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def fits(gas_benchmark_value: int, min_tx_gas: int, cap: int) -> bool:
    """Whether the whole gas value can be split into transactions between the minimum and the cap."""
    return gas_benchmark_value // min_tx_gas >= ceil_div(gas_benchmark_value, cap)


def greedy_expected(gas_benchmark_value: int, min_tx_gas: int, cap: int) -> list[int]:
    full, remainder = divmod(gas_benchmark_value, cap)
    return [cap] * full + ([remainder] if remainder >= min_tx_gas else [])


SCHEDULE_INPUTS = st.one_of(schedule_inputs(), realistic_inputs())


@settings(max_examples=150, deadline=None)
@given(SCHEDULE_INPUTS, FILLS)
def test_every_transaction_between_minimum_and_cap(inputs: tuple[int, int, int], fill: FillLevel) -> None:
    gas_benchmark_value, min_tx_gas, cap = inputs
    schedule = tx_schedule(gas_benchmark_value, min_tx_gas, cap, fill)
    assert schedule, "a block without transactions benchmarks nothing"
    assert all(min_tx_gas <= gas <= cap for gas in schedule), (min(schedule), max(schedule))
    assert sum(schedule) <= gas_benchmark_value


@settings(max_examples=150, deadline=None)
@given(SCHEDULE_INPUTS, st.sampled_from([FillLevel.MAX, FillLevel.HALF]))
def test_max_and_half_use_the_whole_gas_value(inputs: tuple[int, int, int], fill: FillLevel) -> None:
    gas_benchmark_value, min_tx_gas, cap = inputs
    schedule = tx_schedule(gas_benchmark_value, min_tx_gas, cap, fill)
    if fits(gas_benchmark_value, min_tx_gas, cap):
        assert sum(schedule) == gas_benchmark_value
        # Evenly split, the larger shares first.
        assert max(schedule) - min(schedule) <= 1
        assert schedule == sorted(schedule, reverse=True)
    else:
        # No split of the whole value respects both bounds: cap-sized
        # transactions are the most gas that can be used.
        assert schedule == greedy_expected(gas_benchmark_value, min_tx_gas, cap)


@settings(max_examples=150, deadline=None)
@given(SCHEDULE_INPUTS)
def test_greedy_is_cap_sized_transactions_plus_a_useful_remainder(inputs: tuple[int, int, int]) -> None:
    gas_benchmark_value, min_tx_gas, cap = inputs
    schedule = tx_schedule(gas_benchmark_value, min_tx_gas, cap, FillLevel.GREEDY)
    full, remainder = divmod(gas_benchmark_value, cap)
    assert schedule[:full] == [cap] * full
    if remainder >= min_tx_gas:
        assert schedule[full:] == [remainder]
    else:
        assert len(schedule) == full


@settings(max_examples=150, deadline=None)
@given(SCHEDULE_INPUTS)
def test_max_has_as_many_transactions_as_fit(inputs: tuple[int, int, int]) -> None:
    gas_benchmark_value, min_tx_gas, cap = inputs
    schedule = tx_schedule(gas_benchmark_value, min_tx_gas, cap, FillLevel.MAX)
    if fits(gas_benchmark_value, min_tx_gas, cap):
        assert len(schedule) == gas_benchmark_value // min_tx_gas


@settings(max_examples=150, deadline=None)
@given(SCHEDULE_INPUTS)
def test_half_has_half_the_transactions_of_max(inputs: tuple[int, int, int]) -> None:
    gas_benchmark_value, min_tx_gas, cap = inputs
    max_count = len(tx_schedule(gas_benchmark_value, min_tx_gas, cap, FillLevel.MAX))
    half = tx_schedule(gas_benchmark_value, min_tx_gas, cap, FillLevel.HALF)
    if fits(gas_benchmark_value, min_tx_gas, cap):
        assert len(half) == max(1, max_count // 2, ceil_div(gas_benchmark_value, cap))
        assert len(half) <= max_count


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 2**25).flatmap(lambda m: st.tuples(st.integers(0, m - 1), st.just(m))),
    st.booleans(),
    FILLS,
)
def test_gas_below_one_transaction_is_refused(inputs: tuple[int, int], cap_is_gas: bool, fill: FillLevel) -> None:
    gas_benchmark_value, min_tx_gas = inputs
    # Forks cap a transaction at no more than the block's gas value, so the
    # cap is then below the minimum too; the gas value is still what is wrong.
    cap = max(gas_benchmark_value, 1) if cap_is_gas else 2**26
    with pytest.raises(FillCheckFailed, match=f"gas value {gas_benchmark_value} is below"):
        tx_schedule(gas_benchmark_value, min_tx_gas, cap, fill)


def test_minimum_above_cap_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="exceeds the cap"):
        tx_schedule(30_000_000, 20_000_000, 16_777_216, FillLevel.MAX)


GENERATORS = pytest.mark.parametrize("generator", [serial_chain, keccak_chain], ids=lambda g: g.__name__)


def benchmark_gas_limits(generator, fork, gas_benchmark_value: int, fill: FillLevel) -> list[int]:
    workload = generator(WorkloadParams(fork, gas_benchmark_value, fill))
    return [tx.gas_limit for tx in workload.benchmark_block.txs]


@GENERATORS
@pytest.mark.parametrize("fork", [AMSTERDAM, OSAKA], ids=lambda f: f.name)
def test_greedy_30m_under_the_transaction_cap_is_two_transactions(generator, fork) -> None:
    assert benchmark_gas_limits(generator, fork, 30_000_000, FillLevel.GREEDY) == [16_777_216, 13_222_784]


@GENERATORS
def test_amsterdam_greedy_60m_is_four_transactions(generator) -> None:
    limits = benchmark_gas_limits(generator, AMSTERDAM, 60_000_000, FillLevel.GREEDY)
    assert limits == [16_777_216] * 3 + [60_000_000 - 3 * 16_777_216]


@GENERATORS
def test_prague_greedy_60m_is_one_transaction(generator) -> None:
    # No EIP-7825 cap before Osaka: one transaction takes the whole block.
    assert benchmark_gas_limits(generator, PRAGUE, 60_000_000, FillLevel.GREEDY) == [60_000_000]


@GENERATORS
@pytest.mark.parametrize("fill", list(FillLevel), ids=lambda f: f.value)
def test_generator_refuses_a_gas_value_below_one_transaction(generator, fill: FillLevel) -> None:
    with pytest.raises(FillCheckFailed, match="below one transaction's minimum gas"):
        generator(WorkloadParams(AMSTERDAM, 20_000, fill))


@settings(max_examples=100, deadline=None)
@given(inputs=schedule_inputs(), fill=FILLS, bound=st.integers(1, 5000))
def test_a_transaction_count_bound_is_kept_or_refused_naming_the_limits(
    inputs: tuple[int, int, int], fill: FillLevel, bound: int
) -> None:
    """EIP-7934 bounds the count: every level keeps to it, or the gas value is refused naming both limits."""
    gas_benchmark_value, min_tx_gas, cap = inputs
    try:
        schedule = tx_schedule(gas_benchmark_value, min_tx_gas, cap, fill, bound)
    except FillCheckFailed as error:
        assert -(-gas_benchmark_value // cap) > bound
        assert "EIP-7825" in str(error) and "EIP-7934" in str(error)
        return
    assert len(schedule) <= bound
    assert all(min_tx_gas <= gas <= cap for gas in schedule)
    assert 0 <= gas_benchmark_value - sum(schedule) < min_tx_gas  # no more gas left over than without the bound


def test_max_stops_at_the_block_size_limit_and_says_so() -> None:
    """A `max` block that would not fit in EIP-7934's 8 MiB has as many transactions as fit, noted in `_info`."""
    params = WorkloadParams(AMSTERDAM, 1_000_000_000, FillLevel.MAX)
    capacity = block_tx_capacity(AMSTERDAM, envelope_bytes(AMSTERDAM, b"") * 3)  # transactions three times larger
    assert capacity is not None and capacity < 1_000_000_000 // AMSTERDAM.intrinsic_gas(b"")
    schedule = tx_schedule(1_000_000_000, 30_000, TX_GAS_LIMIT_CAP, FillLevel.MAX, capacity)
    assert len(schedule) == capacity and sum(schedule) == 1_000_000_000
    assert "EIP-7934" in block_size_note(len(schedule), capacity)["limited_by"]
    unbounded = serial_chain(params)
    assert "limited_by" not in unbounded.parameters  # simple calls fit: 36,644 of them are about 4 MiB
    assert block_size_note(10, None) == {} and block_tx_capacity(PRAGUE, 100) is None


def test_the_capacity_bounds_real_signed_transactions() -> None:
    """`envelope_bytes` is never below what a signed benchmark transaction adds to a block."""
    from balgen.model.transactions import sign

    workload = serial_chain(WorkloadParams(AMSTERDAM, 1_000_000, FillLevel.MAX))
    bound = envelope_bytes(AMSTERDAM, b"")
    for tx in workload.benchmark_block.txs:
        raw = sign(tx, 1).raw
        assert len(raw) + 1 + (len(raw).bit_length() + 7) // 8 <= bound


def test_a_signed_transaction_recovers_to_its_sender() -> None:
    """eth-account, an independent implementation, recovers each signed benchmark transaction's sender."""
    from eth_account import Account

    from balgen.model.transactions import sign

    workload = serial_chain(WorkloadParams(AMSTERDAM, 1_000_000, FillLevel.HALF))
    for tx in workload.benchmark_block.txs[:8]:
        assert Account.recover_transaction(sign(tx, 1).raw).lower() == "0x" + tx.sender.address.hex()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(0, 2**256 - 1), min_size=5, max_size=5),
    st.binary(max_size=20),
    st.integers(0, 2**256 - 1),
    st.binary(max_size=300),
    st.lists(st.integers(0, 2**256 - 1), min_size=3, max_size=3),
)
def test_a_transaction_s_fields_encode_as_rlp_encodes_them(
    numbers: list[int], to: bytes, value: int, data: bytes, signature: list[int]
) -> None:
    """balgen's field-by-field encoding of a type-2 transaction, its signature appended to its unsigned
    fields' encoding, is `rlp.encode` with the fields' sedes, byte for byte."""
    unsigned = [*numbers, to, value, data, []]
    signed = extended_list(encoded_fields(unsigned, UNSIGNED_FIELDS), encoded_fields(signature, SIGNATURE_FIELDS))
    assert signed == rlp.encode([*unsigned, *signature], SIGNED_LIST)
    assert list(rlp.decode(signed, SIGNED_LIST)[-3:]) == signature
