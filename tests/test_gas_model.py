"""
balgen's gas arithmetic against the real t8n.

The generators size every transaction from a static gas model of the keccak
loop and the code around it (`KeccakLoop`, `ChainContract`). If the model is
off, a benchmark either fails its transactions (too little gas for the final
storage access) or leaves gas unused (the block measures less than its name).
Here the real go-ethereum t8n executes the generated blocks and the model's
predictions are compared with the receipts.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
import pytest
import rlp
from eth_hash.auto import keccak
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trie import HexaryTrie

from balgen.chain.alloc import alloc_json, genesis_accounts, write_alloc
from balgen.chain.builder import BuiltChain, genesis_state_root
from balgen.chain.t8n import TransitionTool
from balgen.fill.session import build_own_chain
from balgen.ethereum.forks import AMSTERDAM, OSAKA, PRAGUE, Fork
from balgen.generators.chains import ChainContract
from balgen.generators.keccak_chain import keccak_chain, keccak_chain_contract
from balgen.generators.serial_chain import serial_chain, serial_chain_contract
from balgen.plumbing.toolchain import pinned_evm
from balgen.model.workload import Account, BlockSpec, FillLevel, Phase, Workload, WorkloadParams

pytestmark = pytest.mark.integration
"""Every test here runs the pinned binaries."""

FAMILIES = {
    "serial_chain": (serial_chain, serial_chain_contract),
    "keccak_chain": (keccak_chain, keccak_chain_contract),
}
FORKS = [AMSTERDAM, OSAKA, PRAGUE]
SLACK = 16


@pytest.fixture(scope="module")
def t8n() -> TransitionTool:
    return TransitionTool(pinned_evm())


def run_blocks(t8n: TransitionTool, workload: Workload, blocks: tuple[BlockSpec, ...], workdir: Path) -> BuiltChain:
    """Execute `blocks` on the workload's own genesis (system contracts plus its pre-state)."""
    return build_own_chain(t8n, workload, workdir, blocks)


def predicted_unused(fork: Fork, contract: ChainContract, gas_limit: int) -> int:
    """Gas a transaction with `gas_limit` leaves unused, by balgen's model."""
    execution_gas = gas_limit - fork.intrinsic_gas(b"")
    gas_at_loop = execution_gas - contract.gas_before_loop
    return contract.loop.gas_left(gas_at_loop) - contract.gas_after_loop


@pytest.mark.parametrize("fork", FORKS, ids=lambda f: f.name)
@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize(
    "fill, gas_benchmark_value",
    # 1M gives dozens of minimum-sized transactions at max; greedy at 30M
    # gives cap-sized transactions (Osaka, Amsterdam) and one 30M one (Prague).
    [(FillLevel.MAX, 1_000_000), (FillLevel.GREEDY, 30_000_000)],
    ids=["max-1M", "greedy-30M"],
)
def test_transactions_succeed_and_use_their_gas(
    t8n: TransitionTool, tmp_path: Path, fork: Fork, family: str, fill: FillLevel, gas_benchmark_value: int
) -> None:
    generator, contract_of = FAMILIES[family]
    params = WorkloadParams(fork, gas_benchmark_value, fill)
    workload = generator(params)
    contract = contract_of(params)
    chain = run_blocks(t8n, workload, workload.blocks, tmp_path)

    benchmark = chain.blocks[-1]
    receipts = benchmark.t8n.receipts
    txs = workload.benchmark_block.txs
    assert not benchmark.t8n.rejected
    assert len(receipts) == len(txs)
    iteration = contract.loop.iteration_gas
    for index, (tx, receipt) in enumerate(zip(txs, receipts)):
        used = int(receipt["gasUsed"], 16)
        assert receipt["status"] == "0x1", f"transaction {index} failed with {used} of {tx.gas_limit} gas"
        unused = tx.gas_limit - used
        assert 0 <= unused <= iteration + SLACK, f"transaction {index} left {unused} gas unused"
        assert unused == predicted_unused(fork, contract, tx.gas_limit), f"transaction {index}"
    # The block measures (almost) all of the gas it is named after.
    assert benchmark.header.gas_used >= 0.999 * gas_benchmark_value
    assert benchmark.header.gas_used <= gas_benchmark_value


@pytest.mark.parametrize("fork", FORKS, ids=lambda f: f.name)
@pytest.mark.parametrize("family", list(FAMILIES))
def test_minimum_gas_is_exactly_the_least_that_succeeds(
    t8n: TransitionTool, tmp_path: Path, fork: Fork, family: str
) -> None:
    """At the generator's minimum a transaction runs one iteration and uses all its gas; below it fails."""
    generator, contract_of = FAMILIES[family]
    params = WorkloadParams(fork, 1_000_000, FillLevel.MAX)
    workload = generator(params)
    contract = contract_of(params)
    minimum = fork.intrinsic_gas(b"") + contract.min_execution_gas()
    iteration = contract.loop.iteration_gas
    limits = [minimum, minimum - 1, minimum - iteration, minimum + iteration - 1, minimum + iteration]
    original = workload.benchmark_block
    block = BlockSpec(
        phase=Phase.TESTING,
        txs=tuple(dataclasses.replace(tx, gas_limit=gas) for tx, gas in zip(original.txs, limits)),
        accesses=original.accesses[: len(limits)],
    )
    chain = run_blocks(t8n, workload, (*workload.setup_blocks, block), tmp_path)
    receipts = chain.blocks[-1].t8n.receipts
    assert not chain.blocks[-1].t8n.rejected
    outcome = [(int(r["status"], 16), int(r["gasUsed"], 16)) for r in receipts]

    assert contract.iterations(minimum - fork.intrinsic_gas(b"")) == 1
    assert outcome[0] == (1, minimum), "the minimum must succeed with no gas to spare"
    assert outcome[1] == (0, minimum - 1), "one gas below the minimum must run out of gas"
    assert outcome[2] == (0, minimum - iteration), "an iteration below the minimum must run out of gas"
    # Extra gas short of a whole iteration is left unused; a whole one buys a second iteration.
    assert outcome[3] == (1, minimum)
    assert outcome[4] == (1, minimum + iteration)
    assert contract.iterations(minimum + iteration - fork.intrinsic_gas(b"")) == 2


# --- genesis state root ------------------------------------------------------


def trie_state_root(accounts: dict[bytes, Account]) -> bytes:
    """The state root computed with the `trie` package, independently of t8n."""
    state = HexaryTrie(db={})
    for address, account in accounts.items():
        storage = HexaryTrie(db={})
        for slot, value in account.storage.items():
            if value:
                storage[keccak(slot.to_bytes(32, "big"))] = rlp.encode(value)
        state[keccak(address)] = rlp.encode(
            [account.nonce, account.balance, storage.root_hash, keccak(account.code)]
        )
    return state.root_hash


def t8n_state_root(t8n: TransitionTool, accounts: dict[bytes, Account], workdir: Path) -> bytes:
    write_alloc(workdir / "alloc.json", alloc_json(accounts))
    return genesis_state_root(t8n, workdir / "alloc.json", workdir / "root")


SMALL_ALLOC = {
    bytes.fromhex("11" * 20): Account(balance=10**18),
    bytes.fromhex("22" * 20): Account(nonce=5),
    bytes.fromhex("33" * 20): Account(
        nonce=1,
        balance=3,
        code=bytes.fromhex("600160005500"),
        storage={0: 1, 1: 0, 0xDEADBEEF: 42, 2**255: 2**256 - 1},
    ),
    bytes.fromhex("44" * 20): Account(code=b"\x00"),
}


def test_genesis_state_root_of_a_small_alloc_with_storage(t8n: TransitionTool, tmp_path: Path) -> None:
    assert t8n_state_root(t8n, SMALL_ALLOC, tmp_path) == trie_state_root(SMALL_ALLOC)


@pytest.mark.parametrize("fork", FORKS, ids=lambda f: f.name)
def test_genesis_state_root_of_a_workload_genesis(t8n: TransitionTool, tmp_path: Path, fork: Fork) -> None:
    """System contracts, the deployer and the funded senders, as a real fill's genesis has them."""
    workload = serial_chain(WorkloadParams(fork, 1_000_000, FillLevel.HALF))
    accounts = genesis_accounts(fork, [workload.pre])
    assert t8n_state_root(t8n, accounts, tmp_path) == trie_state_root(accounts)


ACCOUNTS = st.dictionaries(
    st.binary(min_size=20, max_size=20),
    st.builds(
        Account,
        balance=st.integers(0, 2**128),
        nonce=st.integers(0, 2**32),
        code=st.binary(max_size=64),
        storage=st.dictionaries(st.integers(0, 2**256 - 1), st.integers(0, 2**256 - 1), max_size=5),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(accounts=ACCOUNTS)
def test_genesis_state_root_matches_an_independent_trie(
    t8n: TransitionTool, tmp_path_factory: pytest.TempPathFactory, accounts: dict[bytes, Account]
) -> None:
    workdir = tmp_path_factory.mktemp("root")
    assert t8n_state_root(t8n, accounts, workdir) == trie_state_root(accounts)

