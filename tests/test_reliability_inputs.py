"""
Bad input to `balgen replay`, `balgen inspect`, `balgen report` and
`balgen fill`, each made from a fixture `balgen fill` really wrote: every one
must be a single line on stderr that names the file, the test id and the
field (or the option), exit code 2, no traceback, and nothing written.

The `balgen fill` cases here are the ones `tests/test_fill_cli.py` does not
cover, including its option errors (a value missing, an invalid choice, an
infinite gas value) and a `-k` matching nothing, which leaves no folder behind.
"""

from __future__ import annotations

import json
import shutil
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from in_process import balgen_in_process

from balgen.commands.main import main as balgen_main
from balgen.commands.inspect import run_inspect
from balgen.commands.replay import run_replay
from balgen.commands.report import run_report
from balgen.results.schema import RunResult, RunState

NAME = "serial_chain-max-1M"
FORMAT_FOLDERS = ("blockchain_tests", "blockchain_tests_engine", "blockchain_tests_engine_x")


@pytest.fixture(scope="module")
def filled(serial_chain_fill: Path) -> Path:
    return serial_chain_fill


@pytest.fixture
def suite(filled: Path, tmp_path: Path) -> Path:
    """A copy of the filled suite that a test may break."""
    return Path(shutil.copytree(filled, tmp_path / "fixtures"))


def fixture_file(root: Path, folder: str) -> Path:
    return next((root / folder).glob(f"for_*/*/{NAME}.json"))


def pre_alloc_file(root: Path) -> Path:
    return next((root / "blockchain_tests_engine_x" / "pre_alloc").glob("*.json"))


def edit_fixture(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Apply `change` to the one fixture in `path` and write it back."""
    document = json.loads(path.read_text())
    change(document[NAME])
    path.write_text(json.dumps(document))


def edit_document(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


def one_line(err: str, command: str) -> str:
    """The single stderr line of a rejected command, checked for shape."""
    assert "Traceback" not in err, err
    assert err.count("\n") == 1 and err.endswith("\n"), f"want one line, got {err!r}"
    assert err.startswith(f"balgen {command}: "), err
    return err.rstrip("\n")


# -- balgen replay ----------------------------------------------------------------

Breaker = Callable[[Path, Path], tuple[list[str], list[str]]]
"""(suite copy, scratch folder) -> (arguments, words the line must contain)."""


def engine_x(root: Path) -> Path:
    return fixture_file(root, "blockchain_tests_engine_x")


def engine(root: Path) -> Path:
    return fixture_file(root, "blockchain_tests_engine")


def truncated(path: Path, keep: float) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    return path


def payload(fixture: dict[str, Any], index: int = 1) -> dict[str, Any]:
    """The execution payload of `engineNewPayloads[index]` (1 = the benchmark block)."""
    return fixture["engineNewPayloads"][index]["params"][0]


def first_account(document: dict[str, Any]) -> dict[str, Any]:
    return next(iter(document["pre"].values()))


def _malformed_json(root: Path, _: Path) -> tuple[list[str], list[str]]:
    path = truncated(engine_x(root), 0.5)
    return [str(root)], [str(path), "malformed JSON: ", "(line "]  # the message depends on where the cut falls


def _empty_file(root: Path, _: Path) -> tuple[list[str], list[str]]:
    engine_x(root).write_text("")
    return [str(root)], [str(engine_x(root)), "malformed JSON: Expecting value (line 1 column 1)"]


def _truncated_pre_alloc(root: Path, _: Path) -> tuple[list[str], list[str]]:
    path = truncated(pre_alloc_file(root), 0.9)
    return [str(root)], [str(path), "malformed JSON"]


def _nested_too_deeply(root: Path, _: Path) -> tuple[list[str], list[str]]:
    engine_x(root).write_text('{"t": ' + "[" * 100_000 + "]" * 100_000 + "}")
    return [str(root)], [str(engine_x(root)), "malformed JSON: nested too deeply"]


def _huge_number(root: Path, _: Path) -> tuple[list[str], list[str]]:
    engine_x(root).write_text(f'{{"{NAME}": {{"network": {"9" * 5000}}}}}')
    return [str(root)], [str(engine_x(root)), "malformed JSON: a number with too many digits"]


def _not_utf8(root: Path, _: Path) -> tuple[list[str], list[str]]:
    engine_x(root).write_bytes(b'{"t": "\xff\xfe"}')
    return [str(root)], [str(engine_x(root)), "malformed JSON: not UTF-8 text"]


def _top_level_list(root: Path, _: Path) -> tuple[list[str], list[str]]:
    engine_x(root).write_text("[]")
    return [str(root)], [str(engine_x(root)), "top level is not a JSON object"]


def _unknown_format(root: Path, _: Path) -> tuple[list[str], list[str]]:
    edit_fixture(engine_x(root), lambda f: f["_info"].update({"fixture-format": "blockchain_test_engine_z"}))
    return [str(root)], [str(engine_x(root)), f"test {NAME}", "unknown fixture format (format 'blockchain_test_engine_z')"]


def _missing(field: str) -> Breaker:
    def breaker(root: Path, _: Path) -> tuple[list[str], list[str]]:
        edit_fixture(engine_x(root), lambda f: f.pop(field))
        return [str(root)], [str(engine_x(root)), f"test {NAME}", f"no {field}"]

    return breaker


def _missing_transactions(root: Path, _: Path) -> tuple[list[str], list[str]]:
    edit_fixture(engine_x(root), lambda f: payload(f).pop("transactions"))
    return [str(root)], [f"test {NAME}", "engineNewPayloads[1].params[0].transactions: Field required"]


def _missing_block_number(root: Path, _: Path) -> tuple[list[str], list[str]]:
    edit_fixture(engine_x(root), lambda f: payload(f, 0).pop("blockNumber"))
    return [str(root)], [f"test {NAME}", "engineNewPayloads[0].params[0].blockNumber: Field required"]


def _missing_environment(root: Path, _: Path) -> tuple[list[str], list[str]]:
    edit_document(pre_alloc_file(root), lambda d: d.pop("environment"))
    return [str(root)], [str(pre_alloc_file(root)), "no environment object"]


def _missing_gas_limit(root: Path, _: Path) -> tuple[list[str], list[str]]:
    def change(fixture: dict[str, Any]) -> None:
        del fixture["genesisBlockHeader"]["gasLimit"]

    edit_fixture(engine(root), change)
    return [str(root), "--format", "engine"], [str(engine(root)), f"test {NAME}", "genesisBlockHeader.gasLimit: Field required"]


def _bad_hash(root: Path, _: Path) -> tuple[list[str], list[str]]:
    edit_fixture(engine_x(root), lambda f: payload(f).update({"blockHash": "0x" + "zz" * 32}))
    return [str(root)], [f"test {NAME}", "engineNewPayloads[1].params[0].blockHash: '0xzzzz", "is not 0x-prefixed hex"]


def _short_block_hash(root: Path, _: Path) -> tuple[list[str], list[str]]:
    edit_fixture(engine_x(root), lambda f: payload(f).update({"blockHash": "0x" + "ab" * 31}))
    return [str(root)], [f"test {NAME}", "engineNewPayloads[1].params[0].blockHash: 31 bytes, expected 32"]


def _bad_transaction_hex(root: Path, _: Path) -> tuple[list[str], list[str]]:
    edit_fixture(engine_x(root), lambda f: payload(f)["transactions"].__setitem__(3, "0x02f8zz"))
    return [str(root)], [str(engine_x(root)), f"test {NAME}", "engineNewPayloads[1].params[0].transactions[3]: '0x02f8zz' is not 0x-prefixed hex"]


def _unprefixed_state_root(root: Path, _: Path) -> tuple[list[str], list[str]]:
    edit_fixture(engine_x(root), lambda f: payload(f).update({"stateRoot": "ab" * 32}))
    return [str(root)], [f"test {NAME}", "engineNewPayloads[1].params[0].stateRoot: 'abab", "is not 0x-prefixed hex"]


def _short_last_block_hash(root: Path, _: Path) -> tuple[list[str], list[str]]:
    edit_fixture(engine_x(root), lambda f: f.update({"lastblockhash": "0x1234"}))
    return [str(root)], [f"test {NAME}", "lastblockhash: 2 bytes, expected 32"]


def _bad_storage_key(root: Path, _: Path) -> tuple[list[str], list[str]]:
    edit_document(pre_alloc_file(root), lambda d: first_account(d).update({"storage": {"0xzz": "0x01"}}))
    return [str(root)], [str(pre_alloc_file(root)), ".storage key: '0xzz' is not a number"]


def _account_not_an_object(root: Path, _: Path) -> tuple[list[str], list[str]]:
    def change(document: dict[str, Any]) -> None:
        address = next(iter(document["pre"]))
        document["pre"][address] = "0x01"

    edit_document(pre_alloc_file(root), change)
    return [str(root)], [str(pre_alloc_file(root)), "pre[0x", "]: not an object"]


def _bad_balance(root: Path, _: Path) -> tuple[list[str], list[str]]:
    def change(fixture: dict[str, Any]) -> None:
        next(iter(fixture["pre"].values()))["balance"] = "lots"

    edit_fixture(engine(root), change)
    return [str(root), "--format", "engine"], [str(engine(root)), f"test {NAME}", ".balance: 'lots' is not a number"]


def _bad_blob_schedule(root: Path, _: Path) -> tuple[list[str], list[str]]:
    edit_fixture(engine_x(root), lambda f: f["config"]["blobSchedule"].update({"Cancun": {"target": "three"}}))
    return [str(root)], [f"test {NAME}", "config.blobSchedule.Cancun.target: 'three' is not a number"]


def _missing_pre_alloc(root: Path, _: Path) -> tuple[list[str], list[str]]:
    edit_fixture(engine_x(root), lambda f: f.update({"preHash": "0x00000000deadbeef"}))
    return [str(root)], [str(engine_x(root)), f"test {NAME}", "preHash 0x00000000deadbeef: no pre_alloc/0x00000000deadbeef.json"]


def _pre_hash_outside_pre_alloc(root: Path, _: Path) -> tuple[list[str], list[str]]:
    edit_fixture(engine_x(root), lambda f: f.update({"preHash": "../../blockchain_tests_engine_x/pre_alloc/x"}))
    return [str(root)], [f"test {NAME}", "preHash '../../", "is not a pre-alloc group name"]


def _unknown_fork(root: Path, _: Path) -> tuple[list[str], list[str]]:
    edit_fixture(engine_x(root), lambda f: f.update({"network": "Cancun"}))
    edit_document(pre_alloc_file(root), lambda d: d.update({"network": "Cancun"}))
    return [str(root)], [str(engine_x(root)), f"test {NAME}", "network 'Cancun': no geth chain config", "known: Prague, Osaka, Amsterdam"]


def _fork_differs_from_group(root: Path, _: Path) -> tuple[list[str], list[str]]:
    edit_fixture(engine_x(root), lambda f: f.update({"network": "Osaka"}))
    return [str(root)], [f"test {NAME}", "network Osaka differs from", "Amsterdam"]


def _empty_folder(_: Path, scratch: Path) -> tuple[list[str], list[str]]:
    (scratch / "empty").mkdir()
    return [str(scratch / "empty")], [str(scratch / "empty"), "no blockchain_test_engine or blockchain_test_engine_x fixtures"]


def _only_blockchain_tests(root: Path, _: Path) -> tuple[list[str], list[str]]:
    return [str(root / "blockchain_tests")], ["no blockchain_test_engine or blockchain_test_engine_x fixtures"]


def _jwt(content: bytes | None, words: list[str]) -> Breaker:
    def breaker(root: Path, scratch: Path) -> tuple[list[str], list[str]]:
        secret = scratch / "jwt.hex"
        if content is not None:
            secret.write_bytes(content)
        url = "http://127.0.0.1:9"  # never contacted: the secret is read first
        return [str(root), "--engine-url", url, "--jwt-secret", str(secret)], [f"JWT secret file {secret}", *words]

    return breaker


def _jwt_folder(root: Path, scratch: Path) -> tuple[list[str], list[str]]:
    (scratch / "jwt").mkdir()
    return (
        [str(root), "--engine-url", "http://127.0.0.1:9", "--jwt-secret", str(scratch / "jwt")],
        [f"JWT secret file {scratch / 'jwt'}", "not a regular file (a folder)"],
    )


def _managed_port_in_client_args(root: Path, _: Path) -> tuple[list[str], list[str]]:
    return [str(root), "--client-args", "--authrpc.port=8551 --cache 512"], ["--client-args: --authrpc.port is set by balgen"]


def _http_port_in_client_args(root: Path, _: Path) -> tuple[list[str], list[str]]:
    return [str(root), "--client-args", "--http.port 8545"], ["--client-args: --http.port is set by balgen"]


def _output_not_writable(root: Path, _: Path) -> tuple[list[str], list[str]]:
    return [str(root), "--output", "/proc"], ["--output /proc: not writable"]


def _output_under_a_file(root: Path, scratch: Path) -> tuple[list[str], list[str]]:
    (scratch / "afile").write_text("keep\n")
    return [str(root), "--output", str(scratch / "afile" / "run")], [f"--output {scratch / 'afile' / 'run'}: cannot be created"]


def _output_is_a_file(root: Path, scratch: Path) -> tuple[list[str], list[str]]:
    (scratch / "afile").write_text("keep\n")
    return [str(root), "--output", str(scratch / "afile")], [f"--output {scratch / 'afile'}: is a file"]


def _no_path(_: Path, __: Path) -> tuple[list[str], list[str]]:
    return [], ["the following arguments are required: path"]


REPLAY_BAD_INPUTS: dict[str, Breaker] = {
    "malformed JSON (truncated fixture)": _malformed_json,
    "empty fixture file": _empty_file,
    "truncated pre-alloc file": _truncated_pre_alloc,
    "JSON nested too deeply": _nested_too_deeply,
    "JSON number too long": _huge_number,
    "not UTF-8": _not_utf8,
    "top level not an object": _top_level_list,
    "unknown fixture format": _unknown_format,
    "missing network": _missing("network"),
    "missing lastblockhash": _missing("lastblockhash"),
    "missing engineNewPayloads": _missing("engineNewPayloads"),
    "missing preHash": _missing("preHash"),
    "missing transactions": _missing_transactions,
    "missing blockNumber": _missing_block_number,
    "missing pre-alloc environment": _missing_environment,
    "missing genesis gasLimit": _missing_gas_limit,
    "wrong hex: blockHash": _bad_hash,
    "wrong hex: blockHash of 31 bytes": _short_block_hash,
    "wrong hex: a transaction": _bad_transaction_hex,
    "wrong hex: stateRoot without 0x": _unprefixed_state_root,
    "wrong hex: short lastblockhash": _short_last_block_hash,
    "wrong hex: pre-alloc storage key": _bad_storage_key,
    "pre-alloc account not an object": _account_not_an_object,
    "engine fixture balance not a number": _bad_balance,
    "malformed blobSchedule": _bad_blob_schedule,
    "pre_alloc reference that does not exist": _missing_pre_alloc,
    "preHash pointing outside pre_alloc": _pre_hash_outside_pre_alloc,
    "unknown fork name": _unknown_fork,
    "fork differs from its pre-alloc group": _fork_differs_from_group,
    "empty folder": _empty_folder,
    "folder without replayable fixtures": _only_blockchain_tests,
    "JWT secret missing": _jwt(None, ["does not exist"]),
    "JWT secret empty": _jwt(b"", ["empty, expected 64 hex digits"]),
    "JWT secret too short": _jwt(b"ab" * 16 + b"\n", ["32 hex digits, expected 64 (32 bytes)"]),
    "JWT secret not hex": _jwt(b"0x" + b"zz" * 32, ["not hex, expected 64 hex digits"]),
    "JWT secret binary": _jwt(bytes(range(200, 232)), ["not hex text"]),
    "JWT secret is a folder": _jwt_folder,
    "port flag balgen manages (--authrpc.port)": _managed_port_in_client_args,
    "port flag balgen manages (--http.port)": _http_port_in_client_args,
    "output folder not writable": _output_not_writable,
    "output folder under a file": _output_under_a_file,
    "output is a file": _output_is_a_file,
    "no path argument": _no_path,
}


@pytest.mark.integration
@pytest.mark.parametrize("case", list(REPLAY_BAD_INPUTS))
def test_replay_bad_input_is_one_line_naming_where(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    monkeypatch.chdir(tmp_path)  # the default output folder would be results/ here
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    argv, words = REPLAY_BAD_INPUTS[case](suite, scratch)
    if "--output" not in argv:
        argv = [*argv, "--output", str(tmp_path / "run")]
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    code = run_replay(argv)
    line = one_line(capsys.readouterr().err, "replay")
    assert code == 2, line
    for word in words:
        assert word in line, (word, line)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before, "a rejected command writes nothing"


class _NotAnEngine(BaseHTTPRequestHandler):
    """Something else holding the port: a web server that answers 404 to everything."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.send_response(404)
        self.send_header("Content-Length", "9")
        self.end_headers()
        self.wfile.write(b"not found")

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def port_in_use() -> Iterator[int]:
    """A loopback port held by an HTTP server that is no Engine API."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotAnEngine)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()


def read_request(connection: socket.socket) -> None:
    """Read one HTTP request whole: its headers, then as many body bytes as they announce."""
    connection.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(4096)
        if not chunk:
            return
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = connection.recv(4096)
        if not chunk:
            return
        body += chunk


@pytest.fixture
def port_that_hangs_up() -> Iterator[int]:
    """A loopback port whose listener accepts each connection and closes it at once."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            read_request(connection)  # closing with unread bytes would be a reset, not a hang-up
            connection.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()


@pytest.mark.integration
@pytest.mark.parametrize("holder", ["port_in_use", "port_that_hangs_up"])
def test_engine_url_on_a_port_used_by_something_else(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest, holder: str
) -> None:
    port = request.getfixturevalue(holder)
    (tmp_path / "jwt.hex").write_text("11" * 32)
    url = f"http://127.0.0.1:{port}"
    code = run_replay([str(suite), "--engine-url", url, "--jwt-secret", str(tmp_path / "jwt.hex"), "--output", str(tmp_path / "run")])
    line = one_line(capsys.readouterr().err, "replay")
    assert code == 2
    assert line.startswith(f"balgen replay: --engine-url {url}: engine_exchangeCapabilities"), line
    assert ("HTTP 404: not found" if holder == "port_in_use" else "RemoteProtocolError") in line, line
    assert not (tmp_path / "run").exists()


# -- balgen inspect ------------------------------------------------------------------


def _inspect_truncated(root: Path, _: Path) -> tuple[list[str], list[str]]:
    path = truncated(fixture_file(root, "blockchain_tests"), 0.3)
    return [str(root)], [str(path), "malformed JSON"]


def _inspect_empty_folder(_: Path, scratch: Path) -> tuple[list[str], list[str]]:
    (scratch / "empty").mkdir()
    return [str(scratch / "empty")], [f"no fixture under {scratch / 'empty'}"]


def _inspect_missing_network(root: Path, _: Path) -> tuple[list[str], list[str]]:
    path = fixture_file(root, "blockchain_tests")

    def change(fixture: dict[str, Any]) -> None:
        del fixture["network"], fixture["config"]["network"]

    edit_fixture(path, change)
    return [str(path), "--retrace"], [str(path), f"test {NAME}", "missing field 'network'"]


def _inspect_wrong_hex(root: Path, _: Path) -> tuple[list[str], list[str]]:
    path = engine(root)
    edit_fixture(path, lambda f: payload(f).update({"gasLimit": "0xnothex"}))
    return [str(path), "--retrace"], [str(path), f"test {NAME}", "engineNewPayloads[1].params[0].gasLimit"]


def _inspect_unknown_fork(root: Path, _: Path) -> tuple[list[str], list[str]]:
    path = fixture_file(root, "blockchain_tests")
    edit_fixture(path, lambda f: f.update({"network": "Atlantis"}))
    return [str(path), "--retrace"], [str(path), f"test {NAME}", "block 1", 'unsupported fork "Atlantis"']


def _inspect_pre_hash_outside(root: Path, _: Path) -> tuple[list[str], list[str]]:
    path = engine_x(root)
    edit_fixture(path, lambda f: f.update({"preHash": "../x"}))
    return [str(path), "--retrace"], [str(path), f"test {NAME}", "preHash '../x' is not a pre-alloc group name"]


def _inspect_missing_pre_alloc(root: Path, _: Path) -> tuple[list[str], list[str]]:
    pre_alloc_file(root).unlink()
    return [str(engine_x(root)), "--retrace"], [str(engine_x(root)), f"test {NAME}", "no pre_alloc/"]


def _inspect_plot_not_writable(root: Path, _: Path) -> tuple[list[str], list[str]]:
    return [str(root / "blockchain_tests"), "--plot", "/proc/graphs.png"], ["--plot: cannot write /proc/graphs.png"]


def _inspect_unknown_option(root: Path, _: Path) -> tuple[list[str], list[str]]:
    return [str(root), "--colour"], ["unrecognized arguments: --colour"]


def _inspect_no_path(_: Path, __: Path) -> tuple[list[str], list[str]]:
    return [], ["the following arguments are required: path"]


INSPECT_BAD_INPUTS: dict[str, Breaker] = {
    "truncated fixture": _inspect_truncated,
    "empty folder": _inspect_empty_folder,
    "missing network (retrace)": _inspect_missing_network,
    "wrong hex in a payload (retrace)": _inspect_wrong_hex,
    "unknown fork name (retrace)": _inspect_unknown_fork,
    "preHash pointing outside pre_alloc": _inspect_pre_hash_outside,
    "pre_alloc reference that does not exist": _inspect_missing_pre_alloc,
    "plot into an unwritable folder": _inspect_plot_not_writable,
    "unknown option": _inspect_unknown_option,
    "no path argument": _inspect_no_path,
}


@pytest.mark.integration
@pytest.mark.parametrize("case", list(INSPECT_BAD_INPUTS))
def test_inspect_bad_input_is_one_line_naming_where(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    argv, words = INSPECT_BAD_INPUTS[case](suite, scratch)
    code = run_inspect(argv)
    line = one_line(capsys.readouterr().err, "inspect")
    assert code == 2, line
    for word in words:
        assert word in line, (word, line)


# -- balgen report ---------------------------------------------------------------


def _run_folder(root: Path, name: str) -> Path:
    """A minimal finished replay run with one passed test."""
    from balgen.results.measurements import Execution, Role, benchmark_statistics
    from balgen.results.schema import FixtureResult, Verdict

    execution = Execution(
        test_id="t", role=Role.MEASURED, repetition=0, payload_index=1, block_number=1, block_hash="0x" + "11" * 32,
        gas_used=1_000_000, transaction_count=1, status="VALID", new_payload_ns=1_000_000, forkchoice_updated_ns=1,
        known_before_send=False, restarted_before=False, own_timing=None,
    )  # fmt: skip
    run = RunResult(
        label=name, balgen_version="0", started_at="2026-01-01T00:00:00+00:00", fixtures_path="f", keyword=None,
        warmup=0, repeat=1, cold=False, fail_fast=False, target={"kind": "managed"}, state=RunState.COMPLETE,
        tests=[FixtureResult(test_id="t", fixture_name="t", path="f.json", format="blockchain_test_engine_x",
                             genesis_hash="0x" + "22" * 32, verdict=Verdict.PASSED, failure=None,
                             executions=[execution], statistics=benchmark_statistics([execution]))],
    )  # fmt: skip
    folder = root / name
    folder.mkdir()
    (folder / "results.json").write_text(run.model_dump_json())
    return folder


def _report_truncated(root: Path) -> tuple[list[str], list[str]]:
    results = truncated(_run_folder(root, "b") / "results.json", 0.5)
    return [str(_run_folder(root, "a")), str(results)], [f"{results}: not a replay result: (top level): Invalid JSON"]


def _report_empty_folder(root: Path) -> tuple[list[str], list[str]]:
    (root / "empty").mkdir()
    return [str(_run_folder(root, "a")), str(root / "empty")], [f"{root / 'empty'}: no results.json (not a balgen replay run)"]


def _report_edited(change: Callable[[dict[str, Any]], None], words: list[str]) -> Callable[[Path], tuple[list[str], list[str]]]:
    def make(root: Path) -> tuple[list[str], list[str]]:
        edit_document(_run_folder(root, "b") / "results.json", change)
        return [str(_run_folder(root, "a")), str(root / "b")], [f"{root / 'b' / 'results.json'}: ", *words]

    return make


def _report_output_not_writable(root: Path) -> tuple[list[str], list[str]]:
    return [str(_run_folder(root, "a")), str(_run_folder(root, "b")), "--output", "/proc"], ["--output /proc: not writable"]


def _report_negative_worst(root: Path) -> tuple[list[str], list[str]]:
    return [str(_run_folder(root, "a")), str(_run_folder(root, "b")), "--worst", "-1"], ["--worst -1: must be 0 or more"]


REPORT_BAD_INPUTS: dict[str, Callable[[Path], tuple[list[str], list[str]]]] = {
    "truncated results.json": _report_truncated,
    "empty run folder": _report_empty_folder,
    "results of another schema version": _report_edited(
        lambda d: d.update({"schema_version": 99}), ["schema version 99, this balgen reads 1, 2"]
    ),
    "a missing field": _report_edited(lambda d: d.pop("label"), ["not a replay result: label: Field required"]),
    "a field of the wrong type": _report_edited(
        lambda d: d["tests"][0].update({"verdict": "maybe"}), ["not a replay result: tests.0.verdict: Input should be"]
    ),
    "output folder not writable": _report_output_not_writable,
    "--worst below zero": _report_negative_worst,
    "no runs": lambda root: ([], ["the following arguments are required: runs"]),
}


@pytest.mark.parametrize("case", list(REPORT_BAD_INPUTS))
def test_report_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    argv, words = REPORT_BAD_INPUTS[case](tmp_path)
    if "--output" not in argv:
        argv = [*argv, "--output", str(tmp_path / "report")]
    code = run_report(argv)
    line = one_line(capsys.readouterr().err, "report")
    assert code == 2, line
    for word in words:
        assert word in line, (word, line)
    assert not (tmp_path / "report").exists()


# -- balgen fill --------------------------------------------------------------------

FILL_BAD_INPUTS = {
    "unknown fork": (["--fork", "Cancun"], ["--fork: unknown fork 'Cancun' (known: Prague, Osaka, Amsterdam)"]),
    "empty fork": (["--fork", ""], ["--fork: unknown fork ''"]),
    "gas list with an empty item": (["--gas-benchmark-values", "30,,60"], ["--gas-benchmark-values: '' is not a number of millions"]),
    "gas list with a semicolon": (["--gas-benchmark-values", "30;60"], ["--gas-benchmark-values: '30;60' is not a number of millions"]),
    "gas value NaN": (["--gas-benchmark-values", "nan"], ["--gas-benchmark-values: 'nan' is not a whole amount of gas"]),
    "gas value below one gas": (["--gas-benchmark-values", "1e-7"], ["--gas-benchmark-values: '1e-7' is not a whole amount of gas"]),
    "output folder not writable": (["--output", "/proc"], ["--output: cannot write to /proc"]),
    "output folder not writable (sysfs)": (["--output", "/sys/kernel"], ["--output: cannot write to /sys/kernel: Permission denied"]),
}


@pytest.mark.integration
@pytest.mark.parametrize("case", list(FILL_BAD_INPUTS))
def test_fill_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    arguments, words = FILL_BAD_INPUTS[case]
    # -k and a 1M gas value keep a wrongly accepted command from filling much.
    defaults = ["--gas-benchmark-values", "1", "--output", str(tmp_path / "out"), "-k", "no_such_fixture"]
    code = balgen_main(["fill", *defaults, *arguments])
    line = one_line(capsys.readouterr().err, "fill")
    assert code == 2, line
    for word in words:
        assert word in line, (word, line)
    assert not (tmp_path / "out").exists()


FILL_OPTION_ERRORS = {
    "infinite gas value (OverflowError traceback)": ["--gas-benchmark-values", "inf", "-k", "x"],
    "option without its value (argparse usage text)": ["-k", "x", "--fork"],
    "invalid --setup choice (argparse usage text)": ["--gas-benchmark-values", "1", "-k", "x", "--setup", "nowhere"],
}


@pytest.mark.parametrize("case", list(FILL_OPTION_ERRORS))
def test_fill_option_errors_are_one_line(tmp_path: Path, case: str) -> None:
    completed = balgen_in_process("fill", "--output", tmp_path / "out", *FILL_OPTION_ERRORS[case], cwd=tmp_path)
    assert completed.returncode == 2 and "Traceback" not in completed.stderr, completed.stderr
    assert len(completed.stderr.splitlines()) == 1, completed.stderr
