"""
CREATE2 contract sets and the extcode* families, as their users rely on them.

- Every contract of a set has code of its own (no two share a code hash), of
  the set's exact size, at CREATE2 address (factory, salt, init code hash).
- N is just what the block needs: the benchmark block's access list names
  exactly the N contracts, each read once, and the attack leaves in storage
  the sum of what it read, which equals the sum over the pre-state's code.
- `--setup genesis` and `--setup blocks` give the same contracts (same state
  root of the workload's accounts) and the same benchmark block.
- A reduced set of every size imports into the pinned geth's EVM (blocktest
  for blockchain_test) in both placements, and one of each shape of setup
  into a geth node through the Engine API (engine_x per group: every payload
  VALID, the head at `lastblockhash`; `GETH_NODE_SIZES`, the shape of several
  contracts a call in tests/test_import_geth.py).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from eth_hash.auto import keccak

from balgen.chain.alloc import iter_alloc, read_alloc, write_alloc
from balgen.chain.builder import genesis_state_root
from balgen.chain.t8n import TransitionTool
from balgen.fill.checks import check_chain
from balgen.plumbing.errors import BadInput
from balgen.fill.pre_alloc_groups import joins_shared_group
from balgen.fill.session import build_own_chain
from balgen.ethereum.forks import AMSTERDAM, OSAKA, PRAGUE, TX_GAS_LIMIT_CAP
from balgen.generators.catalog import all_planned_workloads, family_by_name
from balgen.generators.code_set import (
    CODE_SIZES, ContractSet, code_size_bytes, create2_address, init_code_hash, parse_code_sizes,
)
from balgen.generators import code_set
from balgen.generators.extcode import NEXT_SALT_SLOT, SUM_SLOT
from balgen.commands.replay import run_replay
from balgen.plumbing.toolchain import pinned_evm
from balgen.model.workload import FillLevel, Placement, Workload, WorkloadParams

from fill_runs import fill_fixtures

SMALL_GAS = 1_000_000


@pytest.fixture(scope="module")
def t8n() -> TransitionTool:
    return TransitionTool(pinned_evm())


def workload(opcode: str, size: str, placement: Placement, gas: int = SMALL_GAS, fill: FillLevel = FillLevel.GREEDY) -> Workload:
    return family_by_name(opcode).generator(WorkloadParams(AMSTERDAM, gas, fill, placement, size))


@pytest.mark.parametrize("size", CODE_SIZES)
def test_every_contract_of_a_set_has_unique_code_of_the_set_size(size: str) -> None:
    contracts = ContractSet(bytes.fromhex("11" * 20), code_size_bytes(size), 300)
    codes = list(contracts.codes())
    assert all(len(code) == code_size_bytes(size) and code[0] == 0 for code in codes)  # STOP first
    assert len({keccak(code) for code in codes}) == 300
    # Pseudo-random words: no 32-byte word repeats inside a contract, so nothing compresses it away.
    words = [codes[0][i : i + 32] for i in range(32, len(codes[0]), 32)]
    assert len(set(words)) == len(words)
    salt_7 = create2_address(contracts.factory, 7, init_code_hash(contracts.size))
    assert contracts.salt_addresses[7] == salt_7


def test_created_code_answers_membership_without_building_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """A setup transaction's created contracts are asked `in` for every account it touches: that builds no code."""
    contracts = ContractSet(bytes.fromhex("11" * 20), code_size_bytes("0.5KB"), 50)
    created = contracts.created(range(10, 20))
    codes = {address: created[address] for address in created}
    assert list(codes) == list(contracts.salt_addresses[10:20])
    monkeypatch.setattr(code_set, "runtime_code", lambda *_: pytest.fail("membership built a contract's code"))
    assert contracts.salt_addresses[15] in created and contracts.salt_addresses[20] not in created
    assert b"not an address" not in created


def test_n_is_what_the_gas_value_pays_for_and_grows_with_it() -> None:
    """About 18,600 cold EXTCODESIZE reads at 60M on Amsterdam (3,100 gas each), as the EIP-7907 analysis."""
    at_60 = workload("extcodesize", "64KB", Placement.GENESIS, 60_000_000).parameters["contracts_read"]
    at_30 = workload("extcodesize", "64KB", Placement.GENESIS, 30_000_000).parameters["contracts_read"]
    assert 18_000 < at_60 < 19_400 and abs(at_60 - 2 * at_30) < 10
    copies = workload("extcodecopy", "64KB", Placement.GENESIS, 60_000_000).parameters["contracts_read"]
    assert copies < at_60 / 2  # each copy also pays 3 gas per word


def test_code_sizes_option_rejects_what_the_fork_cannot_hold() -> None:
    assert parse_code_sizes("0.5,24,64KB", AMSTERDAM) == ("0.5KB", "24KB", "64KB")
    assert parse_code_sizes("all", OSAKA) == ("0.5KB", "1KB", "2KB", "5KB", "10KB", "24KB")
    with pytest.raises(BadInput, match="64KB exceeds Osaka's code size limit of 24576"):
        parse_code_sizes("64", OSAKA)
    with pytest.raises(BadInput, match="'huge' is not a size in KB"):
        parse_code_sizes("huge", AMSTERDAM)
    with pytest.raises(BadInput, match="multiple of 32 bytes"):
        parse_code_sizes("0.3", AMSTERDAM)


def test_every_size_and_opcode_is_planned_none_skipped() -> None:
    names = {p.name for p in all_planned_workloads(AMSTERDAM, [30_000_000, 60_000_000], Placement.BLOCKS, "extcode", CODE_SIZES)}
    assert len(names) == 3 * len(CODE_SIZES) * 3 * 2
    assert {"extcodesize-greedy-64KB-60M", "extcodehash-greedy-24KB-30M", "extcodecopy-max-0.5KB-30M"} <= names


@pytest.mark.parametrize("fork", [AMSTERDAM, OSAKA, PRAGUE], ids=lambda f: f.name)
def test_setup_transactions_exceed_2_24_only_to_create_one_contract_too_large_for_it(fork) -> None:
    """A contract above about 10 KB costs more than 2^24 to create on Amsterdam (state gas per
    byte): it gets a transaction of its own, the gas above 2^24 going to the EIP-8037 reservoir.
    At 1M: a setup transaction's shape (the contracts it creates, its gas) is the same at every gas
    value, which sets only how many there are (about 300 contracts here, 18,600 at 60M)."""
    sizes = parse_code_sizes("all", fork)
    above_cap = 0
    for planned in all_planned_workloads(fork, [SMALL_GAS], Placement.BLOCKS, "extcodesize-greedy", sizes):
        built = planned.build()
        for block in built.setup_blocks:
            for tx, access in zip(block.txs, block.accesses):
                if tx.gas_limit > TX_GAS_LIMIT_CAP:
                    assert fork is AMSTERDAM and len(access.created) == 1 and built.parameters["code_size"] > 10 * 1024
                    assert tx.gas_limit <= fork.max_tx_gas_limit
                    above_cap += 1
    assert (above_cap > 0) == (fork is AMSTERDAM)


@pytest.mark.integration
@pytest.mark.parametrize("opcode", ["extcodesize", "extcodehash", "extcodecopy"])
def test_both_placements_give_the_same_contracts_and_benchmark_block(
    t8n: TransitionTool, tmp_path: Path, opcode: str
) -> None:
    by_blocks = workload(opcode, "5KB", Placement.BLOCKS, fill=FillLevel.HALF)
    in_genesis = workload(opcode, "5KB", Placement.GENESIS, fill=FillLevel.HALF)
    assert by_blocks.benchmark_block == in_genesis.benchmark_block
    # Set up by blocks, a set joins the shared group: every block is traced, the proof that its chain
    # executes the same on the shared genesis. In the genesis, its chain is its own group's: only the
    # benchmark block, which the traced check reads, is traced.
    assert joins_shared_group(by_blocks, over_background=False) and not joins_shared_group(in_genesis, False)
    assert not joins_shared_group(by_blocks, over_background=True)
    blocks_chain = build_own_chain(t8n, by_blocks, tmp_path / "blocks")
    genesis_chain = build_own_chain(t8n, in_genesis, tmp_path / "genesis", shares_group=False)
    *setup, benchmark = blocks_chain.blocks
    assert setup and all(len(block.t8n.traces) == len(block.txs) for block in blocks_chain.blocks)
    *genesis_setup, genesis_benchmark = genesis_chain.blocks
    assert not any(block.t8n.traces for block in genesis_setup)
    assert len(genesis_benchmark.t8n.traces) == len(genesis_benchmark.txs)
    check_chain(by_blocks, blocks_chain)
    check_chain(in_genesis, genesis_chain)

    contracts = in_genesis.generated_pre[0]
    factory = contracts.factory
    attack = in_genesis.benchmark_block.txs[0].to
    workload_accounts = {"0x" + a.hex() for a in (factory, attack, *contracts.addresses())}

    def contracts_root(alloc_path: Path, name: str) -> bytes:
        """State root of the factory, the attack contract and the set, alone."""
        write_alloc(tmp_path / f"{name}.json", read_alloc(alloc_path, only=workload_accounts))
        return genesis_state_root(t8n, tmp_path / f"{name}.json", tmp_path / f"{name}-root")

    before_blocks = contracts_root(blocks_chain.alloc_path_before_last_block, "blocks-before")
    before_genesis = contracts_root(genesis_chain.alloc_path_before_last_block, "genesis-before")
    assert before_blocks == before_genesis
    assert contracts_root(blocks_chain.post_alloc_path, "b-after") == contracts_root(genesis_chain.post_alloc_path, "g-after")

    measured_blocks, measured_genesis = blocks_chain.blocks[-1], genesis_chain.blocks[-1]
    assert [tx.raw for tx in measured_blocks.txs] == [tx.raw for tx in measured_genesis.txs]
    assert [r["gasUsed"] for r in measured_blocks.t8n.receipts] == [r["gasUsed"] for r in measured_genesis.t8n.receipts]


@pytest.mark.integration
@pytest.mark.parametrize("opcode", ["extcodesize", "extcodehash", "extcodecopy"])
def test_the_attack_reads_exactly_the_n_contracts_and_what_the_pre_state_holds(
    t8n: TransitionTool, tmp_path: Path, opcode: str
) -> None:
    """Independent of balgen's code model: the sizes, hashes and last words are taken from the
    genesis file t8n ran on, and compared with what the attack contract summed in storage."""
    built = workload(opcode, "2KB", Placement.GENESIS, fill=FillLevel.MAX)
    chain = build_own_chain(t8n, built, tmp_path)
    n = built.parameters["contracts_read"]
    factory = bytes.fromhex(built.parameters["factory"][2:])
    digest = bytes.fromhex(built.parameters["init_code_hash"][2:])
    set_addresses = {"0x" + create2_address(factory, salt, digest).hex() for salt in range(n)}

    codes = {address: bytes.fromhex(account["code"][2:]) for address, account in iter_alloc(chain.genesis_alloc_path) if address in set_addresses}
    assert len(codes) == n and {len(code) for code in codes.values()} == {2048}
    assert len({keccak(code) for code in codes.values()}) == n

    read = {"0x" + entry.address.hex() for entry in chain.blocks[-1].access_list_accounts()} & set_addresses
    assert read == set_addresses  # every contract of the set read, each once (every access cold)
    assert not {"0x" + create2_address(factory, n, digest).hex()} & {"0x" + e.address.hex() for e in chain.blocks[-1].access_list_accounts()}

    value = {
        "extcodesize": len,
        "extcodehash": lambda code: int.from_bytes(keccak(code), "big"),
        "extcodecopy": lambda code: int.from_bytes(code[-32:], "big"),
    }[opcode]
    attack = "0x" + built.benchmark_block.txs[0].to.hex()
    stored = read_alloc(chain.post_alloc_path, only=[attack])[attack]["storage"]
    storage = {int(slot, 16): int(value, 16) for slot, value in stored.items()}
    assert storage[SUM_SLOT] == (1 + sum(value(code) for code in codes.values())) % 2**256
    assert storage[NEXT_SALT_SLOT] == n + 1


OPCODES = ("extcodesize", "extcodehash", "extcodecopy")


def reduced_set_names(placement: str) -> list[str]:
    """
    One 1M fixture per size, the opcode rotating with the size (and shifted
    between the placements): every size and every opcode runs in both
    placements, at a third of the fills and geth starts of every pair. The
    set's contracts and code do not depend on the opcode reading them, and
    their number only on the fill level: `max` reads about 25 contracts at
    1M, greedy about 300 (eleven times the bytes to create, write and import,
    in setup transactions of the same kind; greedy sets of 0.5 KB are
    imported in tests/test_import_geth.py).
    """
    shift = 0 if placement == "blocks" else 1
    return [f"{OPCODES[(i + shift) % len(OPCODES)]}-max-{size}-1M" for i, size in enumerate(CODE_SIZES)]


@pytest.fixture(scope="module", params=["genesis", "blocks"])
def reduced_sets(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], str]:
    """A contract set of every size at 1M gas (`max`), filled through `balgen fill`, its test ids and placement."""
    names = reduced_set_names(request.param)
    output = fill_fixtures(
        tmp_path_factory.mktemp(f"sets-{request.param}"), "--setup", request.param, "--gas-benchmark-values", "1",
        "--code-sizes", "all", "-k", " or ".join(names),
    )  # in a fork of this process (no new interpreter's imports), without workers: for eight small fixtures,
    # starting two costs more CPU than it saves time
    return output, names, request.param


GETH_NODE_SIZES = {"blocks": CODE_SIZES, "genesis": ("64KB",)}
"""
The sizes a geth node imports through the Engine API. Set up by blocks,
every set joins the shared pre-alloc group, so one node imports every size
(the setup calls' shapes: contracts a call within 2^24, and one a call above
it, the rest in EIP-8037's reservoir, above Osaka's code size limit). In the
genesis each set is a pre-alloc group of its own, one node per fixture (a
geth start costs about 3 CPU-s, most of it KZG set-up), and a set is state
geth reads the same way at any size, from the genesis file balgen writes for
it without regard to code size: the largest. `evm blocktest`, geth's own
block processing, runs every size in both placements from the fixture's
genesis.
"""


@pytest.mark.integration
def test_reduced_sets_of_every_size_import_into_geth(
    reduced_sets: tuple[Path, list[str], str], tmp_path: Path
) -> None:
    reduced_sets, names, placement = reduced_sets
    engine_x = sorted((reduced_sets / "blockchain_tests_engine_x").glob("for_*/**/*.json"))
    assert sorted(path.stem for path in engine_x) == sorted(names)
    on_node = [name for name in names if name.rsplit("-", 2)[-2] in GETH_NODE_SIZES[placement]]
    code = run_replay(
        [str(reduced_sets), "--format", "engine_x", "-k", " or ".join(on_node), "--warmup", "0", "--repeat", "1",
         "--agreement", "record", "--settle-limit", "0", "--output", str(tmp_path)]
    )
    results = json.loads((tmp_path / "results.json").read_text())
    verdicts = {t["test_id"]: t["verdict"] for t in results["tests"]}
    assert code == 0 and sorted(verdicts) == sorted(on_node) and set(verdicts.values()) == {"passed"}, verdicts
    blockchain_tests = sorted((reduced_sets / "blockchain_tests").glob("for_*/**/*.json"))
    assert len(blockchain_tests) == len(CODE_SIZES)
    # One `evm blocktest` of the folder runs every file in it (one process, not one a file).
    blocktest = subprocess.run(
        [str(pinned_evm()), "blocktest", str(reduced_sets / "blockchain_tests")], capture_output=True, text=True, check=False
    )
    ran = json.loads(blocktest.stdout)
    assert blocktest.returncode == 0 and all(e["pass"] for e in ran), blocktest.stderr[-1000:]
    assert sorted(e["name"] for e in ran) == sorted(path.stem for path in blockchain_tests)
    groups = set()
    for path in engine_x:
        fixture = next(iter(json.loads(path.read_text()).values()))
        assert "postStateHash" in fixture  # the post-state by its root
        groups.add(fixture["preHash"])
    # Set up by blocks the sets share the run's group; in the genesis each is a group of its own.
    assert len(groups) == (1 if placement == "blocks" else len(engine_x)), groups
