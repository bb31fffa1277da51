"""
The deterministic deployment proxy: a contract at the same address on every chain that has the proxy.

A contract a wallet deploys lands at CREATE(wallet, nonce), so a fixture's
contracts and a devnet's copies sit at different addresses. The proxy at
0x4e59b448…956c (Arachnid's: on mainnet and the public testnets, in every
Amsterdam genesis by EIP-7997, preloaded on earlier devnets) runs CREATE2
with the salt and init code its caller sends, so what it deploys depends
only on those: a fixture that deploys through it puts the contract where the
same transaction puts it on a live chain, whoever sends it. Anything that
contract creates with CREATE2 follows, which is how a contract set keeps its
fixture addresses on a devnet. The proxy reverts when the address already
has code, so a deployment through it happens once per chain.
"""

from __future__ import annotations

from ..ethereum.keccak import keccak

from ..ethereum.bytecode import deployment_code
from ..ethereum.forks import Fork, system_contract_code
from ..model.workload import Account, Address, Origin
from .code_set import create2_address
from ..ethereum.gas_costs import words
from .deploy_gas import deploy_gas

_PROXY_ADDRESS, _PROXY_CODE = system_contract_code()["eip7997"]
DETERMINISTIC_DEPLOYER = bytes.fromhex(_PROXY_ADDRESS[2:])
DETERMINISTIC_DEPLOYER_CODE = bytes.fromhex(_PROXY_CODE[2:])
"""Its runtime, as go-ethereum's EIP-7997 genesis has it: CREATE2(callvalue, calldata[32:],
salt = calldata[:32]); revert on failure; return the address."""
DETERMINISTIC_DEPLOYER_NONCE = 1
"""Its nonce before it deploys anything, as on mainnet and in kurtosis' preloaded copy."""

PROXY_EXECUTION_GAS = 200
"""The proxy's own opcodes around CREATE2 (about 70 gas), with room to spare."""


def deterministic_deployer() -> Account:
    """The proxy's account before it has deployed anything."""
    return Account(nonce=DETERMINISTIC_DEPLOYER_NONCE, code=DETERMINISTIC_DEPLOYER_CODE, origin=Origin.SAME_ON_EVERY_CHAIN)


def deterministic_salt(name: str) -> bytes:
    """A 32-byte salt of its own for the contract called `name`."""
    return keccak(f"balgen/deterministic/{name}".encode())


def deterministic_address(salt: bytes, runtime: bytes, storage: dict[int, int] | None = None) -> Address:
    """Where the proxy deploys `runtime` (with `storage` set by its init code) under `salt`."""
    return create2_address(DETERMINISTIC_DEPLOYER, int.from_bytes(salt, "big"), keccak(deployment_code(runtime, storage)))


def deterministic_calldata(salt: bytes, runtime: bytes, storage: dict[int, int] | None = None) -> bytes:
    """The proxy's calldata: the salt, then the init code."""
    return salt + deployment_code(runtime, storage)


def deterministic_deployment_gas(fork: Fork, salt: bytes, runtime: bytes, storage: dict[int, int]) -> int:
    """
    Gas limit of a call to the proxy deploying `runtime`: the creation a
    deployment transaction pays for, moved inside CREATE2 (which also hashes
    the init code), plus the proxy's calldata copy and the 1/64 of the gas
    that CREATE2 keeps back from the init code.
    """
    gas = fork.gas
    init = deployment_code(runtime, storage)
    creation = deploy_gas(fork, runtime, storage).total - fork.intrinsic_gas(init, create=True)
    inner = creation + gas.create2_base + (gas.initcode_word + gas.keccak_word) * words(len(init))
    proxy = PROXY_EXECUTION_GAS + gas.copy_word * words(len(init)) + gas.memory_expansion(len(init))
    return fork.intrinsic_gas(deterministic_calldata(salt, runtime, storage)) + proxy + inner + inner // 63 + 1
