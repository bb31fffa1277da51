"""
`balgen verify`: two EVMs and an engine import agree with every fixture, and a
fixture changed by one field fails, in a row naming the fixture and the field.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from balgen.plumbing.toolchain import pinned_revme, tools_bin
from balgen.commands.verify import Selection, Tools, balgens, plan, run_verify
from balgen.verify.ethereumjs import BATCHES_PER_WORKER, EthereumjsInstall, EthereumjsRuns, batches
from balgen.verify.evm_runners import revm_outcomes
from balgen.verify.outcomes import Verifier

from fill_runs import run_fill
from in_process import balgen_in_process

NAME = "serial_chain-max-1M"
requires_revme = pytest.mark.skipif(not pinned_revme().is_file(), reason="revme not built (make tools needs cargo)")


def verified(*argv: str | Path) -> tuple[int, str]:
    """`balgen verify ARGV` in-process: its exit code and what it printed (rows wide enough not to wrap)."""
    out = io.StringIO()
    code = run_verify([str(arg) for arg in argv], console=Console(file=out, width=1000))
    return code, out.getvalue()


def failing_rows(output: str) -> list[str]:
    return [line for line in output.splitlines() if "FAIL" in line]


def copy_of(fill: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(fill, tmp_path / "fixtures"))


def edit_blockchain_test(root: Path, change: Any) -> None:
    (path,) = (root / "blockchain_tests").rglob("for_*/**/*.json")
    document = json.loads(path.read_text())
    change(document[NAME])
    path.write_text(json.dumps(document, indent=4))


ENGINE_UNCHANGED = "engine"
"""Left out where only the blockchain_test is changed: the engine import reads the engine_x files, which
`test_a_filled_fixture_passes_every_verifier_in_fill_verify` imports as filled, and a node start is about 3 CPU-s."""


@pytest.mark.integration
@requires_revme
def test_a_changed_post_state_value_fails_both_evms_naming_the_slot(serial_chain_fill: Path, tmp_path: Path) -> None:
    root = copy_of(serial_chain_fill, tmp_path)
    changed: dict[str, str] = {}

    def change(fixture: dict[str, Any]) -> None:
        address, account = next((a, acc) for a, acc in fixture["postState"].items() if acc["storage"])
        slot, value = next(iter(account["storage"].items()))
        account["storage"][slot] = hex(int(value, 16) + 1)
        changed.update(address=address, slot=slot)

    edit_blockchain_test(root, change)
    code, output = verified(root, "--without", ENGINE_UNCHANGED)
    assert code == 1, output
    rows = failing_rows(output)
    assert [row.split()[3] for row in rows] == ["geth", "revm", "ethereumjs"], rows
    assert all(NAME in row and changed["address"][2:] in row.lower() for row in rows), rows
    assert "account storage mismatch" in rows[0] and "storage_validation" in rows[1], rows
    assert "1 fixtures: geth 0/1, revm 0/1, ethereumjs 0/1, engine left out" in output


@pytest.mark.integration
@requires_revme
def test_a_creation_written_to_0x_fails_revm_naming_the_field(serial_chain_fill: Path, tmp_path: Path) -> None:
    """The spelling revm refused in every fixture before balgen wrote `""` (geth reads the block RLP instead)."""
    root = copy_of(serial_chain_fill, tmp_path)

    def change(fixture: dict[str, Any]) -> None:
        creation = next(tx for block in fixture["blocks"] for tx in block["transactions"] if tx["to"] == "")
        creation["to"] = "0x"

    edit_blockchain_test(root, change)
    code, output = verified(root, "--without", ENGINE_UNCHANGED)
    assert code == 1, output
    (row,) = failing_rows(output)
    assert NAME in row and " revm " in row and 'field "to"' in row and "invalid string length" in row, row
    assert "1 fixtures: geth 1/1, revm 0/1, ethereumjs 1/1, engine left out" in output


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    cases = [
        ([tmp_path / "absent"], "absent: does not exist"),
        ([tmp_path / "empty", "--without", "revm,engine,gas"], "unknown verifier 'gas'"),
        ([tmp_path / "empty", "--without", "geth,revm,ethereumjs,engine"], "every verifier left out"),
        ([tmp_path / "empty", "--revme-bin", tmp_path / "no-revme"], "revme " + str(tmp_path / "no-revme") + ": not built"),
        ([tmp_path / "empty", "-k", "a and"], "-k 'a and'"),
    ]
    for argv, complaint in cases:
        code, output = verified(*argv)
        err = capsys.readouterr().err
        assert code == 2 and output == "", (argv, err)
        assert err.startswith("balgen verify: ") and err.count("\n") == 1 and complaint in err, (argv, err)


# -- reading revme's output -----------------------------------------------------


def test_revme_stops_a_file_at_its_first_failure(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    stdout = "  Running: a\n  Running: b\n"
    stderr = f"✗ (1/1) {path} - Test execution failed for b in {path}: Block gas used mismatch at block 1\n"
    outcomes = revm_outcomes(path, ["a", "b", "c"], stdout, stderr, 1)
    assert [(o.verifier, o.test_id, o.difference) for o in outcomes] == [
        (Verifier.REVM, "a", None),
        (Verifier.REVM, "b", "Block gas used mismatch at block 1"),
        (Verifier.REVM, "c", "not run: revme stops a file at its first failing test (b)"),
    ]


def test_revme_decode_error_names_the_field_on_its_line(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{\n  "t": {\n    "to": "0x",\n    "value": "0x00"\n  }\n}\n')
    stderr = f"✗ (1/1) {path} - Failed to decode JSON from {path}: invalid string length at line 3 column 15\n"
    (outcome,) = revm_outcomes(path, ["t"], "", stderr, 1)
    assert outcome.difference is not None and outcome.difference.startswith('field "to" ("to": "0x",): Failed to decode')


# -- balgen fill --verify ----------------------------------------------------------


@pytest.mark.integration
@requires_revme
def test_a_filled_fixture_passes_every_verifier_in_fill_verify(tmp_path: Path) -> None:
    """
    `fill --verify` checks what the fill wrote, and only that, with all four verifiers: the same `verify` as
    `balgen verify FOLDER` runs, on the fixture the session's `serial_chain_fill` holds byte for byte, so
    a `balgen verify` of that fill too (an engine node and an ethereumjs start more) would judge nothing new.
    """
    output = tmp_path / "out"
    (stale := output / "blockchain_tests" / "old.json").parent.mkdir(parents=True)
    stale.write_text(json.dumps({"old-1M": {"_info": {"fixture-format": "blockchain_test"}, "blocks": []}}))
    completed = run_fill("--verify", "--gas-benchmark-values", "1", "-k", "serial_chain-max", "--output", output)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    assert "1 fixtures: geth 1/1, revm 1/1, ethereumjs 1/1, engine 1/1" in completed.stdout, "only this fill's fixture, not old-1M"
    assert not failing_rows(completed.stdout)


def test_fill_verify_without_revme_is_refused_before_filling(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    for binary in ("evm", "geth", "balgen-state-root"):  # everything but revme
        (tools / binary).symlink_to(tools_bin() / binary)
    output = tmp_path / "out"
    completed = balgen_in_process(
        "fill", "--verify", "--gas-benchmark-values", "1", "--output", output, env={**os.environ, "BALGEN_TOOLS": str(tools)}
    )
    assert completed.returncode == 2, completed.stderr
    assert completed.stderr.count("\n") == 1 and f"revme: not found in BALGEN_TOOLS={tools} (" in completed.stderr
    assert not output.exists()


def test_ethereumjs_batches_hold_every_file_once_in_about_equal_gas_heaviest_first() -> None:
    """
    verify runs ethereumjs on batches of files (one node process each, so node's start and warm-up are paid
    per batch): every file in exactly one, at most `BATCHES_PER_WORKER` per worker, of about equal gas, heaviest first.
    """
    gas = {Path(f"f{index}.json"): (index % 7 + 1) * 1_000_000 * (20 if index < 6 else 1) for index in range(78)}
    found = batches(list(gas), gas, workers=2)
    assert sorted(file for batch in found for file in batch) == sorted(gas)
    assert len(found) == 2 * BATCHES_PER_WORKER
    totals = [sum(gas[file] for file in batch) for batch in found]
    assert totals == sorted(totals, reverse=True)
    assert totals[0] - totals[-1] <= max(gas.values()), "no batch heavier than another by more than one file"
    assert all([gas[file] for file in batch] == sorted((gas[file] for file in batch), reverse=True) for batch in found)
    assert batches(list(gas)[:3], gas, workers=2) == [[file] for file in sorted(list(gas)[:3], key=lambda f: -gas[f])]


SLOW_VERIFIER = """#!/bin/sh
echo '{"verifier": "ethereumjs", "version": "@ethereumjs/vm 10.1.3", "amsterdam_gas": {"cold_sload": 2100, "create": 32000, "eips": []}}'
echo '{"file": "FILE", "name": "first", "ok": true, "block": 2, "reason": null, "first_difference": null, "kind": null}'
echo '{"file": "FILE", "name": "not_asked_for", "ok": true, "block": 2, "reason": null, "first_difference": null, "kind": null}'
sleep 2
echo '{"file": "FILE", "name": "second", "ok": true, "block": 2, "reason": null, "first_difference": null, "kind": null}'
"""
"""A verify.mjs stand-in that judges two of its file's tests two seconds apart (and one the caller did not ask for)."""


def test_ethereumjs_progress_counts_each_verdict_as_it_is_printed_and_each_outcome_once(tmp_path: Path) -> None:
    """A batch of 60M fixtures runs a minute or more: its verdicts move the bar as they come, not all at its end."""
    fixture = tmp_path / "f.json"
    fixture.write_text(json.dumps({name: {"network": "Amsterdam"} for name in ("first", "not_asked_for", "second", "unreached")}))
    node = tmp_path / "node"
    node.write_text(SLOW_VERIFIER.replace("FILE", str(fixture)))
    node.chmod(0o755)
    counted: list[tuple[float, int]] = []
    started = time.monotonic()
    with EthereumjsRuns(EthereumjsInstall(node, tmp_path), workers=1) as runs:
        runs.submit(
            [fixture], 30, on_progress=lambda more: counted.append((time.monotonic() - started, more)),
            names={fixture: ["first", "second", "unreached"]},
        )  # fmt: skip
        (run,) = runs.finished()
    ended = time.monotonic() - started
    assert [outcome.passed for outcome in run.outcomes] == [True, True, False], "the fixture it never reached fails"
    assert counted[0][1] == 1 and counted[0][0] < ended - 1, f"the first verdict counted while the run went on: {counted}"
    assert sum(more for _, more in counted) == len(run.outcomes) == 3, "every outcome once; the test not asked for, never"


def test_a_light_suite_is_not_cut_in_more_batches_than_its_work_is_worth() -> None:
    """A suite filled at 1M gas: each node start (about 0.7 CPU-s) would cost as much as the work of its batch."""
    gas = {Path(f"f{index}.json"): 1_300_000 for index in range(39)}
    found = batches(list(gas), gas, workers=2)
    assert len(found) == 2, "one per worker: the two run side by side"
    assert sorted(file for batch in found for file in batch) == sorted(gas)
    assert len(batches(list(gas), gas, workers=1)) == 2, "one per MIN_BATCH_WORK of work"
    assert len(batches(list(gas), {file: 100_000_000 for file in gas}, workers=2)) == 2 * BATCHES_PER_WORKER


def test_only_balgens_own_fixtures_count_their_blocks_before_the_last_as_setup() -> None:
    assert balgens({"_info": {"generator": "balgen 0.1.0"}})
    assert not balgens({"_info": {"generator": "execution-spec-tests v5.0.0"}})
    assert not balgens({"_info": {"comment": "no generator"}})
    assert not balgens({"blocks": []})


@pytest.mark.integration
def test_ethereumjs_applies_setup_blocks_from_their_bal_only_in_balgens_files(serial_chain_fill: Path, tmp_path: Path) -> None:
    """
    verify hands ethereumjs `--setup-from-bal` for a file of balgen's fixtures (its blocks before the
    last are setup, which geth and revm execute), and not for one another generator wrote, whose
    earlier blocks may be what the test is about.
    """
    tools = Tools(evm=Path("evm"), revme=None, geth=None)
    checks = plan(serial_chain_fill, Selection(), tools)
    assert checks.setup_known == frozenset(checks.blockchain)
    for file in checks.setup_known:  # its batches are balanced by what ethereumjs executes, not the setup's gas
        (fixture,) = json.loads(file.read_text()).values()
        benchmark_gas = int(fixture["blocks"][-1]["blockHeader"]["gasUsed"], 16)
        assert checks.work_from_bal[file] == benchmark_gas + file.stat().st_size
    folder = copy_of(serial_chain_fill, tmp_path)
    edit_blockchain_test(folder, lambda fixture: fixture["_info"].update(generator="execution-spec-tests"))
    assert plan(folder, Selection(), tools).setup_known == frozenset()
