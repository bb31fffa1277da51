"""
The Engine-API import harness: JWT secrets and tokens, the genesis written
for geth, the geth process and the clients, against geth on 127.0.0.1
(tests/harness_geth.py: geth-bal-switch in its default mode).

The genesis hashes are computed here independently (header RLP and a
one-account state trie) so that a wrong chain config or a dropped header
field shows up as a hash mismatch, the way it would on a real import.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jwt as pyjwt
import pytest
import rlp
from eth_hash.auto import keccak

from balgen.plumbing.errors import BadInput
from balgen.fixtures.models import FixtureConfig, FixtureGenesisHeader
from balgen.fixtures.reading import held_accounts, validated
from balgen.clients.engine_client import ENGINE_TIMEOUT, EngineClient, RpcClient, RpcError, RpcTransportError
from balgen.clients.genesis_files import GenesisFormat, write_client_genesis
from balgen.clients.kinds.geth import GENESIS as GETH_GENESIS
from balgen.ethereum.chain_constants import (
    EMPTY_BLOCK_ACCESS_LIST_HASH,
    EMPTY_OMMERS_HASH,
    EMPTY_REQUESTS_HASH,
    EMPTY_TRIE_ROOT,
)
from balgen.clients.chain_config import geth_chain_config, network_fork
from balgen.clients.genesis_fields import fixture_config_mismatches
from balgen.ethereum.hextypes import data_hex
from balgen.clients.kinds.geth import PRESET as GETH_PRESET
from balgen.clients.process import ClientError, ClientProcess
from balgen.replay.discovery import discover
from balgen.results.schema import FixtureResult
from balgen.replay.runner import INTAKE_PROBES, ReplayOptions, replay_suite, without_modes
from balgen.replay.targets import ManagedClient, preset_with_client_args
from balgen.plumbing.toolchain import GO_ETHEREUM_VERSION
from balgen.clients.jwt_auth import (
    decode_jwt_token,
    generate_jwt_secret_file,
    make_jwt_token,
    parse_jwt_secret,
    read_jwt_secret,
)

from harness_geth import HARNESS_GETH
from replay_runs import replayed_groups_on_one_set_of_nodes

GETH = HARNESS_GETH

FUNDED = "0xa94f5374fce5edbc8e2a8697c15331677e6ebf0b"
FUNDED_BALANCE = 10**24
EMPTY_CODE_HASH = keccak(b"")
ZERO32 = "0x" + "00" * 32

integration = pytest.mark.integration
needs_geth = pytest.mark.skipif(not GETH.is_file(), reason="geth-bal-switch not built (make tools)")


def write_genesis_of_dicts(path: Path, genesis_format: GenesisFormat, network: str, header: dict, pre: dict, **options: Any) -> None:
    """`write_client_genesis` of a hand-built header and alloc, read through the fixture models as a file's are."""
    genesis_header = validated(FixtureGenesisHeader, header, "hand-built", "genesisBlockHeader")
    write_client_genesis(path, genesis_format, network, genesis_header, held_accounts(pre, "hand-built"), **options)


# -- JWT ---------------------------------------------------------------------


def test_generated_secret_round_trips_and_is_private(tmp_path: Path) -> None:
    path = tmp_path / "jwt.hex"
    secret = generate_jwt_secret_file(path)
    assert len(secret) == 32
    assert read_jwt_secret(path) == secret
    assert path.read_text() == secret.hex() + "\n"
    assert path.stat().st_mode & 0o777 == 0o600
    assert list(tmp_path.iterdir()) == [path], "no temporary file may be left behind"


def test_secret_accepts_the_forms_clients_write() -> None:
    raw = bytes(range(32))
    assert parse_jwt_secret(raw.hex()) == raw
    assert parse_jwt_secret("0x" + raw.hex() + "\n") == raw
    assert parse_jwt_secret("  " + raw.hex().upper() + "  ") == raw


@pytest.mark.parametrize(
    "content, complaint",
    [
        ("", "empty"),
        ("0x", "empty"),
        ("ab" * 31, "62 hex digits"),
        ("ab" * 33, "66 hex digits"),
        ("zz" * 32, "not hex"),
    ],
)
def test_bad_secret_file_is_bad_input(tmp_path: Path, content: str, complaint: str) -> None:
    path = tmp_path / "jwt.hex"
    path.write_text(content)
    with pytest.raises(BadInput, match=complaint):
        read_jwt_secret(path)


def test_missing_secret_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="does not exist"):
        read_jwt_secret(tmp_path / "absent.hex")


def test_token_is_hs256_with_iat_only() -> None:
    secret = bytes(range(32))
    before = int(time.time())
    token = make_jwt_token(secret)
    assert pyjwt.get_unverified_header(token)["alg"] == "HS256"
    claims = decode_jwt_token(token, secret)
    assert set(claims) == {"iat"}
    assert before <= claims["iat"] <= int(time.time())
    with pytest.raises(pyjwt.InvalidSignatureError):
        decode_jwt_token(token, bytes(32))


def test_token_needs_a_32_byte_secret() -> None:
    with pytest.raises(BadInput, match="31 bytes"):
        make_jwt_token(bytes(31))


# -- genesis conversion ------------------------------------------------------

_BLOCK_FORKS_AT_ZERO = {
    "homesteadBlock": 0,
    "eip150Block": 0,
    "eip155Block": 0,
    "eip158Block": 0,
    "byzantiumBlock": 0,
    "constantinopleBlock": 0,
    "petersburgBlock": 0,
    "istanbulBlock": 0,
    "muirGlacierBlock": 0,
    "berlinBlock": 0,
    "londonBlock": 0,
    "arrowGlacierBlock": 0,
    "mergeNetsplitBlock": 0,
}
_CANCUN = {"target": 3, "max": 6, "baseFeeUpdateFraction": 3338477}
_PRAGUE = {"target": 6, "max": 9, "baseFeeUpdateFraction": 5007716}
_BPO1 = {"target": 10, "max": 15, "baseFeeUpdateFraction": 8346193}
_BPO2 = {"target": 14, "max": 21, "baseFeeUpdateFraction": 11684671}
_DEPOSIT = "0x00000000219ab540356cBB839Cbe05303d7705Fa"

# Written out by hand from go-ethereum v1.17.8 tests/init.go and
# params/config.go, independently of balgen.ethereum.forks' upgrades.
EXPECTED_CONFIGS: dict[str, dict[str, Any]] = {
    "Prague": {
        "chainId": 1,
        **_BLOCK_FORKS_AT_ZERO,
        "shanghaiTime": 0,
        "cancunTime": 0,
        "pragueTime": 0,
        "terminalTotalDifficulty": 0,
        "depositContractAddress": _DEPOSIT,
        "blobSchedule": {"cancun": _CANCUN, "prague": _PRAGUE},
    },
    "Osaka": {
        "chainId": 1,
        **_BLOCK_FORKS_AT_ZERO,
        "shanghaiTime": 0,
        "cancunTime": 0,
        "pragueTime": 0,
        "osakaTime": 0,
        "terminalTotalDifficulty": 0,
        "depositContractAddress": _DEPOSIT,
        "blobSchedule": {"cancun": _CANCUN, "prague": _PRAGUE},
    },
    "Amsterdam": {
        "chainId": 1,
        **_BLOCK_FORKS_AT_ZERO,
        "shanghaiTime": 0,
        "cancunTime": 0,
        "pragueTime": 0,
        "osakaTime": 0,
        "bpo1Time": 0,
        "bpo2Time": 0,
        "amsterdamTime": 0,
        "terminalTotalDifficulty": 0,
        "depositContractAddress": _DEPOSIT,
        "blobSchedule": {"cancun": _CANCUN, "prague": _PRAGUE, "bpo1": _BPO1, "bpo2": _BPO2},
    },
}


@pytest.mark.parametrize("network", sorted(EXPECTED_CONFIGS))
def test_chain_config_is_geths_test_config(network: str) -> None:
    assert geth_chain_config(network_fork(network)) == EXPECTED_CONFIGS[network]


def test_unknown_network_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="Cancun"):
        network_fork("Cancun")
    with pytest.raises(BadInput):
        write_genesis_of_dicts(tmp_path / "g.json", GETH_GENESIS, "Cancun", {"gasLimit": "0x01"}, {})
    assert not list(tmp_path.iterdir())


def test_fixture_blob_schedule_is_checked_against_geths() -> None:
    config = {
        "network": "Amsterdam",
        "chainid": "0x01",
        "blobSchedule": {
            "Cancun": {"target": "0x03", "max": "0x06", "baseFeeUpdateFraction": "0x32f0ed"},
            "Prague": {"target": "0x06", "max": "0x09", "baseFeeUpdateFraction": "0x4c6964"},
            "Osaka": {"target": "0x06", "max": "0x09", "baseFeeUpdateFraction": "0x4c6964"},
            "BPO1": {"target": "0x0a", "max": "0x0f", "baseFeeUpdateFraction": "0x7f5a51"},
            "BPO2": {"target": "0x0e", "max": "0x15", "baseFeeUpdateFraction": "0xb24b3f"},
        },
    }
    assert fixture_config_mismatches("Amsterdam", FixtureConfig.model_validate(config)) == []
    config["blobSchedule"]["BPO2"]["max"] = "0x14"  # type: ignore[index]
    (problem,) = fixture_config_mismatches("Amsterdam", FixtureConfig.model_validate(config))
    assert problem.startswith("blobSchedule.bpo2")


def _header(network: str, pre: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """An EEST-style genesis header for `pre`, with its hash computed here."""
    header: dict[str, Any] = {
        "parentHash": ZERO32,
        "uncleHash": data_hex(EMPTY_OMMERS_HASH),
        "coinbase": "0x" + "00" * 20,
        "stateRoot": "0x" + _state_root(pre).hex(),
        "transactionsTrie": data_hex(EMPTY_TRIE_ROOT),
        "receiptTrie": data_hex(EMPTY_TRIE_ROOT),
        "bloom": "0x" + "00" * 256,
        "difficulty": "0x00",
        "number": "0x00",
        "gasLimit": "0x016345785d8a0000",
        "gasUsed": "0x00",
        "timestamp": "0x00",
        "extraData": "0x00",
        "mixHash": ZERO32,
        "nonce": "0x0000000000000000",
        "baseFeePerGas": "0x07",
        "withdrawalsRoot": data_hex(EMPTY_TRIE_ROOT),
        "blobGasUsed": "0x00",
        "excessBlobGas": "0x00",
        "parentBeaconBlockRoot": ZERO32,
        "requestsHash": data_hex(EMPTY_REQUESTS_HASH),
    }
    if network == "Amsterdam":
        header["blockAccessListHash"] = data_hex(EMPTY_BLOCK_ACCESS_LIST_HASH)
        header["slotNumber"] = "0x00"
    header["hash"] = "0x" + keccak(rlp.encode(_header_rlp_fields(header))).hex()
    return header


def _header_rlp_fields(header: dict[str, Any]) -> list[Any]:
    """The header as go-ethereum's `types.Header` RLP-encodes it, field by field."""
    order = [
        ("parentHash", "b"), ("uncleHash", "b"), ("coinbase", "b"), ("stateRoot", "b"),
        ("transactionsTrie", "b"), ("receiptTrie", "b"), ("bloom", "b"), ("difficulty", "i"),
        ("number", "i"), ("gasLimit", "i"), ("gasUsed", "i"), ("timestamp", "i"),
        ("extraData", "b"), ("mixHash", "b"), ("nonce", "b"), ("baseFeePerGas", "i"),
        ("withdrawalsRoot", "b"), ("blobGasUsed", "i"), ("excessBlobGas", "i"),
        ("parentBeaconBlockRoot", "b"), ("requestsHash", "b"), ("blockAccessListHash", "b"),
        ("slotNumber", "i"),
    ]  # fmt: skip
    fields = []
    for key, kind in order:
        if key not in header:
            break
        value = header[key]
        fields.append(bytes.fromhex(value[2:]) if kind == "b" else int(value, 16))
    return fields


def _state_root(pre: dict[str, dict[str, Any]]) -> bytes:
    """
    The state root of a one-account, code- and storage-less state.

    With a single key the trie is one leaf holding the whole 64-nibble path
    of keccak(address): compact-encoded as the even-leaf flag 0x20 followed
    by the key bytes.
    """
    ((address, account),) = pre.items()
    leaf_value = rlp.encode(
        [
            int(account.get("nonce", "0x00"), 16),
            int(account["balance"], 16),
            EMPTY_TRIE_ROOT,
            EMPTY_CODE_HASH,
        ]
    )
    path = keccak(bytes.fromhex(address[2:]))
    return keccak(rlp.encode([b"\x20" + path, leaf_value]))


def _pre() -> dict[str, dict[str, Any]]:
    return {FUNDED: {"nonce": "0x00", "balance": hex(FUNDED_BALANCE), "code": "0x", "storage": {}}}


def test_genesis_json_has_geths_keys(tmp_path: Path) -> None:
    pre = {
        **_pre(),
        "0x" + "11" * 20: {
            "nonce": "0x01",
            "balance": "0x00",
            "code": "0x6000",
            "storage": {"0x01": "0x0203"},
        },
    }
    header = _header("Amsterdam", _pre())
    path = tmp_path / "genesis.json"
    write_genesis_of_dicts(path, GETH_GENESIS, "Amsterdam", header, pre)
    genesis = json.loads(path.read_text())
    assert genesis["config"].pop("terminalTotalDifficultyPassed") is True  # erigon reads it, geth ignores it
    assert genesis["config"] == EXPECTED_CONFIGS["Amsterdam"]
    assert {key: genesis[key] for key in genesis if key not in ("config", "alloc")} == {
        "nonce": "0x0",
        "timestamp": "0x0",
        "extraData": "0x00",
        "gasLimit": "0x16345785d8a0000",
        "difficulty": "0x0",
        "mixHash": ZERO32,
        "coinbase": "0x" + "00" * 20,
        "number": "0x0",
        "gasUsed": "0x0",
        "parentHash": ZERO32,
        "baseFeePerGas": "0x7",
        "excessBlobGas": "0x0",
        "blobGasUsed": "0x0",
        "slotNumber": "0x0",
    }
    assert genesis["alloc"] == {
        FUNDED: {"balance": hex(FUNDED_BALANCE)},
        "0x" + "11" * 20: {
            "balance": "0x0",
            "nonce": "0x1",
            "code": "0x6000",
            "storage": {"0x" + "00" * 31 + "01": "0x" + "00" * 30 + "0203"},
        },
    }
    assert [p.name for p in tmp_path.iterdir()] == ["genesis.json"]


def test_genesis_must_be_block_zero(tmp_path: Path) -> None:
    header = _header("Prague", _pre()) | {"number": "0x01"}
    with pytest.raises(BadInput, match="number 0"):
        write_genesis_of_dicts(tmp_path / "genesis.json", GETH_GENESIS, "Prague", header, _pre())
    assert not list(tmp_path.iterdir()), "a rejected genesis leaves no file"


# -- geth --------------------------------------------------------------------


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _serves_the_genesis_of(geth: ClientProcess, header: dict[str, Any]) -> None:
    """The running node is the pinned geth, and its block 0 is `header`'s, with FUNDED's balance."""
    assert geth.pid is not None and geth.datadir.is_dir()
    assert geth.client_version is not None and GO_ETHEREUM_VERSION in geth.client_version
    with geth.rpc_client() as rpc:
        block = rpc.get_block_by_number(0).result
        assert block is not None
        assert block["stateRoot"] == header["stateRoot"]
        assert block["hash"] == header["hash"]
        by_hash = rpc.get_block_by_hash(header["hash"]).result
        assert by_hash is not None and by_hash["number"] == "0x0"
        balance = rpc.call("eth_getBalance", [FUNDED, "latest"])
        assert int(balance.result, 16) == FUNDED_BALANCE
        assert balance.elapsed_ns > 0


@integration
@needs_geth
def test_geth_runs_with_a_user_s_config_file_merged_into_the_preset_s(tmp_path: Path) -> None:
    """`--client-args "--config FILE"`: the node runs with the user's settings and balgen's write timeout."""
    (tmp_path / "mine.toml").write_text("[Eth]\nDatabaseCache = 1234\n")
    preset, arguments = preset_with_client_args(f"--config {tmp_path / 'mine.toml'}", GETH_PRESET)
    genesis_path = tmp_path / "genesis.json"
    write_genesis_of_dicts(genesis_path, GETH_GENESIS, "Prague", _header("Prague", _pre()), _pre())
    with ClientProcess(preset, GETH, genesis_path, extra_args=arguments, temp_parent=tmp_path) as geth:
        pid, datadir = geth.pid, geth.datadir
        command = [str(tmp_path / "other") if word == str(geth.datadir) else word for word in geth.node_command()]
        dumped = tomllib.loads(
            subprocess.run([*command, "dumpconfig"], capture_output=True, text=True, timeout=60, check=True).stdout
        )
    assert dumped["Eth"]["DatabaseCache"] == 1234
    assert dumped["Node"]["HTTPTimeouts"]["WriteTimeout"] / 1e9 > ENGINE_TIMEOUT
    # Stopped and removed when the block ends (a body that raises: below).
    assert pid is not None and _process_gone(pid)
    assert geth.returncode is not None
    assert not datadir.exists()


@integration
@pytest.mark.scale
@needs_geth
def test_geth_answers_a_call_that_runs_past_its_default_write_timeout(tmp_path: Path) -> None:
    """
    The same, on the wire: a call that runs 35 s (`debug_blockProfile`
    sleeps as long as it is told; the HTTP and Engine API servers share
    the timeouts) is answered, where geth's default would have answered
    `-32002 request timed out` at 29.9 s. Marked scale: it takes 35 s.
    """
    genesis_path = tmp_path / "genesis.json"
    write_genesis_of_dicts(genesis_path, GETH_GENESIS, "Prague", _header("Prague", _pre()), _pre())
    with ClientProcess(GETH_PRESET, GETH, genesis_path, temp_parent=tmp_path) as geth, geth.rpc_client(timeout=90) as rpc:
        answer = rpc.call("debug_blockProfile", [str(tmp_path / "block.prof"), 35])
    assert answer.result is None
    assert answer.elapsed_ns > 35e9


@integration
@needs_geth
@pytest.mark.parametrize(("network", "interruption"), [("Osaka", RuntimeError), ("Amsterdam", KeyboardInterrupt)])
def test_geth_serves_the_genesis_of_the_header_and_is_stopped_and_removed_when_the_body_raises(
    tmp_path: Path, network: str, interruption: type[BaseException]
) -> None:
    """
    One node per fork after Prague (Prague's: `test_geth_genesis_hash_matches_the_header_on_prague`, on
    the module's node) proves both its genesis and its stop: a geth start is about 1.2 CPU-s.
    """
    header = _header(network, _pre())
    genesis_path = tmp_path / "genesis.json"
    write_genesis_of_dicts(genesis_path, GETH_GENESIS, network, header, _pre())
    geth = ClientProcess(GETH_PRESET, GETH, genesis_path, temp_parent=tmp_path)
    with pytest.raises(interruption), geth:
        pid, datadir = geth.pid, geth.datadir
        _serves_the_genesis_of(geth, header)
        raise interruption("body failed")
    assert pid is not None and _process_gone(pid)
    assert not datadir.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["genesis.json"]


@integration
@needs_geth
def test_geth_init_failure_reports_the_log(tmp_path: Path) -> None:
    genesis_path = tmp_path / "genesis.json"
    genesis_path.write_text('{"config": {"chainId": 1}, "gasLimit": "not a number"}')
    with (
        pytest.raises(ClientError, match=r"geth init .* failed") as failure,
        ClientProcess(GETH_PRESET, GETH, genesis_path, temp_parent=tmp_path),
    ):
        pass
    assert "Fatal" in str(failure.value)
    assert [p.name for p in tmp_path.iterdir()] == ["genesis.json"]


def test_missing_geth_binary_is_bad_input(tmp_path: Path) -> None:
    genesis_path = tmp_path / "genesis.json"
    genesis_path.write_text("{}")
    with (
        pytest.raises(BadInput, match="does not exist"),
        ClientProcess(GETH_PRESET, tmp_path / "no-geth", genesis_path),
    ):
        pass


# -- replay failure reporting --------------------------------------------------


class _Collected:
    """A replay observer that keeps the results, in order."""

    def __init__(self) -> None:
        self.results: list[FixtureResult] = []
        self.client_versions: list[str | None] = []

    def group_started(self, group: object, client_version: str | None) -> None:
        self.client_versions.append(client_version)

    def test_started(self, ref: object, executions: int) -> None:
        pass

    def execution_done(self, execution: object) -> None:
        pass

    def test_finished(self, result: FixtureResult) -> None:
        self.results.append(result)


def _write_engine_x(folder: Path, pre_alloc: dict[str, Any], fixtures: list[tuple[str, dict[str, Any]]]) -> Path:
    """`fixtures` as blockchain_test_engine_x files sharing the pre-alloc group `pre_alloc`."""
    (folder / "pre_alloc").mkdir(parents=True)
    (folder / "pre_alloc" / "0xgroup.json").write_text(json.dumps(pre_alloc))
    for name, fixture in fixtures:
        (folder / f"{name}.json").write_text(json.dumps({name: fixture | {"preHash": "0xgroup"}}))
    return folder


def _replay(path: Path, temp_parent: Path, **options: Any) -> _Collected:
    """Replay every fixture under `path` on balgen's geth, once each unless told."""
    collected = _Collected()
    replay_suite(
        discover(path),
        without_modes(ManagedClient(GETH_PRESET, GETH, temp_parent=temp_parent)),
        ReplayOptions(**({"warmup": 0, "repeat": 1} | options)),
        collected,
    )
    return collected


def _bogus_payload_entry(version: int, parent: str) -> dict[str, Any]:
    """A well-formed payload entry on `parent` that geth must refuse (its block hash is not its header's)."""
    payload = {
        "parentHash": parent, "feeRecipient": "0x" + "00" * 20, "stateRoot": ZERO32, "receiptsRoot": ZERO32,
        "logsBloom": "0x" + "00" * 256, "blockNumber": "0x1", "gasLimit": "0x1000000", "gasUsed": "0x0",
        "timestamp": "0xc", "extraData": "0x", "prevRandao": ZERO32, "baseFeePerGas": "0x7", "blobGasUsed": "0x0",
        "excessBlobGas": "0x0", "blockHash": "0x" + "ab" * 32, "transactions": [], "withdrawals": [],
    }  # fmt: skip
    return {
        "params": [payload, [], ZERO32, []],
        "newPayloadVersion": str(version),
        "forkchoiceUpdatedVersion": "3",
        "phase": "testing",
    }


@integration
@needs_geth
def test_replay_reports_a_genesis_mismatch(tmp_path: Path) -> None:
    header = _header("Prague", _pre()) | {"hash": "0x" + "ee" * 32}
    fixture = {
        "network": "Prague",
        "genesisBlockHeader": header,
        "pre": _pre(),
        "engineNewPayloads": [_bogus_payload_entry(4, header["hash"])],
        "lastblockhash": "0x" + "ab" * 32,
        "config": {"network": "Prague", "chainid": "0x01"},
    }
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "t.json").write_text(json.dumps({"t": fixture}))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (result,) = _replay(tmp_path / "fixtures", scratch).results
    assert not result.passed
    assert result.failure is not None and result.failure.startswith("genesis mismatch")
    assert "0x" + "ee" * 32 in result.failure
    assert not list(scratch.iterdir()), "the node's datadir and genesis are removed"


@integration
@needs_geth
def test_replay_reports_each_failed_test_and_goes_on(tmp_path: Path) -> None:
    header = _header("Prague", _pre())
    pre_alloc = {"network": "Prague", "chainId": "0x01", "genesis": header, "pre": _pre()}
    fixtures = [
        (f"test_{n}", {"network": "Prague", "engineNewPayloads": [_bogus_payload_entry(4, header["hash"])],
                       "lastblockhash": "0x" + "ab" * 32})
        for n in range(2)
    ]  # fmt: skip
    folder = _write_engine_x(tmp_path / "fixtures", pre_alloc, fixtures)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    results = _replay(folder, scratch).results
    assert [test.test_id for test in results] == ["test_0", "test_1"]
    for test in results:
        assert test.genesis_hash == header["hash"]
        assert test.failure is not None
        assert test.failure.startswith(
            "payload 0 (block 1), measured execution 1: engine_newPayloadV4 returned INVALID: blockhash mismatch"
        )
        assert [execution.payload_index for execution in test.executions] == [0], "only the refused call"
    assert not list(scratch.iterdir())

    (folder / "test_malformed.json").write_text(
        json.dumps({"test_malformed": {"network": "Prague", "preHash": "0xgroup", "engineNewPayloads": []}})
    )
    with pytest.raises(BadInput, match=r"test_malformed\.json: test test_malformed: no engineNewPayloads"):
        discover(folder)


# -- replay happy path, on payloads geth builds itself -----------------------

_SENDER_KEY = "0x" + "42" * 32
_SYSTEM_CONTRACTS = json.loads(
    (Path(__file__).resolve().parents[1] / "balgen" / "ethereum" / "system_contracts.json").read_text()
)["contracts"]
_GETH_RPC_TO_EEST_HEADER = {
    "sha3Uncles": "uncleHash",
    "miner": "coinbase",
    "transactionsRoot": "transactionsTrie",
    "receiptsRoot": "receiptTrie",
    "logsBloom": "bloom",
}
_BUILD_VERSIONS = {"Prague": (3, 4, 4), "Amsterdam": (4, 6, 5)}
"""forkchoiceUpdated, getPayload and newPayload versions per fork."""


def _builder_pre(network: str, sender: str) -> dict[str, dict[str, Any]]:
    """A funded sender plus the system contracts block building needs."""
    keys = ["eip4788", "eip2935", "eip7002", "eip7251"]
    if network == "Amsterdam":
        keys += ["eip7997", "eip8282_deposit", "eip8282_exit"]
    pre = {
        sender.lower(): {
            "nonce": "0x00",
            "balance": hex(FUNDED_BALANCE),
            "code": "0x",
            "storage": {},
        }
    }
    for key in keys:
        entry = _SYSTEM_CONTRACTS[key]
        pre[entry["address"]] = {
            "nonce": "0x01",
            "balance": "0x00",
            "code": entry["code"],
            "storage": {},
        }
    return pre


def _eest_header(block: dict[str, Any]) -> dict[str, Any]:
    """An RPC block's header in the key names of an EEST genesisBlockHeader."""
    return {_GETH_RPC_TO_EEST_HEADER.get(key, key): value for key, value in block.items()}


def _build_payload(
    engine: EngineClient,
    network: str,
    parent: str,
    timestamp: int,
    slot: int,
    *,
    min_transactions: int = 0,
) -> dict[str, Any]:
    """Ask geth to build a block on `parent` and return it as an engineNewPayloads entry."""
    fcu_version, get_version, new_version = _BUILD_VERSIONS[network]
    attributes: dict[str, Any] = {
        "timestamp": hex(timestamp),
        "prevRandao": ZERO32,
        "suggestedFeeRecipient": "0x" + "33" * 20,
        "withdrawals": [],
        "parentBeaconBlockRoot": "0x" + "44" * 32,
    }
    if network == "Amsterdam":
        attributes["slotNumber"] = hex(slot)
    state = {"headBlockHash": parent, "safeBlockHash": ZERO32, "finalizedBlockHash": ZERO32}
    # geth returns an empty block at once and fills it with pool transactions
    # in the background; ask again, one second later each time, until the
    # pending transfer is in (a later timestamp makes it a new build).
    for attempt in range(5):
        attributes["timestamp"] = hex(timestamp + attempt)
        payload_id = engine.call(
            f"engine_forkchoiceUpdatedV{fcu_version}", [state, attributes]
        ).result["payloadId"]
        time.sleep(0.3 + attempt)
        envelope = engine.call(f"engine_getPayloadV{get_version}", [payload_id]).result
        if len(envelope["executionPayload"]["transactions"]) >= min_transactions:
            break
    return {
        "params": [
            envelope["executionPayload"],
            [],
            attributes["parentBeaconBlockRoot"],
            envelope["executionRequests"],
        ],
        "newPayloadVersion": str(new_version),
        "forkchoiceUpdatedVersion": str(fcu_version),
    }


GethBuiltChain = tuple[dict[str, Any], dict[str, dict[str, Any]], list[dict[str, Any]], dict[str, Any]]
"""`_geth_built_chain`'s genesis header, pre, two payloads and a sibling of the first."""


def _geth_built_chain(tmp_path: Path, network: str) -> GethBuiltChain:
    """
    Genesis, pre, two consecutive payloads (block 1 carries a transfer) and a
    sibling of block 1, all built by one geth node.
    """
    from eth_account import Account

    sender = Account.from_key(_SENDER_KEY)
    pre = _builder_pre(network, sender.address)
    genesis_path = tmp_path / "builder-genesis.json"
    # geth fills in the derived header fields; only the stored ones matter here.
    write_genesis_of_dicts(genesis_path, GETH_GENESIS, network, _header(network, _pre()), pre)
    with (
        ClientProcess(GETH_PRESET, GETH, genesis_path, temp_parent=tmp_path) as geth,
        geth.rpc_client() as rpc,
        geth.engine_client() as engine,
    ):
        genesis_block = rpc.get_block_by_number(0).result
        assert genesis_block is not None
        genesis = _eest_header(genesis_block)
        transfer = sender.sign_transaction(
            {"type": 2, "chainId": 1, "nonce": 0, "to": "0x" + "22" * 20, "value": 1, "gas": 21000,
             "maxFeePerGas": 10**10, "maxPriorityFeePerGas": 10**9}
        )  # fmt: skip
        rpc.call("eth_sendRawTransaction", ["0x" + transfer.raw_transaction.hex()])
        first = _build_payload(engine, network, genesis["hash"], 12, 1, min_transactions=1)
        sibling = _build_payload(engine, network, genesis["hash"], 20, 1)
        block_1 = first["params"][0]["blockHash"]
        assert (
            engine.new_payload(int(first["newPayloadVersion"]), first["params"]).result["status"]
            == "VALID"
        )
        assert (
            engine.forkchoice_updated(int(first["forkchoiceUpdatedVersion"]), block_1).result[
                "payloadStatus"
            ]["status"]
            == "VALID"
        )
        second = _build_payload(engine, network, block_1, 24, 2)
    assert len(first["params"][0]["transactions"]) == 1, "the transfer made it into block 1"
    first["phase"], second["phase"] = "setup", "testing"
    return genesis, pre, [first, second], sibling


@pytest.fixture(scope="module")
def geth_built_chain(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], GethBuiltChain]:
    """
    `_geth_built_chain` of a network, built once per module: the tests replay the chain on nodes of their
    own and never change it; a build is a geth start, a transfer and three payloads (about 2.3 CPU-s).
    """
    built: dict[str, GethBuiltChain] = {}

    def of(network: str) -> GethBuiltChain:
        if network not in built:
            built[network] = _geth_built_chain(tmp_path_factory.mktemp(f"builder-{network}"), network)
        return copy.deepcopy(built[network])

    return of


def _fixture(network: str, payloads: list[dict[str, Any]], last: str) -> dict[str, Any]:
    """A blockchain_test_engine_x fixture around `payloads`."""
    return {
        "network": network,
        "engineNewPayloads": payloads,
        "lastblockhash": last,
        "config": {"network": network, "chainid": "0x01"},
    }


def _replays_on_one_node(temp_parent: Path, *runs: tuple[Path, dict[str, Any]]) -> list[_Collected]:
    """
    Every fixture under each path, each path with its own `ReplayOptions`, on one geth started once
    for their one genesis group (`replayed_groups_on_one_set_of_nodes`, where `_replay` starts one a
    path): a geth start, about 3 CPU-s, spared for each set of options after the first.
    """
    groups = [group for path, _ in runs for group in discover(path).groups]
    assert len(groups) == len(runs)
    collected = [_Collected() for _ in runs]
    options = [ReplayOptions(**({"warmup": 0, "repeat": 1} | given)) for _, given in runs]
    geth = without_modes(ManagedClient(GETH_PRESET, GETH, temp_parent=temp_parent))
    replayed_groups_on_one_set_of_nodes(geth, list(zip(groups, options, collected, strict=True)))
    return collected


BuiltChainReplays = tuple[_Collected, _Collected | None, Path]
"""A network's `built_chain_replays`: the verdicts' replay, the agreement's (Amsterdam only), the scratch folder."""


@pytest.fixture(scope="module")
def built_chain_replays(
    tmp_path_factory: pytest.TempPathFactory, geth_built_chain: Callable[[str], GethBuiltChain]
) -> Callable[[str], BuiltChainReplays]:
    """
    Each network's geth-built chain as engine_x fixtures (and one blockchain_test_engine) replayed, the
    verdicts tested, not the agreement margin (no execution is replaced on a loaded machine); on
    Amsterdam, on the same node, its two blocks again with the agreement checked (the intake test).
    """
    done: dict[str, BuiltChainReplays] = {}

    def of(network: str) -> BuiltChainReplays:
        if network in done:
            return done[network]
        folder = tmp_path_factory.mktemp(f"replays-{network}")
        genesis, pre, chain, sibling = geth_built_chain(network)
        last = chain[-1]["params"][0]["blockHash"]
        fixtures = [
            ("two_blocks", _fixture(network, chain, last)),
            ("sibling", _fixture(network, [sibling], sibling["params"][0]["blockHash"])),
            ("two_blocks_again", _fixture(network, chain, last)),
            ("wrong_last_block", _fixture(network, [{**chain[0], "phase": "testing"}], last)),
            ("repeated_block", _fixture(network, [chain[0], {**chain[0], "phase": "testing"}], last)),
        ]
        pre_alloc = {"network": network, "chainId": "0x01", "genesis": genesis, "pre": pre}
        verdicts = _write_engine_x(folder / "engine_x", pre_alloc, fixtures)
        # The same chain as a blockchain_test_engine, its genesis in the fixture: on the group's genesis,
        # it joins the group and its node (a geth start is about 3 CPU-s).
        engine_fixture = fixtures[0][1] | {"genesisBlockHeader": genesis, "pre": pre}
        (verdicts / "two_blocks_in_engine_format.json").write_text(json.dumps({"two_blocks_in_engine_format": engine_fixture}))
        runs = [(verdicts, {"warmup": 1, "repeat": 2, "agreement_check": False})]
        if network == "Amsterdam":
            runs.append((_write_engine_x(folder / "agreement", pre_alloc, fixtures[:1]), {"warmup": 1, "repeat": 2, "agreement_check": True}))
        scratch = folder / "scratch"
        scratch.mkdir()
        replays = _replays_on_one_node(scratch, *runs)
        done[network] = (replays[0], replays[1] if len(replays) > 1 else None, scratch)
        return done[network]

    return of


@integration
@needs_geth
@pytest.mark.parametrize("network", ["Prague", "Amsterdam"])
def test_replay_of_geth_built_chains(network: str, built_chain_replays: Callable[[str], BuiltChainReplays]) -> None:
    collected, _, scratch = built_chain_replays(network)
    assert collected.client_versions == [collected.client_versions[0]], "one group, one node"
    assert collected.client_versions[0] is not None and GO_ETHEREUM_VERSION in collected.client_versions[0]
    results = {test.test_id: test for test in collected.results}
    for test_id in ("two_blocks", "sibling", "two_blocks_again"):
        assert results[test_id].failure is None, results[test_id].failure
    assert [e.role.value for e in results["two_blocks"].executions] == ["setup", "warmup", "measured", "measured"]
    first, *benchmark = results["two_blocks_again"].executions
    assert (first.block_number, first.transaction_count, first.gas_used) == (1, 1, 21000)
    for execution in benchmark:
        assert (execution.block_number, execution.transaction_count, execution.gas_used) == (2, 0, 0)
    assert first.forkchoice_updated_ns, "a setup payload is made head"
    assert all(e.forkchoice_updated_ns is None for e in benchmark), "siblings: no forkchoice update between executions"
    assert len({e.block_hash for e in benchmark}) == len(benchmark), "every execution a block the client had not seen"
    for execution in (first, *benchmark):
        assert execution.status == "VALID" and not execution.known_before_send
        assert execution.new_payload_ns > 0
        assert execution.own_timing is not None and execution.own_timing.block_hash == execution.block_hash
    wrong = results["wrong_last_block"]
    assert wrong.failure is not None and "the fixture's lastblockhash is" in wrong.failure
    # The head is checked once the siblings ran and the fixture's own block was made head.
    assert wrong.failure.startswith("after the measured execution 3 the head is block 1 ")
    assert [e.role.value for e in wrong.executions] == ["warmup", "measured", "measured"]
    repeated = results["repeated_block"]
    assert repeated.failure is not None and "already known" in repeated.failure
    assert repeated.failure.startswith("payload 1 (block 1), warmup execution 1")
    assert repeated.executions[-1].known_before_send
    assert not list(scratch.iterdir())
    engine = results["two_blocks_in_engine_format"]
    assert engine.passed and engine.format == "blockchain_test_engine"
    assert [e.role.value for e in engine.executions] == ["setup", "warmup", "measured", "measured"]


@integration
@needs_geth
def test_where_the_agreement_is_checked_the_client_s_intake_of_the_payload_is_measured_first(
    built_chain_replays: Callable[[str], BuiltChainReplays],
) -> None:
    """
    Three misnamed siblings go before the benchmark executions: geth refuses each at its block hash
    (so nothing was executed), and their median time, the intake, is what the margin allows for on top
    of the client's own block time. The Amsterdam chain's two blocks, on the node of its verdicts' replay.
    """
    _, agreement, _ = built_chain_replays("Amsterdam")
    assert agreement is not None
    (result,) = agreement.results
    roles = [e.role.value for e in result.executions]
    assert roles[:1 + INTAKE_PROBES] == ["setup"] + ["intake"] * INTAKE_PROBES
    probes = result.executions[1 : 1 + INTAKE_PROBES]
    for probe in probes:
        assert probe.status == "INVALID" and (probe.validation_error or "").startswith("blockhash mismatch")
        assert probe.variant is None and probe.own_timing is None and probe.new_payload_ns > 0
    intake_ms = sorted(p.new_payload_ns for p in probes)[INTAKE_PROBES // 2] / 1e6
    benchmark = result.executions[1 + INTAKE_PROBES :]
    assert benchmark and all(e.intake_ms == intake_ms for e in benchmark), "each execution carries the intake"
    for execution in benchmark:
        assert execution.own_ms is not None and execution.overhead_ms is not None
        assert execution.within_margin == (execution.overhead_ms <= intake_ms + 10.0 + 0.1 * execution.own_ms)
    # A loaded machine may still put the median outside the margin; then the failure says so, with the intake.
    assert result.failure is None or "the client's intake of the payload" in result.failure, result.failure


# -- questions to one running geth (`prague_geth`) -------------------------------------


@pytest.fixture(scope="module")
def prague_geth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ClientProcess, dict[str, Any]]]:
    """
    geth as the preset starts it on a one-account Prague genesis, and that genesis's header: one node
    for the tests that only ask it questions (a start is about 1.2 CPU-s, 3 once it lives past go-ethereum's
    KZG set-up). The tests of starting, stopping and removing a node start their own; these come last in
    the module, so that the node, stopped at the module's end, does not idle through the others.
    """
    folder = tmp_path_factory.mktemp("prague-geth")
    header = _header("Prague", _pre())
    write_genesis_of_dicts(folder / "genesis.json", GETH_GENESIS, "Prague", header, _pre())
    with ClientProcess(GETH_PRESET, GETH, folder / "genesis.json", temp_parent=folder) as geth:
        yield geth, header


@integration
@needs_geth
def test_geth_genesis_hash_matches_the_header_on_prague(prague_geth: tuple[ClientProcess, dict[str, Any]]) -> None:
    _serves_the_genesis_of(*prague_geth)


@integration
@needs_geth
def test_geth_answers_engine_calls_longer_than_balgen_waits(
    prague_geth: tuple[ClientProcess, dict[str, Any]], tmp_path: Path
) -> None:
    """
    geth as the preset starts it cuts no call short before balgen's own
    Engine API deadline: its HTTP servers' WriteTimeout (30 s by default,
    after which a 1000M `greedy` newPayload was answered `-32002 request
    timed out`) is longer than `ENGINE_TIMEOUT`. `geth dumpconfig` with the
    running node's exact flags and config file (on another datadir: the
    node holds its own) shows what geth made of them.
    """
    geth, _ = prague_geth
    command = [str(tmp_path / "other") if word == str(geth.datadir) else word for word in geth.node_command()]
    dumped = subprocess.run([*command, "dumpconfig"], capture_output=True, text=True, timeout=60, check=True)
    timeouts = tomllib.loads(dumped.stdout)["Node"]["HTTPTimeouts"]
    assert timeouts["WriteTimeout"] / 1e9 > ENGINE_TIMEOUT >= 300


@integration
@needs_geth
def test_engine_api_auth_forkchoice_and_errors(prague_geth: tuple[ClientProcess, dict[str, Any]]) -> None:
    geth, header = prague_geth
    with geth.engine_client() as engine:
        capabilities = engine.call("engine_exchangeCapabilities", [["engine_newPayloadV4"]])
        assert "engine_newPayloadV4" in capabilities.result
        assert capabilities.elapsed_ns > 0

        forkchoice = engine.forkchoice_updated(3, header["hash"])
        assert forkchoice.result["payloadStatus"]["status"] == "VALID"
        assert forkchoice.result["payloadId"] is None

        with pytest.raises(RpcError) as invalid_params:
            engine.new_payload(4, [{}])
        assert invalid_params.value.code == -32602

        # Tokens are checked: a wrong secret and a stale iat are both refused.
        with (
            EngineClient(geth.engine_url, bytes(32)) as wrong_secret,
            pytest.raises(RpcTransportError, match="HTTP 401"),
        ):
            wrong_secret.call("engine_exchangeCapabilities", [[]])
        with RpcClient(geth.engine_url) as unauthenticated:
            stale = make_jwt_token(geth.jwt_secret, issued_at=int(time.time()) - 120)
            with pytest.raises(RpcTransportError, match="HTTP 401"):
                unauthenticated._endpoint.request(
                    "engine_exchangeCapabilities", [[]], {"Authorization": f"Bearer {stale}"}
                )

        # debug_setHead refuses to "rewind" to the current head: the replay
        # must not call it on a chain that is still at genesis.
        with geth.rpc_client() as rpc, pytest.raises(RpcError, match="future block"):
            rpc.set_head(0)
