"""
Issue 17: hostile input that made a balgen command hang, crash or lose a
result on main 0955285, one test per case and its class (see the tables in
docs/reliability.md). Every case must end in one line on stderr naming the
file, test id and field (or option), exit code 2 for bad input or 128 + the
signal for a stop, no traceback, and leave no process, scratch folder or
`running` results file behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from balgen.commands.main import main as balgen_main
from balgen.plumbing.errors import BadInput
from balgen.plumbing.printable import escaped
from balgen.fill.options import MAX_GAS_VALUE, MIN_GAS_VALUE, parse_gas_benchmark_values
from balgen.model.workload import gas_millions

from in_process import balgen_forked

NAME = "serial_chain-max-1M"


def one_line(err: str, command: str) -> str:
    """The single stderr line of a rejected or stopped command, checked for shape."""
    assert "Traceback" not in err, err
    assert err.count("\n") == 1 and err.endswith("\n"), f"want one line, got {err!r}"
    assert err.startswith(f"balgen {command}: "), err
    assert "\x1b" not in err, err
    return err.rstrip("\n")


def balgen(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str]:
    """`balgen ARGV` in this process: (exit code, stderr)."""
    code = balgen_main([str(argument) for argument in argv])
    return code, capsys.readouterr().err


def catches(pid: int, stop: signal.Signals) -> bool:
    """Whether process `pid` has a handler for `stop` (its SigCgt mask in /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (stop - 1) & 1)
    return False


def wait_until_catching(process: subprocess.Popen[str], stop: signal.Signals, timeout: float = 60) -> None:
    """Wait until the command has installed its stop handlers (past Python's start-up)."""
    deadline = time.monotonic() + timeout
    while not catches(process.pid, signal.SIGHUP if stop == signal.SIGINT else stop):
        assert process.poll() is None and time.monotonic() < deadline, "the command never got going"
        time.sleep(0.05)


# -- item 5: fill -k with a malformed expression -------------------------------------


@pytest.mark.parametrize("expression", ["serial_chain and", "(x", "x$"])
def test_fill_malformed_keyword_is_one_line_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], expression: str
) -> None:
    output = tmp_path / "out"
    code, err = balgen(capsys, "fill", "--gas-benchmark-values", "1", "--output", output, "-k", expression)
    line = one_line(err, "fill")
    assert code == 2 and f"-k {expression!r}: " in line, line
    assert not output.exists()


# -- items 10 and 11: one gas-value parser, one range -----------------------------------


@pytest.mark.parametrize("value", ["0.000001", "0.5", "100000", "1000.5", "1e-7"])
def test_a_gas_value_out_of_range_is_refused_alike_by_fill_and_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    fill_code, err = balgen(capsys, "fill", "--gas-benchmark-values", value, "--output", tmp_path / "fill", "-k", NAME)
    fill_line = one_line(err, "fill")
    code, err = balgen(capsys, "export", "spamoor", "--gas-benchmark-values", value, "--output", tmp_path / "export")
    export_line = one_line(err, "export spamoor")
    assert (fill_code, code) == (2, 2), (fill_line, export_line)
    assert fill_line.removeprefix("balgen fill: ") == export_line.removeprefix("balgen export spamoor: ")
    assert f"--gas-benchmark-values: {value!r}" in fill_line
    assert not (tmp_path / "fill").exists() and not (tmp_path / "export").exists()


GAS_TEXT = st.one_of(
    st.decimals(allow_nan=True, allow_infinity=True).map(str),
    st.floats().map(repr),
    st.integers(-(10**12), 10**12).map(str),
    st.from_regex(r"\A[0-9]{0,5}(\.[0-9]{0,8})?(e-?[0-9]{1,3})?\Z"),
    st.text(max_size=12),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(GAS_TEXT, min_size=1, max_size=4))
def test_fuzz_gas_values_are_whole_in_range_and_named_uniquely(parts: list[str]) -> None:
    """Any text: refused in one line, or whole gas amounts in range whose names are distinct and read back."""
    try:
        values = parse_gas_benchmark_values(",".join(parts))
    except BadInput as error:
        assert "\n" not in str(error) and str(error).startswith("--gas-benchmark-values: ")
        return
    assert all(isinstance(value, int) and MIN_GAS_VALUE <= value <= MAX_GAS_VALUE for value in values), values
    names = [gas_millions(value) for value in values]
    assert len(set(names)) == len(names), names
    assert parse_gas_benchmark_values(",".join(names)) == values


# -- item 10: Ctrl-C and other stop signals during a long export -------------------------

STOPS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT]


@pytest.mark.parametrize("stop", STOPS, ids=[stop.name for stop in STOPS])
def test_a_stopped_export_says_so_in_one_line_and_writes_nothing(tmp_path: Path, stop: signal.Signals) -> None:
    export = subprocess.Popen(
        [sys.executable, "-m", "balgen.commands.main", "export", "spamoor", "--gas-benchmark-values", "60", "--output", "out"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_until_catching(export, stop)
        time.sleep(0.5)  # inside the export's work
        export.send_signal(stop)
        _, err = export.communicate(timeout=60)
    finally:
        export.kill()
    line = one_line(err, "export spamoor")
    assert export.returncode == 128 + stop, line
    assert ("interrupted" if stop == signal.SIGINT else f"terminated ({stop.name})") in line
    assert os.listdir(tmp_path) == [], "nothing written, no temporary folder"


# -- item 12: report on meaningless runs ---------------------------------------------------


def results_document(label: str, tests: dict[str, float]) -> dict[str, Any]:
    """A finished run's results.json with one passed test per (id, MGas/s), as `balgen replay` writes it."""
    from balgen.results.measurements import Execution, Role, benchmark_statistics
    from balgen.results.schema import FixtureResult, RunResult, RunState, Verdict

    results = []
    for test_id, mgas in tests.items():
        execution = Execution(
            test_id=test_id, role=Role.MEASURED, repetition=0, payload_index=1, block_number=1,
            block_hash="0x" + "11" * 32, gas_used=1_000_000, transaction_count=1, status="VALID",
            new_payload_ns=int(1e9 / mgas), forkchoice_updated_ns=1, known_before_send=False,
            restarted_before=False, own_timing=None,
        )  # fmt: skip
        results.append(
            FixtureResult(
                test_id=test_id, fixture_name=test_id, path="f.json", format="blockchain_test_engine_x",
                genesis_hash="0x" + "22" * 32, verdict=Verdict.PASSED, failure=None, benchmark_gas_used=1_000_000,
                executions=[execution], statistics=benchmark_statistics([execution]),
            )  # fmt: skip
        )
    run = RunResult(
        label=label, balgen_version="0", started_at="2026-01-01T00:00:00+00:00", fixtures_path="f", keyword=None,
        warmup=0, repeat=1, cold=False, fail_fast=False, target={"kind": "managed"}, state=RunState.COMPLETE,
        tests=results,
    )  # fmt: skip
    return json.loads(run.model_dump_json())


def write_run(folder: Path, document: dict[str, Any], raw: str | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(raw if raw is not None else json.dumps(document))
    return folder


def with_median(metric: str, literal: str) -> tuple[dict[str, Any], str]:
    """Run b with the median of `metric` replaced by a JSON literal (NaN and Infinity are not JSON numbers)."""
    document = results_document("b", {"t1": 100.0})
    document["tests"][0]["statistics"][metric]["median"] = 12345.678
    return document, json.dumps(document).replace("12345.678", literal)


def _edited_b(edit: Any) -> tuple[dict[str, Any], str | None]:
    document = results_document("b", {"t1": 100.0, "t2": 90.0})
    edit(document)
    return document, None


REPORT_CASES: dict[str, tuple[tuple[dict[str, Any], str | None], list[str]]] = {
    "runs sharing no test": (
        (results_document("b", {"other": 100.0}), None),
        ["no passed, measured test in common"],
    ),
    "NaN MGas/s": (with_median("mgas_per_second", "NaN"), ["tests.0", "t1", "statistics.mgas_per_second.median is nan"]),
    "Infinity MGas/s": (with_median("mgas_per_second", "Infinity"), ["statistics.mgas_per_second.median is inf"]),
    "negative MGas/s": (with_median("mgas_per_second", "-128"), ["statistics.mgas_per_second.median is -128"]),
    "zero MGas/s": (with_median("mgas_per_second", "0"), ["statistics.mgas_per_second.median is 0"]),
    "negative newPayload time": (with_median("new_payload_ns", "-5"), ["statistics.new_payload_ns.median is -5"]),
    "a test listed twice": (
        _edited_b(lambda d: d["tests"][1].update({"test_id": "t1"})),
        ["tests.1", "test t1 is listed twice"],
    ),
    "a test id with a newline and ESC": (
        _edited_b(lambda d: d["tests"][0].update({"test_id": "t1\n| \x1b[31mred"})),
        ["tests.0", "test id 't1\\n| \\x1b[31mred'"],
    ),
}


@pytest.mark.parametrize("case", list(REPORT_CASES))
def test_report_refuses_meaningless_runs_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    (document, raw), words = REPORT_CASES[case]
    baseline = write_run(tmp_path / "a", results_document("a", {"t1": 100.0, "t2": 100.0}))
    run = write_run(tmp_path / "b", document, raw)
    code, err = balgen(capsys, "report", baseline, run, "--output", tmp_path / "report")
    line = one_line(err, "report")
    assert code == 2, line
    for word in words:
        assert word in line, (word, line)
    assert not (tmp_path / "report").exists()


def test_report_of_sound_runs_still_works(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baseline = write_run(tmp_path / "a", results_document("a", {"t1": 100.0, "t2": 100.0}))
    run = write_run(tmp_path / "b", results_document("b", {"t1": 125.0, "t2": 80.0, "only-in-b": 1.0}))
    code, _ = balgen(capsys, "report", baseline, run, "--output", tmp_path / "report")
    assert code == 0
    assert "| t1 | 100 | 125 | +25.0% |" in (tmp_path / "report" / "report.md").read_text()


# -- item 14: inspect --plot where no image would land --------------------------------------


@pytest.fixture(scope="module")
def filled(serial_chain_fill: Path) -> Path:
    return serial_chain_fill


def engine_x_file(root: Path) -> Path:
    return next((root / "blockchain_tests_engine_x").glob(f"for_*/*/{NAME}.json"))


@pytest.mark.parametrize("case", ["an existing folder", "no extension", "an unknown extension", "a missing folder"])
def test_inspect_plot_to_a_path_it_cannot_honour_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], filled: Path, case: str
) -> None:
    target = {
        "an existing folder": tmp_path / "pictures",
        "no extension": tmp_path / "graphs",
        "an unknown extension": tmp_path / "graphs.json",
        "a missing folder": tmp_path / "nowhere" / "graphs.png",
    }[case]
    (tmp_path / "pictures").mkdir()
    code, err = balgen(capsys, "inspect", engine_x_file(filled), "--plot", target)
    line = one_line(err, "inspect")
    assert code == 2 and f"--plot {target}: " in line, line
    assert sorted(os.listdir(tmp_path)) == ["pictures"] and os.listdir(tmp_path / "pictures") == []


@pytest.mark.parametrize("name", ["graphs.png", "graphs.svg"])
def test_inspect_plot_lands_exactly_where_it_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], filled: Path, name: str
) -> None:
    code = balgen_main(["inspect", str(engine_x_file(filled)), "--plot", str(tmp_path / name)])
    assert code == 0 and f"to {tmp_path / name}" in capsys.readouterr().out.replace("\n", "")
    assert os.listdir(tmp_path) == [name]


# -- item 15: test ids that would drive the terminal -------------------------------------------


@pytest.mark.parametrize("test_id", [f"{NAME}\n| injected row", f"\x1b[2J\x1b[31m{NAME}", f"{NAME}\udcff"])
def test_inspect_refuses_a_test_id_with_control_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], filled: Path, test_id: str
) -> None:
    path = tmp_path / "fixture.json"
    document = json.loads(engine_x_file(filled).read_text())
    path.write_text(json.dumps({test_id: document[NAME]}))
    code, err = balgen(capsys, "inspect", path)
    line = one_line(err, "inspect")
    assert code == 2 and f"{path}: test id '" in line and "holds a control character" in line, line
    assert capsys.readouterr().out == ""


def test_a_file_name_with_control_characters_is_printed_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "a\x1b[31m\nb"
    code, err = balgen(capsys, "inspect", folder)
    line = one_line(err, "inspect")
    assert code == 2 and "a\\x1b[31m\\nb: does not exist" in line, line



# -- replay: bad input found before anything starts ------------------------------------------


@pytest.fixture
def suite(filled: Path, tmp_path: Path) -> Path:
    """A copy of the filled suite that a test may break."""
    return Path(shutil.copytree(filled, tmp_path / "fixtures"))


def edit_engine_x(root: Path, change: Any) -> Path:
    path = engine_x_file(root)
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))
    return path


def replay_refuses(capsys: pytest.CaptureFixture[str], tmp_path: Path, *argv: str | Path) -> str:
    """`balgen replay ARGV`: exit 2, one line, no output folder made; returns the line."""
    output = tmp_path / "results"
    code, err = balgen(capsys, "replay", *argv, *([] if "--output" in argv else ["--output", output]))
    line = one_line(err, "replay")
    assert code == 2, line
    assert not output.exists()
    return line


def test_replay_refuses_a_file_name_that_is_not_utf8(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suite: Path
) -> None:
    source = engine_x_file(suite)
    odd = source.parent / os.fsdecode(b"ser\xffial.json")
    shutil.copy(source, odd)
    line = replay_refuses(capsys, tmp_path, suite)
    assert "ser\\udcffial.json: file name is not UTF-8" in line, line


def test_a_result_with_a_lone_surrogate_is_written_and_read_back(tmp_path: Path) -> None:
    """Whatever a client answers, the results stay writable (issue 17 item 1's class)."""
    from balgen.replay.outputs import RunWriter
    from balgen.results.schema import RunResult

    document = results_document("a", {"t1": 100.0})
    run = RunResult.model_validate(document)
    writer = RunWriter(tmp_path, run.model_copy(update={"tests": []}))
    failed = run.tests[0].model_copy(update={"failure": "client said: bad \udcff byte", "path": "ser\udcffial.json"})
    writer.test_finished(failed)
    back = RunResult.model_validate_json((tmp_path / "results.json").read_text())
    assert back.tests[0].failure == "client said: bad \\udcff byte" and back.tests[0].path == "ser\\udcffial.json"


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "folder"])
def test_replay_and_inspect_refuse_a_special_file_without_reading_it(tmp_path: Path, suite: Path, kind: str) -> None:
    target = engine_x_file(suite).parent / "special.json"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    else:
        target.symlink_to(kind)
    for command in ("replay", "inspect"):
        # A process of its own (a fork): a FIFO or /dev/zero read by mistake stalls it, not the test run.
        output = ["--output", tmp_path / "out"] if command == "replay" else []
        completed = balgen_forked(command, suite, "-k", NAME, *output, timeout=60)
        line = one_line(completed.stderr, command)
        assert completed.returncode == 2 and f"{target}: not a regular file" in line, line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "url", ["http://[::1", "http://127.0.0.1:99999", "http://127.0.0.1:port", "http://\x00host", "ftp://127.0.0.1"]
)
@pytest.mark.parametrize("option", ["--engine-url", "--rpc-url"])
def test_replay_refuses_a_malformed_url_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], filled: Path, url: str, option: str
) -> None:
    secret = tmp_path / "jwt.hex"
    secret.write_text("ab" * 32)
    urls = ["--engine-url", url] if option == "--engine-url" else ["--engine-url", "http://127.0.0.1:1", "--rpc-url", url]
    line = replay_refuses(capsys, tmp_path, filled, *urls, "--jwt-secret", secret)
    assert f"{option} " in line, line


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=40), st.text(max_size=30).map(lambda rest: "http://" + rest)))
def test_fuzz_urls_are_refused_in_one_line_or_usable_by_httpx(url: str) -> None:
    import httpx

    from balgen.replay.targets import check_http_url

    try:
        check_http_url(url, "--engine-url")
    except BadInput as error:
        assert str(error).startswith("--engine-url ") and "\n" not in str(error)
        return
    httpx.Request("POST", url)  # what the client will do with it: must not raise


def test_replay_refuses_a_group_file_of_another_group(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suite: Path
) -> None:
    (group,) = (suite / "blockchain_tests_engine_x" / "pre_alloc").glob("*.json")
    document = json.loads(group.read_text())
    document["testIds"] = ["some-other-test-1M"]
    group.write_text(json.dumps(document))
    line = replay_refuses(capsys, tmp_path, suite, "--format", "engine_x")
    assert f"test {NAME}: {group.name} lists 1 other tests in testIds, not this one" in line, line


def test_replay_refuses_repeat_past_the_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str], filled: Path) -> None:
    line = replay_refuses(capsys, tmp_path, filled, "--repeat", "100000")
    assert "--warmup 1 --repeat 100000: more than 10,000 executions per test" in line, line


def test_replay_refuses_an_output_inside_the_fixture_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suite: Path
) -> None:
    line = replay_refuses(capsys, tmp_path, suite, "--output", suite / "results")
    assert f"--output {suite / 'results'}: inside the fixture folder" in line, line
    assert not (suite / "results").exists()


@pytest.mark.parametrize(
    ("case", "change", "words"),
    [
        ("test id with ESC", lambda d: d.update({"\x1b[31m" + NAME: d.pop(NAME)}), ["test id '\\x1b[31m"]),
        ("test id with a newline", lambda d: d.update({NAME + "\nrow": d.pop(NAME)}), ["test id '" + NAME + "\\nrow'"]),
        ("all payloads setup", lambda d: d[NAME]["engineNewPayloads"][-1].update({"phase": "setup"}), ["phase 'testing' must mark the last payload"]),
        ("phase an object", lambda d: d[NAME]["engineNewPayloads"][0].update({"phase": {"x": 1}}), ["engineNewPayloads[0].phase", "'setup' or 'testing'"]),
        ("two testing payloads", lambda d: d[NAME]["engineNewPayloads"][0].update({"phase": "testing"}), ["not [0, "]),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_replay_refuses_unusual_fixtures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suite: Path, case: str, change: Any, words: list[str]
) -> None:
    edit_engine_x(suite, change)
    line = replay_refuses(capsys, tmp_path, suite, "--format", "engine_x")
    for word in words:
        assert word in line, (case, line)


def test_replay_and_inspect_refuse_duplicate_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str], suite: Path) -> None:
    path = engine_x_file(suite)
    text = path.read_text()
    body = text[text.index("{", 1) : text.rindex("}")]  # the one fixture's object
    path.write_text("{" + json.dumps(NAME) + ": " + body + ", " + json.dumps(NAME) + ": " + body + "}")
    line = replay_refuses(capsys, tmp_path, suite)
    assert f"{path}: malformed JSON: key '{NAME}' appears twice in one object" in line, line
    code, err = balgen(capsys, "inspect", path)
    assert code == 2 and "appears twice" in one_line(err, "inspect")


# -- slow and odd servers ------------------------------------------------------------------


class OddServer:
    """A TCP server on 127.0.0.1 answering each connection the way `behaviour` says."""

    def __init__(self) -> None:
        import socket
        import threading

        self.behaviour = "trickle body"
        self.delay = 0.2
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while not self._closed.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection, self.behaviour, self.delay), daemon=True).start()

    def _serve(self, connection: Any, behaviour: str, delay: float) -> None:
        headers = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
        html = b"<!DOCTYPE HTML>\n<html>\n<head><title>Error response</title></head>\n<body>\n<h1>501</h1>\n</body>\n</html>\n"
        try:
            connection.recv(65536)
            if behaviour == "trickle body":
                connection.sendall(headers)
                while not self._closed.wait(delay):
                    connection.sendall(b" ")
            elif behaviour == "trickle headers":
                for byte in headers:
                    if self._closed.wait(delay):
                        break
                    connection.sendall(bytes([byte]))
            elif behaviour == "never answer":
                self._closed.wait(30)
            elif behaviour == "html page":
                connection.sendall(
                    b"HTTP/1.0 501 Unsupported method\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s" % (len(html), html)
                )
            elif behaviour == "garbage":
                connection.sendall(b"\x00\xff\x1b[31m garbage\n" * 3)
            elif behaviour == "late answer":
                self._closed.wait(delay)
                body = b'{"jsonrpc":"2.0","id":1,"result":"Odd/v1\\u001b[31m"}'
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        except OSError:
            pass
        finally:
            connection.close()

    def close(self) -> None:
        self._closed.set()
        self._listener.close()


@pytest.fixture
def odd_server() -> Any:
    server = OddServer()
    yield server
    server.close()


BEHAVIOURS = ["trickle body", "trickle headers", "never answer", "html page", "garbage", "late answer", "close"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(BEHAVIOURS), st.floats(0.05, 0.4))
def test_fuzz_every_call_ends_within_its_deadline(odd_server: Any, behaviour: str, delay: float) -> None:
    """Whatever the server does, a call returns or fails in one line within its timeout (plus slack)."""
    from balgen.clients.engine_client import RpcClient, RpcError, RpcTransportError

    odd_server.behaviour, odd_server.delay = behaviour, delay
    timeout = 0.5
    started = time.monotonic()
    with RpcClient(odd_server.url, timeout=timeout) as client:
        try:
            client.client_version()
        except (RpcTransportError, RpcError) as error:
            assert "\n" not in str(error) and "\x1b" not in str(error), str(error)
    assert time.monotonic() - started < timeout + 0.5, behaviour


def test_replay_against_a_plain_web_server_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], filled: Path
) -> None:
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
    import threading

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    secret = tmp_path / "jwt.hex"
    secret.write_text("ab" * 32)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        line = replay_refuses(capsys, tmp_path, filled, "--engine-url", url, "--jwt-secret", secret)
    finally:
        server.shutdown()
        server.server_close()
    assert f"--engine-url {url}: engine_exchangeCapabilities: HTTP 501: text/html reply: <!DOCTYPE HTML>" in line, line


def test_ctrl_c_while_a_slow_engine_url_is_probed_is_one_line(tmp_path: Path, filled: Path, odd_server: Any) -> None:
    secret = tmp_path / "jwt.hex"
    secret.write_text("ab" * 32)
    odd_server.behaviour = "trickle body"
    replay = subprocess.Popen(
        [sys.executable, "-m", "balgen.commands.main", "replay", str(filled), "--engine-url", odd_server.url,
         "--jwt-secret", str(secret), "--output", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_until_catching(replay, signal.SIGINT)
        time.sleep(1.5)  # in the probe: the server trickles its answer
        replay.send_signal(signal.SIGINT)
        _, err = replay.communicate(timeout=30)
    finally:
        replay.kill()
    line = one_line(err, "replay")
    assert replay.returncode == 130 and "interrupted before the run started" in line, line
    assert not (tmp_path / "out").exists()


# -- fuzzing file names and special files ----------------------------------------------------

NAME_BYTES = st.binary(min_size=1, max_size=20).filter(lambda name: b"/" not in name and b"\x00" not in name)
SPECIAL_KINDS = ["fifo", "/dev/zero", "/dev/null", "/dev/urandom", "dangling link", "folder", "link loop"]


@pytest.fixture(scope="module")
def engine_fixture(filled: Path) -> Path:
    """The self-contained `blockchain_test_engine` file (no pre-alloc group needed)."""
    return next((filled / "blockchain_tests_engine").glob(f"for_*/*/{NAME}.json"))


@settings(max_examples=150, deadline=None)
@given(NAME_BYTES, st.sampled_from(["", "sub/", ".hidden/"]))
def test_fuzz_file_names(engine_fixture: Path, name: bytes, folder: str) -> None:
    """Any file name: refused in one printable line, or discovered and its results writable."""
    import tempfile

    from balgen.replay.discovery import discover
    from balgen.results.schema import RunResult

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        target = root / folder / os.fsdecode(name + b".json")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(engine_fixture, target)
        try:
            suite = discover(root, NAME)
        except BadInput as error:
            message = str(error)
            hidden = folder == ".hidden/" or name.startswith(b".")  # hidden files are not fixtures
            assert "not UTF-8" in message or (hidden and "matches no replayable fixture" in message), message
            assert escaped(message) == message, message
            return
        (group,) = suite.groups
        document = results_document("a", {NAME: 100.0})
        document["tests"][0]["path"] = str(group.tests[0].path)
        RunResult.model_validate(document).model_dump_json()  # the path can be written into results.json


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(SPECIAL_KINDS), st.sampled_from(["", "a/", "a/b/"]), st.booleans())
def test_fuzz_special_files_in_the_tree(engine_fixture: Path, kind: str, folder: str, selected: bool) -> None:
    """A special file anywhere in the tree, selected by -k or not: one line naming it, never a hang."""
    import tempfile

    from balgen.commands.inspect import fixtures_under
    from balgen.replay.discovery import discover

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        shutil.copy(engine_fixture, root / "good.json")
        target = root / folder / "special.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        if kind == "fifo":
            os.mkfifo(target)
        elif kind == "folder":
            target.mkdir()
        elif kind == "dangling link":
            target.symlink_to(root / "nowhere")
        elif kind == "link loop":
            target.symlink_to(target)
        else:
            target.symlink_to(kind)
        keyword = NAME if selected else "special"
        for read in (lambda: discover(root, keyword), lambda: list(fixtures_under(root, keyword))):
            with pytest.raises(BadInput) as refused:
                read()
            assert str(target) in str(refused.value) and "\n" not in str(refused.value)
