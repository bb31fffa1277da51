"""
Placing a workload's contracts: straight into genesis, or deployed by setup blocks.

Both placements put the same contracts, with the same storage, at the same
addresses: the CREATE addresses of one deployer account, or, for a contract
that must have its address on every chain, the address the deterministic
deployment proxy gives its salt. With `blocks` the deployer really deploys
them (CREATE deployments first, then the proxy's, then the contracts' own
setup calls, for storage too large for init code); with `genesis` they are
in the alloc and the deployer's nonce is what it would be after that setup
(the proxy's is left as the chain has it: nothing reads it). So the
benchmark block is byte-identical under both placements; only where the
state came from differs. Funded senders always live in genesis, as
execution-spec-tests' `pre.fund_eoa` puts them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Callable, Iterable, Mapping, Sequence

from ..ethereum.bytecode import deployment_code
from .deploy_gas import deploy_gas
from ..ethereum.forks import BENCHMARK_BLOCK_GAS_LIMIT, TX_GAS_LIMIT_CAP, Fork
from ..model.keys import create_address, sender
from .deterministic_deployment import (
    DETERMINISTIC_DEPLOYER, DETERMINISTIC_DEPLOYER_NONCE, deterministic_address, deterministic_calldata,
    deterministic_deployer, deterministic_deployment_gas,
)
from ..model.workload import (
    ETHER, Account, Address, AddressReference, BlockSpec, Origin, Phase, Placement, Regenerated, Sender, TxAccess,
    TxSpec,
)

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
    deterministic_salt: bytes | None = None
    """Deploy through the deterministic deployment proxy with this salt, so that the
    contract (and what it creates with CREATE2) has the same address on every chain."""
    references: tuple[AddressReference, ...] = ()
    """Addresses `runtime` names, by offset in it."""

    @property
    def origin(self) -> Origin:
        """How the contract comes to exist on a live chain."""
        return Origin.DEPLOYED if self.deterministic_salt is None else Origin.SAME_ON_EVERY_CHAIN

    @property
    def creates_as(self) -> Origin:
        """How the contracts its setup calls create come to exist: where it is, they follow."""
        return Origin.CREATED_BY_CODE if self.deterministic_salt is None else Origin.SAME_ON_EVERY_CHAIN

    @property
    def nonce_after_setup(self) -> int:
        """A contract's nonce starts at 1 and grows by one per contract it creates."""
        return 1 + sum(len(call.created) for call in self.setup_calls)

    @property
    def initial_storage(self) -> dict[int, int]:
        """The storage its init code sets: everything no setup call writes."""
        called = {slot for call in self.setup_calls for slot in call.writes}
        return {slot: value for slot, value in self.storage.items() if slot not in called}

    @property
    def deterministic_address(self) -> Address | None:
        """Where the proxy deploys it, for a contract deployed through the proxy."""
        if self.deterministic_salt is None:
            return None
        return deterministic_address(self.deterministic_salt, self.runtime, self.initial_storage)


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
    addresses = contract_addresses(deployer.address, contracts)
    through_proxy = any(contract.deterministic_salt is not None for contract in contracts)
    # The proxy is part of the chain, as on a devnet: Amsterdam's genesis holds it (EIP-7997);
    # before, the workload's genesis does, as it was before any deployment.
    proxy = (
        {DETERMINISTIC_DEPLOYER: deterministic_deployer()}
        if through_proxy and not fork.predeploys_deterministic_deployer
        else {}
    )
    setup_txs = len(contracts) + sum(len(c.setup_calls) for c in contracts)
    if placement is Placement.GENESIS:
        pre = {
            # From its items: a storage made by a rule (`RegeneratedMapping`) is walked once, not looked up per key.
            address: Account(nonce=contract.nonce_after_setup, code=contract.runtime, storage=dict(contract.storage.items()))
            for address, contract in zip(addresses, contracts)
        }
        pre[deployer.address] = Account(balance=DEPLOYER_BALANCE, nonce=setup_txs)
        return PlacedContracts(addresses, {**pre, **proxy}, ())
    blocks = setup_blocks(fork, deployer, contracts, addresses)
    return PlacedContracts(addresses, {deployer.address: Account(balance=DEPLOYER_BALANCE), **proxy}, blocks)


def contract_addresses(deployer: Address, contracts: Sequence[ContractSpec]) -> tuple[Address, ...]:
    """Each contract's address: the proxy's for a salted one, else CREATE(deployer, n) for the n-th of the others."""
    nonces = itertools.count()
    return tuple(contract.deterministic_address or create_address(deployer, next(nonces)) for contract in contracts)


def placed_addresses(seed: str, count: int) -> tuple[Address, ...]:
    """Where `place_contracts(seed, ...)` puts its first `count` contracts not deployed
    through the proxy, known before they exist."""
    deployer = sender(seed, "deployer")
    return tuple(create_address(deployer.address, nonce) for nonce in range(count))


SETUP_BLOCK_CODE_BYTES = 24 * 2**20
"""Most code one setup block creates: its access list carries every created byte,
and one Engine API payload must stay well under clients' request limits (128 MiB in geth)."""


def setup_blocks(
    fork: Fork, deployer: Sender, contracts: Sequence[ContractSpec], addresses: Sequence[Address]
) -> tuple[BlockSpec, ...]:
    """
    All CREATE deployments (nonces 0..n-1, so the addresses are known), then
    the proxy's deployments, then every setup call, in as few blocks as keep
    each one under the block gas limit and `SETUP_BLOCK_CODE_BYTES`.
    """
    txs: list[TxSpec] = []
    accesses: list[Callable[[], TxAccess]] = []
    """What makes each transaction's designed access, on each pass over its block."""
    deployed = sorted(zip(contracts, addresses), key=lambda pair: pair[0].deterministic_salt is not None)
    proxy_nonce = DETERMINISTIC_DEPLOYER_NONCE
    for contract, address in deployed:
        storage = contract.initial_storage
        salt = contract.deterministic_salt
        if salt is None:
            tx = TxSpec(
                sender=deployer,
                nonce=len(txs),
                to=None,
                data=deployment_code(contract.runtime, storage),
                gas_limit=deploy_gas(fork, contract.runtime, storage).total,
            )
            nonces = {}
        else:
            tx = TxSpec(
                sender=deployer,
                nonce=len(txs),
                to=DETERMINISTIC_DEPLOYER,
                data=deterministic_calldata(salt, contract.runtime, storage),
                gas_limit=deterministic_deployment_gas(fork, salt, contract.runtime, storage),
            )
            proxy_nonce += 1
            nonces = {DETERMINISTIC_DEPLOYER: proxy_nonce}
        txs.append(carrying_references(tx, contract))
        deployment = TxAccess(
            writes={(address, slot): value for slot, value in storage.items()},
            created={address: contract.runtime},
            nonces=nonces,
            origins={address: contract.origin},
            code_references={address: contract.references} if contract.references else {},
        )
        accesses.append(lambda deployment=deployment: deployment)
    for contract, address in zip(contracts, addresses):
        nonce = 1
        for call in contract.setup_calls:
            nonce += len(call.created)
            txs.append(TxSpec(sender=deployer, nonce=len(txs), to=address, data=call.data, gas_limit=call.gas_limit))
            accesses.append(partial(setup_call_access, address, call, nonce, contract.creates_as))
    code_bytes = [len(contract.runtime) for contract, _ in deployed]
    code_bytes += [call.created_code_bytes for contract in contracts for call in contract.setup_calls]
    return tuple(
        BlockSpec(
            phase=Phase.SETUP,
            txs=tuple(txs[start:end]),
            accesses=Regenerated(end - start, lambda makers=accesses[start:end]: (make() for make in makers)),
        )
        for start, end in _block_bounds(txs, code_bytes)
    )


def setup_call_access(address: Address, call: SetupCall, nonce: int, origin: Origin) -> TxAccess:
    """
    A setup call's designed access, made afresh on each pass over its block:
    a call's writes may be a rule (`prefetch`'s list links, a `RegeneratedMapping`)
    whose slots, at a billion gas hundreds of thousands, are not held.
    """
    return TxAccess(
        writes={(address, slot): value for slot, value in call.writes.items()},
        created=call.created,
        nonces={address: nonce} if call.created else {},
        origins=dict.fromkeys(call.created, origin),
    )


def carrying_references(deployment: TxSpec, contract: ContractSpec) -> TxSpec:
    """The deployment with `contract`'s references, moved to where its runtime sits: its data ends with it."""
    start = len(deployment.data) - len(contract.runtime)
    moved = tuple(AddressReference(start + ref.offset, ref.address) for ref in contract.references)
    return replace(deployment, references=moved)


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


FUNDED_SENDER = Account(balance=SENDER_BALANCE)
"""Every sender's genesis account, one object shared by all of a block's tens of thousands (it is immutable)."""


def funded(senders: Iterable[Address]) -> dict[Address, Account]:
    """Genesis entries funding each sender's address."""
    return dict.fromkeys(senders, FUNDED_SENDER)


SETUP_CALL_MARGIN = 100_000
"""Gas a setup call keeps free of its loop: intrinsic gas, calldata, loop entry and exit."""


def setup_chunks(units: list[int], unit_gas: int, fixed_gas: int = SETUP_CALL_MARGIN) -> list[list[int]]:
    """`units` split into runs whose gas (`unit_gas` each, state gas included, beside `fixed_gas`) fits
    one setup transaction."""
    size = max(1, (SETUP_TX_GAS_LIMIT - fixed_gas) // unit_gas)
    return [units[start : start + size] for start in range(0, len(units), size)]


def setup_calls(
    units: list[int], unit_gas: int, call: Callable[[list[int]], SetupCall], fixed_gas: int = SETUP_CALL_MARGIN
) -> tuple[SetupCall, ...]:
    """The setup calls that write a contract's `units` (slots, list links, contracts to create), one
    call per run that fits a setup transaction (`setup_chunks`), each made by `call` from its run, in order."""
    return tuple(call(chunk) for chunk in setup_chunks(units, unit_gas, fixed_gas))


SETUP_LOOP_GAS = 1_000
"""Gas a setup call's loop takes besides its units: entering and leaving it."""


def setup_call_gas(fork: Fork, data: bytes, units: int, unit_gas: int) -> int:
    """The gas limit of a setup call carrying `data` that writes `units` units of `unit_gas` each."""
    return fork.intrinsic_gas(data) + SETUP_LOOP_GAS + units * unit_gas
