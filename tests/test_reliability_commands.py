"""
Issue 34's findings on the commands added in the second round (`report`,
`devnet-check`, `devnet-genesis`, `genesis`, `export --check-chain`): each
test fails on dd375dc and passes now; docs/reliability.md has a row for each.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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
