"""
Issue 34's findings on the commands added in the second round (`report`,
`devnet-check`, `devnet-genesis`, `genesis`, `export --check-chain`): each
test fails on dd375dc and passes now; docs/reliability.md has a row for each.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import balgen.commands.devnet_check as devnet_check_command
from balgen.commands.main import main as balgen_main
from balgen.plumbing.output_files import write_bytes_atomically
from simulated_chain import Answer, SimulatedChain, served
from small_disk import mounted_tmpfs
from test_reliability_hostile import balgen, one_line, results_document, write_run

# -- finding 2: a passed test without statistics ---------------------------------------------


def test_report_compares_around_a_passed_test_without_statistics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`statistics: null` on a passed test (the schema allows it) leaves that test out of every table."""
    baseline = write_run(tmp_path / "a", results_document("a", {"t1": 100.0, "t2": 100.0}))
    document = results_document("b", {"t1": 125.0, "t2": 50.0})
    document["tests"][1]["statistics"] = None
    run = write_run(tmp_path / "b", document)
    code, err = balgen(capsys, "report", baseline, run, "--output", tmp_path / "report")
    assert code == 0, err
    report = (tmp_path / "report" / "report.md").read_text()
    assert "| t1 | 100 | 125 | +25.0% |" in report
    assert "-50.0%" not in report, "t2 has no statistics in b: nothing to compare"


# -- finding 6: runs of different fixtures under the same test id -----------------------------


def test_report_refuses_runs_of_different_fixtures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baseline = write_run(tmp_path / "a", results_document("a", {"t1": 100.0, "t2": 100.0}))
    document = results_document("b", {"t1": 38.0, "t2": 38.0})
    for test in document["tests"]:
        test["genesis_hash"] = "0x" + "33" * 32
    run = write_run(tmp_path / "b", document)
    code, err = balgen(capsys, "report", baseline, run, "--output", tmp_path / "report")
    line = one_line(err, "report")
    assert code == 2, line
    assert "replayed different fixtures: test t1 has genesis 0x3333" in line, line
    assert "(and 1 more tests)" in line and "compare runs of the same fixtures" in line, line
    assert not (tmp_path / "report").exists()


# -- finding 5: every command is all or nothing, on a stop signal and on a full disk ------------


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs filled to the last block (folders can still be made, no file data fits); skipped where mounting is not allowed."""
    with mounted_tmpfs(tmp_path / "disk", "1m") as mount_point:
        with (mount_point / "filler").open("wb", buffering=0) as filler, contextlib.suppress(OSError):
            while True:
                filler.write(b"\0" * 4096)
        yield mount_point


def test_genesis_on_a_full_disk_is_one_line_and_leaves_no_folder(
    serial_chain_fill: Path, full_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = full_disk / "genesis"
    code, err = balgen(capsys, "genesis", serial_chain_fill, "--client", "geth", "--output", output)
    line = one_line(err, "genesis")
    assert code == 2 and f"--output {output}: cannot write (No space left on device); nothing written" in line, line
    assert sorted(os.listdir(full_disk)) == ["filler"]


def test_devnet_genesis_on_a_full_disk_leaves_no_truncated_file(
    full_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = full_disk / "genesis.json"
    code, err = balgen(capsys, "devnet-genesis", "--fund", "0x" + "11" * 20, "--output", output)
    line = one_line(err, "devnet-genesis")
    assert code == 2 and "No space left on device" in line, line
    assert sorted(os.listdir(full_disk)) == ["filler"]


def test_a_chart_on_a_full_disk_names_its_file_and_leaves_nothing(full_disk: Path) -> None:
    """`balgen report`'s charts, `inspect --plot` and the first-minutes figure go through `write_bytes_atomically` (`write_figure_atomically`)."""
    chart = full_disk / "report.png"
    with pytest.raises(OSError) as raised:
        write_bytes_atomically(chart, b"\x89PNG" + b"\0" * 200_000)
    assert raised.value.filename == str(chart) and "No space left on device" in str(raised.value)
    assert sorted(os.listdir(full_disk)) == ["filler"]


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_mid_genesis_leaves_nothing(
    serial_chain_fill: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    stop: signal.Signals,
) -> None:
    """The signal arrives after the first account of the first genesis file is written."""
    import balgen.commands.genesis as genesis_command

    real_writer = genesis_command.write_client_genesis

    def stopped_midway(path: Path, *args: Any, **kwargs: Any) -> None:
        def accounts(inner: Iterator[Any]) -> Iterator[Any]:
            for number, account in enumerate(inner):
                yield account
                if number == 0:
                    os.kill(os.getpid(), stop)
        *head, pre = args
        real_writer(path, *head, accounts(iter(pre)), **kwargs)

    monkeypatch.setattr(genesis_command, "write_client_genesis", stopped_midway)
    output = tmp_path / "genesis"
    code, err = balgen(capsys, "genesis", serial_chain_fill, "--client", "geth,nethermind", "--output", output)
    line = one_line(err, "genesis")
    assert code == 128 + stop, line
    assert line.endswith("; nothing written"), line
    assert os.listdir(tmp_path) == [], "no output folder, no hidden staging folder, no partial file"


def test_ctrl_c_in_devnet_genesis_and_report_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import balgen.commands.devnet_genesis as devnet_genesis_command

    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(devnet_genesis_command, "write_text_atomically", interrupted)
    code, err = balgen(capsys, "devnet-genesis", "--fund", "0x" + "11" * 20, "--output", tmp_path / "g.json")
    assert code == 130 and one_line(err, "devnet-genesis").endswith("interrupted; nothing written")
    assert os.listdir(tmp_path) == []


# -- finding 9: devnet-genesis options that make a chain no workload runs on --------------------


@pytest.mark.parametrize("gas_limit", ["-1", "0", str(10**30), "4999", "1000000001", "lots"])
def test_devnet_genesis_refuses_a_gas_limit_outside_its_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], gas_limit: str
) -> None:
    output = tmp_path / "genesis.json"
    code, err = balgen(capsys, "devnet-genesis", "--fund", "0x" + "11" * 20, f"--gas-limit={gas_limit}", "--output", output)
    line = one_line(err, "devnet-genesis")
    assert code == 2 and line.startswith("balgen devnet-genesis: --gas-limit: "), line
    assert "outside 1,000,000 to 1,000,000,000 gas" in line or "not a whole number of gas" in line, line
    assert not output.exists()


@pytest.mark.parametrize(
    ("address", "what"),
    [
        ("0x4e59b44847b379578588920ca78fbf26c0b4956c", "the deterministic deployment proxy's address"),
        ("0x000F3df6D732807Ef1319fB7B8bB8522d0Beac02", "the address of one of Osaka's system contracts"),
    ],
)
def test_devnet_genesis_refuses_to_fund_an_address_with_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], address: str, what: str
) -> None:
    output = tmp_path / "genesis.json"
    code, err = balgen(capsys, "devnet-genesis", "--fund", f"0x{'22' * 20},{address}", "--output", output)
    line = one_line(err, "devnet-genesis")
    assert code == 2 and f"--fund {address.lower()}: {what}; funding it would remove its code" in line, line
    assert not output.exists()


def test_devnet_genesis_in_range_keeps_the_proxy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "genesis.json"
    code, err = balgen(capsys, "devnet-genesis", "--fund", "0x" + "11" * 20, "--gas-limit", "1000000000", "--output", output)
    assert code == 0, err
    genesis = json.loads(output.read_text())
    assert genesis["gasLimit"] == hex(10**9)
    assert genesis["alloc"]["0x4e59b44847b379578588920ca78fbf26c0b4956c"]["code"].startswith("0x7fff")


# -- findings 3, 4 and 5: devnet-check and export --check-chain against a chain that answers oddly --


@pytest.fixture(scope="module")
def serial_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("export") / "out"
    assert balgen_main(["export", "spamoor", "-k", "serial_chain-max-1M", "--gas-benchmark-values", "1", "--output", str(folder)]) == 0
    return folder


def odd_block(field_name: str, value: Any) -> Answer:
    """eth_getBlockByNumber answering block 1 with one transaction whose `field_name` is `value` (None: left out)."""
    chain = SimulatedChain(blocks=[[], []])

    def answer(params: list[Any]) -> Any:
        block = chain.block(int(params[0], 16) if params[0] != "latest" else 1, True)
        transaction = {
            "blockNumber": "0x1", "transactionIndex": "0x0", "hash": "0x" + "ab" * 32, "from": "0x" + "11" * 20,
            "nonce": "0x0", "to": None, "input": "0x", "gas": "0x5208", "value": "0x0",
        }  # fmt: skip
        if value is None:
            del transaction[field_name]
        else:
            transaction[field_name] = value
        return {**block, "number": "0x1", "transactions": [transaction]}  # type: ignore[dict-item]

    return answer


@functools.cache
def gzip_bomb(decoded_mib: int) -> bytes:
    """
    A gzip body that expands to `decoded_mib` MiB of zeros (about 1/1000 of
    that on the wire); compressed once (512 MiB is most of a CPU-second).
    """
    compressor = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = b"\0" * 2**20
    return b"".join(compressor.compress(zeros) for _ in range(decoded_mib)) + compressor.flush()


HOSTILE_ANSWERS: dict[str, tuple[str, Answer, str]] = {
    "block number as a JSON integer": ("eth_blockNumber", lambda params: 2, "eth_blockNumber to URL: result: 2 is not a 0x-hex quantity"),
    "a null head": ("eth_blockNumber", lambda params: None, "eth_blockNumber to URL: result: None is not a 0x-hex quantity"),
    "latest header number as an integer": (
        "eth_getBlockByNumber", lambda params: {"number": 7}, "eth_getBlockByNumber to URL: result.number: 7 is not a 0x-hex quantity",
    ),
    "a transaction without fields": (
        "eth_getBlockByNumber", odd_block("from", None), "eth_getBlockByNumber to URL: result.transactions.0.from: Field required",
    ),
    "non-hex input": (
        "eth_getBlockByNumber", odd_block("input", "0xzz"), "eth_getBlockByNumber to URL: result.transactions.0.input: '0xzz' is not 0x-hex data",
    ),
    "ANSI escapes in an address": (
        "eth_getBlockByNumber", odd_block("to", "\x1b[31mred"), "result.transactions.0.to: '\\x1b[31mred' is not 0x-hex data",
    ),
    "a gzip answer expanding to 512 MiB": (
        "eth_blockNumber",
        lambda params: (200, gzip_bomb(512), {"Content-Encoding": "gzip"}),
        "eth_blockNumber: reply larger than 256 MiB once decoded (content-encoding 'gzip')",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(HOSTILE_ANSWERS))
def test_devnet_check_reads_a_hostile_answer_as_one_line(
    serial_export: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    method, answer, words = HOSTILE_ANSWERS[case]
    chain = SimulatedChain(blocks=[[], []], answers={method: answer})
    with served(chain) as url:
        code, err = balgen(capsys, "devnet-check", serial_export / "serial_chain-max-1M.yaml", "--rpc-url", url, "--since", "1")
    lines = [line for line in err.splitlines() if not line.startswith("balgen devnet-check: searching")]
    line = one_line("\n".join(lines) + "\n", "devnet-check")
    assert code == 2, line
    assert words.replace("URL", url) in line, line


@pytest.mark.parametrize("case", ["latest header number as an integer", "a gzip answer expanding to 512 MiB"])
def test_export_check_chain_reads_a_hostile_answer_as_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    method, answer, words = HOSTILE_ANSWERS[case]
    if method == "eth_blockNumber":
        method = "eth_getBlockByNumber"
        words = words.replace("eth_blockNumber", "eth_getBlockByNumber")
    with served(SimulatedChain(answers={method: answer})) as url:
        code, err = balgen(
            capsys, "export", "spamoor", "-k", "serial_chain-max-1M", "--gas-benchmark-values", "1",
            "--output", tmp_path / "out", "--check-chain", url,
        )  # fmt: skip
    line = one_line(err, "export spamoor")
    assert code == 2 and line.startswith("balgen export spamoor: --check-chain: "), line
    assert words.replace("URL", url) in line, line
    assert not (tmp_path / "out").exists()


def test_a_malformed_url_is_one_line(serial_export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = balgen(capsys, "devnet-check", serial_export, "--rpc-url", "http://[::1")
    assert code == 2 and "--rpc-url 'http://[::1': malformed URL" in one_line(err, "devnet-check")
    code, err = balgen(
        capsys, "export", "spamoor", "-k", "serial_chain-max-1M", "--gas-benchmark-values", "1",
        "--output", tmp_path / "out", "--check-chain", "http://[::1",
    )  # fmt: skip
    assert code == 2 and "--check-chain 'http://[::1': malformed URL" in one_line(err, "export spamoor")


def test_devnet_check_searches_a_bounded_window_and_says_how_far_it_got(
    serial_export: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A head of 2^48: the default searches the last 5,000 blocks, with plain progress lines off a terminal."""
    monkeypatch.setattr(devnet_check_command, "PROGRESS_LINE_SECONDS", 0.0)
    monkeypatch.setattr(devnet_check_command, "DEFAULT_LAST_BLOCKS", 40)
    head = 2**48
    chain = SimulatedChain(head=head)
    with served(chain) as url:
        code, err = balgen(capsys, "devnet-check", serial_export, "--rpc-url", url)
        assert chain.calls.count("eth_getBlockByNumber") == 40 + 1, "the last 40 blocks and the latest header"
        lines = err.splitlines()
        assert lines[0] == (
            f"balgen devnet-check: searching the last 40 blocks ({head - 39}-{head}, head {head}); "
            "--since N, --blocks A-B or --last N search others"
        ), lines[0]
        assert lines[1] == f"balgen devnet-check: read 1 of 40 blocks ({head - 39} of {head - 39}-{head})"
        assert lines[-2] == f"balgen devnet-check: read 40 of 40 blocks ({head} of {head - 39}-{head})"
        assert lines[-1].startswith("balgen devnet-check: no workload of ") and code == 1
        code, err = balgen(capsys, "devnet-check", serial_export, "--rpc-url", url, "--since", "1")
    line = one_line(err, "devnet-check")
    assert code == 2 and f"blocks 1-{head} are {head:,} blocks, more than the 1,000,000 one check reads" in line, line
    assert "narrow it with --blocks A-B or --since N" in line


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_in_devnet_check_is_one_line(
    serial_export: Path, capsys: pytest.CaptureFixture[str], stop: signal.Signals
) -> None:
    """The signal arrives while block 50 of 1-100 is read."""
    chain = SimulatedChain(head=100)

    def stopping_at_block_50(params: list[Any]) -> Any:
        if params[0] == hex(50):
            os.kill(os.getpid(), stop)
        return chain.block(100 if params[0] == "latest" else int(params[0], 16), True)

    chain.answers["eth_getBlockByNumber"] = stopping_at_block_50
    with served(chain) as url:
        code, err = balgen(capsys, "devnet-check", serial_export, "--rpc-url", url, "--since", "1")
    assert chain.calls.count("eth_getBlockByNumber") <= 52, "stopped at block 50"
    line = one_line(err, "devnet-check")
    assert code == 128 + stop, line
    assert ("interrupted" if stop == signal.SIGINT else "terminated (SIGTERM)") in line, line
