"""
Issue 34 (third round), findings 1, 8 and 10 to 14: what a hostile environment
does to balgen on main d38d8d4, one test per finding and its class (see the
table in docs/reliability.md). A process balgen starts is stopped with its
whole process group, whatever it is (a wrapper script, a hung tool); a
subprocess call has a deadline that grows with its work and says so when it
fires; a t8n's state roots are checked; a pre-alloc group file's genesis is
computed when it is read; a t8n without the access tracer, a
missing tool and a collection error are one line before or instead of
pytest's; every file a user names is looked at before it is read; the
memory a file may take is bounded by ulimit and cgroup limits.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from balgen.chain.t8n import TransitionTool
from balgen.clients.kinds.geth import PRESET as GETH_PRESET
from balgen.clients.presets import custom_preset
from balgen.clients.kinds.geth import GENESIS as GETH_GENESIS
from balgen.clients.process import ClientError, ClientProcess
from balgen.plumbing.errors import TransitionToolError
from balgen.plumbing.toolchain import pinned_evm, pinned_geth
from balgen.verify import evm_runners

from in_process import balgen_forked, balgen_in_process
from harness_geth import HARNESS_GETH
from processes_left import descendants, left_running
from test_replay_harness import _header, _pre, write_genesis_of_dicts

integration = pytest.mark.integration
NAME = "serial_chain-max-1M"
COMMAND_TIMEOUT = 120
"""A command that hangs fails its test instead of hanging the run."""


def balgen_subprocess(*argv: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """
    `balgen ARGV` in a process of its own, bounded by `COMMAND_TIMEOUT`: for
    the inputs that would hang or exhaust the test process if balgen read them
    (a FIFO, /dev/zero); a fork of the test process (`balgen_forked`), which
    spares the imports of a new interpreter. The rest run in the test process
    (`balgen_in_process`).
    """
    return balgen_forked(*argv, env=env, cwd=cwd, timeout=COMMAND_TIMEOUT)


def one_line(err: str, command: str) -> str:
    """The single stderr line of a rejected command, checked for shape."""
    assert "Traceback" not in err, err
    assert err.count("\n") == 1 and err.endswith("\n"), f"want one line, got {err!r}"
    assert err.startswith(f"balgen {command}: "), err
    return err.rstrip("\n")


def script(path: Path, body: str) -> Path:
    """An executable bash script at `path`."""
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def tools_env(**extra: str) -> dict[str, str]:
    """The environment with balgen's pinned tools found where the tests find them."""
    return {**os.environ, "BALGEN_TOOLS": str(pinned_evm().parent), **extra}


# -- finding 1: every process balgen starts is stopped with its whole group ---------------


def test_run_stops_what_a_command_left_running_in_its_group() -> None:
    from balgen.plumbing import processes

    before = set(descendants())
    started = time.monotonic()
    completed = processes.run(["bash", "-c", "sleep 900 & exit 3"], deadline=60)
    assert completed.returncode == 3
    assert time.monotonic() - started < 10, "the call waited on the background child's output"
    assert not left_running(before, wait=0)


def test_a_call_past_its_deadline_is_stopped_with_its_group() -> None:
    from balgen.plumbing import processes

    before = set(descendants())
    started = time.monotonic()
    with pytest.raises(processes.DeadlineExceeded, match="did not finish within 1 s"):
        processes.run(["bash", "-c", "sleep 900; echo never"], deadline=1)
    assert time.monotonic() - started < 1 + processes.STOP_GRACE
    assert not left_running(before, wait=0)


def test_a_stop_signal_during_a_call_stops_its_group() -> None:
    """Ctrl-C (or SIGTERM, which balgen turns into the same unwinding) while a tool runs."""
    from balgen.plumbing import processes

    before = set(descendants())

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            processes.run(["bash", "-c", "sleep 900; echo never"], deadline=60)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not left_running(before, wait=0)


def _genesis(tmp_path: Path) -> Path:
    path = tmp_path / "genesis.json"
    write_genesis_of_dicts(path, GETH_GENESIS, "Prague", _header("Prague", _pre()), _pre())
    return path


@integration
def test_a_client_that_is_a_wrapper_script_stops_with_its_binary_in_the_normal_time(tmp_path: Path) -> None:
    """
    `--client-bin` of `#!/bin/bash\\n/path/geth "$@"` (no exec): before, balgen
    signalled only bash, waited its 60 s stop timeout, SIGKILLed bash and left
    geth running after exit 0.
    """
    wrapper = script(tmp_path / "geth-pinned-to-cpu0", f'"{HARNESS_GETH}" "$@"\n')  # tests/harness_geth.py
    before = set(descendants())
    with ClientProcess(GETH_PRESET, wrapper, _genesis(tmp_path), temp_parent=tmp_path, stop_timeout=60) as geth:
        assert geth.client_version and geth.client_version.startswith("Geth/")
        started = time.monotonic()
    stopping = time.monotonic() - started
    assert geth.returncode == 0, "geth did not shut down cleanly under its wrapper"
    assert stopping < 20, f"stopping took {stopping:.0f} s"
    assert not left_running(before), "a process of the wrapper outlived the client"


@integration
def test_a_client_command_that_leaves_a_background_process_leaves_nothing(tmp_path: Path) -> None:
    """`--client-cmd "{bin} -c 'sleep 900 & exit 3'"`: before, the sleep outlived balgen."""
    preset = custom_preset("{bin} -c 'sleep 900 & exit 3'", None, GETH_GENESIS)
    before = set(descendants())
    with pytest.raises(ClientError, match="exited with code 3"):
        with ClientProcess(preset, Path("/bin/bash"), _genesis(tmp_path), temp_parent=tmp_path, startup_timeout=30):
            pass
    assert not left_running(before)


@integration
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_balgen_verify_leaves_no_verifier_running(tmp_path: Path, serial_chain_fill: Path, stop: signal.Signals) -> None:
    """An evm that is a wrapper script running its binary as a child; before, SIGTERM left both running."""
    hung_evm = script(tmp_path / "evm", "sleep 900\n")
    before = set(descendants())
    command = balgen_verify_process(serial_chain_fill / "blockchain_tests", "--evm-bin", hung_evm, "--without", "revm,engine")
    try:
        deadline = time.monotonic() + 60
        while not any("sleep 900" in line for line in descendants(command.pid).values()):
            assert command.poll() is None and time.monotonic() < deadline, command.communicate()
            time.sleep(0.05)
        command.send_signal(stop)
        _, err = command.communicate(timeout=30)
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()
    assert command.returncode == 128 + stop, err
    assert not left_running(before), "a verifier outlived balgen verify"


def balgen_verify_process(*argv: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "balgen.commands.main", "verify", *map(str, argv)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=tools_env(),
    )  # fmt: skip


# -- finding 11: deadlines that scale with the work; t8n's state roots checked ----------------


def test_a_hung_t8n_is_stopped_at_its_deadline_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, `fill` waited for ever on a t8n that hangs, printing nothing."""
    from balgen.chain import t8n as t8n_module

    monkeypatch.setattr(t8n_module, "T8N_BASE_SECONDS", 1.0, raising=False)
    monkeypatch.setattr(t8n_module, "T8N_SECONDS_PER_MILLION_GAS", 0.0, raising=False)
    hung = script(tmp_path / "evm", "sleep 900\n")
    (tmp_path / "alloc.json").write_text("{}")
    before = set(descendants())
    started = time.monotonic()
    with pytest.raises(TransitionToolError) as raised:
        TransitionTool(hung).transition_raw(
            "Prague", tmp_path / "alloc.json", {"currentGasLimit": "0x1c9c380"}, [], tmp_path / "work", label=f"{NAME} block 1"
        )
    message = str(raised.value)
    assert message.startswith(f"{NAME} block 1: t8n {hung} did not finish within 1 s"), message
    assert "30,000,000 gas" in message and "0 transactions" in message, message
    assert time.monotonic() - started < 10
    assert not left_running(before, wait=0)


def test_the_t8n_deadline_grows_with_gas_transactions_and_state() -> None:
    from balgen.chain.t8n import t8n_deadline

    base = t8n_deadline(1_000_000, 10, 10_000)
    assert t8n_deadline(1_000_000_000, 10, 10_000) > base + 400
    assert t8n_deadline(1_000_000, 36_000, 10_000) > base + 300
    assert t8n_deadline(1_000_000, 10, 2_000_000_000) > base + 100


def test_a_hung_verifier_is_stopped_at_its_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, `verify` waited for ever on an evm that hangs."""
    monkeypatch.setattr(evm_runners, "VERIFIER_BASE_SECONDS", 1.0, raising=False)
    hung = script(tmp_path / "evm", "sleep 900\n")
    fixture = tmp_path / "f.json"
    fixture.write_text("{}")
    before = set(descendants())
    with evm_runners.RunningVerifiers(hung, None, fixture, ["t"]) as running:
        (outcome,) = running.outcomes()
    assert outcome.difference is not None and "evm blocktest did not finish within 1 s" in outcome.difference
    assert not left_running(before, wait=0)


LYING_T8N = """\
"{evm}" "$@" || exit $?
case " $* " in *--state.fork={honest}*) exit 0;; esac
for argument in "$@"; do case $argument in --output.basedir=*) folder=${{argument#--output.basedir=}};; esac; done
[ -f "$folder/result.json" ] && sed -i -E 's/"stateRoot": *"0x[0-9a-f]{{64}}"/"stateRoot": "0x{lie}"/' "$folder/result.json"
exit 0
"""
"""A t8n that reports a made-up state root, except under one fork (genesis roots are computed under Shanghai)."""


@integration
@pytest.mark.parametrize("honest, what", [("Shanghai", "the calibration block 1's"), ("None", "the calibration genesis's")])
def test_a_t8n_reporting_wrong_state_roots_is_refused_naming_the_block(tmp_path: Path, honest: str, what: str) -> None:
    """Before: fixtures with the wrong roots (two of three formats) and exit 0."""
    lying = script(tmp_path / "evm", LYING_T8N.format(evm=pinned_evm(), honest=honest, lie="11" * 32))
    output = tmp_path / "out"
    completed = balgen_in_process(
        "fill", "--gas-benchmark-values", "1", "-k", NAME, "--evm-bin", lying, "--output", output, env=tools_env()
    )
    line = one_line(completed.stderr, "fill")
    assert completed.returncode == 2
    assert line.startswith(f"balgen fill: --evm-bin: {what} stateRoot: t8n reported 0x{'11' * 32}, but its allocation "), line
    assert line.endswith("(balgen-state-root); this t8n's state roots cannot be trusted"), line
    assert completed.stdout == "", "pytest started"
    assert not output.exists()


# -- finding 12: a t8n without the access tracer is refused once, before filling ----------


STOCK_EVM = """\
arguments=()
for argument in "$@"; do
  case $argument in --trace.tracer=balgenAccessTracer) arguments+=("--trace.tracer=notBuiltIn");; *) arguments+=("$argument");; esac
done
exec "{evm}" "${{arguments[@]}}"
"""
"""An evm that, like go-ethereum's release build, has no tracer called balgenAccessTracer."""


@integration
def test_an_evm_without_the_access_tracer_is_refused_once_before_filling(tmp_path: Path) -> None:
    """Before: one failure line per fixture (39 plus pytest's) for the default suite."""
    stock = script(tmp_path / "evm", STOCK_EVM.format(evm=pinned_evm()))
    output = tmp_path / "out"
    completed = balgen_in_process(
        "fill", "--gas-benchmark-values", "1", "-k", "serial_chain", "--evm-bin", stock, "--output", output, env=tools_env()
    )
    line = one_line(completed.stderr, "fill")
    assert completed.returncode == 2
    assert line == (
        f"balgen fill: --evm-bin: t8n {stock} has no tracer named balgenAccessTracer "
        "(balgen's access tracer is built into evm by scripts/install-tools.sh: make tools)"
    ), line
    assert completed.stdout == "", "pytest started"
    assert not output.exists()


# -- finding 13: a missing tool is one line before pytest; a collection error names its cause -


def _tools_without_state_root(tmp_path: Path) -> dict[str, str]:
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "evm").symlink_to(pinned_evm())
    return tools_env(BALGEN_TOOLS=str(folder))


@integration
def test_a_missing_balgen_state_root_is_one_line_before_pytest_starts(tmp_path: Path) -> None:
    """Before: "7 errors during collection", "balgen fill: interrupted", exit 130."""
    env = _tools_without_state_root(tmp_path)
    output = tmp_path / "out"
    completed = balgen_in_process("fill", "--gas-benchmark-values", "1", "--output", output, env=env, cwd=tmp_path)
    line = one_line(completed.stderr, "fill")
    assert completed.returncode == 2, completed.stderr
    assert line.startswith(f"balgen fill: balgen-state-root: not found in BALGEN_TOOLS={tmp_path / 'tools'} (run `make tools`"), line
    assert completed.stdout == "", "pytest started"
    assert not output.exists()


@integration
def test_a_collection_error_names_its_cause(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same tool missing, as if the up-front check had let it through: pytest's collection fails."""
    import balgen.commands.fill as fill_command

    env = _tools_without_state_root(tmp_path)
    output = tmp_path / "out"
    monkeypatch.setattr(fill_command, "missing_tools", lambda fork: None)  # in the fork that fills too
    completed = balgen_subprocess("fill", "--gas-benchmark-values", "1", "--output", output, env=env, cwd=tmp_path)
    line = one_line(completed.stderr, "fill")
    assert completed.returncode == 2, completed.stderr
    assert line.startswith("balgen fill: cannot collect fillers/test_"), line
    assert "more filler modules: balgen-state-root: not found in BALGEN_TOOLS=" in line, line
    assert not output.exists()


# -- finding 8: a pre-alloc group file holding another genesis is refused when it is read ---------


def _group_of_another_genesis(tmp_path: Path, serial_chain_fill: Path) -> tuple[Path, Path, Path, str]:
    """
    A copy of the fill's engine_x fixture and its group file, one balance of
    the group's `pre` changed, the test still in its `testIds`: (the suite,
    the fixture, the group file, the parent hash the fixture's payloads start from).
    """
    suite = tmp_path / "suite"
    shutil.copytree(serial_chain_fill / "blockchain_tests_engine_x", suite)
    fixture = next(suite.rglob(f"{NAME}.json"))
    test = json.loads(fixture.read_text())[NAME]
    group = suite / "pre_alloc" / f"{test['preHash']}.json"
    document = json.loads(group.read_text())
    assert NAME in document["testIds"]
    account = next(iter(document["pre"].values()))
    account["balance"] = hex(int(account.get("balance", "0x0"), 16) + 1)
    group.write_text(json.dumps(document))
    return suite, fixture, group, test["engineNewPayloads"][0]["params"][0]["parentHash"]


def _refused_as_another_genesis(line: str, command: str, fixture: Path, group: Path, parent: str) -> None:
    """The one line naming the fixture, the test, the group file and both hashes."""
    start = f"balgen {command}: {fixture}: test {NAME}: {group}: environment and pre give genesis 0x"
    end = f", but engineNewPayloads[0].parentHash is {parent}: the file named by preHash holds another genesis"
    assert line.startswith(start) and line.endswith(end), line
    given = line.removeprefix(start).removesuffix(end)
    assert len(given) == 64 and "0x" + given != parent, line


@integration
def test_replay_refuses_a_group_file_of_another_genesis_before_a_client_starts(tmp_path: Path, serial_chain_fill: Path) -> None:
    """Before: the client started on the file's genesis, `genesis mismatch`, exit 1."""
    suite, fixture, group, parent = _group_of_another_genesis(tmp_path, serial_chain_fill)
    started = tmp_path / "client-started"
    client = script(tmp_path / "geth", f'touch {started}\nexec {pinned_geth()} "$@"\n')
    output = tmp_path / "results"
    completed = balgen_in_process("replay", suite, "--client-bin", client, "--output", output, env=tools_env())
    assert completed.returncode == 2, completed.stderr
    _refused_as_another_genesis(one_line(completed.stderr, "replay"), "replay", fixture, group, parent)
    assert not started.exists(), "a client was started"
    assert not output.exists()


@integration
def test_genesis_refuses_a_group_file_of_another_genesis_and_writes_nothing(tmp_path: Path, serial_chain_fill: Path) -> None:
    """Before: exit 0, the file's genesis written into a folder and README named by the payloads' parent hash."""
    suite, fixture, group, parent = _group_of_another_genesis(tmp_path, serial_chain_fill)
    output = tmp_path / "genesis"
    completed = balgen_in_process("genesis", suite, "--client", "geth", "--output", output, env=tools_env())
    assert completed.returncode == 2, completed.stderr
    _refused_as_another_genesis(one_line(completed.stderr, "genesis"), "genesis", fixture, group, parent)
    assert not output.exists()
    assert not list(tmp_path.glob(".balgen-genesis-*"))


@integration
def test_a_group_file_without_balgen_state_root_is_one_line(tmp_path: Path, serial_chain_fill: Path) -> None:
    """The group's genesis hash needs the tool: without it, the missing-tool line, nothing written."""
    output = tmp_path / "genesis"
    env = _tools_without_state_root(tmp_path)
    completed = balgen_in_process("genesis", serial_chain_fill, "--client", "geth", "--output", output, env=env)
    assert completed.returncode == 2, completed.stderr
    line = one_line(completed.stderr, "genesis")
    assert line.startswith(f"balgen genesis: balgen-state-root: not found in BALGEN_TOOLS={tmp_path / 'tools'} (run `make tools`"), line
    assert not output.exists()


# -- finding 10: every file a user names is checked before it is read --------------------------


def _special_file(tmp_path: Path, kind: str) -> tuple[Path, str]:
    """A FIFO, /dev/zero or a folder at a path, and how balgen must describe it."""
    path = tmp_path / f"given-{kind}"
    if kind == "fifo":
        os.mkfifo(path)
        return path, "not a regular file (a FIFO)"
    if kind == "zero":
        path.symlink_to("/dev/zero")
        return path, "not a regular file (a device)"
    path.mkdir()
    return path, "not a regular file (a folder)"


@integration
@pytest.mark.parametrize("kind", ["fifo", "zero", "folder"])
def test_a_client_config_file_that_is_not_a_regular_file_is_refused(tmp_path: Path, serial_chain_fill: Path, kind: str) -> None:
    """`--client-args "--config F"`: before, a FIFO hung and /dev/zero ran out of memory."""
    given, description = _special_file(tmp_path, kind)
    fixture = next((serial_chain_fill / "blockchain_tests_engine").rglob(f"{NAME}.json"))
    completed = balgen_subprocess(
        "replay", fixture, "--client-args", f"--config {given}", "--output", tmp_path / "results", env=tools_env()
    )
    line = one_line(completed.stderr, "replay")
    assert completed.returncode == 2
    assert line == f"balgen replay: --client-args --config {given}: {description}", line
    assert not (tmp_path / "results").exists()


@integration
@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_jwt_secret_that_is_not_a_regular_file_is_refused(tmp_path: Path, serial_chain_fill: Path, kind: str) -> None:
    given, description = _special_file(tmp_path, kind)
    fixture = next((serial_chain_fill / "blockchain_tests_engine").rglob(f"{NAME}.json"))
    completed = balgen_subprocess(
        "replay", fixture, "--engine-url", "http://127.0.0.1:9", "--jwt-secret", given, "--output", tmp_path / "results"
    )
    line = one_line(completed.stderr, "replay")
    assert completed.returncode == 2
    assert line.endswith(f"JWT secret file {given}: {description}"), line


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_results_file_that_is_not_a_regular_file_is_refused(tmp_path: Path, kind: str) -> None:
    given, description = _special_file(tmp_path, kind)
    completed = balgen_subprocess("report", given, "--output", tmp_path / "report")
    line = one_line(completed.stderr, "report")
    assert completed.returncode == 2
    assert line == f"balgen report: {given}: {description}", line
    assert not (tmp_path / "report").exists()


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_spamoor_file_that_is_not_a_regular_file_is_refused(tmp_path: Path, kind: str) -> None:
    given, description = _special_file(tmp_path, kind)
    (tmp_path / "all.yaml").write_text(f"- include: {given.name}\n")
    completed = balgen_subprocess("devnet-check", tmp_path, "--rpc-url", "http://127.0.0.1:9")
    line = one_line(completed.stderr, "devnet-check")
    assert completed.returncode == 2
    assert line == f"balgen devnet-check: {given}: {description}", line


# -- finding 14: the memory a file may take is bounded by ulimit and cgroup limits -------------


def _fake_proc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cgroup: str, available_kb: int) -> Path:
    from balgen.plumbing import memory_limit as limits

    proc, root = tmp_path / "proc", tmp_path / "cgroup"
    (proc / "self").mkdir(parents=True)
    (proc / "meminfo").write_text(f"MemTotal: 99999999 kB\nMemAvailable: {available_kb} kB\n")
    (proc / "self" / "cgroup").write_text(f"0::{cgroup}\n")
    (proc / "self" / "status").write_text("VmSize: 100000 kB\nVmData: 50000 kB\n")
    monkeypatch.setattr(limits, "_PROC", proc)
    monkeypatch.setattr(limits, "_CGROUP_ROOT", root)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    return root


def test_the_memory_limit_is_a_cgroup_s_memory_max_when_it_is_tighter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from balgen.plumbing import memory_limit as limits

    root = _fake_proc(tmp_path, monkeypatch, "/system.slice/job.scope", available_kb=8_000_000)
    (root / "system.slice" / "job.scope").mkdir(parents=True)
    (root / "system.slice" / "job.scope" / "memory.max").write_text("max\n")
    (root / "system.slice" / "memory.max").write_text(f"{1_200_000_000}\n")
    (root / "system.slice" / "memory.current").write_text(f"{200_000_000}\n")
    limit = limits.memory_limit()
    assert limit == limits.MemoryLimit(1_000_000_000, "the memory.max of cgroup /system.slice")
    assert limit.describe() == "1.0 GB (the memory.max of cgroup /system.slice)"


def test_the_memory_limit_is_the_address_space_limit_when_it_is_tighter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from balgen.plumbing import memory_limit as limits

    _fake_proc(tmp_path, monkeypatch, "/", available_kb=8_000_000)
    monkeypatch.setattr(
        resource, "getrlimit", lambda which: (1_200_000_000, resource.RLIM_INFINITY) if which == resource.RLIMIT_AS else (-1, -1)
    )
    assert limits.memory_limit() == limits.MemoryLimit(1_200_000_000 - 100_000 * 1024, "the process's address-space limit, ulimit -v")


def test_without_limits_the_memory_limit_is_the_machine_s_available_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from balgen.plumbing import memory_limit as limits

    _fake_proc(tmp_path, monkeypatch, "/", available_kb=8_000_000)
    assert limits.memory_limit() == limits.MemoryLimit(8_000_000 * 1024, "the machine's available memory")


HELD_MB = 150
LIMIT_HEADROOM_MB = 100
UNDER_ULIMIT = f"""\
import resource, sys
from pathlib import Path
import balgen.commands.main as command
import balgen.commands.inspect
used = next(int(line.split()[1]) * 1024 for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (used + ({LIMIT_HEADROOM_MB} << 20), resource.RLIM_INFINITY))
sys.exit(command.main(sys.argv[1:]))
"""
"""`balgen ARGS` under `ulimit -v` of what it has mapped plus 100 MB (the machine has gigabytes free)."""


@integration
def test_a_fixture_larger_than_the_ulimit_allows_is_refused_in_one_line(tmp_path: Path, serial_chain_fill: Path) -> None:
    """Before: the size check compared with the machine's memory only, and a MemoryError traceback followed."""
    source = next((serial_chain_fill / "blockchain_tests_engine").rglob(f"{NAME}.json"))
    fixture = json.loads(source.read_text())
    payload = fixture[next(iter(fixture))]["engineNewPayloads"][0]["params"][0]
    chunk = "0x" + "ab" * (1 << 19)
    payload["transactions"] = payload["transactions"] + [chunk] * (HELD_MB * 2**20 // len(chunk))
    big = tmp_path / "big.json"
    big.write_text(json.dumps(fixture))
    completed = subprocess.run(
        [sys.executable, "-c", UNDER_ULIMIT, "inspect", big], capture_output=True, text=True, timeout=COMMAND_TIMEOUT, check=False
    )
    line = one_line(completed.stderr, "inspect")
    assert completed.returncode == 2
    size = big.stat().st_size
    assert line.startswith(f"balgen inspect: {big}: {size:,} bytes (over "), line
    assert "balgen may still use; reading it would run out of memory" in line and "ulimit -v" in line, line


def test_report_shows_an_output_path_with_control_characters_escaped(tmp_path: Path) -> None:
    """Before: the path's raw ESC bytes reached the terminal."""
    from test_reliability_hostile import results_document, write_run  # a results.json the schema accepts

    baseline = write_run(tmp_path / "a", results_document("a", {NAME: 100.0, "other-1M": 50.0}))
    other = write_run(tmp_path / "b", results_document("b", {NAME: 110.0, "other-1M": 55.0}))
    output = tmp_path / "out\x1b[31mred"
    completed = balgen_in_process("report", baseline, other, "--output", output)
    assert completed.returncode == 0, completed.stderr
    assert "\x1b" not in completed.stdout + completed.stderr
    assert f"report written to {tmp_path}/out\\x1b[31mred/report.md" in completed.stdout, completed.stdout[-500:]

