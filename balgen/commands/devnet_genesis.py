"""
`balgen devnet-genesis`: a local chain's genesis for one export fork, with funded keys.

`geth --dev` picks its forks itself (v1.17.8: Osaka plus "Bogota", or
Amsterdam with `--override.amsterdam 0`), so an Osaka export needs a chain
made for it: geth's chain configuration for the fork and nothing after it,
the fork's system contracts, the deterministic deployment proxy a contract
set is deployed through, and the keys a user funds. `geth init` it, then
start `geth --dev` on that datadir.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ..chain.alloc import account_json, system_accounts
from ..ethereum.chain_constants import INITIAL_BASE_FEE, ZERO_HASH
from ..plumbing.errors import BadInput
from ..ethereum.forks import FORKS, Fork, fork_by_name
from ..ethereum.hextypes import data_hex
from ..generators.deterministic_deployment import DETERMINISTIC_DEPLOYER, deterministic_deployer
from ..fill.options import MAX_GAS_VALUE, MIN_GAS_VALUE
from ..model.workload import Account
from ..plumbing.command_line import OneLineParser
from ..plumbing.output_files import write_text_atomically
from ..clients.chain_config import geth_chain_config
from .runner import run_command

DEV_CHAIN_ID = 1337
"""go-ethereum's `--dev` chain id."""
FUNDING = 10**30
"""Wei given to each funded address: enough for any export's wallets."""
GAS_LIMIT = 60_000_000


MIN_GAS_LIMIT = MIN_GAS_VALUE
"""The smallest `--gas-limit`: an export's smallest gas value, so its largest transaction fits a block."""
MAX_GAS_LIMIT = MAX_GAS_VALUE
"""The largest: the largest gas value balgen fills and exports (geth itself takes up to 2^63 - 1)."""


def parse_gas_limit(text: str) -> int:
    """`--gas-limit`: a whole number of gas from MIN_GAS_LIMIT to MAX_GAS_LIMIT."""
    try:
        gas_limit = int(text.replace("_", ""))
    except ValueError:
        raise BadInput(f"--gas-limit: {text!r} is not a whole number of gas (e.g. {GAS_LIMIT})") from None
    if not MIN_GAS_LIMIT <= gas_limit <= MAX_GAS_LIMIT:
        raise BadInput(f"--gas-limit: {gas_limit} is outside {MIN_GAS_LIMIT:,} to {MAX_GAS_LIMIT:,} gas")
    return gas_limit


def preset_accounts(fork: Fork) -> dict[bytes, Account]:
    """The accounts every dev chain genesis holds: `fork`'s system contracts and the deployment proxy."""
    return {**system_accounts(fork), DETERMINISTIC_DEPLOYER: deterministic_deployer()}


def check_fundable(fork: Fork, funded: Sequence[bytes]) -> None:
    """
    A funded address is a fresh account holding only a balance, so one that
    the genesis already holds code at (the deployment proxy, a system
    contract) would lose that code: refuse it.
    """
    preset = preset_accounts(fork)
    for address in funded:
        if address in preset:
            what = (
                "the deterministic deployment proxy's address" if address == DETERMINISTIC_DEPLOYER
                else f"the address of one of {fork.name}'s system contracts"
            )  # fmt: skip
            raise BadInput(f"--fund {data_hex(address)}: {what}; funding it would remove its code from the genesis")


def devnet_genesis(fork: Fork, funded: Sequence[bytes], gas_limit: int = GAS_LIMIT) -> dict:
    """The genesis of a dev chain running exactly `fork`."""
    check_fundable(fork, funded)
    alloc = {"0x" + address.hex(): account_json(account) for address, account in sorted(preset_accounts(fork).items())}
    alloc |= {"0x" + address.hex(): {"balance": hex(FUNDING)} for address in funded}
    return {
        "config": geth_chain_config(fork, chain_id=DEV_CHAIN_ID),
        "nonce": "0x0",
        "timestamp": "0x0",
        "extraData": "0x",
        "gasLimit": hex(gas_limit),
        "difficulty": "0x0",
        "mixHash": data_hex(ZERO_HASH),
        "coinbase": "0x" + "00" * 20,
        "baseFeePerGas": hex(INITIAL_BASE_FEE),
        "alloc": alloc,
    }


def parse_addresses(text: str) -> list[bytes]:
    addresses = []
    for part in text.split(","):
        hex_part = part.strip().removeprefix("0x")
        if len(hex_part) != 40 or any(c not in "0123456789abcdefABCDEF" for c in hex_part):
            raise BadInput(f"--fund: {part.strip()!r} is not a 20-byte hex address")
        addresses.append(bytes.fromhex(hex_part))
    return addresses


def run_devnet_genesis(argv: Sequence[str]) -> int:
    """Entry point of `balgen devnet-genesis`."""
    parser = OneLineParser(prog="balgen devnet-genesis", description="Write a dev chain genesis for one fork.")
    parser.add_argument("--fork", default="Osaka", help=f"one of {', '.join(FORKS)} (default Osaka)")
    parser.add_argument("--fund", required=True, metavar="ADDRESSES", help="comma-separated addresses to fund")
    parser.add_argument(
        "--gas-limit",
        type=parse_gas_limit,
        default=GAS_LIMIT,
        help=f"block gas limit, {MIN_GAS_LIMIT:,} to {MAX_GAS_LIMIT:,} (default {GAS_LIMIT:,})",
    )
    parser.add_argument("--output", type=Path, default=Path("genesis.json"), help="file to write (default genesis.json)")

    def write() -> int:
        args = parser.parse_args(argv)
        genesis = devnet_genesis(fork_by_name(args.fork), parse_addresses(args.fund), args.gas_limit)
        try:
            write_text_atomically(args.output, json.dumps(genesis, indent=2) + "\n")
        except OSError as error:
            raise BadInput(f"--output: cannot write {args.output}: {error.strerror}") from None
        print(f"balgen devnet-genesis: {args.output} ({fork_by_name(args.fork).name}, chain id {DEV_CHAIN_ID})")
        return 0

    return run_command("devnet-genesis", write, stopped="; nothing written")
