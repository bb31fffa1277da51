"""`balgen devnet-check`'s bad input and the chain-fit rules, without a chain."""

from __future__ import annotations

from pathlib import Path

import pytest

from balgen.devnet.chain_fit import header_problem, system_contract_problem
from balgen.devnet.chain_reader import ChainForkConfig, ChainHeader
from balgen.commands.devnet_check import run_devnet_check
from balgen.commands.export import run_export
from balgen.ethereum.forks import AMSTERDAM, OSAKA
from balgen.clients.process import free_loopback_ports

WORKLOAD = "serial_chain-max-1M"
AMSTERDAM_CONTRACTS = {
    "BEACON_ROOTS_ADDRESS": "0x000f3df6d732807ef1319fb7b8bb8522d0beac02",
    "BUILDER_DEPOSIT_CONTRACT_ADDRESS": "0x0000bff46984e3725691fa540a8c7589300d8282",
    "BUILDER_EXIT_CONTRACT_ADDRESS": "0x000064d678505ad48f8ccb093bc65613800e8282",
    "CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS": "0x0000bbddc7ce488642fb579f8b00f3a590007251",
    "DEPOSIT_CONTRACT_ADDRESS": "0x0000000000000000000000000000000000000000",
    "HISTORY_STORAGE_ADDRESS": "0x0000f90827f1c53a10cb7a02335b175320002935",
    "WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS": "0x00000961ef480eb55e80d19ad83579a64c007002",
}
"""What geth v1.17.8 --dev (Osaka plus 'Bogota', or with --override.amsterdam 0) lists in eth_config."""
OSAKA_CONTRACTS = {
    name: address for name, address in AMSTERDAM_CONTRACTS.items() if not name.startswith("BUILDER")
} | {"DEPOSIT_CONTRACT_ADDRESS": "0x00000000219ab540356cbb839cbe05303d7705fa"}


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("export") / "out"
    assert run_export(["spamoor", "-k", WORKLOAD, "--gas-benchmark-values", "1", "--output", str(folder)]) == 0
    return folder


def one_line(capsys: pytest.CaptureFixture[str], code: int, *expected: str) -> str:
    assert code == 2
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert captured.out == "" and line.startswith("balgen devnet-check: ")
    assert all(text in line for text in expected), line
    return line


def test_bad_arguments_are_one_line(export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = "http://127.0.0.1:1"
    one_line(capsys, run_devnet_check([str(export)]), "--rpc-url")
    one_line(capsys, run_devnet_check([str(export), "--rpc-url", url, "--blocks", "9"]), "--blocks", "'9'")
    one_line(capsys, run_devnet_check([str(export / "nothing.yaml"), "--rpc-url", url]), "nothing.yaml", "neither")
    one_line(capsys, run_devnet_check([str(export / "payloads"), "--rpc-url", url]), "no all.yaml")


def test_an_edited_export_is_not_checked_against_the_wrong_model(export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edited = tmp_path / "edited"
    (edited / "payloads").mkdir(parents=True)
    (edited / f"{WORKLOAD}.yaml").write_text((export / f"{WORKLOAD}.yaml").read_text())
    text = (export / "payloads" / f"{WORKLOAD}.yaml").read_text()
    (edited / "payloads" / f"{WORKLOAD}.yaml").write_text(text.replace("gas: ", "gas: 1", 1))
    code = run_devnet_check([str(edited / f"{WORKLOAD}.yaml"), "--rpc-url", "http://127.0.0.1:1"])
    one_line(capsys, code, f"payloads/{WORKLOAD}.yaml: differs from what this balgen exports for {WORKLOAD}")


def test_a_url_that_does_not_answer_is_one_line(export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (port,) = free_loopback_ports(1)
    code = run_devnet_check([str(export), "--rpc-url", f"http://127.0.0.1:{port}"])
    one_line(capsys, code, f"http://127.0.0.1:{port}", "cannot connect")


def header(*fields: str) -> ChainHeader:
    return ChainHeader.model_validate({"number": "0x5", **dict.fromkeys(fields, "0x00")})


def contracts(listed: dict[str, str]) -> ChainForkConfig:
    return ChainForkConfig.model_validate({"systemContracts": listed})


def test_the_header_tells_a_block_access_list_fork() -> None:
    assert header_problem(header("blockAccessListHash", "slotNumber"), AMSTERDAM, "URL") is None
    assert header_problem(header(), OSAKA, "URL") is None
    refused = header_problem(header(), AMSTERDAM, "URL")
    assert refused and "no blockAccessListHash" in refused and "--override.amsterdam 0" in refused
    refused = header_problem(header("blockAccessListHash", "slotNumber"), OSAKA, "URL")
    assert refused and "--fork Amsterdam" in refused


def test_eth_config_tells_a_fork_after_the_export() -> None:
    assert system_contract_problem(contracts(AMSTERDAM_CONTRACTS), AMSTERDAM, "URL") is None
    assert system_contract_problem(contracts(OSAKA_CONTRACTS), OSAKA, "URL") is None
    refused = system_contract_problem(contracts(AMSTERDAM_CONTRACTS), OSAKA, "URL")
    assert refused and "runs a fork after Osaka" in refused and "BUILDER_EXIT_CONTRACT_ADDRESS" in refused
    refused = system_contract_problem(contracts(OSAKA_CONTRACTS), AMSTERDAM, "URL")
    assert refused and "runs a fork before Amsterdam" in refused
