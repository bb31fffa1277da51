"""Sending an exported replay-eest payload file to a dev chain as spamoor would, for tests (spamoor is not installable here)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from balgen.clients.engine_client import RpcClient, RpcError
from balgen.commands.devnet_genesis import DEV_CHAIN_ID
from balgen.devnet.spamoor_wallets import child_key
from balgen.ethereum.bytecode import (
    ADD, CALL, CALLDATALOAD, CALLDATASIZE, DUP2, DUP6, GAS, ISZERO, JUMP, JUMPI, LT, PUSH0, REVERT, STOP, Label, PushLabel,
    assemble, deployment_code, push,
)  # fmt: skip
from balgen.model.keys import Sender, create_address, key_sender, sender
from balgen.model.transactions import sign
from balgen.model.workload import GWEI, TxSpec

FUNDING = 10**19
FUNDING_GAS = 500_000
"""A transfer that creates an account costs state gas on Amsterdam: far more than 21,000."""
MAX_FEE = 50 * GWEI
TIP = 2 * GWEI


def wait_receipt(rpc: RpcClient, tx_hash: str, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            receipt = rpc.call("eth_getTransactionReceipt", [tx_hash]).result
        except RpcError as error:  # "transaction indexing is in progress" on a node just started
            receipt = None if "indexing" in error.message else error
        if isinstance(receipt, Exception):
            raise receipt
        if receipt:
            return receipt
        time.sleep(0.05)
    raise TimeoutError(f"no receipt for {tx_hash}")


FUNDER = sender("devnet-check test", "funder")
"""The key a test genesis funds; on a plain `geth --dev` chain, its dev account funds it first."""


FANOUT_CODE = assemble([
    PUSH0,  # offset of the next address in calldata
    Label("next"), CALLDATASIZE, DUP2, LT, ISZERO, PushLabel("done"), JUMPI,
    PUSH0, PUSH0, PUSH0, PUSH0, push(FUNDING), DUP6, CALLDATALOAD, GAS, CALL,  # CALL(gas, address, FUNDING)
    ISZERO, PushLabel("failed"), JUMPI,  # a failed transfer reverts the whole funding
    push(32), ADD, PushLabel("next"), JUMP,
    Label("done"), STOP,
    Label("failed"), PUSH0, PUSH0, REVERT,
])  # fmt: skip
"""Runtime code that sends FUNDING wei to each address its calldata lists (one 32-byte word each)."""

FANOUT_DEPLOYMENT = deployment_code(FANOUT_CODE)
"""Creation code returning FANOUT_CODE."""

FANOUT_BATCH = 16
"""Addresses funded by one transaction: FUNDING_GAS each stays within the 2^24 transaction gas cap."""

_fanouts: dict[str, bytes] = {}
"""The FANOUT_CODE contract deployed on each chain (by RPC URL), once: a later chain on the same port has
no code there, and gets one of its own."""


def fund(rpc: RpcClient, addresses: list[bytes]) -> None:
    """
    Send FUNDING wei to each address from FUNDER, through a contract that sends to up to FANOUT_BATCH
    addresses a transaction: a dev chain mines a block per transaction (about 25 ms of geth's CPU each)
    and a transfer a wallet is a block a wallet, while the funding is no part of a run.
    """
    nonce = int(rpc.call("eth_getTransactionCount", ["0x" + FUNDER.address.hex(), "latest"]).result, 16)
    deployed = _fanouts.get(rpc.url)
    if deployed is None or rpc.call("eth_getCode", ["0x" + deployed.hex(), "latest"]).result != "0x" + FANOUT_CODE.hex():
        receipt = send_signed(rpc, TxSpec(FUNDER, nonce, None, FANOUT_DEPLOYMENT, FUNDING_GAS, 0, MAX_FEE, TIP))
        assert receipt["status"] == "0x1", receipt
        _fanouts[rpc.url], nonce = create_address(FUNDER.address, nonce), nonce + 1
    for start in range(0, len(addresses), FANOUT_BATCH):
        batch = addresses[start : start + FANOUT_BATCH]
        data = b"".join(address.rjust(32, b"\0") for address in batch)
        spec = TxSpec(FUNDER, nonce, _fanouts[rpc.url], data, 50_000 + FUNDING_GAS * len(batch), FUNDING * len(batch), MAX_FEE, TIP)
        receipt = send_signed(rpc, spec)
        assert receipt["status"] == "0x1", receipt
        nonce += 1


def fund_funder_from_dev_account(rpc: RpcClient) -> None:
    """On `geth --dev`, the prefunded, unlocked dev account gives FUNDER its ether."""
    (dev,) = rpc.call("eth_accounts").result[:1]
    value = hex(10_000 * FUNDING)
    wait_receipt(rpc, rpc.call("eth_sendTransaction", [{"from": dev, "to": "0x" + FUNDER.address.hex(), "value": value}]).result)


TXPOOL_CATCH_UP = 5.0
"""Seconds geth's transaction pool may take to see a block already mined (it moves to a new head on its
own, after the receipt is visible): a wallet funded one block ago can read as empty until then."""


def send_signed(rpc: RpcClient, spec: TxSpec) -> dict:
    raw = "0x" + sign(spec, DEV_CHAIN_ID).raw.hex()
    deadline = time.monotonic() + TXPOOL_CATCH_UP
    while True:
        try:
            return wait_receipt(rpc, rpc.call("eth_sendRawTransaction", [raw]).result)
        except RpcError as error:
            if "insufficient funds" not in error.message or time.monotonic() >= deadline:
                raise
            time.sleep(0.1)


def resolved(text: str, contracts: dict[int, bytes]) -> bytes:
    return bytes.fromhex(re.sub(r"\$contract\[(\d+)\]", lambda m: contracts[int(m[1])].hex(), text).removeprefix("0x"))


Interjection = Callable[[RpcClient, dict[int, bytes]], None]


def send_payload_file(
    rpc: RpcClient, path: Path, seed: str, interject: Interjection | None = None, drop_last: int = 0,
    root: bytes | None = None, at_once: bool = False,
) -> list[dict]:
    """
    Every payload of `path`, each on fresh wallets, all funded first, in order; the receipts.
    `interject` runs once, after the first payload's first transaction, with its contracts.
    `drop_last` transactions of the last payload are not sent (a run spamoor has not finished).
    With `root`, the wallets are spamoor's: its pool's children of that root key under `seed`
    (the spammer's), each payload taking the next ones. `at_once` sends every transaction before
    waiting for a receipt, as spamoor does: the dev chain then mines several in a block.
    """
    assert not (at_once and interject), "an interjection goes between two transactions mined in turn"
    receipts = []
    sent = []
    payloads = yaml.safe_load(path.read_text())["payloads"]
    if drop_last:
        payloads[-1]["txs"] = payloads[-1]["txs"][:-drop_last]
    wallets_of: list[dict[str, Sender]] = []
    pool = 0
    for payload in payloads:
        labels = list(dict.fromkeys(tx["from"] for tx in payload["txs"]))
        if root is None:
            wallets_of.append({label: sender(f"{seed}/{payload['name']}", label) for label in labels})
        else:
            wallets_of.append({label: key_sender(child_key(root, seed, pool + offset)) for offset, label in enumerate(labels)})
            pool += len(labels)
    # Every payload's wallets funded before the first is sent: FANOUT_BATCH wallets a block, not a block a payload.
    fund(rpc, [wallet.address for wallets in wallets_of for wallet in wallets.values()])
    for payload, wallets in zip(payloads, wallets_of, strict=True):
        deployer = wallets["deployer"].address
        creations = sum(1 for tx in payload["txs"] if tx["from"] == "deployer" and "to" not in tx)
        contracts = {n: create_address(deployer, n - 1) for n in range(1, creations + 1)}
        nonces = dict.fromkeys(wallets, 0)
        for tx in payload["txs"]:
            spec = TxSpec(
                sender=wallets[tx["from"]],
                nonce=nonces[tx["from"]],
                to=resolved(tx["to"], contracts) if "to" in tx else None,
                data=resolved(tx["data"], contracts),
                gas_limit=tx["gas"],
                value=int(tx["value"], 16),
                max_fee_per_gas=MAX_FEE,
                max_priority_fee_per_gas=TIP,
            )
            nonces[tx["from"]] += 1
            if at_once:
                sent.append(rpc.call("eth_sendRawTransaction", ["0x" + sign(spec, DEV_CHAIN_ID).raw.hex()]).result)
                continue
            receipts.append(send_signed(rpc, spec))
            if interject is not None:
                interject(rpc, contracts)
                interject = None
    return receipts + [wait_receipt(rpc, tx_hash) for tx_hash in sent]
