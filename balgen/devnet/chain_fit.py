"""
Whether a live chain runs the fork an export was made for.

An export's gas limits and contract code are sized by its fork's rules, so
on a chain of another fork its transactions run out of gas or run against
nothing, and still look sent. Two things tell a chain's fork without trusting
its name: the latest header's fields (a fork with block access lists adds
`blockAccessListHash` and `slotNumber`) and, where the client offers EIP-7910's
`eth_config`, the system contracts it runs (a later fork adds its own; plain
`geth --dev` v1.17.8 runs Osaka plus "Bogota", whose builder contracts show).
The deterministic deployment proxy a contract set needs is checked by its code.
"""

from __future__ import annotations

from ..chain.header import Header, has_block_access_list
from ..ethereum.forks import Fork, system_contract_code
from ..generators.deterministic_deployment import DETERMINISTIC_DEPLOYER
from ..clients.engine_client import RpcClient
from ..ethereum.hextypes import data_hex
from .chain_reader import ChainForkConfig, ChainHeader, chain_config, code_at, latest_header

DEPOSIT_CONTRACT = "DEPOSIT_CONTRACT_ADDRESS"
"""eth_config lists the chain's configured deposit contract (zero, or mainnet's), which no fork deploys."""


def fork_system_contracts(fork: Fork) -> set[str]:
    """Addresses (lower-case hex) of the system contracts `fork` runs; the proxy is a plain predeploy."""
    addresses = {system_contract_code()[key][0].lower() for key in fork.system_contracts}
    return addresses - {"0x" + DETERMINISTIC_DEPLOYER.hex()}


def header_problem(latest: ChainHeader, fork: Fork, url: str) -> str | None:
    """The latest header's fields against the ones `fork` requires, or None when they agree."""
    number = latest.number
    has_bal = latest.has("blockAccessListHash")
    if has_block_access_list(fork) and not has_bal:
        return (
            f"{url} does not run {fork.name}: its latest header (block {number}) has no blockAccessListHash; "
            f"start geth with --override.amsterdam 0 (geth --dev --override.amsterdam 0), or export with "
            f"--fork Osaka for an Osaka chain"
        )
    if has_bal and not has_block_access_list(fork):
        return (
            f"{url} runs a fork with block access lists (block {number} has blockAccessListHash), whose gas "
            f"costs the {fork.name} export does not fit: check it against the default export (--fork Amsterdam), "
            f"or start a pure-{fork.name} chain (docs/devnet.md)"
        )
    if Header.requires(fork, "slot_number") != latest.has("slotNumber"):
        want = "has" if Header.requires(fork, "slot_number") else "has no"
        return f"{url} does not run {fork.name}: {fork.name}'s header {want} slotNumber, block {number}'s differs"
    return None


def system_contract_problem(config: ChainForkConfig, fork: Fork, url: str) -> str | None:
    """eth_config's system contracts against `fork`'s, or None when they agree."""
    listed = {name: data_hex(address) for name, address in config.system_contracts.items() if name != DEPOSIT_CONTRACT}
    expected = fork_system_contracts(fork)
    extra = sorted(name for name, address in listed.items() if address not in expected)
    if extra:
        return (
            f"{url} runs a fork after {fork.name}: its eth_config lists system contracts {fork.name} does not have "
            f"({', '.join(extra)}); plain geth --dev runs Osaka plus 'Bogota': start a pure-{fork.name} chain "
            f"(docs/devnet.md), or for the default export geth --dev --override.amsterdam 0"
        )
    missing = sorted(expected - set(listed.values()))
    if missing:
        return f"{url} runs a fork before {fork.name}: its eth_config lacks the system contract(s) {', '.join(missing)}"
    return None


def chain_fit_problem(rpc: RpcClient, fork: Fork, needs_proxy: bool) -> str | None:
    """Why the chain behind `rpc` cannot run an export for `fork`, with what to change; None when it fits."""
    latest = latest_header(rpc)
    if latest is None:
        return f"{rpc.url}: eth_getBlockByNumber('latest') returned no block"
    problem = header_problem(latest, fork, rpc.url)
    if problem is None:
        config = chain_config(rpc)  # None from a client without EIP-7910: the header is all there is to go on
        if config is not None and config.current is not None:
            problem = system_contract_problem(config.current, fork, rpc.url)
    if problem is None and needs_proxy:
        if not code_at(rpc, DETERMINISTIC_DEPLOYER, "latest"):
            problem = (
                f"{rpc.url} has no deterministic deployment proxy at 0x{DETERMINISTIC_DEPLOYER.hex()}, which a "
                "contract set's factory is deployed through: preload it in the genesis (docs/spamoor.md)"
            )
    return problem
