"""
Placing a workload's contracts: straight into genesis, or deployed by setup blocks.

Both placements put the same contracts, with the same storage, at the same
addresses: the CREATE addresses of one deployer account. With `blocks` the
deployer really deploys them (and then runs the contracts' own setup calls,
for storage too large for init code); with `genesis` they are in the alloc
and the deployer's nonce is what it would be after that setup. So the
benchmark block is byte-identical under both placements; only where the state
came from differs. Funded senders always live in genesis, as
execution-spec-tests' `pre.fund_eoa` puts them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ..bytecode import deployment_code
from .deploy_gas import deploy_gas
from ..forks import BENCHMARK_BLOCK_GAS_LIMIT, TX_GAS_LIMIT_CAP, Fork
from ..keys import create_address, sender
from ..workload import ETHER, Account, Address, BlockSpec, Phase, Placement, Sender, TxAccess, TxSpec

SENDER_BALANCE = ETHER
"""Balance of every funded sender: covers a capped transaction at the max fee."""

DEPLOYER_BALANCE = 10**6 * ETHER
"""The deployer pays for every setup transaction, state gas included."""

SETUP_TX_GAS_LIMIT = TX_GAS_LIMIT_CAP
"""Most gas, execution and state together, any setup transaction may carry, so that
the setup also runs on a live chain (spamoor export) under the EIP-7825 cap."""


@dataclass(frozen=True)
class SetupCall:
    """A setup transaction to a placed contract that writes part of its storage."""

    data: bytes
    gas_limit: int
    writes: Mapping[int, int]
    """slot -> value this call leaves."""
    created: Mapping[Address, bytes] = field(default_factory=dict)
    """Contracts this call makes the contract create (CREATE2), with their code."""
    created_code_bytes: int = 0
    """Their code's total size, known without building the code."""


@dataclass(frozen=True)
class ContractSpec:
    """A contract a workload needs to exist before its benchmark block."""

    role: str
    runtime: bytes
    storage: Mapping[int, int] = field(default_factory=dict)
    """The contract's whole storage before the benchmark block."""
    setup_calls: tuple[SetupCall, ...] = ()
    """Calls that write the part of `storage` too large for init code."""

    @property
    def nonce_after_setup(self) -> int:
        """A contract's nonce starts at 1 and grows by one per contract it creates."""
        return 1 + sum(len(call.created) for call in self.setup_calls)

    @property
    def initial_storage(self) -> dict[int, int]:
        """The storage its init code sets: everything no setup call writes."""
        called = {slot for call in self.setup_calls for slot in call.writes}
        return {slot: value for slot, value in self.storage.items() if slot not in called}


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
    deployer = sender(seed, "deployer")
    addresses = tuple(create_address(deployer.address, nonce) for nonce in range(len(contracts)))
    setup_txs = len(contracts) + sum(len(c.setup_calls) for c in contracts)
    if placement is Placement.GENESIS:
        pre = {
            address: Account(nonce=contract.nonce_after_setup, code=contract.runtime, storage=dict(contract.storage))
            for address, contract in zip(addresses, contracts)
        }
        pre[deployer.address] = Account(balance=DEPLOYER_BALANCE, nonce=setup_txs)
        return PlacedContracts(addresses, pre, ())
    blocks = setup_blocks(fork, deployer, contracts, addresses)
    return PlacedContracts(addresses, {deployer.address: Account(balance=DEPLOYER_BALANCE)}, blocks)


def placed_addresses(seed: str, count: int) -> tuple[Address, ...]:
    """Where `place_contracts(seed, ...)` puts its first `count` contracts, known before they exist."""
    deployer = sender(seed, "deployer")
    return tuple(create_address(deployer.address, nonce) for nonce in range(count))


SETUP_BLOCK_CODE_BYTES = 24 * 2**20
"""Most code one setup block creates: its access list carries every created byte,
and one Engine API payload must stay well under clients' request limits (128 MiB in geth)."""


def setup_blocks(
    fork: Fork, deployer: Sender, contracts: Sequence[ContractSpec], addresses: Sequence[Address]
) -> tuple[BlockSpec, ...]:
    """
    All deployments (nonces 0..n-1, so the addresses are known), then every setup call,
    in as few blocks as keep each one under the block gas limit and `SETUP_BLOCK_CODE_BYTES`.
    """
    txs: list[TxSpec] = []
    accesses: list[TxAccess] = []
    for contract, address in zip(contracts, addresses):
        storage = contract.initial_storage
        txs.append(
            TxSpec(
                sender=deployer,
                nonce=len(txs),
                to=None,
                data=deployment_code(contract.runtime, storage),
                gas_limit=deploy_gas(fork, contract.runtime, storage).total,
            )
        )
        accesses.append(
            TxAccess(
                writes={(address, slot): value for slot, value in storage.items()},
                created={address: contract.runtime},
            )
        )
    for contract, address in zip(contracts, addresses):
        nonce = 1
        for call in contract.setup_calls:
            nonce += len(call.created)
            txs.append(TxSpec(sender=deployer, nonce=len(txs), to=address, data=call.data, gas_limit=call.gas_limit))
            accesses.append(
                TxAccess(
                    writes={(address, slot): value for slot, value in call.writes.items()},
                    created=call.created,
                    nonces={address: nonce} if call.created else {},
                )
            )
    code_bytes = [len(contract.runtime) for contract in contracts]
    code_bytes += [call.created_code_bytes for contract in contracts for call in contract.setup_calls]
    return tuple(
        BlockSpec(phase=Phase.SETUP, txs=tuple(txs[start:end]), accesses=tuple(accesses[start:end]))
        for start, end in _block_bounds(txs, code_bytes)
    )


SETUP_BLOCK_GAS = BENCHMARK_BLOCK_GAS_LIMIT // 2
"""Most gas (limits summed) one setup block carries, well inside the block gas limit."""


def _block_bounds(txs: Sequence[TxSpec], code_bytes: Sequence[int]) -> list[tuple[int, int]]:
    """[start, end) of each setup block: a new block when code or gas would overflow the current one."""
    bounds = []
    start, gas, code = 0, 0, 0
    for index, (tx, size) in enumerate(zip(txs, code_bytes)):
        if index > start and (gas + tx.gas_limit > SETUP_BLOCK_GAS or code + size > SETUP_BLOCK_CODE_BYTES):
            bounds.append((start, index))
            start, gas, code = index, 0, 0
        gas += tx.gas_limit
        code += size
    bounds.append((start, len(txs)))
    return bounds


def funded(senders: Sequence[Sender]) -> dict[Address, Account]:
    """Genesis entries funding each sender."""
    return {s.address: Account(balance=SENDER_BALANCE) for s in senders}


SETUP_CALL_MARGIN = 100_000
"""Gas a setup call keeps free of its loop: intrinsic gas, calldata, loop entry and exit."""


def setup_chunks(units: list[int], unit_gas: int) -> list[list[int]]:
    """`units` split into runs whose gas (`unit_gas` each, state gas included) fits one setup transaction."""
    size = max(1, (SETUP_TX_GAS_LIMIT - SETUP_CALL_MARGIN) // unit_gas)
    return [units[start : start + size] for start in range(0, len(units), size)]
