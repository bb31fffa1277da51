"""
`balgen devnet-check` against real `geth --dev` chains started here, as the devnet quick start runs it.

The test sends the exported payloads itself, exactly as spamoor's replay-eest
would (fresh funded wallets per payload, `$contract[N]` resolved from the
deployer's nonces; spamoor is not installable here), then:
- on `geth --dev --override.amsterdam 0`, two families (parallel groups, and
  a contract set through the deterministic deployment proxy) pass: found,
  succeeded, storage, code, traced read/write sets and group counts;
- a second first-run of the contract set (the proxy refuses the factory
  again: a reverted transaction) and a foreign call in the middle of a run
  (a wrong storage value) fail, naming the transaction or the slot;
- plain `geth --dev` is refused for both the Amsterdam and the Osaka export,
  with the reason and what to change, by devnet-check and by `export --check-chain`;
- a pure-Osaka chain from `balgen devnet-genesis` runs the Osaka export and passes;
- a run is traced a block at a time (`debug_traceBlockByNumber`), and behind a proxy refusing that, a
  transaction at a time, with the same lines;
- runs of the 3M and the 1M export on spamoor's wallets: with spamoor's key, the 1M check takes its own only.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from balgen.devnet.exported import read_exported
from balgen.clients.engine_client import RpcClient, RpcTransportError
from balgen.clients.process import free_loopback_ports
from balgen.plumbing.toolchain import pinned_geth
from balgen.model.workload import TxSpec
from in_process import balgen_in_process
from devnet_sender import FUNDER, MAX_FEE, TIP, fund, fund_funder_from_dev_account, send_payload_file, send_signed
from rpc_proxy import proxy

pytestmark = pytest.mark.integration

ARCHIVE = ("--gcmode", "archive", "--state.scheme", "hash")
"""Every block's state kept at once, so that any block (or, in the fallback, any transaction) can be traced."""
MIXED = "mixed_dep-max-group2-1M"
SET = "extcodesize-max-0.5KB-1M"


@contextlib.contextmanager
def dev_chain(datadir: Path, *flags: str) -> Iterator[RpcClient]:
    """`geth --dev FLAGS` on 127.0.0.1 with the debug API, stopped afterwards."""
    (port,) = free_loopback_ports(1)
    command = [
        str(pinned_geth()), "--dev", "--dev.gaslimit", "60000000", *ARCHIVE, *flags, "--datadir", str(datadir),
        "--http", "--http.addr", "127.0.0.1", "--http.port", str(port), "--http.api", "eth,debug,web3",
        "--port", "0", "--authrpc.port", "0", "--ipcdisable", "--nodiscover", "--maxpeers", "0",
    ]
    log = (datadir.parent / f"{datadir.name}.log").open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    rpc = RpcClient(f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                rpc.client_version()
                break
            except RpcTransportError:
                assert process.poll() is None and time.monotonic() < deadline, "geth --dev did not start"
                time.sleep(0.2)
        yield rpc
    finally:
        rpc.close()
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def exported(folder: Path, pattern: str, *options: str, gas: str = "1") -> Path:
    completed = balgen_in_process("export", "spamoor", "-k", pattern, "--gas-benchmark-values", gas, "--output", folder, *options)
    assert completed.returncode == 0, completed.stderr
    return folder


def check(export: Path, rpc: RpcClient, *options: str) -> subprocess.CompletedProcess[str]:
    return balgen_in_process("devnet-check", export, "--rpc-url", rpc.url, *options)


def head(rpc: RpcClient) -> int:
    return int(rpc.call("eth_blockNumber").result, 16)


@pytest.fixture(scope="module")
def amsterdam_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("export")
    exported(folder / "mixed", f"{MIXED}")
    exported(folder / "set", f"{SET}")
    return folder


@pytest.fixture(scope="module")
def osaka_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Osaka export of the parallel-groups family, which the two Osaka-chain tests read."""
    return exported(tmp_path_factory.mktemp("export") / "osaka", f"{MIXED}", "--fork", "Osaka")


@pytest.fixture(scope="module")
def amsterdam_chain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RpcClient]:
    with dev_chain(tmp_path_factory.mktemp("amsterdam") / "datadir", "--override.amsterdam", "0") as rpc:
        fund_funder_from_dev_account(rpc)
        yield rpc


def test_two_families_sent_as_spamoor_sends_them_pass(amsterdam_export: Path, amsterdam_chain: RpcClient) -> None:
    rpc = amsterdam_chain
    start = head(rpc) + 1
    for name, folder in ((MIXED, "mixed"), (SET, "set")):
        receipts = send_payload_file(rpc, amsterdam_export / folder / "payloads" / f"{name}.yaml", f"pass/{name}")
        assert all(receipt["status"] == "0x1" for receipt in receipts)
    fits = exported(amsterdam_export / "checked", MIXED, "--check-chain", rpc.url)
    assert (fits / f"{MIXED}.yaml").read_text() == (amsterdam_export / "mixed" / f"{MIXED}.yaml").read_text()
    mixed = check(amsterdam_export / "mixed" / f"{MIXED}.yaml", amsterdam_chain, "--since", str(start))
    assert mixed.returncode == 0, mixed.stdout + mixed.stderr
    assert mixed.stdout.startswith(f"{MIXED}: ok: 54 transactions in blocks ")
    assert "traced read/write sets as designed, 18 independent groups" in mixed.stdout
    contract_set = check(amsterdam_export / "set", amsterdam_chain, "--blocks", f"{start}-{head(rpc)}")
    assert contract_set.returncode == 0, contract_set.stdout + contract_set.stderr
    assert f"{SET}: ok: " in contract_set.stdout and "1 independent group" in contract_set.stdout
    assert contract_set.stdout.count("\n") == 1  # all.yaml includes first runs only, not <name>.reuse.yaml


def test_a_reverted_transaction_fails_the_check(amsterdam_export: Path, amsterdam_chain: RpcClient) -> None:
    """A second first-run of a contract set: the proxy refuses to deploy the factory again."""
    rpc = amsterdam_chain
    payloads = amsterdam_export / "set" / "payloads" / f"{SET}.yaml"
    factory = read_exported(amsterdam_export / "set" / f"{SET}.yaml").run.workload.parameters["factory"]
    if rpc.call("eth_getCode", [factory, "latest"]).result == "0x":
        send_payload_file(rpc, payloads, "first")
    again = head(rpc) + 1
    receipts = send_payload_file(rpc, payloads, "again")
    assert receipts[1]["status"] == "0x0"
    completed = check(amsterdam_export / "set" / f"{SET}.yaml", rpc, "--since", str(again))
    assert completed.returncode == 1
    assert f"{SET}: MISMATCH: set-up block 1 tx 1 reverted on chain at block " in completed.stdout


def test_a_rerun_with_a_reverted_setup_is_reported(amsterdam_export: Path, amsterdam_chain: RpcClient) -> None:
    """Every complete run in the range is checked, not only the first: a re-run whose set-up reverted is named."""
    rpc = amsterdam_chain
    payloads = amsterdam_export / "set" / "payloads" / f"{SET}.yaml"
    factory = read_exported(amsterdam_export / "set" / f"{SET}.yaml").run.workload.parameters["factory"]
    start = head(rpc) + 1
    if rpc.call("eth_getCode", [factory, "latest"]).result == "0x":
        send_payload_file(rpc, payloads, "first of two")
    else:
        start = 1  # the first run was sent by an earlier test
    send_payload_file(rpc, payloads, "second of two")
    completed = check(amsterdam_export / "set" / f"{SET}.yaml", rpc, "--since", str(start))
    assert completed.returncode == 1, completed.stdout + completed.stderr
    runs = [line for line in completed.stdout.splitlines() if line.startswith(f"{SET} (run ")]
    assert runs and runs[0].startswith(f"{SET} (run 1 of ") and ": ok: " in runs[0], completed.stdout
    assert any(": MISMATCH: set-up block 1 tx 1 reverted on chain at block " in line for line in runs[1:]), completed.stdout


def test_a_folder_of_workloads_sharing_transactions_passes(amsterdam_chain: RpcClient, tmp_path: Path) -> None:
    """
    The three mixed_dep-max workloads begin every payload with the same deploy
    transaction, and a smaller group's payload is the start of a larger one's.
    Sent largest first, each must still find its own runs; then a run whose
    last transaction is not sent is "not yet complete", not a mismatch.
    """
    rpc = amsterdam_chain
    export = exported(tmp_path / "max", "mixed_dep-max")
    start = head(rpc) + 1
    for group in (5, 2, 1):
        name = f"mixed_dep-max-group{group}-1M"
        receipts = send_payload_file(rpc, export / "payloads" / f"{name}.yaml", f"shared/{name}")
        assert all(receipt["status"] == "0x1" for receipt in receipts)
    completed = check(export, rpc, "--since", str(start))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.count(": ok: ") == 3 and "MISMATCH" not in completed.stdout, completed.stdout
    name = "mixed_dep-max-group5-1M"
    send_payload_file(rpc, export / "payloads" / f"{name}.yaml", "cut short", drop_last=1)
    completed = check(export, rpc, "--since", str(start))
    assert completed.returncode == 3, completed.stdout + completed.stderr
    assert f"{name}: ok: " in completed.stdout and "MISMATCH" not in completed.stdout, completed.stdout
    assert f"{name}: run not yet complete in blocks {start}-" in completed.stdout
    assert "7 of 8 payloads found; " in completed.stdout and "wait and check again" in completed.stdout


def test_a_run_of_another_export_is_not_taken_for_this_one_s_with_spamoor_s_key(amsterdam_chain: RpcClient, tmp_path: Path) -> None:
    """
    Issue 43, finding 15, on geth: mixed_dep-half-group5 run at 3M, then at 1M,
    on spamoor's wallets. 3 of 1M's 4 payloads are byte-identical to 3M's and
    the 4th is longer than one of 3M's: by what it sends alone, the 1M check
    finds a run "not yet complete" in 3M's, and says it cannot tell.
    With spamoor's key, its own run only, which passes.
    """
    rpc = amsterdam_chain
    root = bytes.fromhex("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
    start = head(rpc) + 1
    folders = {}
    for gas in ("3", "1"):
        folders[gas] = tmp_path / f"{gas}M"
        exported(folders[gas], "mixed_dep-half-group5", gas=gas)
        name = f"mixed_dep-half-group5-{gas}M"
        receipts = send_payload_file(rpc, folders[gas] / "payloads" / f"{name}.yaml", f"balgen/{name}", root=root)
        assert all(receipt["status"] == "0x1" for receipt in receipts)
    own = check(folders["1"], rpc, "--since", str(start), "--spamoor-key", root.hex())
    assert own.returncode == 0, own.stdout + own.stderr
    assert own.stdout.startswith("mixed_dep-half-group5-1M: ok: 22 transactions in blocks ") and own.stdout.count("\n") == 1
    blind = check(folders["1"], rpc, "--since", str(start))
    assert blind.returncode == 3 and "mixed_dep-half-group5-1M: run not yet complete" in blind.stdout, blind.stdout
    assert "the runs of mixed_dep-half-group5-1M may be another export's" in blind.stderr, blind.stderr


def test_a_wrong_storage_value_fails_the_check(amsterdam_export: Path, amsterdam_chain: RpcClient) -> None:
    """Someone else calls a workload contract between its deployment and its benchmark calls."""
    rpc = amsterdam_chain
    start = head(rpc) + 1
    intruder: list[str] = []

    def call_the_contract(rpc: RpcClient, contracts: dict[int, bytes]) -> None:
        nonce = int(rpc.call("eth_getTransactionCount", ["0x" + FUNDER.address.hex(), "latest"]).result, 16)
        send_signed(rpc, TxSpec(FUNDER, nonce, contracts[1], b"", 100_000, 0, MAX_FEE, TIP))
        intruder.append("0x" + contracts[1].hex())

    send_payload_file(rpc, amsterdam_export / "mixed" / "payloads" / f"{MIXED}.yaml", "tampered", call_the_contract)
    completed = check(amsterdam_export / "mixed" / f"{MIXED}.yaml", rpc, "--since", str(start))
    assert completed.returncode == 1
    assert f"{MIXED}: MISMATCH: slot 0x0 of {intruder[0]} holds " in completed.stdout
    assert "the model" in completed.stdout and "(last written by benchmark block tx" in completed.stdout


def test_runs_are_traced_per_block_and_alike_where_the_block_trace_is_refused(
    amsterdam_export: Path, amsterdam_chain: RpcClient
) -> None:
    """
    A run sent as spamoor sends it, every transaction before the first
    receipt (geth mines several in a block, as many as it takes in time).
    geth answers debug_traceBlockByNumber: two traces a block (plain and
    diff mode), no transaction traced on its own. Behind a proxy refusing the
    block trace as a client without it does, each transaction is traced on
    its own, and the check's lines are the same.
    """
    rpc = amsterdam_chain
    start = head(rpc) + 1
    receipts = send_payload_file(rpc, amsterdam_export / "mixed" / "payloads" / f"{MIXED}.yaml", "traced per block", at_once=True)
    assert all(receipt["status"] == "0x1" for receipt in receipts)
    blocks = {int(receipt["blockNumber"], 16) for receipt in receipts}
    called: dict[str, list[str]] = {"block": [], "refused": []}

    def recorded(request: dict[str, Any], _: dict[str, str]) -> None:
        called["block"].append(request["method"])

    def refused(request: dict[str, Any], _: dict[str, str]) -> tuple[int, dict[str, Any]] | None:
        called["refused"].append(request["method"])
        if request["method"] == "debug_traceBlockByNumber":
            error = {"code": -32601, "message": "the method debug_traceBlockByNumber does not exist/is not available"}
            return 200, {"jsonrpc": "2.0", "id": request["id"], "error": error}
        return None

    lines = {}
    for name, rule in (("block", recorded), ("refused", refused)):
        server = proxy(rpc.url, rule)
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}"
            lines[name] = balgen_in_process("devnet-check", amsterdam_export / "mixed" / f"{MIXED}.yaml", "--rpc-url", url, "--since", str(start))
        finally:
            server.shutdown()
            server.server_close()
    assert lines["block"].returncode == 0, lines["block"].stdout + lines["block"].stderr
    assert "traced read/write sets as designed, 18 independent groups" in lines["block"].stdout
    assert called["block"].count("debug_traceBlockByNumber") == 2 * len(blocks)
    assert "debug_traceTransaction" not in called["block"]
    assert called["refused"].count("debug_traceTransaction") == 2 * len(receipts)
    assert (lines["refused"].returncode, lines["refused"].stdout) == (0, lines["block"].stdout)


def test_plain_geth_dev_is_refused_with_the_reason(amsterdam_export: Path, osaka_export: Path, tmp_path: Path) -> None:
    with dev_chain(tmp_path / "plain") as rpc:
        for export, reason in (
            (amsterdam_export / "mixed", "does not run Amsterdam: its latest header (block 0) has no blockAccessListHash; start geth with --override.amsterdam 0"),
            (osaka_export, "runs a fork after Osaka: its eth_config lists system contracts Osaka does not have (BUILDER_DEPOSIT_CONTRACT_ADDRESS, BUILDER_EXIT_CONTRACT_ADDRESS)"),
        ):
            completed = check(export, rpc)
            assert completed.returncode == 1 and completed.stdout == ""
            (line,) = completed.stderr.splitlines()
            assert reason in line, line
        refused = balgen_in_process("export", "spamoor", "-k", MIXED, "--gas-benchmark-values", "1", "--output", tmp_path / "not-written",
                         "--check-chain", rpc.url)
        assert refused.returncode == 2 and not (tmp_path / "not-written").exists()
        assert refused.stderr.startswith("balgen export spamoor: --check-chain: ") and "--override.amsterdam 0" in refused.stderr


def test_a_pure_osaka_chain_runs_the_osaka_export(osaka_export: Path, tmp_path: Path) -> None:
    genesis = tmp_path / "genesis.json"
    assert balgen_in_process("devnet-genesis", "--fork", "Osaka", "--fund", "0x" + FUNDER.address.hex(), "--output", genesis).returncode == 0
    datadir = tmp_path / "osaka-chain"
    init = subprocess.run(
        [str(pinned_geth()), "init", *ARCHIVE[2:], "--datadir", str(datadir), str(genesis)], capture_output=True, check=False
    )
    assert init.returncode == 0, init.stderr[-500:]
    with dev_chain(datadir) as rpc:
        fund(rpc, [])  # the funder is in the genesis
        receipts = send_payload_file(rpc, osaka_export / "payloads" / f"{MIXED}.yaml", "osaka")
        assert all(receipt["status"] == "0x1" for receipt in receipts)
        completed = check(osaka_export / f"{MIXED}.yaml", rpc)
        assert completed.returncode == 0, completed.stdout + completed.stderr
        assert completed.stdout.startswith(f"{MIXED}: ok: ") and "traced read/write sets as designed" in completed.stdout
