"""
The shared-genesis chain applied from the own chain's state changes is the one t8n executes, and is
applied only when the blocks provably execute the same on both genesis states.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from balgen.chain.alloc import genesis_entries, read_alloc, system_called_addresses, write_alloc_entries
from balgen.chain.applied_chain import AppliedGenesis, apply_blocks
from balgen.chain.builder import BuiltChain, build_chain, genesis_header, genesis_state_root
from balgen.chain.state_roots import StateRoots, state_root_tool
from balgen.chain.t8n import TransitionTool
from balgen.fill.checks import BlockTouches, block_touches, genesis_dependence, traced_dependency_graph
from balgen.plumbing.errors import FillCheckFailed
from balgen.fill.pre_alloc_groups import PreAllocGroupState
from balgen.fill.session import FillSession, accounts_changed_in_access_lists, build_own_chain
from balgen.ethereum.forks import AMSTERDAM, system_contract_code
from balgen.generators.catalog import family_by_name
from balgen.model.keys import sender
from balgen.plumbing.toolchain import pinned_evm
from balgen.model.workload import ETHER, Account, BlockSpec, FillLevel, Phase, TxAccess, TxSpec, Workload, WorkloadParams

# A contract storing the parent block's hash: BLOCKHASH(NUMBER - 1) into slot 0.
PARENT_HASH_STORER = bytes.fromhex("600143034060005500")


@pytest.fixture(scope="module")
def t8n() -> TransitionTool:
    return TransitionTool(pinned_evm())


def workload_of(family: str, variant: str | None = None, fill: FillLevel = FillLevel.MAX) -> Workload:
    return family_by_name(family).generator(WorkloadParams(AMSTERDAM, 1_000_000, fill, variant=variant))


def group_genesis(t8n: TransitionTool, workloads: list[Workload], folder: Path) -> tuple[Path, object]:
    """A pre-alloc group genesis holding every workload's pre-state, as the fill builds one."""
    accounts = sorted({address: account for w in workloads for address, account in w.pre_accounts()}.items())
    path = folder / "group.json"
    write_alloc_entries(path, genesis_entries(AMSTERDAM, accounts))
    return path, genesis_header(AMSTERDAM, genesis_state_root(t8n, path, folder / "root"))


def assert_same_chain(applied: BuiltChain, executed: BuiltChain) -> None:
    """Same headers and access lists; the applied post-state (the changed accounts) on the genesis is the executed one."""
    assert [block.header for block in applied.blocks] == [block.header for block in executed.blocks]
    assert [block.block_access_list for block in applied.blocks] == [block.block_access_list for block in executed.blocks]
    changed = read_alloc(applied.post_alloc_path)
    assert changed.keys() <= accounts_changed_in_access_lists(applied)
    unchanged = {a: account for a, account in read_alloc(applied.genesis_alloc_path).items() if a not in accounts_changed_in_access_lists(applied)}
    assert {**unchanged, **changed} == read_alloc(executed.post_alloc_path)


@pytest.mark.integration
@pytest.mark.parametrize(
    ("family", "variant", "fill"),
    [
        ("mixed_dep", "group2", FillLevel.MAX),
        ("state_root", "contract_per_tx", FillLevel.MAX),
        ("keccak_chain", None, FillLevel.GREEDY),
        # A contract set set up by blocks: deployed through EIP-7997's proxy, a predeploy no system call runs.
        ("extcodesize", "0.5KB", FillLevel.MAX),
    ],
)
def test_applied_blocks_are_the_executed_blocks_on_a_shared_genesis(
    t8n: TransitionTool, tmp_path: Path, family: str, variant: str | None, fill: FillLevel
) -> None:
    """Headers (state roots, access-list hashes, parent hashes) and access lists byte for byte, and the post-state."""
    workload, neighbour = workload_of(family, variant, fill), workload_of("serial_chain", fill=FillLevel.HALF)
    own = build_own_chain(t8n, workload, tmp_path / "own")
    alloc, genesis = group_genesis(t8n, [workload, neighbour], tmp_path / "group")
    assert genesis_dependence(AMSTERDAM, own, alloc) is None
    touches = BlockTouches(system_called_addresses(AMSTERDAM))
    traced_dependency_graph(workload, own, touches)
    last = own.blocks[-1]
    assert touches.seen == len(last.txs) and touches.accounts == block_touches(last.t8n.traces, touches.system).accounts
    # Gathered touches stand in for reading the block's traces again: a planted reason is what is reported.
    planted = dataclasses.replace(touches, dependence="transaction 9 reads BLOCKHASH [1]")
    assert genesis_dependence(AMSTERDAM, own, alloc, {len(own.blocks) - 1: planted}) == (
        f"block {last.header.number}: transaction 9 reads BLOCKHASH [1]"
    )
    executed = build_chain(t8n, AMSTERDAM, alloc, workload.blocks, tmp_path / "executed", label="executed", genesis=genesis)
    roots = StateRoots(state_root_tool(), alloc)
    try:
        applied_genesis = AppliedGenesis.load(AMSTERDAM, genesis, alloc, roots)
        applied = apply_blocks(t8n, AMSTERDAM, own, applied_genesis, tmp_path / "applied", label="applied")
    finally:
        roots.close()
    assert applied.blocks[0].header.parent_hash == genesis.hash != own.genesis.hash
    assert_same_chain(applied, executed)


@pytest.mark.integration
def test_the_same_accounts_spelled_otherwise_are_no_dependence(t8n: TransitionTool, tmp_path: Path) -> None:
    """The genesis states are compared by their text first: a text that differs is compared again as JSON."""
    workload = workload_of("serial_chain", fill=FillLevel.HALF)
    own = build_own_chain(t8n, workload, tmp_path / "own")

    def respelled_line(line: str) -> str:  # `"0x<address>": {...},` with the account's JSON spaced out
        if line in ("{\n", "}\n"):
            return line
        account = line[45:].rstrip(",\n")
        return line[:45] + json.dumps(json.loads(account)) + line[45 + len(account):]

    respelled = tmp_path / "respelled.json"
    respelled.write_text("".join(map(respelled_line, own.genesis_alloc_path.read_text().splitlines(keepends=True))))
    assert respelled.read_text() != own.genesis_alloc_path.read_text()
    assert genesis_dependence(AMSTERDAM, own, respelled) is None


@pytest.mark.integration
def test_an_accessed_account_that_differs_between_the_genesis_states_is_named(t8n: TransitionTool, tmp_path: Path) -> None:
    workload = workload_of("serial_chain", fill=FillLevel.HALF)
    own = build_own_chain(t8n, workload, tmp_path / "own")
    payer = workload.benchmark_block.txs[0].sender.address
    richer = dataclasses.replace(
        workload, pre={**workload.pre, payer: dataclasses.replace(workload.pre[payer], balance=workload.pre[payer].balance + 1)}
    )
    alloc, _ = group_genesis(t8n, [richer], tmp_path / "group")
    assert genesis_dependence(AMSTERDAM, own, alloc) == (
        f"accessed account 0x{payer.hex()} differs between the genesis states (1 such accounts)"
    )


@pytest.mark.integration
def test_a_transaction_reading_blockhash_is_executed_not_applied(t8n: TransitionTool, tmp_path: Path) -> None:
    """BLOCKHASH differs between two chains of different genesis: a block asking for it is not applied, and
    executing it on another genesis indeed stores another value."""
    payer, storer = sender("applied", "payer"), bytes.fromhex("00000000000000000000000000000000000b10c5")
    block = BlockSpec(
        Phase.TESTING,
        (TxSpec(sender=payer, nonce=0, to=storer, data=b"", gas_limit=900_000),),
        (TxAccess(writes=frozenset({(storer, 0)})),),
    )
    workload = Workload(
        family="blockhash", fill=FillLevel.MAX, variant=None, gas_benchmark_value=1_000_000, fork=AMSTERDAM,
        pre={payer.address: Account(balance=ETHER), storer: Account(nonce=1, code=PARENT_HASH_STORER)},
        setup_blocks=(), benchmark_block=block,
    )
    own = build_own_chain(t8n, workload, tmp_path / "own")
    alloc, genesis = group_genesis(t8n, [workload, workload_of("serial_chain", fill=FillLevel.HALF)], tmp_path / "group")
    assert genesis_dependence(AMSTERDAM, own, alloc) == "block 1: transaction 0 reads BLOCKHASH [0]"
    # The same verdict from what the traced check gathered as it read the benchmark block's traces.
    touches = BlockTouches(system_called_addresses(AMSTERDAM))
    traced_dependency_graph(workload, own, touches)
    assert touches.seen == 1 and touches.dependence == "transaction 0 reads BLOCKHASH [0]"
    assert genesis_dependence(AMSTERDAM, own, alloc, {0: touches}) == "block 1: transaction 0 reads BLOCKHASH [0]"
    session = FillSession(t8n=t8n, output=tmp_path / "out", all_gas_values=[1_000_000], planned=[], scratch=tmp_path / "session")
    group = PreAllocGroupState(group_hash="0x00", test_ids=[workload.name], alloc_path=alloc, genesis=genesis)
    with pytest.raises(FillCheckFailed, match=r"differs from the own genesis \(executed, not applied: block 1: transaction 0 reads BLOCKHASH \[0\]\)$"):
        session.shared_chain(workload, own, group, tmp_path / "shared")
    executed = build_chain(t8n, AMSTERDAM, alloc, workload.blocks, tmp_path / "executed", label="executed", genesis=genesis)
    stored = [list(entry.storage_changes[0]) for chain in (own, executed) for entry in chain.blocks[0].access_list_accounts() if entry.address == storer]
    assert stored == [[(1, int.from_bytes(own.genesis.hash, "big"))], [(1, int.from_bytes(genesis.hash, "big"))]]


@pytest.mark.integration
def test_a_transaction_calling_a_contract_the_system_calls_run_is_executed_not_applied(
    t8n: TransitionTool, tmp_path: Path
) -> None:
    """EIP-2935's history contract holds the parent hashes, which differ between two chains of different
    genesis: a transaction that calls it depends on the genesis (EIP-7997's proxy, which no system call
    runs, does not: the contract-set case above)."""
    payer = sender("applied", "history reader")
    history = bytes.fromhex(system_contract_code()["eip2935"][0][2:])
    block = BlockSpec(
        Phase.TESTING,
        (TxSpec(sender=payer, nonce=0, to=history, data=(0).to_bytes(32, "big"), gas_limit=100_000),),
        (TxAccess(),),
    )
    workload = Workload(
        family="history", fill=FillLevel.MAX, variant=None, gas_benchmark_value=1_000_000, fork=AMSTERDAM,
        pre={payer.address: Account(balance=ETHER)}, setup_blocks=(), benchmark_block=block,
    )
    own = build_own_chain(t8n, workload, tmp_path / "own")
    alloc, _ = group_genesis(t8n, [workload, workload_of("serial_chain", fill=FillLevel.HALF)], tmp_path / "group")
    assert f"0x{history.hex()}" in system_called_addresses(AMSTERDAM)
    assert genesis_dependence(AMSTERDAM, own, alloc) == f"block 1: transaction 0 touches system contract 0x{history.hex()}"
