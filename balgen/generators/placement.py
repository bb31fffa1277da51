"""
Placing a workload's contracts: straight into genesis, or deployed by setup blocks.

Both placements leave the same contracts with the same storage before the
benchmark block; only where their creation shows up differs. Funded senders
always live in genesis, as execution-spec-tests' `pre.fund_eoa` puts them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ..bytecode import deployment_code
from ..forks import TX_GAS_LIMIT_CAP, Fork
from ..keys import create_address, derived_address, sender
from ..workload import ETHER, Account, Address, BlockSpec, Phase, Placement, Sender, TxAccess, TxSpec

SENDER_BALANCE = ETHER
"""Balance of every funded sender: covers a capped transaction at the max fee."""

DEPLOY_GAS_LIMIT = TX_GAS_LIMIT_CAP
"""Gas limit of a setup deployment: allowed on every fork, unused gas is not charged."""


@dataclass(frozen=True)
class ContractSpec:
    """A contract a workload needs to exist before its benchmark block."""

    role: str
    runtime: bytes
    storage: Mapping[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PlacedContracts:
    """Where the contracts ended up and what it took to put them there."""

    addresses: tuple[Address, ...]
    pre: dict[Address, Account]
    setup_blocks: tuple[BlockSpec, ...]


def place_contracts(
    seed: str, contracts: Sequence[ContractSpec], placement: Placement, fork: Fork
) -> PlacedContracts:
    """Put `contracts` in genesis or behind setup blocks, per `placement`."""
    if placement is Placement.GENESIS:
        return _in_genesis(seed, contracts)
    return _by_setup_block(seed, contracts, fork)


def _in_genesis(seed: str, contracts: Sequence[ContractSpec]) -> PlacedContracts:
    pre: dict[Address, Account] = {}
    addresses = []
    for index, contract in enumerate(contracts):
        address = derived_address(seed, contract.role, index)
        pre[address] = Account(nonce=1, code=contract.runtime, storage=dict(contract.storage))
        addresses.append(address)
    return PlacedContracts(tuple(addresses), pre, ())


def _by_setup_block(seed: str, contracts: Sequence[ContractSpec], fork: Fork) -> PlacedContracts:
    deployer = sender(seed, "deployer")
    txs = []
    accesses = []
    addresses = []
    for nonce, contract in enumerate(contracts):
        address = create_address(deployer.address, nonce)
        txs.append(
            TxSpec(
                sender=deployer,
                nonce=nonce,
                to=None,
                data=deployment_code(contract.runtime, dict(contract.storage)),
                gas_limit=DEPLOY_GAS_LIMIT,
            )
        )
        accesses.append(
            TxAccess(
                writes={(address, slot): value for slot, value in contract.storage.items()},
                created={address: contract.runtime},
            )
        )
        addresses.append(address)
    block = BlockSpec(phase=Phase.SETUP, txs=tuple(txs), accesses=tuple(accesses))
    pre = {deployer.address: Account(balance=SENDER_BALANCE * max(1, len(contracts)))}
    return PlacedContracts(tuple(addresses), pre, (block,))


def funded(senders: Sequence[Sender]) -> dict[Address, Account]:
    """Genesis entries funding each sender."""
    return {s.address: Account(balance=SENDER_BALANCE) for s in senders}
