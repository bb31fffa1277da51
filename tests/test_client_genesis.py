"""
Per-client genesis files: the chain config each format says for a fixture's
network, the genesis fields and alloc carried over, and `balgen genesis`
writing one file per group (or nothing, on bad input).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from balgen.clients.chain_config import chain_config, geth_blob_schedule
from balgen.clients.kinds.besu import GENESIS as BESU_GENESIS, besu_chain_config
from balgen.clients.kinds.nethermind import GENESIS as NETHERMIND_GENESIS, chainspec_params
from balgen.clients.genesis_files import GenesisFormat, write_client_genesis
from balgen.clients.kinds.geth import GENESIS as GETH_GENESIS
from balgen.clients.kinds import KINDS
from balgen.clients.presets import check_template, preset_placeholders, render_command
from balgen.plumbing.errors import BadInput
from balgen.fixtures.models import FixtureGenesisHeader
from balgen.fixtures.reading import held_accounts, validated
from balgen.ethereum.forks import AMSTERDAM, OSAKA
from balgen.replay.targets import preset_with_client_args
from balgen.chain.system_calls import system_address

from in_process import balgen_in_process

HEADER = {
    "number": "0x00",
    "nonce": "0x0000000000000042",
    "timestamp": "0x00",
    "extraData": "0x00",
    "gasLimit": "0xe8d4a51000",
    "difficulty": "0x00",
    "mixHash": "0x" + "00" * 32,
    "coinbase": "0x" + "00" * 20,
    "parentHash": "0x" + "00" * 32,
    "gasUsed": "0x00",
    "baseFeePerGas": "0x07",
    "excessBlobGas": "0x00",
    "blobGasUsed": "0x00",
}
PRE = {
    "0x" + "aa" * 20: {"balance": "0x0de0b6b3a7640000", "nonce": "0x01", "code": "0x6001", "storage": {"0x01": "0x02"}},
    "0x" + "bb" * 20: {"balance": "0x01"},
}


def write_genesis_of_dicts(path: Path, genesis_format: GenesisFormat, network: str, header: dict, pre: dict, **options: Any) -> None:
    """`write_client_genesis` of a hand-built header and alloc, read through the fixture models as a file's are."""
    genesis_header = validated(FixtureGenesisHeader, header, "hand-built", "genesisBlockHeader")
    write_client_genesis(path, genesis_format, network, genesis_header, held_accounts(pre, "hand-built"), **options)


def _written(tmp_path: Path, genesis_format: GenesisFormat, network: str) -> dict:
    path = tmp_path / genesis_format.file_name
    write_genesis_of_dicts(path, genesis_format, network, HEADER, PRE, chain_id=1)
    return json.loads(path.read_text())


def test_geth_style_genesis_has_the_test_config_and_the_alloc(tmp_path: Path) -> None:
    genesis = _written(tmp_path, GETH_GENESIS, "Amsterdam")
    config = genesis["config"]
    assert config["amsterdamTime"] == 0 and config["bpo2Time"] == 0 and config["osakaTime"] == 0
    assert config["blobSchedule"]["bpo2"] == {"target": 14, "max": 21, "baseFeeUpdateFraction": 11684671}
    assert config["terminalTotalDifficultyPassed"] is True  # erigon reads it
    assert genesis["nonce"] == "0x42" and genesis["baseFeePerGas"] == "0x7" and genesis["gasLimit"] == "0xe8d4a51000"
    account = genesis["alloc"]["0x" + "aa" * 20]
    assert account == {
        "balance": "0xde0b6b3a7640000",
        "nonce": "0x1",
        "code": "0x6001",
        "storage": {"0x" + "00" * 31 + "01": "0x" + "00" * 31 + "02"},
    }


def test_osaka_has_no_amsterdam_or_bpo_in_any_format(tmp_path: Path) -> None:
    geth = _written(tmp_path, GETH_GENESIS, "Osaka")["config"]
    assert "amsterdamTime" not in geth and "bpo1Time" not in geth and geth["osakaTime"] == 0
    params = _written(tmp_path, NETHERMIND_GENESIS, "Osaka")["params"]
    assert params["eip7594TransitionTimestamp"] == "0x0" and "eip7928TransitionTimestamp" not in params
    assert params["blobSchedule"] == [{"timestamp": "0x0", "target": "0x6", "max": "0x9", "baseFeeUpdateFraction": "0x4c6964"}]
    besu = _written(tmp_path, BESU_GENESIS, "Osaka")["config"]
    assert "builderExitRequestContractAddress" not in besu and "amsterdamTime" not in besu


def test_nethermind_chainspec_turns_forks_into_eip_transitions(tmp_path: Path) -> None:
    chainspec = _written(tmp_path, NETHERMIND_GENESIS, "Amsterdam")
    params = chainspec["params"]
    for eip in (4895, 4844, 7702, 7825, 7928, 8037):  # Shanghai, Cancun, Prague, Osaka, Amsterdam
        assert params[f"eip{eip}TransitionTimestamp"] == "0x0"
    assert params["eip1559Transition"] == "0x0" and params["chainID"] == "0x1"
    # every fork is active at time 0: one entry, the latest fork's (BPO2) parameters
    assert params["blobSchedule"] == [{"timestamp": "0x0", "target": "0xe", "max": "0x15", "baseFeeUpdateFraction": "0xb24b3f"}]
    genesis = chainspec["genesis"]
    assert genesis["seal"]["ethereum"]["nonce"] == "0x0000000000000042"
    assert genesis["author"] == HEADER["coinbase"] and genesis["baseFeePerGas"] == "0x7"
    assert set(chainspec["accounts"]) == set(PRE)


def test_an_upgrade_without_blob_parameters_keeps_the_previous_ones() -> None:
    """Fixtures list the parameters in force at every upgrade; geth's config only the upgrades that set them."""
    schedule = AMSTERDAM.blob_schedule
    assert list(schedule) == ["Cancun", "Prague", "Osaka", "BPO1", "BPO2", "Amsterdam"]
    assert schedule["Osaka"] == schedule["Prague"] and schedule["Amsterdam"] == schedule["BPO2"]
    assert list(geth_blob_schedule(AMSTERDAM)) == ["cancun", "prague", "bpo1", "bpo2"]
    assert list(OSAKA.blob_schedule) == ["Cancun", "Prague", "Osaka"]


def test_every_format_takes_the_chain_id_given() -> None:
    assert chainspec_params(OSAKA, 1337)["chainID"] == "0x539"
    assert besu_chain_config(OSAKA, 1337)["chainId"] == 1337 == chain_config(OSAKA, 1337)["chainId"]


def test_besu_genesis_names_the_request_contracts(tmp_path: Path) -> None:
    config = _written(tmp_path, BESU_GENESIS, "Amsterdam")["config"]
    assert config["ethash"] == {} and config["amsterdamTime"] == 0
    assert config["withdrawalRequestContractAddress"] == "0x" + system_address("eip7002").hex()
    assert config["builderExitRequestContractAddress"] == "0x" + system_address("eip8282_exit").hex()


def test_a_malformed_account_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "genesis.json"
    with pytest.raises(BadInput, match=r"pre\[0x.*\]\.balance"):
        write_genesis_of_dicts(path, NETHERMIND_GENESIS, "Osaka", HEADER, {"0x" + "cc" * 20: {"balance": "lots"}}, chain_id=1)
    assert list(tmp_path.iterdir()) == []


def test_every_preset_command_is_a_valid_template() -> None:
    for preset in (kind.preset for kind in KINDS.values()):
        values = {name: f"<{name}>" for name in preset_placeholders(preset)}
        command = render_command(preset.node_command, values)
        assert command[0] == "<bin>" and "<engine_port>" in " ".join(command) and "<jwt>" in " ".join(command)
        assert "0.0.0.0" not in command
    with pytest.raises(BadInput, match=r"--client-cmd: unknown placeholder \{port\}"):
        check_template("client --port {port}", "--client-cmd")
    with pytest.raises(BadInput, match=r"--client-cmd: unknown placeholder \{config\}"):
        check_template("client --config {config}", "--client-cmd")


@pytest.mark.parametrize("spelling", ["--config {}", "--config={}", "-config {}"])
def test_a_user_s_config_file_is_merged_under_the_geth_preset_s(tmp_path: Path, spelling: str) -> None:
    """`--client-args "--config FILE"`: geth takes one config file, so the user's settings are merged into
    the preset's, whose own (the Engine API write timeout) win; the flag is taken out of the arguments."""
    user = tmp_path / "mine.toml"
    user.write_text("[Eth]\nDatabaseCache = 1234\n\n[Node.HTTPTimeouts]\nReadTimeout = 5\nWriteTimeout = 1\n")
    preset, arguments = preset_with_client_args("--cache.gc 10 " + spelling.format(user), KINDS["geth"].preset)
    assert arguments == ("--cache.gc", "10")
    preset_own = tomllib.loads(KINDS["geth"].preset.config_file or "")["Node"]["HTTPTimeouts"]["WriteTimeout"]
    assert tomllib.loads(preset.config_file or "") == {
        "Eth": {"DatabaseCache": 1234},
        "Node": {"HTTPTimeouts": {"ReadTimeout": 5, "WriteTimeout": preset_own}},
    }
    assert preset_with_client_args("--cache.gc 10", KINDS["geth"].preset) == (KINDS["geth"].preset, ("--cache.gc", "10"))


def test_a_preset_without_a_config_file_passes_config_on() -> None:
    assert preset_with_client_args("--config reth.toml", KINDS["reth"].preset) == (KINDS["reth"].preset, ("--config", "reth.toml"))


@pytest.mark.integration
def test_balgen_genesis_writes_one_file_per_group(serial_chain_fill: Path, tmp_path: Path) -> None:
    out = tmp_path / "genesis"
    completed = balgen_in_process("genesis", serial_chain_fill, "--client", "reth,nethermind", "--output", out)
    assert completed.returncode == 0, completed.stderr
    pre_alloc = next((serial_chain_fill / "blockchain_tests_engine_x" / "pre_alloc").glob("*.json"))
    group = json.loads(pre_alloc.read_text())
    (engine_x,) = (serial_chain_fill / "blockchain_tests_engine_x").glob("for_*/*/*.json")
    ((_, fixture),) = json.loads(engine_x.read_text()).items()
    genesis_hash = fixture["engineNewPayloads"][0]["params"][0]["parentHash"]  # the group file names none
    folder = out / f"{pre_alloc.stem}-{genesis_hash.removeprefix('0x')}"
    geth_style = json.loads((folder / "geth-genesis.json").read_text())
    assert geth_style["alloc"].keys() == {key.lower() for key in group["pre"]}
    assert json.loads((folder / "nethermind-chainspec.json").read_text())["accounts"].keys() == geth_style["alloc"].keys()
    readme = (out / "README.md").read_text()
    assert "reth node --chain" in readme and genesis_hash in readme and "serial_chain-max-1M" in readme

    again = balgen_in_process("genesis", serial_chain_fill, "--client", "reth", "--output", out)
    assert again.returncode == 2 and "exists already" in again.stderr


@pytest.mark.integration
def test_benchmarkoor_layout_and_bad_input(serial_chain_fill: Path, tmp_path: Path) -> None:
    out = tmp_path / "bm"
    completed = balgen_in_process("genesis", serial_chain_fill, "--client", "all", "--layout", "benchmarkoor", "--output", out)
    assert completed.returncode == 0, completed.stderr
    pre_hash = next((serial_chain_fill / "blockchain_tests_engine_x" / "pre_alloc").glob("*.json")).stem
    written = sorted(str(path.relative_to(out)) for path in out.rglob("*") if path.is_file())
    assert written == [
        "benchmarkoor.yaml",
        f"genesis/{pre_hash}/besu/genesis.json",
        f"genesis/{pre_hash}/go-ethereum/genesis.json",
        f"genesis/{pre_hash}/nethermind/chainspec.json",
    ]
    for args, message in (
        (("--client", "geth", "-k", "nothing_like_this"), "matches no replayable fixture"),
        (("--client", "parity"), "--client 'parity': unknown client"),
    ):
        bad = balgen_in_process("genesis", serial_chain_fill, *args, "--output", tmp_path / "bad")
        assert bad.returncode == 2 and message in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").iterdir())
