"""
`invalid_bal_<family>`: each lie is the named difference and nothing else, the fixtures carry it as
execution-spec-tests expects, and the replay times and checks the rejection (reth's: test_invalid_bal_reth.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import rlp

from balgen.chain.bal import AccountChanges, encoded_list, iter_block_access_list
from balgen.chain.invalid_block import CorruptionImpossible, corrupted_list, encoded_account
from balgen.generators.catalog import all_planned_workloads, families, family_by_name
from balgen.generators.invalid_bal import FAMILY_PREFIX
from balgen.ethereum.forks import AMSTERDAM
from balgen.model.invalid_access_list import Corruption, HeaderHash, InvalidAccessList, every_invalid_access_list
from balgen.model.workload import FillLevel, Placement, WorkloadParams
from balgen.plumbing.errors import BadInput
from balgen.plumbing.toolchain import pinned_geth_bal_switch
from balgen.replay.engine_payloads import parse_payload_directives
from balgen.replay.sibling_blocks import payload_header
from balgen.replay.rejections import NOT_REPEATED, rejection_executions, rejection_reason_problem, time_rejections
from balgen.commands.report import run_report
from balgen.results.measurements import Execution, Role, benchmark_statistics, rejection_statistics
from balgen.results.schema import FixtureResult, RunResult, RunState, Verdict

from fill_runs import shared_fill
from replay_runs import replayed_engine_x

SYSTEM = b"\x00" * 19 + b"\x02"
SENDER_A = b"\x10" * 20
SENDER_B = b"\x20" * 20
CONTRACT = b"\x30" * 20
BOUND = 500

ACCOUNTS = (
    AccountChanges(SYSTEM, {1: [(0, 7)]}, (3,), (), (), ()),
    AccountChanges(SENDER_A, {}, (), ((1, 10**18 - 5),), ((1, 1),), ()),
    AccountChanges(SENDER_B, {}, (), ((2, 10**18 - 6),), ((2, 1),), ()),
    AccountChanges(CONTRACT, {5: [(1, 9), (2, 11)], 2**255: [(2, 1)]}, (6, 2**256 - 1), (), (), ()),
)
TRUE_LIST = encoded_list(encoded_account(account) for account in ACCOUNTS)


def lie(corruption: Corruption) -> list[AccountChanges]:
    """The true list with `corruption` made in it, decoded."""
    wrong = corrupted_list(TRUE_LIST, corruption, frozenset({SENDER_A, SENDER_B}), frozenset({SYSTEM}), BOUND)
    return list(iter_block_access_list(wrong))


def by_address(accounts: list[AccountChanges]) -> dict[bytes, AccountChanges]:
    return {account.address: account for account in accounts}


def test_the_encoder_gives_back_t8ns_bytes() -> None:
    """The lie is made by decoding and encoding again: the true list must come back byte for byte."""
    assert [encoded_account(account) for account in iter_block_access_list(TRUE_LIST)] == [
        encoded_account(account) for account in ACCOUNTS
    ]
    assert list(iter_block_access_list(TRUE_LIST)) == list(ACCOUNTS)


def test_missing_read_leaves_out_one_read_of_the_workloads_own() -> None:
    contract = by_address(lie(Corruption.MISSING_READ))[CONTRACT]
    assert tuple(contract.storage_reads) == (2**256 - 1,)
    assert by_address(lie(Corruption.MISSING_READ))[SYSTEM] == ACCOUNTS[0], "a system contract's entry is never the lie"


def test_missing_write_leaves_out_one_slot_with_its_changes() -> None:
    contract = by_address(lie(Corruption.MISSING_WRITE))[CONTRACT]
    assert dict(contract.storage_changes) == {2**255: [(2, 1)]}


def test_wrong_value_changes_one_post_value_only() -> None:
    contract = by_address(lie(Corruption.WRONG_VALUE))[CONTRACT]
    assert dict(contract.storage_changes) == {5: [(1, 10), (2, 11)], 2**255: [(2, 1)]}


def test_extra_account_is_listed_in_its_place() -> None:
    accounts = lie(Corruption.EXTRA_ACCOUNT)
    extra = set(by_address(accounts)) - {account.address for account in ACCOUNTS}
    assert len(extra) == 1 and not by_address(accounts)[extra.pop()].changes_state
    assert [account.address for account in accounts] == sorted(account.address for account in accounts)


def test_missing_account_leaves_out_a_senders_entry() -> None:
    assert set(by_address(lie(Corruption.MISSING_ACCOUNT))) == {SYSTEM, SENDER_B, CONTRACT}


def test_wrong_index_moves_a_nonce_change_to_the_next_transaction() -> None:
    assert by_address(lie(Corruption.WRONG_INDEX))[SENDER_A].nonce_changes == ((2, 1),)


def test_out_of_order_breaks_the_ascending_addresses() -> None:
    addresses = [account.address for account in lie(Corruption.OUT_OF_ORDER)]
    assert sorted(addresses) == sorted(account.address for account in ACCOUNTS) and addresses != sorted(addresses)


def test_over_bound_lists_one_item_more_than_the_bound() -> None:
    accounts = lie(Corruption.OVER_BOUND)
    assert sum(1 + len(a.storage_changes) + len(a.storage_reads) for a in accounts) == BOUND + 1
    assert list(by_address(accounts)[CONTRACT].storage_reads) == sorted(by_address(accounts)[CONTRACT].storage_reads)


def test_undecodable_is_not_rlp() -> None:
    with pytest.raises(rlp.DecodingError):
        rlp.decode(corrupted_list(TRUE_LIST, Corruption.UNDECODABLE, frozenset(), frozenset(), BOUND))


def test_a_corruption_with_nothing_to_change_says_so() -> None:
    only_senders = encoded_list(encoded_account(account) for account in ACCOUNTS[1:3])
    with pytest.raises(CorruptionImpossible, match="no storage read"):
        corrupted_list(only_senders, Corruption.MISSING_READ, frozenset({SENDER_A}), frozenset(), BOUND)


EXECUTION_SPECS_BLOCK_EXCEPTIONS = {
    "INVALID_BLOCK_ACCESS_LIST", "INVALID_BAL_HASH", "INVALID_BAL_EXTRA_ACCOUNT", "INVALID_BAL_MISSING_ACCOUNT",
    "INCORRECT_BLOCK_FORMAT", "BLOCK_ACCESS_LIST_GAS_LIMIT_EXCEEDED", "INVALID_BLOCK_HASH",
}  # fmt: skip
"""The `BlockException` members of execution-specs' testing package a lying access list can raise."""


@pytest.mark.parametrize("lie", every_invalid_access_list(), ids=lambda lie: lie.name)
def test_every_expected_exception_is_execution_specs_own(lie: InvalidAccessList) -> None:
    names = lie.validation_error.split("|")
    assert all(name.startswith("BlockException.") for name in names)
    assert {name.removeprefix("BlockException.") for name in names} <= EXECUTION_SPECS_BLOCK_EXCEPTIONS
    if lie.header_hash is HeaderHash.STALE_HASH:
        assert "BlockException.INVALID_BAL_HASH" in names


def test_the_invalid_families_are_opt_in_and_selected_by_name() -> None:
    default = {planned.name for planned in all_planned_workloads(AMSTERDAM, [1_000_000], Placement.BLOCKS)}
    assert not any(name.startswith("invalid_bal") or name.startswith("bal_bound") for name in default)
    named = all_planned_workloads(AMSTERDAM, [1_000_000], Placement.BLOCKS, "invalid_bal")
    declaring = {FAMILY_PREFIX + family.name for family in families() if family.lies_it_cannot_tell is not None}
    assert {planned.family.name for planned in named} == declaring
    assert {"invalid_bal_mixed_dep", "invalid_bal_state_root", "invalid_bal_prefetch"} <= declaring
    prefetch = all_planned_workloads(AMSTERDAM, [1_000_000], Placement.BLOCKS, "prefetch")
    assert {planned.family.name for planned in prefetch} == {"prefetch"}, "a base family's name does not opt in"
    assert {p.family.name for p in all_planned_workloads(AMSTERDAM, [1_000_000], Placement.BLOCKS, "invalid_bal_prefetch-max")} == {
        "invalid_bal_prefetch"
    }
    assert len(named) == 3 * sum(len(family_by_name(name).variants) for name in declaring), "three fill levels"
    lies = {name: len(family_by_name(FAMILY_PREFIX + name).variants) for name in ("mixed_dep", "state_root", "prefetch")}
    assert lies == {"mixed_dep": 16, "state_root": 16, "prefetch": 18}, "mixed_dep and state_root read no slot they do not write"


def test_each_lie_gets_accounts_of_its_own() -> None:
    """Two lies about one base are two workloads in one pre-alloc group: no account may be shared."""
    family = family_by_name("invalid_bal_prefetch")
    made = [
        family.generator(WorkloadParams(AMSTERDAM, 1_000_000, FillLevel.MAX, variant=variant))
        for variant in family.variants[:2]
    ]
    base = family_by_name("prefetch").generator(WorkloadParams(AMSTERDAM, 1_000_000, FillLevel.MAX))
    assert made[0].name == "invalid_bal_prefetch-max-missing_read_rehashed-1M"
    assert set(made[0].pre).isdisjoint(made[1].pre) and set(made[0].pre).isdisjoint(base.pre)
    assert [tx.data for tx in made[0].benchmark_block.txs] == [tx.data for tx in base.benchmark_block.txs]


# -- the fixtures ---------------------------------------------------------------


def payload(index: int, phase: str, validation_error: str | None = None) -> dict:
    """An engineNewPayloads entry of a one-transaction-less V5 payload."""
    block = {
        "parentHash": "0x" + "11" * 32, "feeRecipient": "0x" + "22" * 20, "stateRoot": "0x" + "33" * 32,
        "receiptsRoot": "0x" + "44" * 32, "logsBloom": "0x" + "00" * 256, "blockNumber": hex(index + 1),
        "gasLimit": "0x1000", "gasUsed": "0x0", "timestamp": hex(12 * (index + 1)), "extraData": "0x",
        "prevRandao": "0x" + "00" * 32, "baseFeePerGas": "0x7", "blobGasUsed": "0x0", "excessBlobGas": "0x0",
        "blockHash": "0x" + f"{index + 1:064x}", "transactions": [], "withdrawals": [], "blockAccessList": "0xc0",
        "slotNumber": hex(index + 1),
    }  # fmt: skip
    entry = {"params": [block, [], "0x" + "00" * 32, []], "newPayloadVersion": "5", "forkchoiceUpdatedVersion": "4",
             "phase": phase}  # fmt: skip
    if validation_error is not None:
        entry["validationError"] = validation_error
    return entry


def directives_of(*entries: dict) -> tuple:
    """The checked directives of a fixture with these payloads."""
    return parse_payload_directives({"engineNewPayloads": list(entries)})


def test_a_rejection_before_the_benchmark_block_may_be_testing() -> None:
    directives = directives_of(payload(0, "setup"), payload(1, "testing", "BlockException.INVALID_BAL_HASH"), payload(1, "testing"))
    assert [d.expected_status for d in directives] == ["VALID", "INVALID", "VALID"]


@pytest.mark.parametrize(
    "entries",
    [
        (payload(0, "testing"), payload(1, "testing")),
        (payload(0, "testing", "BlockException.INVALID_BAL_HASH"), payload(0, "setup"), payload(1, "testing")),
    ],
    ids=["valid", "not just before"],
)
def test_another_payload_before_the_benchmark_block_may_not_be_testing(entries: tuple) -> None:
    with pytest.raises(BadInput, match="only payloads just before it that the fixture expects rejected"):
        directives_of(*entries)


@pytest.mark.parametrize(
    ("client", "expected", "answered", "accepted"),
    [
        ("Geth/v1.17.8-stable", "BlockException.INVALID_BLOCK_ACCESS_LIST", "access list hash mismatch, local: 1, remote: 2", True),
        ("Geth/v1.17.8-stable", "BlockException.INVALID_BLOCK_ACCESS_LIST", "invalid receipt root hash (remote: 1 local: 2)", False),
        ("Geth/v1.17.8-stable", "BlockException.INVALID_BAL_HASH|BlockException.INVALID_BLOCK_HASH", "blockhash mismatch, want 1, got 2", True),
        ("Geth/v1.17.8-stable", "BlockException.INCORRECT_BLOCK_FORMAT", "failed to decode BAL: rlp: value size exceeds available input length", True),
        ("reth/v2.5.1", "BlockException.INVALID_BLOCK_ACCESS_LIST", "EVM execution failed: database error: Bal error: Slot 0x1 not found in BAL for account 0x2", True),
        ("reth/v2.5.1", "BlockException.INVALID_BAL_HASH|BlockException.INVALID_BLOCK_HASH", "block access list hash mismatch: got 1, expected 2", True),
        ("reth/v2.5.1", "BlockException.INVALID_BAL_HASH", "gas used mismatch", False),
        ("Nethermind/v1.36", "BlockException.INVALID_BLOCK_ACCESS_LIST", "anything", True),
    ],
)  # fmt: skip
def test_the_clients_reason_is_checked_against_the_expected_exceptions(
    client: str, expected: str, answered: str, accepted: bool
) -> None:
    problem = rejection_reason_problem(client, expected, answered)
    assert (problem is None) is accepted, problem


@dataclass
class RecordingReplay:
    """A stand-in for the runner's test replay: what was sent, and when the client was restarted."""

    count_checks: list[str] = field(default_factory=list)
    steps: list[tuple] = field(default_factory=list)
    sent: list = field(default_factory=list)

    def send(self, directive, role: Role, repetition: int, *, restarted: bool, dropped: bool) -> None:
        self.steps.append(("send", role, repetition))
        self.sent.append(directive)

    def restart_client(self, number: int, block_hash: str) -> None:
        self.steps.append(("restart", number))


def own_hash(entry: dict) -> dict:
    """`entry` whose payload's `blockHash` is its header's hash, as a fill writes it."""
    entry["params"][0]["blockHash"] = "0x" + payload_header(5, entry["params"]).hash.hex()
    return entry


def test_each_timed_rejection_after_the_first_is_a_sibling_of_the_lie_on_the_running_client() -> None:
    lie = own_hash(payload(1, "testing", "BlockException.INVALID_BLOCK_ACCESS_LIST"))
    lie["params"][0]["blockAccessList"] = "0xc3c20102"
    directives = directives_of(payload(0, "setup"), own_hash(lie), own_hash(payload(1, "testing")))
    replay = RecordingReplay()
    time_rejections(replay, (directives[1],), rejection_executions(1, 2), cold=False)
    assert replay.steps == [
        ("send", Role.REJECTION_WARMUP, 0), ("send", Role.REJECTION, 1), ("send", Role.REJECTION, 2),
    ]  # fmt: skip
    assert replay.sent[0] is directives[1], "the first execution is the fixture's own lie"
    # Each a block the client has not seen: the same lie on the same parent, under another extraData and hash.
    assert len({d.block_hash for d in replay.sent}) == 3
    for sibling in replay.sent[1:]:
        block, original = sibling.params[0], directives[1].params[0]
        assert {k: v for k, v in block.items() if k not in ("extraData", "blockHash")} == {
            k: v for k, v in original.items() if k not in ("extraData", "blockHash")
        }
        assert block["blockHash"] == "0x" + payload_header(5, sibling.params).hash.hex()
        assert sibling.validation_error == directives[1].validation_error
    assert replay.count_checks == []


def test_with_cold_each_measured_rejection_follows_a_restart() -> None:
    directives = directives_of(own_hash(payload(0, "testing", "BlockException.INVALID_BAL_HASH")), payload(0, "testing"))
    replay = RecordingReplay()
    time_rejections(replay, (directives[0],), rejection_executions(1, 2), cold=True)
    assert replay.steps == [
        ("send", Role.REJECTION_WARMUP, 0),
        ("restart", 0), ("send", Role.REJECTION, 1),
        ("restart", 0), ("send", Role.REJECTION, 2),
    ]  # fmt: skip


def test_a_lie_refused_at_its_block_hash_is_sent_again_as_it_is() -> None:
    """The header commits to another list than the payload carries: no block exists that a client could remember."""
    directives = directives_of(payload(0, "testing", "BlockException.INVALID_BAL_HASH"), payload(0, "testing"))
    replay = RecordingReplay()
    time_rejections(replay, (directives[0],), rejection_executions(0, 3), cold=False)
    assert replay.sent == [directives[0]] * 3
    assert [step[1] for step in replay.steps] == [Role.REJECTION] * 3 and replay.count_checks == []


def test_a_lie_no_sibling_can_be_made_of_is_rejected_once_and_the_test_says_so() -> None:
    lie = payload(0, "testing", "BlockException.INVALID_BAL_HASH")
    del lie["params"][0]["slotNumber"]
    directives = directives_of(lie, payload(0, "testing"))
    replay = RecordingReplay()
    time_rejections(replay, (directives[0],), rejection_executions(1, 5), cold=False)
    assert replay.steps == [("send", Role.REJECTION, 0)]
    assert replay.count_checks == [NOT_REPEATED.format(problem="engine_newPayloadV5 params: KeyError 'slotNumber'")]


GETH_LIES = "invalid_bal_prefetch-max"
"""Every lie about prefetch at `max` (18), filled once for the session: each geth test replays what it needs of it."""


@pytest.fixture(scope="module")
def lies_for_geth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`GETH_LIES` at 1M, as `balgen fill` writes them; read only."""
    completed, output = shared_fill(tmp_path_factory, "--gas-benchmark-values", "1", "-k", GETH_LIES)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return output


@pytest.mark.integration
def test_filled_fixtures_send_the_lie_then_the_valid_block(lies_for_geth: Path) -> None:
    output = lies_for_geth
    assert not (output / "blockchain_tests").exists(), "the valid chain alone is no invalid-block fixture"
    files = sorted((output / "blockchain_tests_engine").rglob("*.json"))
    assert len(files) == 18
    for path in files:
        (name, fixture), = json.loads(path.read_text()).items()
        lie = InvalidAccessList.from_name(fixture["_info"]["workload"]["variant"])
        *setup, rejected, valid = fixture["engineNewPayloads"]
        assert rejected["validationError"] == lie.validation_error and "validationError" not in valid
        assert [p["phase"] for p in (*setup, rejected, valid)] == ["setup"] * len(setup) + ["testing", "testing"]
        assert valid["params"][0]["blockHash"] == fixture["lastblockhash"]
        wrong, right = (bytes.fromhex(p["params"][0]["blockAccessList"][2:]) for p in (rejected, valid))
        assert wrong != right and rejected["params"][0]["parentHash"] == valid["params"][0]["parentHash"]
        same_hash = rejected["params"][0]["blockHash"] == valid["params"][0]["blockHash"]
        assert same_hash is (lie.header_hash is HeaderHash.STALE_HASH), name
        if lie.corruption is not Corruption.UNDECODABLE:
            recorded = {a.address for a in iter_block_access_list(right)} ^ {a.address for a in iter_block_access_list(wrong)}
            assert len(recorded) == (1 if lie.corruption in (Corruption.EXTRA_ACCOUNT, Corruption.MISSING_ACCOUNT) else 0)


# -- the clients ----------------------------------------------------------------

KNOWN_GETH_FINDINGS = {
    "invalid_bal_prefetch-max-wrong_value_rehashed-1M": "invalid receipt root hash",
}
"""Lies geth v1.17.8 rejects for another reason than execution-specs' (docs/workloads.md, findings):
executing in parallel from the list, it runs the chase on the lying post-value and finds the receipts
wrong before it compares the list."""


@pytest.mark.integration
def test_geth_rejects_every_lie(lies_for_geth: Path, tmp_path: Path) -> None:
    """Each lie once, on one node: timing it (a warm-up, then a sibling of the lie) is the every-mode test's."""
    run = replayed_engine_x(lies_for_geth, tmp_path / "results", "--warmup", "0", "--repeat", "1")
    assert len(run["tests"]) == 18
    for test in run["tests"]:
        rejections = [e for e in test["executions"] if e["role"].startswith("rejection")]
        assert rejections, test["test_id"]
        assert all(e["status"] == "INVALID" and not e["known_before_send"] for e in rejections), test["test_id"]
        finding = KNOWN_GETH_FINDINGS.get(test["test_id"])
        if finding is not None:
            assert test["verdict"] == "failed" and finding in test["failure"], test["failure"]
            continue
        assert test["verdict"] == "passed", test["failure"]
        assert [e["role"] for e in rejections] == ["rejection"]
        assert test["time_to_reject_ns"]["count"] == 1
        assert test["statistics"]["new_payload_ns"]["count"] == 1, "the valid block is measured after the lie"


EVERY_MODE_SAMPLE = (
    "invalid_bal_prefetch-max and (missing_read_rehashed or wrong_value_rehashed or missing_account_rehashed"
    " or out_of_order_rehashed or undecodable_stale_hash)"
)
"""A lie no executing mode can take and an executionless node does (a read left out), one it takes only because
the lie is an intermediate value (prefetch's slot changes 33 times), one the root refutes (a sender left out),
one the list's own order refutes, and one the block hash refutes."""

ROOT_REFUTES = "missing_account_rehashed"
"""Of the sample, the lie every mode refutes, the executionless one by its root."""

REFUSED_AT_THE_HASH = "undecodable_stale_hash"
"""Of the sample, the lie whose header commits to another list than the payload carries: refused at the hash."""

EXECUTIONLESS_ACCEPTS = {"missing_read_rehashed", "wrong_value_rehashed"}
"""Of the sample, what geth-bal-switch's executionless mode accepts: neither lie changes the post-state it applies
(only each slot's last value is applied), so the root matches (docs/bal-modes.md lists every lie)."""

EVERY_GETH_MODE = "sequential,full,nobatchio,executionless"


@pytest.mark.integration
@pytest.mark.skipif(not pinned_geth_bal_switch().is_file(), reason="geth-bal-switch not built (make tools)")
def test_every_geth_mode_refuses_every_lie_but_executionless_takes_those_its_root_cannot_see(
    lies_for_geth: Path, tmp_path: Path
) -> None:
    every_mode = ("--modes", EVERY_GETH_MODE, "--warmup", "1", "--repeat", "1")
    run = replayed_engine_x(lies_for_geth, tmp_path / "results", "-k", EVERY_MODE_SAMPLE, *every_mode)
    assert len(run["tests"]) == 5 * 4
    for test in run["tests"]:
        lie = test["test_id"].removeprefix("invalid_bal_prefetch-max-").removesuffix("-1M")
        rejections = [e for e in test["executions"] if e["role"].startswith("rejection")]
        if test["mode"] == "executionless" and lie in EXECUTIONLESS_ACCEPTS:
            assert rejections[0]["status"] == "VALID" and "returned VALID, the fixture expects INVALID" in test["failure"]
            continue
        assert {e["status"] for e in rejections} == {"INVALID"}, (test["test_id"], test["mode"])
        finding = KNOWN_GETH_FINDINGS.get(test["test_id"]) if test["mode"] in ("full", "nobatchio") else None
        if finding is not None:
            assert finding in rejections[0]["validation_error"], rejections[0]["validation_error"]
            continue
        assert test["verdict"] == "passed", (test["mode"], test["failure"])
        # The rejection is timed as a block is, on the running node: a warm-up, then the measured one, a sibling of
        # the lie the node has not seen (a lie refused at the hash leaves no block to remember: it is sent again).
        assert [(e["role"], e["restarted_before"], e["known_before_send"]) for e in rejections] == [
            ("rejection-warmup", False, False), ("rejection", False, False),
        ], test["mode"]  # fmt: skip
        hashes = {e["block_hash"] for e in rejections}
        assert len(hashes) == (1 if lie == REFUSED_AT_THE_HASH else 2), (lie, test["mode"])
        assert test["time_to_reject_ns"]["count"] == 1
        assert test["statistics"]["new_payload_ns"]["count"] == 1, "the valid block is measured after the lie"
        # The mode is proven from the node's log of the valid block's sibling executions (`steps.prove_mode`).
        executed = [line for line in test["mode_proof"] if line.startswith(("execution on", "execution off"))]
        assert executed and executed[0].startswith("execution off") == (test["mode"] == "executionless"), test["mode_proof"]
        if test["mode"] == "executionless" and lie == ROOT_REFUTES:
            assert "invalid merkle root of the block access list applied without execution" in rejections[1]["validation_error"]
    assert {t["mode"] for t in run["tests"] if t["verdict"] == "passed" and ROOT_REFUTES in t["test_id"]} == set(
        EVERY_GETH_MODE.split(",")
    )


# -- the report -----------------------------------------------------------------


def execution(role: Role, milliseconds: float, status: str, reason: str | None = None) -> Execution:
    """One execution of a test's block (the lie, or the valid block) taking `milliseconds`."""
    return Execution(
        test_id="lie", role=role, repetition=0, payload_index=1, block_number=2, block_hash="0x" + "ab" * 32,
        gas_used=1_000_000, transaction_count=3, status=status, validation_error=reason,
        new_payload_ns=int(milliseconds * 1e6), forkchoice_updated_ns=None, known_before_send=False,
        restarted_before=role is Role.REJECTION, own_timing=None,
    )  # fmt: skip


def written_run(folder: Path, label: str, reject_ms: float, valid_ms: float) -> Path:
    """A run of one test whose lie was rejected in `reject_ms` and whose valid block took `valid_ms`."""
    executions = [
        execution(Role.REJECTION_WARMUP, 3 * reject_ms, "INVALID", "access list hash mismatch"),
        *(execution(Role.REJECTION, reject_ms * f, "INVALID", "access list hash mismatch") for f in (0.99, 1, 1.01)),
        *(execution(Role.MEASURED, valid_ms * f, "VALID") for f in (0.99, 1, 1.01)),
    ]
    run = RunResult(
        label=label, balgen_version="0", started_at="2026-01-01T00:00:00+00:00", fixtures_path="f", keyword=None,
        warmup=1, repeat=3, cold=False, fail_fast=False, target={"kind": "managed"}, state=RunState.COMPLETE,
        tests=[FixtureResult(
            test_id="lie", fixture_name="lie", path="f.json", format="blockchain_test_engine_x", genesis_hash="0x" + "cd" * 32,
            verdict=Verdict.PASSED, failure=None, benchmark_gas_used=1_000_000, executions=executions,
            statistics=benchmark_statistics(executions), time_to_reject_ns=rejection_statistics(executions),
        )],
    )  # fmt: skip
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(run.model_dump_json())
    return folder


def test_the_report_puts_the_time_to_reject_beside_the_valid_blocks(tmp_path: Path) -> None:
    runs = [written_run(tmp_path / "a", "a", 40.0, 20.0), written_run(tmp_path / "b", "b", 10.0, 20.0)]
    assert run_report([*map(str, runs), "--output", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    section = report.split("## Time to reject a lying access list, beside the valid block's")[1]
    rows = [line for line in section.splitlines() if line.startswith("| lie ")]
    assert rows == [
        "| lie | a | 40.00 | 20.00 | 2.00 | 3 | access list hash mismatch |",
        "| lie | b | 10.00 | 20.00 | 0.50 | 3 | access list hash mismatch |",
    ], "the warm-up's rejection is left out of the median"
