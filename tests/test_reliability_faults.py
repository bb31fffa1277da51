"""
Faults during `balgen replay`, with a real geth on 127.0.0.1 (tests/harness_geth.py): the
client killed in the middle of a test, the client hanging (SIGSTOP) past the
timeout, the client answering with JSON-RPC errors, a wrong JWT, a port
already in use, and `--cold` failing to bring geth back. Where only balgen's
handling is judged (`--fail-fast` after a kill, giving up on a client that
keeps dying, balgen itself terminated or killed), the client is the fake of
tests/fake_client.py, started and stopped as a node (a release geth start is
about 3 CPU-s, the fake's a twentieth): the same kill, and Ctrl-C, are judged on a
real geth here too.

For each: the test that was running is reported failed with the reason and
keeps the executions it completed; the run goes on (on a fresh geth when
balgen started the client) or stops at once with `--fail-fast`; no geth
process and no datadir is left; and `results.json` on disk holds every
completed test, since it is rewritten atomically after each one.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from balgen.clients import process
from balgen.commands.replay import run_replay
from balgen.replay.discovery import FixtureRef, ReplayGroup, discover
from balgen.clients.genesis_files import write_client_genesis
from balgen.clients.kinds.geth import GENESIS as GETH_GENESIS
from balgen.clients.kinds.geth import PRESET as GETH_PRESET
from balgen.clients.presets import ClientPreset, Rollback
from balgen.clients.process import ClientProcess
from balgen.clients.jwt_auth import make_jwt_token
from balgen.results.measurements import Execution
from balgen.replay.outputs import RESULTS_JSON, RunWriter, prepare_output
from balgen.results.schema import FixtureResult, RunResult, RunState, Verdict
from balgen.replay.runner import ReplayOptions, replay_suite, without_modes
from balgen.replay.targets import ManagedClient

from fill_runs import copied_from_suite_fill
from harness_geth import HARNESS_GETH
from processes_left import processes_mentioning
from rpc_proxy import proxy

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not HARNESS_GETH.is_file(), reason="geth-bal-switch not built (make tools)"),
]

ORDER = ["keccak_chain-half-1M", "keccak_chain-max-1M", "serial_chain-half-1M", "serial_chain-max-1M"]
"""Four 1M-gas fixtures sharing one pre-alloc group (one geth serves them all), in their discovery order (by file path)."""


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copied_from_suite_fill(tmp_path_factory, ORDER) / "blockchain_tests_engine_x"


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """Where balgen's client datadirs go; every test checks it is left empty and client-free."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    yield folder
    for pid in processes_mentioning(folder):  # never leave a client behind, even when a check failed
        os.kill(pid, signal.SIGKILL)


def assert_no_geth_left(scratch: Path, name: str = "geth") -> None:
    assert processes_mentioning(scratch, name) == [], f"a {name} balgen started is still running"
    assert list(scratch.iterdir()) == [], "datadirs and genesis files are removed"


FAKE_CLIENT = Path(__file__).with_name("fake_client.py")
FAKE = FAKE_CLIENT.stem
"""What the fake client's command line mentions."""


def fake_node_command(folder: Path, payload_seconds: float = 0.0) -> str:
    """
    The fake client's node command (`--client-cmd`, its `{bin}` this Python) on the genesis of the one
    group in `folder`, each payload taking `payload_seconds`: without site-packages, so its start costs
    no imports of balgen's.
    """
    (group,) = discover(folder).groups
    return "{bin} -S " + shlex.quote(str(FAKE_CLIENT)) + (
        " --datadir {datadir} --rpc-port {rpc_port} --engine-port {engine_port}"
        f" --genesis-hash {group.genesis.genesis_hash} --payload-seconds {payload_seconds}"
    )


def fake_preset(folder: Path) -> ClientPreset:
    """The fake client as a preset balgen starts per group, rolled back by `debug_setHead` as geth is."""
    return ClientPreset(
        name="fake", genesis_format=GETH_GENESIS, node_command=fake_node_command(folder), init_command=None,
        rollback=Rollback.SET_HEAD,
    )  # fmt: skip


def benchmark_hash(folder: Path, test_id: str) -> str:
    """The block hash of a test's benchmark payload."""
    document = json.loads(next(folder.rglob(f"{test_id}.json")).read_text())
    return document[test_id]["engineNewPayloads"][-1]["params"][0]["blockHash"]


def results_on_disk(output: Path) -> RunResult:
    return RunResult.model_validate_json((output / RESULTS_JSON).read_text())


def verdicts(run: RunResult) -> list[tuple[str, str]]:
    return [(t.test_id, t.verdict.value) for t in run.tests]


# -- injecting faults through the observer protocol ------------------------------


class Fault:
    """
    An observer that, after `after` payload executions of the test at
    `test_index`, acts on the geth process under `scratch` (once), and
    checks that results.json already holds every test completed so far.
    """

    def __init__(
        self, scratch: Path, output: Path, test_index: int, after: int, action: Callable[[int], None], name: str = "geth"
    ) -> None:
        self.scratch = scratch
        self.name = name
        """What the client's command line mentions."""
        self.output = output
        self.test_index = test_index
        self.after = after
        self.action = action
        self.tests_started = -1
        self.executions = 0
        self.fired_on: str | None = None
        self.on_disk_when_fired: list[tuple[str, str]] = []
        self.groups = 0

    def group_started(self, group: ReplayGroup, client_version: str | None) -> None:
        self.groups += 1

    def test_started(self, ref: FixtureRef, executions: int) -> None:
        self.tests_started += 1
        self.executions = 0

    def execution_done(self, execution: Execution) -> None:
        self.executions += 1
        if self.fired_on is None and self.tests_started == self.test_index and self.executions == self.after:
            (pid,) = processes_mentioning(self.scratch, self.name)
            self.on_disk_when_fired = verdicts(results_on_disk(self.output))
            self.action(pid)
            self.fired_on = execution.test_id

    def test_finished(self, result: FixtureResult) -> None:
        pass


class Fanout:
    """Passes every observer call on to each of `observers`, in order."""

    def __init__(self, *observers: Any) -> None:
        self.observers = observers

    def __getattr__(self, name: str) -> Callable[..., None]:
        def each(*args: Any) -> None:
            for observer in self.observers:
                getattr(observer, name)(*args)

        return each


def kill(pid: int) -> None:
    """SIGKILL, and wait until the process is dead (a zombie until balgen reaps it)."""
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return
        except OSError:
            return
        time.sleep(0.02)


def stop(pid: int) -> None:
    os.kill(pid, signal.SIGSTOP)


def new_run_header(folder: Path, options: ReplayOptions) -> RunResult:
    return RunResult(
        label="faults", balgen_version="0", started_at="2026-01-01T00:00:00+00:00", fixtures_path=str(folder),
        keyword=None, warmup=options.warmup, repeat=options.repeat, cold=options.cold, fail_fast=options.fail_fast,
        target={"kind": "managed"},
    )  # fmt: skip


def replay(
    folder: Path, scratch: Path, output: Path, options: ReplayOptions, *observers: Any, keyword: str | None = None,
    fake: bool = False, **target: Any,
) -> RunState:
    """The suite (tests matching `keyword`) on balgen's geth (or the fake client), results written as `balgen replay` writes them."""
    writer = RunWriter(prepare_output(output), new_run_header(folder, options))
    state = RunState.INTERRUPTED
    try:
        preset, binary = (fake_preset(folder), Path(sys.executable)) if fake else (GETH_PRESET, HARNESS_GETH)
        managed = ManagedClient(preset, binary, temp_parent=scratch, **target)
        state = replay_suite(discover(folder, keyword), without_modes(managed), options, Fanout(writer, *observers))
    finally:
        writer.finish(state)
    return state


def replay_with_fault(
    folder: Path, scratch: Path, output: Path, fault_at: tuple[int, int], action: Callable[[int], None],
    options: ReplayOptions, fake: bool = False, **target: Any,
) -> tuple[RunState, Fault]:
    """`replay` with `action` done to the client after `fault_at` = (test index, executions)."""
    fault = Fault(scratch, output, *fault_at, action, name=FAKE if fake else "geth")
    return replay(folder, scratch, output, options, fault, fake=fake, **target), fault


# -- the client killed, or hanging, in the middle of a test ---------------------------


@dataclass(frozen=True)
class KilledThenHungRun:
    """A replay of the four tests on balgen's geth: killed in the second test, the fresh one hung in the third."""

    state: RunState
    output: Path
    scratch: Path
    killed: Fault
    hung: Fault


@pytest.fixture(scope="module")
def killed_then_hung_run(filled: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilledThenHungRun]:
    """
    One replay, two faults, each judged by its own test below (a geth start is about 3 CPU-s): geth
    killed (SIGKILL) after the second test's warm-up, then the fresh geth that took over stopped
    (SIGSTOP) after the third test's setup payload, past the 2 s timeouts; a third geth runs the last.
    """
    root = tmp_path_factory.mktemp("killed-then-hung")
    scratch, output = root / "scratch", root / "run"
    scratch.mkdir()
    killed, hung = Fault(scratch, output, 1, 2, kill), Fault(scratch, output, 2, 1, stop)
    try:
        state = replay(
            filled, scratch, output, ReplayOptions(warmup=1, repeat=2, agreement_check=False), killed, hung,
            rpc_timeout=2.0, engine_timeout=2.0,
        )  # fmt: skip
    finally:
        for pid in processes_mentioning(scratch, "geth"):  # never leave a geth behind, even when a check failed
            os.kill(pid, signal.SIGKILL)
    yield KilledThenHungRun(state, output, scratch, killed, hung)


def test_killed_client_fails_its_test_and_the_rest_run_on_a_fresh_geth(killed_then_hung_run: KilledThenHungRun) -> None:
    replayed = killed_then_hung_run
    run, fault = results_on_disk(replayed.output), replayed.killed
    assert fault.fired_on == ORDER[1]
    assert fault.on_disk_when_fired == [(ORDER[0], "passed")], "each test is on disk as soon as it is over"
    assert replayed.state is RunState.COMPLETE and run.state is RunState.COMPLETE
    assert verdicts(run) == [(ORDER[0], "passed"), (ORDER[1], "failed"), (ORDER[2], "failed"), (ORDER[3], "passed")]
    killed = run.tests[1]
    assert killed.failure is not None and killed.failure.startswith("no answer from the client: "), killed.failure
    assert "geth is not running (exit code -9)" in killed.failure
    assert [e.role.value for e in killed.executions] == ["setup", "warmup"], "the executions before the kill are kept"
    assert fault.groups == 3, "a fresh geth took over the group's remaining tests after each fault"
    assert_no_geth_left(replayed.scratch)


def test_hung_client_times_out_its_test_and_is_replaced(killed_then_hung_run: KilledThenHungRun) -> None:
    """The run of `test_killed_client_fails_its_test_and_the_rest_run_on_a_fresh_geth`: its second geth hung."""
    replayed = killed_then_hung_run
    run = results_on_disk(replayed.output)
    assert replayed.hung.fired_on == ORDER[2]
    assert [verdict for _, verdict in verdicts(run)[2:]] == ["failed", "passed"], "the test after the hung one passed"
    hung = run.tests[2]
    assert hung.failure is not None and hung.failure.startswith("no answer from the client: "), hung.failure
    assert "no complete answer within 2 s" in hung.failure
    assert len(hung.executions) == 1
    assert_no_geth_left(replayed.scratch)


def test_killed_client_with_fail_fast_stops_the_run(filled: Path, scratch: Path, tmp_path: Path) -> None:
    """On the fake client: what a kill does to a test is judged on geth above; here, that `--fail-fast` stops at it."""
    output = tmp_path / "run"
    options = ReplayOptions(warmup=1, repeat=3, fail_fast=True, agreement_check=False)
    state, fault = replay_with_fault(filled, scratch, output, (1, 2), kill, options, fake=True)
    run = results_on_disk(output)
    assert state is RunState.STOPPED and run.state is RunState.STOPPED
    assert verdicts(run) == [(ORDER[0], "passed"), (ORDER[1], "failed")]
    assert run.tests[1].failure is not None and "fake is not running (exit code -9)" in run.tests[1].failure
    assert fault.groups == 1
    assert_no_geth_left(scratch, FAKE)


def test_a_client_that_keeps_dying_is_replaced_twice_then_the_rest_is_not_run(
    filled: Path, scratch: Path, tmp_path: Path
) -> None:
    """Each new client (the fake) is killed at its first test's first execution: a build that crashes on every block."""
    output = tmp_path / "run"

    class KillEveryClient(Fault):
        def execution_done(self, execution: Execution) -> None:
            if self.executions == 0:
                kill(processes_mentioning(self.scratch, FAKE)[0])
            self.executions += 1

    killer = KillEveryClient(scratch, output, 0, 0, kill)
    replay(filled, scratch, output, ReplayOptions(warmup=0, repeat=1, agreement_check=False), killer, fake=True)
    run = results_on_disk(output)
    assert verdicts(run) == [(ORDER[0], "failed"), (ORDER[1], "failed"), (ORDER[2], "failed"), (ORDER[3], "not_run")]
    assert run.tests[3].failure == f"not run: the client was lost during {ORDER[2]} (after 2 fresh clients)"
    assert killer.groups == 3
    assert_no_geth_left(scratch, FAKE)


# -- the client stops answering ----------------------------------------------------


def test_a_stopped_geth_is_continued_and_exits_cleanly(filled: Path, scratch: Path) -> None:
    """A SIGSTOPped geth ignores the stop signal until continued: balgen continues it, so it ends cleanly, not by SIGKILL."""
    (group,) = discover(filled).groups
    write_client_genesis(scratch / "genesis.json", GETH_GENESIS, group.genesis.network, group.genesis.header, group.genesis.accounts())
    geth = ClientProcess(GETH_PRESET, HARNESS_GETH, scratch / "genesis.json", temp_parent=scratch, stop_timeout=30)
    with geth:
        assert geth.pid is not None
        os.kill(geth.pid, signal.SIGSTOP)
        started = time.monotonic()
    assert geth.returncode == 0, "SIGKILL would give -9"
    assert time.monotonic() - started < 25
    (scratch / "genesis.json").unlink()
    assert_no_geth_left(scratch)


def test_a_stop_signal_before_geth_handles_it_is_ignored_not_fatal(
    filled: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    geth installs its signal handler only once its services run; a signal
    before that used to kill it without journaling its state (a `--cold`
    restart then came back at genesis). Signalled as soon as it logs its
    first line (its runtime up, its handler not yet installed), geth now
    ignores the signal, starts, and still stops cleanly when asked.
    """
    (group,) = discover(filled).groups
    write_client_genesis(scratch / "genesis.json", GETH_GENESIS, group.genesis.network, group.genesis.header, group.genesis.accounts())
    spawn = ClientProcess._spawn_node
    signalled: list[int] = []

    def spawn_and_signal_early(self: ClientProcess) -> None:
        spawn(self)
        assert self._process is not None
        deadline = time.monotonic() + 30
        while not self._log_since_spawn() and time.monotonic() < deadline:
            time.sleep(0.001)
        self._process.send_signal(signal.SIGINT)
        signalled.append(self._process.pid)

    monkeypatch.setattr(ClientProcess, "_spawn_node", spawn_and_signal_early)
    geth = ClientProcess(GETH_PRESET, HARNESS_GETH, scratch / "genesis.json", temp_parent=scratch, stop_timeout=30)
    with geth:  # raises if the early signal killed it before it answered
        geth.restart()  # the same again on the restarted node
    assert len(signalled) == 2 and geth.returncode == 0
    (scratch / "genesis.json").unlink()
    assert_no_geth_left(scratch)


# -- JSON-RPC errors ---------------------------------------------------------------


@dataclass(frozen=True)
class PortTakenRun:
    """A `balgen replay` whose geth found its first port taken, and whose second test geth answered with an error."""

    code: int
    output: Path
    scratch: Path
    taken: int
    picks: list[list[int]]


@pytest.fixture(scope="module")
def port_taken_and_rpc_error_run(filled: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PortTakenRun]:
    """
    One `balgen replay` of the four tests, two faults in it, each judged by its own test below (a geth start
    is about 3 CPU-s): the first port balgen picks for geth is taken before geth binds it, and the second
    test's benchmark payload is sent with the wrong `engine_newPayload` version (geth answers -32602).
    """
    root = tmp_path_factory.mktemp("port-taken")
    folder, scratch, output = root / "fixtures", root / "scratch", root / "run"
    scratch.mkdir()
    shutil.copytree(filled, folder)
    path = next(folder.rglob(f"{ORDER[1]}.json"))
    document = json.loads(path.read_text())
    document[ORDER[1]]["engineNewPayloads"][-1]["newPayloadVersion"] = "4"
    path.write_text(json.dumps(document))
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    taken = holder.getsockname()[1]
    picks: list[list[int]] = []
    real = process.free_loopback_ports

    def first_pick_taken(count: int) -> list[int]:
        ports = real(count)
        picks.append([taken, *ports[1:]] if not picks else ports)
        return picks[-1]

    try:
        with pytest.MonkeyPatch.context() as monkeypatch:
            monkeypatch.setattr(process, "free_loopback_ports", first_pick_taken)
            monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # balgen's geth datadirs go to scratch
            code = run_replay([str(folder), "--client-bin", str(HARNESS_GETH), "--warmup", "1", "--repeat", "2", "--output", str(output)])
    finally:
        holder.close()
        for pid in processes_mentioning(scratch, "geth"):  # never leave a geth behind, even when a check failed
            os.kill(pid, signal.SIGKILL)
    yield PortTakenRun(code, output, scratch, taken, picks)


def test_json_rpc_error_from_geth_fails_that_test_only(port_taken_and_rpc_error_run: PortTakenRun) -> None:
    """A payload sent with the wrong `engine_newPayload` version: geth answers error -32602."""
    replayed = port_taken_and_rpc_error_run
    assert replayed.code == 1
    run = results_on_disk(replayed.output)
    assert run.state is RunState.COMPLETE
    assert verdicts(run) == [(ORDER[0], "passed"), (ORDER[1], "failed"), (ORDER[2], "passed"), (ORDER[3], "passed")]
    assert run.tests[1].failure == (
        "payload 1 (block 2), warmup execution 1: engine_newPayloadV4 returned error -32602: Invalid parameters"
    )
    assert_no_geth_left(replayed.scratch)


@pytest.fixture(scope="module")
def user_geth(filled: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClientProcess]:
    """
    A geth the user runs, on the suite's genesis (balgen must never stop it),
    shared by the module's tests (a geth start is about 3 CPU-s): each run
    rewinds it to where it started, except the one whose JWT goes bad mid-run,
    which comes last.
    """
    (group,) = discover(filled).groups
    own = tmp_path_factory.mktemp("user-geth")
    write_client_genesis(own / "genesis.json", GETH_GENESIS, group.genesis.network, group.genesis.header, group.genesis.accounts())
    with ClientProcess(GETH_PRESET, HARNESS_GETH, own / "genesis.json", temp_parent=own) as geth:
        yield geth


def _error(request: dict[str, Any], message: str) -> tuple[int, dict[str, Any]]:
    return 200, {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32000, "message": message}}


def test_json_rpc_errors_to_any_call_fail_the_test_and_the_run_goes_on(
    filled: Path, tmp_path: Path, user_geth: ClientProcess
) -> None:
    """forkchoiceUpdated and eth_getBlockByHash answered with errors (these ended the run with a traceback before)."""
    fcu_block, known_block = benchmark_hash(filled, ORDER[1]), benchmark_hash(filled, ORDER[2])
    injected: list[str] = []

    def engine_rule(request: dict[str, Any], _: dict[str, str]) -> Any:
        if request["method"].startswith("engine_forkchoiceUpdated") and request["params"][0]["headBlockHash"] == fcu_block:
            injected.append(request["method"])
            return _error(request, "injected forkchoice failure")
        return None

    def rpc_rule(request: dict[str, Any], _: dict[str, str]) -> Any:
        if request["method"] == "eth_getBlockByHash" and request["params"][0] == known_block:
            injected.append(request["method"])
            return _error(request, "injected lookup failure")
        return None

    engine, rpc = proxy(user_geth.engine_url, engine_rule), proxy(user_geth.rpc_url, rpc_rule)
    output = tmp_path / "run"
    try:
        code = run_replay(
            [str(filled), "--engine-url", f"http://127.0.0.1:{engine.server_port}", "--jwt-secret", str(user_geth.jwt_secret_path),
             "--rpc-url", f"http://127.0.0.1:{rpc.server_port}", "--warmup", "1", "--repeat", "2", "--agreement", "record",
             "--output", str(output)]
        )  # fmt: skip
    finally:
        engine.shutdown()
        rpc.shutdown()
    run = results_on_disk(output)
    assert code == 1 and run.state is RunState.COMPLETE
    assert verdicts(run) == [(ORDER[0], "passed"), (ORDER[1], "failed"), (ORDER[2], "failed"), (ORDER[3], "passed")]
    # Siblings run on the parent; the fixture's own block is made head once, after them.
    assert run.tests[1].failure == (
        "making the benchmark block head: engine_forkchoiceUpdatedV4 returned error -32000: injected forkchoice failure"
    )
    assert [e.role.value for e in run.tests[1].executions][:2] == ["setup", "warmup"], "the executed payloads are recorded"
    assert run.tests[2].failure == (
        "payload 1 (block 2), warmup execution 1: eth_getBlockByHash returned error -32000: injected lookup failure"
    )
    assert user_geth.is_running(), "a client the user runs is left running"


# -- a wrong JWT ------------------------------------------------------------------


def test_wrong_jwt_secret_is_bad_input_before_anything_runs(
    filled: Path, tmp_path: Path, user_geth: ClientProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = tmp_path / "wrong.hex"
    wrong.write_text("22" * 32 + "\n")
    output = tmp_path / "run"
    code = run_replay([str(filled), "--engine-url", user_geth.engine_url, "--jwt-secret", str(wrong), "--output", str(output)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"balgen replay: --engine-url {user_geth.engine_url}: engine_exchangeCapabilities: HTTP 401: the client refused the JWT")
    assert not output.exists()


def test_jwt_refused_mid_run_fails_that_test_and_the_rest_is_not_run(
    filled: Path, tmp_path: Path, user_geth: ClientProcess
) -> None:
    """From the second test's benchmark block on, the proxy signs with another secret; geth answers 401."""
    trigger = benchmark_hash(filled, ORDER[1])
    wrong_token = f"Bearer {make_jwt_token(bytes(32))}"
    corrupted = threading.Event()

    def rule(request: dict[str, Any], headers: dict[str, str]) -> Any:
        if request["method"].startswith("engine_newPayload") and request["params"][0]["blockHash"] == trigger:
            corrupted.set()
        return headers | {"Authorization": wrong_token} if corrupted.is_set() else headers

    engine = proxy(user_geth.engine_url, rule)
    output = tmp_path / "run"
    try:
        code = run_replay(
            [str(filled), "--engine-url", f"http://127.0.0.1:{engine.server_port}", "--jwt-secret", str(user_geth.jwt_secret_path),
             "--rpc-url", user_geth.rpc_url, "--warmup", "0", "--repeat", "2", "--output", str(output)]
        )  # fmt: skip
    finally:
        engine.shutdown()
    run = results_on_disk(output)
    assert code == 1 and run.state is RunState.COMPLETE
    assert verdicts(run) == [(ORDER[0], "passed"), (ORDER[1], "failed"), (ORDER[2], "not_run"), (ORDER[3], "not_run")]
    refused = run.tests[1]
    assert refused.failure is not None
    assert refused.failure.startswith("no answer from the client: engine_newPayloadV5: HTTP 401: the client refused the JWT"), refused.failure
    assert run.tests[2].failure == f"not run: the client was lost during {ORDER[1]}"
    assert user_geth.is_running(), "balgen does not stop a client it did not start"


# -- a port already in use ---------------------------------------------------------


def test_a_port_taken_before_geth_binds_it_is_retried(port_taken_and_rpc_error_run: PortTakenRun) -> None:
    """The run of `test_json_rpc_error_from_geth_fails_that_test_only`: its every test but the one geth refused passed."""
    replayed = port_taken_and_rpc_error_run
    run = results_on_disk(replayed.output)
    assert run.state is RunState.COMPLETE
    assert [verdict for test_id, verdict in verdicts(run) if test_id != ORDER[1]] == ["passed"] * 3
    picks = replayed.picks
    assert len(picks) == 2 and picks[0][0] == replayed.taken, "geth failed to bind the taken port and was started on new ones"
    assert_no_geth_left(replayed.scratch)


# -- the output folder goes away --------------------------------------------------


def test_results_that_cannot_be_written_stop_the_run_with_one_line(
    filled: Path, scratch: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """
    The output folder is removed after the first test (a full disk behaves alike): one line, exit 1, the
    client stopped. On the fake client (a `--client-cmd`): what is judged is balgen's writing and stopping.
    """
    output = tmp_path / "run"
    real_finished = RunWriter.test_finished

    def folder_gone_after_first(writer: RunWriter, result: FixtureResult) -> None:
        shutil.rmtree(writer.output, ignore_errors=True)
        real_finished(writer, result)

    monkeypatch.setattr(RunWriter, "test_finished", folder_gone_after_first)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    code = run_replay(
        [str(filled), "-k", "keccak_chain", "--warmup", "0", "--repeat", "1", "--client-cmd", fake_node_command(filled),
         "--client-bin", sys.executable, "--output", str(output)]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"balgen replay: cannot write the results to {output} (No such file or directory); the run stopped after 1 tests")
    assert_no_geth_left(scratch, FAKE)


# -- --cold cannot bring geth back ------------------------------------------------


def test_cold_restart_of_a_dead_geth_fails_the_test_and_a_fresh_geth_goes_on(
    filled: Path, scratch: Path, tmp_path: Path
) -> None:
    """geth killed after the setup payload: the `--cold` restart finds it gone and unable to resume."""
    output = tmp_path / "run"
    state, fault = replay_with_fault(
        filled, scratch, output, (0, 1), kill, ReplayOptions(warmup=0, repeat=1, cold=True), keyword="keccak_chain"
    )
    run = results_on_disk(output)
    assert state is RunState.COMPLETE and fault.fired_on == ORDER[0]
    assert verdicts(run) == [(ORDER[0], "failed"), (ORDER[1], "passed")]
    failure = run.tests[0].failure
    assert failure is not None and failure.startswith(
        "restarting the client failed: geth did not shut down cleanly (exit code -9), so its in-memory state is lost"
    ), failure
    assert [e.role.value for e in run.tests[0].executions] == ["setup"]
    assert [e.restarted_before for e in run.tests[1].executions] == [False, True], "the measured execution is cold"
    assert_no_geth_left(scratch)


# -- balgen itself terminated or killed ---------------------------------------------


FAKE_PAYLOAD_SECONDS = 0.04
"""How long the fake client takes over each payload: 30 executions take over a second, as geth's do."""


def _replay_process(filled: Path, scratch: Path, output: Path, client: str) -> subprocess.Popen[bytes]:
    """
    `balgen replay` of two tests on `client` (geth, or the fake as a `--client-cmd`), long enough to be
    signalled in the second one: 30 executions of a 1M block take over a second, three times
    `SECOND_TEST_INTO` (a slower machine slows them and the sleep alike).
    """
    fake = ("--client-cmd", fake_node_command(filled, FAKE_PAYLOAD_SECONDS), "--client-bin", sys.executable) if client == FAKE else ()
    binary = fake or ("--client-bin", str(HARNESS_GETH))
    return subprocess.Popen(
        [sys.executable, "-m", "balgen.commands.main", "replay", str(filled), "-k", "keccak_chain", "--warmup", "0", "--repeat", "30",
         *binary, "--output", str(output)],
        env=os.environ | {"TMPDIR": str(scratch)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _wait_for_first_test(output: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if (output / RESULTS_JSON).exists() and results_on_disk(output).tests:
            return
        time.sleep(0.05)
    raise AssertionError("the replay did not complete a test")


SECOND_TEST_INTO = 0.3
"""Seconds from the first test's results on disk to the signal: the second test's setup payload and
some of its executions are done by then."""

STOP_PATHS = [(signal.SIGINT, "geth"), (signal.SIGTERM, FAKE)]
"""Ctrl-C (Python's KeyboardInterrupt) on a real geth, and SIGTERM (balgen's `stop_signals` handler) on the
fake client: how balgen stops the client it started is the same for both, and geth's side of it (its
handler, installed late) is Ctrl-C's to prove. SIGHUP and SIGQUIT take SIGTERM's handler and path from
there on: tests/test_command_line.py checks each raises the same `Stopped` and names itself,
tests/test_fill_faults.py stops a real fill with each."""


@pytest.mark.parametrize(("stop", "client"), STOP_PATHS, ids=[f"{stop.name}-{client}" for stop, client in STOP_PATHS])
def test_a_stop_signal_stops_geth_and_keeps_what_was_measured(
    filled: Path, scratch: Path, tmp_path: Path, stop: signal.Signals, client: str
) -> None:
    """
    Ctrl-C and SIGTERM (and through the same handler SIGHUP and SIGQUIT): the client stopped, its
    datadir gone, the completed tests kept and the interrupted one with the executions it had measured.
    """
    output = tmp_path / "run"
    process = _replay_process(filled, scratch, output, client)
    _wait_for_first_test(output, process)
    assert processes_mentioning(scratch, client), "the client runs under the replay"
    time.sleep(SECOND_TEST_INTO)  # into the second test's executions
    process.send_signal(stop)
    assert process.wait(timeout=60) == 128 + stop, process.stderr.read() if process.stderr else ""
    assert process.stderr is not None and b"Traceback" not in process.stderr.read()
    run = results_on_disk(output)
    *completed, interrupted = run.tests
    assert run.state is RunState.INTERRUPTED and completed and all(t.verdict is Verdict.PASSED for t in completed)
    assert interrupted.failure is not None and interrupted.failure.startswith("interrupted after "), interrupted
    # What it had measured when the signal came (on a loaded machine possibly nothing yet) is kept, all of it.
    done = int(interrupted.failure.removeprefix("interrupted after ").split()[0])
    assert len(interrupted.executions) == done, interrupted.failure
    assert_no_geth_left(scratch, client)


def test_sigkill_of_balgen_takes_its_client_down_and_keeps_completed_tests(filled: Path, scratch: Path, tmp_path: Path) -> None:
    """On the fake client: the kernel kills whatever balgen started when balgen dies, whatever the binary."""
    output = tmp_path / "run"
    process = _replay_process(filled, scratch, output, FAKE)
    _wait_for_first_test(output, process)
    assert processes_mentioning(scratch, FAKE)
    process.kill()
    process.wait(timeout=10)
    deadline = time.monotonic() + 10
    while processes_mentioning(scratch, FAKE) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_mentioning(scratch, FAKE) == [], "the kernel kills the client when balgen dies (PR_SET_PDEATHSIG)"
    run = results_on_disk(output)
    assert run.state is RunState.RUNNING and run.tests and all(t.verdict is Verdict.PASSED for t in run.tests)
    # A SIGKILL can land inside an atomic write: its hidden temporary may stay, never a partial result file.
    results = sorted(p.name for p in output.iterdir() if not p.name.startswith("."))
    assert results == ["executions.csv", "mgas_s.csv", "results.json", "runtimes.csv"]
