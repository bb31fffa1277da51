"""
`balgen export spamoor` read back the way spamoor reads it, and compared with the fixtures.

spamoor's rules below are transcribed from its source at 43cad30
(`scenario/config_validator.go`, `scenarios/replay-eest/{replayeest,types}.go`,
`spamoor/walletpool.go`, `daemon/configs/configs.go`); the reader here is
written from those rules, not from the exporter. What it proves:

- every file reachable from `all.yaml` uses only keys spamoor declares, sets a
  seed unique across the export, carries no per-transaction fee field, keeps
  every gas limit within 2^24 and only uses placeholders that resolve;
- replaying each payload as replay-eest does (fresh wallets, deployer first,
  then one run per sender, `$contract[N]` = CREATE(deployer, N - 1)) sends the
  fixture's transactions, each exactly once: the same creations, data, gas
  limits and values, in the fixture's order, with only the senders and the
  deployed addresses differing;
- the fixture files `balgen fill` writes hold exactly those workload
  transactions, so the export sends what the fixtures contain;
- every dependency of the fixture (a storage conflict or the use of a
  deployed contract) is ordered by something spamoor guarantees (one wallet's
  nonces, or a one-transaction run that replay-eest awaits in full), and each
  payload is exactly one of the fixture's dependency groups;
- bad input and workloads spamoor cannot run are one line, exit code 2 and no
  files; a previous export is replaced only by a complete one; the same
  command writes the same bytes.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from eth_hash.auto import keccak

from balgen.chain.alloc import genesis_entries, iter_alloc, read_alloc, write_alloc_entries
from balgen.chain.builder import BuiltChain, build_chain
from balgen.chain.t8n import TransitionTool
from balgen.commands.export import run_export
from balgen.fill.session import build_own_chain
from balgen.ethereum.forks import Fork, fork_by_name
from balgen.generators.deterministic_deployment import DETERMINISTIC_DEPLOYER, deterministic_deployer
from balgen.model.family import Family, PlannedWorkload
from balgen.generators.catalog import all_planned_workloads, default_families, families, planned_workloads
from balgen.model.keys import Sender, create_address, sender
from balgen.plumbing.toolchain import pinned_evm
from balgen.export.addresses import ownership
from balgen.export.chain_order import ordered_transactions
from balgen.model.workload import (
    Account, AddressReference, BlockSpec, FillLevel, Origin, Phase, Placement, TxAccess, TxSpec, Workload,
    WorkloadParams,
)

from fill_runs import shared_suite_fill

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
TX_GAS_CAP = 2**24
GWEI = 10**9

# --- spamoor's rules (43cad30) ------------------------------------------------------

ENTRY_KEYS = {"scenario", "name", "description", "config", "start", "group", "group_config"}
"""`ConfigImportItem` fields besides `include` (daemon/configs/configs.go)."""
WALLET_KEYS = {
    "wallet_count", "refill_amount", "refill_balance", "refill_interval", "seed", "funding_gas_limit", "fee_strategy",
}
"""`WalletPoolConfig` yaml tags (spamoor/walletpool.go), allowed in every scenario's config."""
SCENARIO_KEYS = {
    "replay-eest": {
        "total_count", "throughput", "max_pending", "max_wallets", "rebroadcast", "base_fee", "tip_fee",
        "base_fee_wei", "tip_fee_wei", "timeout", "payload_timeout", "client_group", "payload_file",
        "fixtures_release", "fixtures_pattern", "fixtures_exclude", "start_offset", "skip_postchecks", "log_txs",
    },
}
"""`ScenarioOptions` yaml tags per scenario; config_validator.go rejects any other key."""
PAYLOAD_KEYS = {"name", "prerequisites", "txs", "postcheck"}
TX_KEYS = {
    "from", "type", "to", "data", "gas", "gasPrice", "maxFeePerGas", "maxPriorityFeePerGas", "value",
    "accessList", "blobCount", "authorizationList", "fixtureBaseFee",
}
FEE_KEYS = {"gasPrice", "maxFeePerGas", "maxPriorityFeePerGas", "fixtureBaseFee"}
"""Per-transaction fee fields: replay-eest ignores them; the export must not pretend to set fees."""
PLACEHOLDER = re.compile(r"\$(contract|sender)\[(\d+)\]")
SENDER = re.compile(r"sender\[(\d+)\]")
DEPLOYER = "deployer"


# --- reading an export as spamoor does ------------------------------------------------


def load(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)


@dataclass(frozen=True)
class Spammer:
    """One spammer entry, with the payload file its config references."""

    file: str
    entry: dict[str, Any]
    payloads: list[dict[str, Any]]


REUSE = ".reuse.yaml"


def run_files(folder: Path) -> list[str]:
    """The files `all.yaml` includes, then every `<name>.reuse.yaml`, which must follow an included `<name>.yaml`."""
    included = []
    for item in load(folder / "all.yaml"):
        assert set(item) == {"include"}, f"all.yaml items are includes only: {item}"
        included.append(item["include"])
    reuse = sorted(path.name for path in folder.glob(f"*{REUSE}"))
    assert all(name.removesuffix(REUSE) + ".yaml" in included for name in reuse), f"reuse files without a first run: {reuse}"
    others = {path.name for path in folder.glob("*.yaml")} - {"all.yaml", *included, *reuse}
    assert not others, f"exported files no run reaches: {others}"
    return included + reuse


def spammers(folder: Path) -> list[Spammer]:
    """Every spammer of the export (all.yaml's and the reuse runs), checking the files' key sets on the way."""
    found = []
    for name in run_files(folder):
        included = folder / name
        for entry in load(included):
            assert set(entry) <= ENTRY_KEYS, f"{included.name}: unknown entry keys {set(entry) - ENTRY_KEYS}"
            scenario = entry["scenario"]
            assert scenario in SCENARIO_KEYS, f"{included.name}: scenario {scenario!r} is not one the export targets"
            allowed = SCENARIO_KEYS[scenario] | WALLET_KEYS
            assert set(entry["config"]) <= allowed, f"{included.name}: unknown keys {set(entry['config']) - allowed}"
            payload_file = load(folder / entry["config"]["payload_file"])
            assert set(payload_file) == {"payloads"}, f"{included.name}: payload file keys {set(payload_file)}"
            found.append(Spammer(name, entry, payload_file["payloads"]))
    return found


@dataclass(frozen=True)
class LiveTx:
    """A transaction as replay-eest sends it: which wallet, its nonce and run, resolved fields."""

    wallet: str
    nonce: int
    run: int
    run_size: int
    to: bytes | None
    data: bytes
    gas: int
    value: int
    created: bytes | None


def run_order(txs: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """replay-eest's runs: every deployer transaction first, then each run of consecutive same-sender ones."""
    runs = [[tx for tx in txs if tx["from"] == DEPLOYER]]
    for tx in txs:
        if tx["from"] == DEPLOYER:
            continue
        if len(runs) > 1 and runs[-1][0]["from"] == tx["from"]:
            runs[-1].append(tx)
        else:
            runs.append([tx])
    return [run for run in runs if run]


def resolve(text: str, addresses: dict[str, bytes]) -> str:
    """Replace placeholders as replay-eest does (40 hex digits, no 0x); an unknown one fails the test."""

    def name(match: re.Match[str]) -> str:
        assert match.group(0) in addresses, f"placeholder {match.group(0)} does not resolve"
        return addresses[match.group(0)].hex()

    resolved = PLACEHOLDER.sub(name, text)
    assert "$" not in resolved, f"unrecognised placeholder in {text[:80]}"
    return resolved


def live_transactions(payload: dict[str, Any], wallet_address: dict[str, bytes]) -> list[LiveTx]:
    """What replay-eest sends for `payload` from the given wallets, in the order it sends them."""
    txs = payload["txs"]
    deployer = wallet_address[DEPLOYER]
    creations = [tx for tx in txs if tx["from"] == DEPLOYER and not tx.get("to")]
    addresses = {f"$contract[{n}]": create_address(deployer, n - 1) for n in range(1, len(creations) + 1)}
    addresses |= {f"${name}": address for name, address in wallet_address.items() if name != DEPLOYER}
    nonces: dict[str, int] = defaultdict(int)
    live = []
    for run_index, run in enumerate(run_order(txs)):
        for tx in run:
            wallet = tx["from"]
            to = bytes.fromhex(resolve(tx["to"], addresses).removeprefix("0x")) if tx.get("to") else None
            assert to is None or len(to) == 20, f"{payload['name']}: `to` {tx['to']} is not an address"
            data = resolve(tx["data"], addresses)
            assert re.fullmatch(r"0x([0-9a-f]{2})*", data), f"{payload['name']}: data is not hex after resolution"
            nonce = nonces[wallet]
            nonces[wallet] += 1
            created = create_address(wallet_address[wallet], nonce) if to is None else None
            fields = (to, bytes.fromhex(data[2:]), tx["gas"], int(tx["value"], 16), created)
            live.append(LiveTx(wallet, nonce, run_index, len(run), *fields))
    return live


def wallets_for(spammer: str, payload: dict[str, Any]) -> dict[str, bytes]:
    """Distinct made-up live wallet addresses for one payload's deployer and senders."""
    names = {DEPLOYER} | {tx["from"] for tx in payload["txs"]}
    return {name: keccak(f"live/{spammer}/{payload['name']}/{name}".encode())[12:] for name in names}


# --- the fixture's side ---------------------------------------------------------------


@dataclass(frozen=True)
class FixtureTx:
    index: int
    tx: TxSpec
    access: TxAccess

    @property
    def created(self) -> bytes | None:
        return create_address(self.tx.sender.address, self.tx.nonce) if self.tx.to is None else None


def fixture_transactions(workload: Workload) -> list[FixtureTx]:
    """Set-up blocks then the benchmark block, as the fixture's chain holds them."""
    pairs = [(tx, access) for block in workload.blocks for tx, access in zip(block.txs, block.accesses)]
    return [FixtureTx(index, tx, access) for index, (tx, access) in enumerate(pairs)]


def replaced(data: bytes, mapping: dict[bytes, bytes]) -> bytes:
    """`data` with every 20-byte run equal to a mapped address replaced by its image."""
    out = bytearray()
    offset = 0
    while offset < len(data):
        window = data[offset : offset + 20]
        if len(window) == 20 and window in mapping:
            out += mapping[window]
            offset += 20
        else:
            out.append(data[offset])
            offset += 1
    return bytes(out)


def same_transaction(fixture: FixtureTx, live: LiveTx, to_live: dict[bytes, bytes]) -> bool:
    """Equal but for deployed addresses (mapped fixture -> live) and the sender."""
    tx = fixture.tx
    if (tx.to is None) != (live.to is None) or (tx.gas_limit, tx.value) != (live.gas, live.value):
        return False
    if tx.to is not None and to_live.get(tx.to, tx.to) != live.to:
        return False
    return replaced(tx.data, to_live) == live.data


def held_in(data: bytes, addresses: dict[bytes, int]) -> set[bytes]:
    """The addresses among `addresses` that `data` holds at any byte offset: each 20-byte window looked up,
    rather than each address searched for (a 30M contract set deploys thousands)."""
    return {data[offset : offset + 20] for offset in range(len(data) - 19)} & addresses.keys()


def dependencies(txs: list[FixtureTx]) -> set[tuple[int, int]]:
    """(earlier, later) pairs the fixture orders: storage conflicts, uses of a created contract
    (by a transaction or by contract code) and nonce moves of one creator."""
    pairs: set[tuple[int, int]] = set()
    last_write: dict[Any, int] = {}
    reads_since: dict[Any, list[int]] = defaultdict(list)
    for ftx in txs:
        for key in ftx.access.reads:
            if key in last_write:
                pairs.add((last_write[key], ftx.index))
            reads_since[key].append(ftx.index)
        for key in ftx.access.writes:
            for earlier in [last_write.get(key), *reads_since.pop(key, [])]:
                if earlier is not None and earlier != ftx.index:
                    pairs.add((earlier, ftx.index))
            last_write[key] = ftx.index
    deployed: dict[bytes, int] = {}
    for ftx in txs:
        for address in [ftx.created, *ftx.access.created]:
            if address is not None:
                deployed.setdefault(address, ftx.index)
    nonce_writer: dict[bytes, int] = {}
    for ftx in txs:
        named = {ftx.tx.to} | {a for a, _ in ftx.access.writes} | {a for a, _ in ftx.access.reads}
        named |= set(ftx.access.touched) | set(ftx.access.nonces) | held_in(ftx.tx.data, deployed)
        pairs |= {(deployed[a], ftx.index) for a in named if a in deployed and deployed[a] < ftx.index}
        for address in ftx.access.nonces:  # a CREATE moves its contract's nonce: runs of them are ordered
            if address in nonce_writer:
                pairs.add((nonce_writer[address], ftx.index))
            nonce_writer[address] = ftx.index
    return pairs


def groups_of(count: int, pairs: set[tuple[int, int]]) -> list[set[int]]:
    """Connected components of the dependency pairs."""
    parent = list(range(count))

    def find(item: int) -> int:
        while parent[item] != item:
            item = parent[item]
        return item

    for a, b in pairs:
        parent[find(a)] = find(b)
    components: dict[int, set[int]] = defaultdict(set)
    for index in range(count):
        components[find(index)].add(index)
    return list(components.values())


def left_out_by_reuse(spammer: Spammer, workload: Workload) -> set[int]:
    """A reuse run leaves out the set-up calls that create contracts (at chain-independent addresses)."""
    if not spammer.file.endswith(REUSE):
        return set()
    setup = sum(len(block.txs) for block in workload.setup_blocks)
    return {ftx.index for ftx in fixture_transactions(workload)[:setup] if ftx.tx.to is not None and ftx.access.created}


def match_workload(spammer: Spammer, workload: Workload) -> dict[int, tuple[int, LiveTx]]:
    """
    Pair every live transaction with the fixture transaction it is: payload by
    payload, each live transaction in send order with the next fixture
    transaction after the payload's previous match that is the same once
    deployed addresses are mapped. Returns fixture index -> (payload, live tx).
    A reuse run must send every fixture transaction but its contract-creating set-up calls.
    """
    left_out = left_out_by_reuse(spammer, workload)
    fixture = [ftx for ftx in fixture_transactions(workload) if ftx.index not in left_out]
    by_shape: dict[tuple[bool, int, int, int], list[FixtureTx]] = defaultdict(list)
    for ftx in fixture:
        by_shape[(ftx.tx.to is None, ftx.tx.gas_limit, ftx.tx.value, len(ftx.tx.data))].append(ftx)
    to_live: dict[bytes, bytes] = {}
    matched: dict[int, tuple[int, LiveTx]] = {}
    for number, payload in enumerate(spammer.payloads):
        previous = -1
        for live in live_transactions(payload, wallets_for(spammer.entry["name"], payload)):
            shape = (live.to is None, live.gas, live.value, len(live.data))
            candidates = [f for f in by_shape[shape] if f.index > previous and f.index not in matched]
            found = next((f for f in candidates if same_transaction(f, live, to_live)), None)
            assert found is not None, (
                f"{payload['name']}: live transaction {live.wallet}#{live.nonce} is no fixture transaction "
                f"following #{previous}"
            )
            if found.created is not None and live.created is not None:
                to_live[found.created] = live.created
            matched[found.index] = (number, live)
            previous = found.index
    assert sorted(matched) == [ftx.index for ftx in fixture], f"{workload.name}: fixture transactions not exported"
    return matched


def guaranteed_before(first: LiveTx, second: LiveTx) -> bool:
    """spamoor sends `second` only after `first` is mined: same wallet, or a one-transaction earlier run."""
    if first.wallet == second.wallet:
        return first.nonce < second.nonce
    return first.run < second.run and first.run_size == 1


def workload_of(spammer: Spammer) -> str:
    """The workload a spammer runs: its name, less the reuse run's suffix."""
    return spammer.entry["name"].removesuffix(".reuse")


def check_against_fixture(spammer: Spammer, workload: Workload) -> None:
    """The exported transactions are the fixture's; its dependencies hold; payloads are its groups."""
    matched = match_workload(spammer, workload)
    fixture = fixture_transactions(workload)
    pairs = dependencies(fixture)
    if left_out_by_reuse(spammer, workload):
        # What it left out ran in an earlier run; the rest keeps the fixture's order.
        pairs = {(a, b) for a, b in pairs if a in matched and b in matched}
        for earlier, later in sorted(pairs):
            assert guaranteed_before(matched[earlier][1], matched[later][1]), f"{spammer.file}: #{later} may overtake #{earlier}"
        return
    for earlier, later in sorted(pairs):
        (payload_a, live_a), (payload_b, live_b) = matched[earlier], matched[later]
        assert payload_a == payload_b, f"{workload.name}: dependent #{earlier} and #{later} in different payloads"
        assert guaranteed_before(live_a, live_b), f"{workload.name}: #{later} may overtake #{earlier}"
    payload_members: dict[int, set[int]] = defaultdict(set)
    for index, (payload, _) in matched.items():
        payload_members[payload].add(index)
    groups = groups_of(len(fixture), pairs)
    assert sorted(map(sorted, payload_members.values())) == sorted(map(sorted, groups)), (
        f"{workload.name}: payloads are not the fixture's dependency groups"
    )


# --- rule checks on every file ------------------------------------------------------------


def check_spamoor_rules(folder: Path) -> list[Spammer]:
    """Item 4: exact keys, unique seeds, no fee fields, gas within the cap, resolvable placeholders, sizing."""
    found = spammers(folder)
    seeds = [spammer.entry["config"]["seed"] for spammer in found]
    assert all(isinstance(seed, str) and seed for seed in seeds)
    assert len(set(seeds)) == len(seeds), "every spammer needs its own seed, or their wallets collide"
    for spammer in found:
        config = spammer.entry["config"]
        costs = []
        wallets = 0
        for payload in spammer.payloads:
            assert set(payload) <= PAYLOAD_KEYS, f"{payload['name']}: keys {set(payload) - PAYLOAD_KEYS}"
            for tx in payload["txs"]:
                assert set(tx) <= TX_KEYS, f"{payload['name']}: tx keys {set(tx) - TX_KEYS}"
                assert not set(tx) & FEE_KEYS, f"{payload['name']}: per-transaction fee fields {set(tx) & FEE_KEYS}"
                assert isinstance(tx["gas"], int) and 0 < tx["gas"] <= TX_GAS_CAP, f"{payload['name']}: gas {tx['gas']}"
                assert tx["type"] == 2 and (tx["from"] == DEPLOYER or SENDER.fullmatch(tx["from"]))
            indices = {int(m.group(1)) for tx in payload["txs"] if (m := SENDER.fullmatch(tx["from"]))}
            assert indices == set(range(1, len(indices) + 1)), f"{payload['name']}: sender[N] must count from 1"
            live = live_transactions(payload, wallets_for(spammer.entry["name"], payload))
            spend: dict[str, int] = defaultdict(int)
            for tx in live:
                spend[tx.wallet] += tx.gas * config["base_fee"] * GWEI + tx.value
            costs += spend.values()
            wallets += len(spend) + (DEPLOYER not in spend)
        assert config["total_count"] == len(spammer.payloads), spammer.file
        assert config["max_pending"] >= len(spammer.payloads) and config["throughput"] >= len(spammer.payloads)
        assert config["max_wallets"] >= wallets, f"{spammer.file}: payloads could not all hold their wallets at once"
        assert config["refill_amount"] >= max(costs), f"{spammer.file}: wallets funded below their spend"
    return found


# --- exporting ------------------------------------------------------------------------------


def export(folder: Path, *args: str) -> int:
    return run_export(["spamoor", "--output", str(folder), *args])


def planned(fork: str, gas: list[int], opt_in: bool = False) -> dict[str, PlannedWorkload]:
    """The workloads the fixtures are filled from, by name: the default suite's, with `opt_in` the opt-in families' too."""
    default = all_planned_workloads(fork_by_name(fork), gas, Placement.BLOCKS)
    asked = [p for f in families() if f.opt_in and opt_in for p in planned_workloads(f, fork_by_name(fork), gas, Placement.BLOCKS)]
    return {p.name: p for p in [*default, *asked]}


@pytest.fixture(scope="module")
def osaka_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every family, fill level and variant at 1M and 5M gas on Osaka (no transaction above 2^24)."""
    folder = tmp_path_factory.mktemp("osaka") / "spamoor"
    assert export(folder, "--fork", "Osaka", "--gas-benchmark-values", "1,5") == 0
    return folder


AMSTERDAM_SELECTIONS = (
    ("1", "mixed_dep"), ("1", "interact"), ("1", "state_root"), ("1", "prefetch-max"), ("1", "serial_chain"),
    ("1", "keccak_chain"), ("30", "serial_chain-max"), ("30", "mixed_dep-max-group2"), ("30", "interact-max"),
    ("1", "extcode"), ("30", "extcodesize-greedy"), ("1", "cross_contract_chase"), ("1", "compute_then_sload-max"),
    ("1", "prefetch_miss-half"), ("1", "coinbase_serialization"),
)
"""Every family on Amsterdam, as far as spamoor can run it: prefetch's half and greedy set-up calls
already exceed 2^24 at 1M (see the bad-input test), and larger gas values push more set-ups over.
The opt-in families are exported as they are filled, when `-k` names them."""


@pytest.fixture(scope="module")
def amsterdam_exports(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """One export folder per selection in AMSTERDAM_SELECTIONS."""
    folders = []
    for gas, keyword in AMSTERDAM_SELECTIONS:
        folder = tmp_path_factory.mktemp("amsterdam") / "spamoor"
        assert export(folder, "--gas-benchmark-values", gas, "-k", keyword) == 0, keyword
        folders.append(folder)
    return folders


# --- tests ------------------------------------------------------------------------------------


def test_every_family_exports_the_fixture_transactions_on_osaka(osaka_export: Path) -> None:
    found = check_spamoor_rules(osaka_export)
    workloads = planned("Osaka", [1_000_000, 5_000_000])
    assert {workload_of(spammer) for spammer in found} == set(workloads)
    assert {p.family.name for p in workloads.values()} == {family.name for family in default_families()}
    for spammer in found:
        check_against_fixture(spammer, workloads[workload_of(spammer)].build())


def test_every_family_exports_the_fixture_transactions_on_amsterdam(amsterdam_exports: list[Path]) -> None:
    workloads = planned("Amsterdam", [1_000_000, 30_000_000], opt_in=True)
    names = set()
    for folder in amsterdam_exports:
        for spammer in check_spamoor_rules(folder):
            check_against_fixture(spammer, workloads[workload_of(spammer)].build())
            names.add(workload_of(spammer))
    parity = {"cross_contract_chase", "compute_then_sload", "prefetch_miss", "coinbase_serialization"}
    assert {workloads[name].family.name for name in names} == {family.name for family in default_families()} | parity
    assert "serial_chain-max-30M" in names and "mixed_dep-max-group2-30M" in names


FILLED = (
    "serial_chain-max-1M", "keccak_chain-half-1M", "mixed_dep-max-group2-1M", "interact-max-independent_pairs-1M",
    "interact-max-single_contract-1M", "state_root-half-single_contract-1M", "state_root-half-contract_per_tx-1M",
    "prefetch-max-1M",
)
"""One or two workloads per family whose fixture files, as `balgen fill` writes them, are compared with the export."""


def fixture_file_transactions(path: Path) -> list[tuple[bytes, int, bytes | None, bytes, int, int]]:
    """(sender, nonce, to, data, gas limit, value) of every transaction of a blockchain_test file, in chain order."""
    (fixture,) = json.loads(path.read_text()).values()
    return [
        (
            bytes.fromhex(tx["sender"][2:]),
            int(tx["nonce"], 16),
            bytes.fromhex(tx.get("to", "0x")[2:]) or None,
            bytes.fromhex(tx["data"][2:]),
            int(tx["gasLimit"], 16),
            int(tx["value"], 16),
        )
        for block in fixture["blocks"]
        for tx in block["transactions"]
    ]


@pytest.mark.integration
def test_the_filled_fixtures_hold_the_transactions_the_export_sends(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The fixture files carry the model's transactions, and the export sends those (checked above).
    The fixtures are read from the session's fill of the default suite (a fixture on its own genesis
    does not depend on what else was filled: tests/test_fill_cli.py)."""
    completed, fixtures = shared_suite_fill(tmp_path_factory)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    workloads = planned("Amsterdam", [1_000_000])
    for name in FILLED:
        (path,) = fixtures.glob(f"blockchain_tests/*/*/{name}.json")
        workload = workloads[name].build()
        model = [
            (tx.sender.address, tx.nonce, tx.to, tx.data, tx.gas_limit, tx.value)
            for block in workload.blocks
            for tx in block.txs
        ]
        assert fixture_file_transactions(path) == model, f"{name}: the fixture is not the workload the export reads"
        assert export(tmp_path / name, "--gas-benchmark-values", "1", "-k", name) == 0
        (spammer,) = check_spamoor_rules(tmp_path / name)
        check_against_fixture(spammer, workload)


def comments(path: Path) -> str:
    return " ".join(line[1:].strip() for line in path.read_text().splitlines() if line.startswith("#"))


def test_the_yaml_says_where_spamoor_cannot_keep_the_shape(osaka_export: Path) -> None:
    chain = comments(osaka_export / "serial_chain-max-5M.yaml")
    assert "cross-sender dependency costs a block" in chain
    assert "share one sender" not in chain, "a chain's transactions do depend on each other"
    shared = comments(osaka_export / "state_root-max-single_contract-5M.yaml")
    assert "do not depend on each other" in shared and "share one sender" in shared
    groups = comments(osaka_export / "mixed_dep-max-group2-5M.yaml")
    assert "run as parallel payloads" in groups and "interleave" in groups
    assert "one deployer run" in comments(osaka_export / "prefetch-max-5M.yaml")


def test_a_chain_is_one_sender_run_after_its_deployment(osaka_export: Path) -> None:
    (payload,) = load(osaka_export / "payloads/keccak_chain-half-5M.yaml")["payloads"]
    senders = [tx["from"] for tx in payload["txs"]]
    assert senders[0] == DEPLOYER and "to" not in payload["txs"][0]
    assert set(senders[1:]) == {"sender[1]"}
    assert {tx["to"] for tx in payload["txs"][1:]} == {"$contract[1]"}


def test_the_same_command_writes_the_same_bytes(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    args = ["--fork", "Osaka", "--gas-benchmark-values", "1", "-k", "mixed_dep"]
    assert export(first, *args) == 0 and export(second, *args) == 0
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert all((first / f).read_bytes() == (second / f).read_bytes() for f in files)


# --- bad input and unexportable workloads ------------------------------------------------------


def one_line_exit_2(capsys: pytest.CaptureFixture[str], code: int, *expected: str) -> str:
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert all(text in err for text in expected), err
    return err


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--gas-benchmark-values", "abc"], "--gas-benchmark-values"),
        (["--fork", "Frontier"], "Frontier"),
        (["-k", "no-such-workload"], "matches no workload"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    output = tmp_path / "out"
    one_line_exit_2(capsys, export(output, *args), expected)
    assert list(tmp_path.iterdir()) == []


def test_unknown_export_target_is_a_usage_line(capsys: pytest.CaptureFixture[str]) -> None:
    one_line_exit_2(capsys, run_export(["fixtures"]), "usage: balgen export")


def test_an_existing_export_is_replaced_only_by_a_complete_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    output = tmp_path / "spamoor"
    assert export(output, "--fork", "Osaka", "--gas-benchmark-values", "1", "-k", "serial_chain-max") == 0
    before = {p: p.read_bytes() for p in output.rglob("*") if p.is_file()}
    with monkeypatch.context() as patched:
        one_line_exit_2(capsys, export_synthetic(patched, output, gas_above_cap()), "above the 2^24")
    assert {p: p.read_bytes() for p in output.rglob("*") if p.is_file()} == before
    assert export(output, "--fork", "Osaka", "--gas-benchmark-values", "1", "-k", "keccak_chain-max") == 0
    assert (output / "keccak_chain-max-1M.yaml").is_file() and not (output / "serial_chain-max-1M.yaml").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spamoor"], "temporary folders left behind"


def test_a_folder_that_is_not_an_export_is_never_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "mine"
    output.mkdir()
    (output / "notes.txt").write_text("keep me")
    one_line_exit_2(capsys, export(output, "--gas-benchmark-values", "1", "-k", "serial_chain-max"), "not replacing")
    assert [p.name for p in output.iterdir()] == ["notes.txt"]


# A contract set on a live chain: the exported payloads run by t8n from wallets the fixture never saw.


@pytest.fixture(scope="module")
def t8n() -> TransitionTool:
    return TransitionTool(pinned_evm())


def devnet_genesis(fork: Fork, wallets: dict[str, Sender], path: Path) -> Path:
    """A devnet's genesis: its system contracts, funded wallets, and the proxy where the fork does not predeploy it."""
    accounts = {wallet.address: Account(balance=10**24) for wallet in wallets.values()}
    if not fork.predeploys_deterministic_deployer:
        accounts[DETERMINISTIC_DEPLOYER] = deterministic_deployer()
    write_alloc_entries(path, genesis_entries(fork, sorted(accounts.items())))
    return path


def live_run(
    t8n: TransitionTool, fork: Fork, state: Path, payload: dict[str, Any], wallets: dict[str, Sender], workdir: Path
) -> BuiltChain:
    """`payload` as replay-eest sends it from `wallets` on the chain state `state`, one block per run."""
    live = live_transactions(payload, {name: wallet.address for name, wallet in wallets.items()})
    runs: dict[int, list[TxSpec]] = defaultdict(list)
    for tx in live:
        runs[tx.run].append(TxSpec(wallets[tx.wallet], tx.nonce, tx.to, tx.data, tx.gas, tx.value))
    blocks = [BlockSpec(Phase.SETUP, tuple(txs), (TxAccess(),) * len(txs)) for _, txs in sorted(runs.items())]
    return build_chain(t8n, fork, state, blocks, workdir, label=payload["name"])


def prefixed(prefix: str, wallets: dict[str, Sender]) -> dict[str, Sender]:
    return {f"{prefix}/{role}": wallet for role, wallet in wallets.items()}


def live_wallets(name: str, payload: dict[str, Any]) -> dict[str, Sender]:
    return {role: sender(name, role) for role in {DEPLOYER} | {tx["from"] for tx in payload["txs"]}}


def succeeded(chain: BuiltChain) -> list[bool]:
    """Per transaction sent, whether it was included and succeeded."""
    receipts = [receipt for block in chain.blocks for receipt in block.t8n.receipts]
    assert len(receipts) == sum(len(block.txs) for block in chain.blocks), "a transaction was rejected"
    return [receipt["status"] == "0x1" for receipt in receipts]


def accounts(path: Path, addresses: set[str]) -> dict[str, tuple[int, str, dict[str, str]]]:
    """(nonce, code, storage) of `addresses` in an alloc file; an absent account is left out."""
    return {
        address: (int(account.get("nonce", "0x0"), 16), account.get("code", "0x"), account.get("storage", {}))
        for address, account in read_alloc(path, only=addresses).items()
    }


@pytest.mark.integration
@pytest.mark.parametrize(
    ("fork_name", "keyword"),
    [("Amsterdam", "extcodesize-max"), ("Amsterdam", "extcodehash-half"), ("Amsterdam", "extcodecopy-greedy"),
     ("Osaka", "extcodesize-greedy")],
)
def test_a_contract_set_lands_at_the_fixture_addresses_on_a_live_chain(
    t8n: TransitionTool, tmp_path: Path, fork_name: str, keyword: str
) -> None:
    """
    Item 3: the exported set-up, sent from wallets unrelated to the fixture's
    on a fresh devnet genesis, leaves the factory and every contract of the
    set at the fixture's addresses with the fixture's nonces and code, and the
    attack reads them to the fixture's result. A second run on that chain
    with the reuse file does it again without the set-up, which the proxy
    would now refuse.
    """
    fork = fork_by_name(fork_name)
    folder = tmp_path / "spamoor"
    assert export(folder, "--fork", fork_name, "--gas-benchmark-values", "1", "-k", keyword) == 0
    ((_, first_file),) = [item.popitem() for item in load(folder / "all.yaml")]
    name = first_file.removesuffix(".yaml")
    workload = planned(fork_name, [1_000_000])[name].build()
    (payload,) = load(folder / "payloads" / f"{name}.yaml")["payloads"]
    (reuse_payload,) = load(folder / "payloads" / f"{name}.reuse.yaml")["payloads"]

    fixture = build_own_chain(t8n, workload, tmp_path / "fixture")
    fixture_attack = "0x" + workload.benchmark_block.txs[0].to.hex()
    fixture_before = dict(iter_alloc(fixture.alloc_path_before_last_block))
    genesis = {address for address, _ in iter_alloc(fixture.genesis_alloc_path)}
    created = {a for a, account in fixture_before.items() if a not in genesis and account.get("code")} - {fixture_attack}
    assert len(created) == 1 + workload.parameters["contracts_read"]  # the factory and the set

    first_wallets = live_wallets(f"devnet/{name}/first", payload)
    again_wallets = live_wallets(f"devnet/{name}/again", payload)
    reuse_wallets = live_wallets(f"devnet/{name}/reuse", reuse_payload)
    devnet = devnet_genesis(fork, {**prefixed("first", first_wallets), **prefixed("again", again_wallets),
                                   **prefixed("reuse", reuse_wallets)}, tmp_path / "devnet.json")
    first = live_run(t8n, fork, devnet, payload, first_wallets, tmp_path / "first")
    assert all(succeeded(first))
    live_attack = "0x" + create_address(first_wallets[DEPLOYER].address, 0).hex()
    assert live_attack != fixture_attack
    assert accounts(first.post_alloc_path, created) == accounts(fixture.alloc_path_before_last_block, created)
    fixture_result = accounts(fixture.post_alloc_path, {fixture_attack})[fixture_attack][2]
    assert accounts(first.post_alloc_path, {live_attack})[live_attack][2] == fixture_result

    chain_state = tmp_path / "after-first.json"
    write_alloc_entries(chain_state, iter_alloc(first.post_alloc_path))
    refused = live_run(t8n, fork, chain_state, payload, again_wallets, tmp_path / "refused")
    assert not succeeded(refused)[1]  # the proxy refuses to deploy the factory twice
    reuse = live_run(t8n, fork, chain_state, reuse_payload, reuse_wallets, tmp_path / "reuse")
    assert all(succeeded(reuse))
    reuse_attack = "0x" + create_address(reuse_wallets[DEPLOYER].address, 0).hex()
    assert accounts(reuse.post_alloc_path, {reuse_attack})[reuse_attack][2] == fixture_result


# Synthetic workloads (not families: the catalog is untouched) for what no family does yet.

OWNER = sender("synthetic", "deployer")
CALLER = sender("synthetic", "caller")
MAKER = sender("synthetic", "maker")
RUNTIME = bytes.fromhex("600160005500")
INIT_CODE = bytes.fromhex("6006600c60003960066000f3") + RUNTIME
CONTRACT = create_address(OWNER.address, 0)
CHILD = create_address(CONTRACT, 1)


def synthetic(benchmark: list[tuple[TxSpec, TxAccess]], setup: list[tuple[TxSpec, TxAccess]]) -> Workload:
    """A workload built from the model's types alone: set-up blocks of one transaction, then the benchmark."""
    blocks = tuple(BlockSpec(Phase.SETUP, (tx,), (access,)) for tx, access in setup)
    return Workload(
        family="synthetic",
        fill=FillLevel.MAX,
        variant=None,
        gas_benchmark_value=1_000_000,
        fork=fork_by_name("Osaka"),
        pre={account.address: Account(balance=10**18) for account in (OWNER, CALLER, MAKER)},
        setup_blocks=blocks,
        benchmark_block=BlockSpec(Phase.TESTING, tuple(t for t, _ in benchmark), tuple(a for _, a in benchmark)),
    )


def deploy(nonce: int = 0, code: bytes = INIT_CODE) -> tuple[TxSpec, TxAccess]:
    created = create_address(OWNER.address, nonce)
    return TxSpec(OWNER, nonce, None, code, 100_000), TxAccess(created={created: RUNTIME}, origins={created: Origin.DEPLOYED})


def call(to: bytes, data: bytes = b"", gas: int = 50_000, nonce: int = 0, naming: tuple[int, ...] = ()) -> tuple[TxSpec, TxAccess]:
    """A call; `naming` are the offsets in `data` where it names an address."""
    references = tuple(AddressReference(offset, data[offset : offset + 20]) for offset in naming)
    return TxSpec(CALLER, nonce, to, data, gas, references=references), TxAccess(writes={(to, 0): 1})


def export_synthetic(monkeypatch: pytest.MonkeyPatch, folder: Path, workload: Workload) -> int:
    family = Family("synthetic", lambda _params: workload)
    params = WorkloadParams(fork_by_name("Osaka"), 1_000_000, FillLevel.MAX, Placement.BLOCKS)
    monkeypatch.setattr("balgen.commands.export.all_planned_workloads", lambda *_a: [PlannedWorkload(family, params)])
    return export(folder)


def test_a_deployed_address_inside_calldata_becomes_a_placeholder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    precompile = bytes(19) + b"\x04"
    benchmark = [call(CONTRACT, b"\xaa" + CONTRACT + b"\xbb", naming=(1,)), call(precompile, CONTRACT, nonce=1, naming=(0,))]
    workload = synthetic(benchmark, [deploy()])
    assert export_synthetic(monkeypatch, tmp_path / "out", workload) == 0
    (spammer,) = check_spamoor_rules(tmp_path / "out")
    txs = spammer.payloads[0]["txs"]
    assert txs[1]["data"] == "0xaa$contract[1]bb" and txs[1]["to"] == "$contract[1]"
    assert txs[2]["to"] == "0x" + precompile.hex() and txs[2]["data"] == "0x$contract[1]"
    check_against_fixture(spammer, workload)


def sender_in_calldata() -> Workload:
    return synthetic([call(CONTRACT, CALLER.address, naming=(0,))], [deploy()])


def child_of_contract_code() -> Workload:
    maker = TxSpec(MAKER, 0, CONTRACT, b"", 100_000), TxAccess(
        created={CHILD: RUNTIME}, nonces={CONTRACT: 2}, origins={CHILD: Origin.CREATED_BY_CODE}
    )
    return synthetic([maker, call(CHILD)], [deploy()])


def creation_after_call() -> Workload:
    second = create_address(OWNER.address, 1)
    return synthetic([call(CONTRACT), deploy(1), call(second, CONTRACT, nonce=1, naming=(0,))], [deploy()])


def through_proxy(
    init_code: bytes, origin: Origin = Origin.SAME_ON_EVERY_CHAIN, naming: tuple[int, ...] = ()
) -> tuple[bytes, tuple[TxSpec, TxAccess]]:
    """A call to the deterministic deployment proxy deploying `init_code`'s contract, and that contract's address."""
    product = keccak(b"\xff" + DETERMINISTIC_DEPLOYER + bytes(32) + keccak(init_code))[12:]
    access = TxAccess(created={product: RUNTIME}, nonces={DETERMINISTIC_DEPLOYER: 2}, origins={product: origin})
    data = bytes(32) + init_code
    references = tuple(AddressReference(offset, data[offset : offset + 20]) for offset in naming)
    return product, (TxSpec(MAKER, 0, DETERMINISTIC_DEPLOYER, data, 200_000, references=references), access)


def proxy_product_of_chain_dependent_code() -> Workload:
    # Its init code names a wallet-deployed contract, so where the proxy puts it depends on the chain.
    product, deployment = through_proxy(INIT_CODE + CONTRACT, Origin.CREATED_BY_CODE, naming=(32 + len(INIT_CODE),))
    return synthetic([deployment, call(product)], [deploy()])


def test_a_creation_said_to_be_chain_independent_that_names_an_owned_address_is_a_generator_bug() -> None:
    product, deployment = through_proxy(INIT_CODE + CONTRACT, naming=(32 + len(INIT_CODE),))
    workload = synthetic([deployment, call(product)], [deploy()])
    with pytest.raises(ValueError, match="said to create contracts at the same addresses on every chain, but it names"):
        ownership(workload, ordered_transactions(workload))


def test_a_reference_the_data_does_not_hold_is_refused_by_the_model() -> None:
    with pytest.raises(ValueError, match="does not hold 0x"):
        TxSpec(CALLER, 0, CONTRACT, bytes(24), 50_000, references=(AddressReference(2, CONTRACT),))


def windows_naming(data: bytes, addresses: set[bytes]) -> set[int]:
    """Offsets of every 20-byte run of `data` equal to one of `addresses` (a scan, as an oracle)."""
    return {offset for offset in range(len(data) - 19) if data[offset : offset + 20] in addresses}


@pytest.mark.parametrize("fork", ["Osaka", "Amsterdam"])
def test_every_family_records_every_address_its_transactions_name(fork: str) -> None:
    """A scan for the workload's own addresses finds nothing the generator did not record, and every
    contract a transaction creates has its origin."""
    for planned_workload in all_planned_workloads(fork_by_name(fork), [1_000_000], Placement.BLOCKS, code_sizes=("0.5KB", "1KB")):
        workload = planned_workload.build()
        txs = ordered_transactions(workload)
        addresses = {*workload.pre, *(a for o in txs for a in o.access.created), *(o.tx.sender.address for o in txs)}
        for ordered in txs:
            recorded = {ref.offset for ref in ordered.tx.references}
            assert windows_naming(ordered.tx.data, addresses) <= recorded, f"{workload.name}: {ordered.label}"
            assert set(ordered.access.origins) == set(ordered.access.created)


def test_what_the_proxy_deploys_from_the_same_code_everywhere_stays_literal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    product, deployment = through_proxy(INIT_CODE)
    workload = synthetic([deployment, call(product)], [deploy()])
    assert export_synthetic(monkeypatch, tmp_path / "out", workload) == 0
    spammers_found = check_spamoor_rules(tmp_path / "out")
    sent = [tx for spammer in spammers_found for payload in spammer.payloads for tx in payload["txs"]]
    assert {"0x" + product.hex(), "0x" + DETERMINISTIC_DEPLOYER.hex()} <= {tx.get("to") for tx in sent}
    assert (tmp_path / "out" / "synthetic-max-1M.yaml").exists()
    assert not (tmp_path / "out" / "synthetic-max-1M.reuse.yaml").exists()  # created in the benchmark block


def gas_above_cap() -> Workload:
    return synthetic([call(CONTRACT, gas=TX_GAS_CAP + 1)], [deploy()])


@pytest.mark.parametrize(
    ("workload", "expected"),
    [
        (sender_in_calldata, "an account the fixture's genesis holds"),
        (child_of_contract_code, "created by contract code inside benchmark block tx 0"),
        (creation_after_call, "creates a contract after"),
        (gas_above_cap, "above the 2^24"),
        (proxy_product_of_chain_dependent_code, "created by contract code inside benchmark block tx 0"),
    ],
)
def test_what_spamoor_cannot_name_or_send_is_one_line_and_no_files(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    workload: Any,
    expected: str,
) -> None:
    code = export_synthetic(monkeypatch, tmp_path / "out", workload())
    one_line_exit_2(capsys, code, "synthetic-max-1M", "benchmark block tx", expected)
    assert not (tmp_path / "out").exists()
