"""
Import of EEST `blockchain_test_engine` fixtures into go-ethereum.

For each test, every payload goes in through `engine_newPayloadV*` and is
made head with `engine_forkchoiceUpdatedV*`, exactly as a consensus client
would deliver it; the client must call each one VALID and end on the
fixture's `lastblockhash`. The latency of every `newPayload` round trip is
recorded, since that is the client's block-processing time as a consensus
client sees it.

A `blockchain_test_engine_x` group shares one genesis (its pre-alloc file),
so one node serves the whole group: after each test the chain is rewound to
genesis with `debug_setHead`, which is far cheaper than a new node and a
new `geth init` of a possibly large state.

A check that fails (a status other than VALID, a wrong hash) is a result,
not an exception: it ends that test with a one-line reason and the next
test still runs. Exceptions are kept for what makes the whole run
meaningless: malformed group input (`BadInput`) and a node that cannot be
started (`GethError`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import BadInput
from .engine_client import EngineClient, RpcClient, RpcError, RpcTransportError
from .genesis import (
    TEST_CHAIN_ID,
    derived_header_mismatches,
    fixture_chain_id,
    fixture_config_mismatches,
    parse_quantity,
    write_geth_genesis,
)
from .geth_process import GethProcess

VALID = "VALID"
INVALID = "INVALID"


@dataclass(frozen=True)
class PayloadResult:
    """What one payload of a test did in the client."""

    index: int
    """Position in the fixture's `engineNewPayloads`."""
    phase: str | None
    """The fixture's "setup" or "testing" label; None if it has none."""
    block_number: int
    block_hash: str
    gas_used: int
    transaction_count: int
    status: str
    """`newPayload` outcome: VALID, or INVALID or ERROR (a JSON-RPC error)
    where the fixture expects that; `new_payload_ns` is 0 for ERROR."""
    new_payload_ns: int
    """Client-side round trip of `engine_newPayload`, in nanoseconds."""
    forkchoice_updated_ns: int | None
    """Round trip of the `engine_forkchoiceUpdated` that made it head; None
    for a payload expected to be rejected, which is never made head."""


@dataclass(frozen=True)
class ImportResult:
    """One test's import: its payloads in order and, if it failed, why."""

    test_id: str
    failure: str | None
    payloads: tuple[PayloadResult, ...]

    @property
    def passed(self) -> bool:
        """Whether every check of the test held."""
        return self.failure is None


@dataclass(frozen=True)
class GroupImportResult:
    """The tests imported on one node, sharing one genesis."""

    network: str
    genesis_hash: str
    client_version: str | None
    tests: tuple[ImportResult, ...]
    failure: str | None
    """Why no test could run (the genesis did not match), else None."""

    @property
    def passed(self) -> bool:
        """Whether the group and every test in it passed."""
        return self.failure is None and all(test.passed for test in self.tests)


@dataclass(frozen=True)
class PayloadDirective:
    """One `engineNewPayloads` entry, checked and with the facts results need."""

    params: list[Any]
    new_payload_version: int
    forkchoice_updated_version: int
    phase: str | None
    block_number: int
    block_hash: str
    gas_used: int
    transaction_count: int
    validation_error: str | None
    """Set when the fixture expects the client to reject the payload."""
    error_code: int | None
    """Set when the fixture expects a JSON-RPC error instead of a status."""


def parse_payload_directive(entry: Mapping[str, Any], where: str) -> PayloadDirective:
    """Check one `engineNewPayloads` entry and pull out what the import needs."""
    params = entry.get("params")
    if not isinstance(params, list) or not params or not isinstance(params[0], Mapping):
        raise BadInput(f"{where}: params must be a list starting with the execution payload")
    payload = params[0]
    transactions = payload.get("transactions")
    if not isinstance(transactions, list):
        raise BadInput(f"{where}: execution payload has no transactions list")
    block_hash = payload.get("blockHash")
    if not isinstance(block_hash, str):
        raise BadInput(f"{where}: execution payload has no blockHash")
    error_code = entry.get("errorCode")
    return PayloadDirective(
        params=list(params),
        new_payload_version=parse_quantity(
            entry.get("newPayloadVersion"), f"{where}.newPayloadVersion"
        ),
        forkchoice_updated_version=parse_quantity(
            entry.get("forkchoiceUpdatedVersion"), f"{where}.forkchoiceUpdatedVersion"
        ),
        phase=entry.get("phase"),
        block_number=parse_quantity(payload.get("blockNumber"), f"{where}.blockNumber"),
        block_hash=block_hash.lower(),
        gas_used=parse_quantity(payload.get("gasUsed"), f"{where}.gasUsed"),
        transaction_count=len(transactions),
        validation_error=entry.get("validationError"),
        error_code=None if error_code is None else int(str(error_code), 0),
    )


def parse_payload_directives(fixture: Mapping[str, Any]) -> list[PayloadDirective]:
    """All payload entries of a fixture, checked before any is sent."""
    entries = fixture.get("engineNewPayloads")
    if not isinstance(entries, list) or not entries:
        raise BadInput("fixture has no engineNewPayloads")
    return [
        parse_payload_directive(entry, f"engineNewPayloads[{index}]")
        for index, entry in enumerate(entries)
    ]


class _CheckFailed(Exception):
    """A check of the running import failed; the message is the test's failure reason."""


class _Chain:
    """The node being imported into, seen through its two endpoints."""

    def __init__(self, rpc: RpcClient, engine: EngineClient, genesis_hash: str) -> None:
        self.rpc = rpc
        self.engine = engine
        self.genesis_hash = genesis_hash

    def head(self) -> dict[str, Any]:
        """The client's latest block (header fields only)."""
        block = self.rpc.get_block_by_number("latest").result
        if not isinstance(block, dict):
            raise _CheckFailed(f"eth_getBlockByNumber(latest) returned {block!r}")
        return block

    def roll_back_to_genesis(self) -> None:
        """
        Rewind the canonical chain to block 0 and check that it is head.

        `debug_setHead` refuses to "rewind" to the current head, so a chain
        still at genesis (a test that failed on its first payload) is left
        as it is.
        """
        if int(self.head()["number"], 16) > 0:
            try:
                self.rpc.set_head(0)
            except RpcError as error:
                raise _CheckFailed(f"debug_setHead(0x0) failed: {error}") from None
        head = self.head()
        if str(head.get("hash", "")).lower() != self.genesis_hash:
            raise _CheckFailed(
                f"after debug_setHead(0x0) the head is block {head.get('number')} "
                f"{head.get('hash')}, not genesis {self.genesis_hash}"
            )

    def check_block_is_new(self, directive: PayloadDirective) -> None:
        """
        The client must not have the block yet.

        Clients answer `newPayload` for a block they already hold with VALID
        at once, without executing it, so its latency would be no measure
        of anything; a fixture repeating a block, or a rollback that left
        blocks behind, must fail rather than report such a number.
        """
        if self.rpc.get_block_by_hash(directive.block_hash).result is not None:
            raise _CheckFailed(
                f"block {directive.block_hash} is already known to the client, "
                "so engine_newPayload would not execute it"
            )

    def import_payload(self, index: int, directive: PayloadDirective) -> PayloadResult:
        """Send one payload and, if it is to be valid, make it head."""
        self.check_block_is_new(directive)
        try:
            new_payload = self.engine.new_payload(directive.new_payload_version, directive.params)
        except RpcError as error:
            if directive.error_code is not None and error.code == directive.error_code:
                return _payload_result(index, directive, "ERROR", 0, None)
            raise _CheckFailed(
                f"engine_newPayloadV{directive.new_payload_version} returned error "
                f"{error.code}: {error.message}"
            ) from None
        status = _status_of(new_payload.result)
        if directive.error_code is not None:
            raise _CheckFailed(
                f"engine_newPayloadV{directive.new_payload_version} returned status {status}, "
                f"the fixture expects JSON-RPC error {directive.error_code}"
            )
        if directive.validation_error is not None:
            if status != INVALID:
                raise _CheckFailed(
                    f"engine_newPayloadV{directive.new_payload_version} returned {status}, the "
                    f"fixture expects INVALID ({directive.validation_error})"
                )
            return _payload_result(index, directive, INVALID, new_payload.elapsed_ns, None)
        if status != VALID:
            raise _CheckFailed(
                f"engine_newPayloadV{directive.new_payload_version} returned {status}"
                + _validation_error_suffix(_as_dict(new_payload.result))
            )
        forkchoice = self.engine.forkchoice_updated(
            directive.forkchoice_updated_version, directive.block_hash
        )
        payload_status = _as_dict(_as_dict(forkchoice.result).get("payloadStatus"))
        if _status_of(payload_status) != VALID:
            raise _CheckFailed(
                f"engine_forkchoiceUpdatedV{directive.forkchoice_updated_version} to "
                f"{directive.block_hash} returned {payload_status.get('status')}"
                + _validation_error_suffix(payload_status)
            )
        return _payload_result(
            index, directive, VALID, new_payload.elapsed_ns, forkchoice.elapsed_ns
        )


def _payload_result(
    index: int,
    directive: PayloadDirective,
    status: str,
    new_payload_ns: int,
    forkchoice_updated_ns: int | None,
) -> PayloadResult:
    return PayloadResult(
        index=index,
        phase=directive.phase,
        block_number=directive.block_number,
        block_hash=directive.block_hash,
        gas_used=directive.gas_used,
        transaction_count=directive.transaction_count,
        status=status,
        new_payload_ns=new_payload_ns,
        forkchoice_updated_ns=forkchoice_updated_ns,
    )


def _as_dict(value: Any) -> dict[str, Any]:
    """`value` if the client sent an object there, else an empty one."""
    return value if isinstance(value, dict) else {}


def _status_of(payload_status: Any) -> str | None:
    """The `status` of a `PayloadStatusV1`, tolerating a malformed reply."""
    return _as_dict(payload_status).get("status")


def _validation_error_suffix(status: Mapping[str, Any]) -> str:
    """The client's own explanation of a non-VALID status, if it gave one."""
    error = status.get("validationError")
    return f": {error}" if error else ""


def _import_test(
    chain: _Chain, network: str, test_id: str, fixture: Mapping[str, Any]
) -> ImportResult:
    """Import one test's payloads and check that the chain ends where it should."""
    if fixture.get("network") not in (None, network):
        return ImportResult(
            test_id,
            f"fixture network {fixture.get('network')!r} is not the group's {network!r}",
            (),
        )
    try:
        directives = parse_payload_directives(fixture)
        config_problems = fixture_config_mismatches(network, fixture.get("config") or {})
    except BadInput as error:
        return ImportResult(test_id, f"malformed fixture: {error}", ())
    if config_problems:
        return ImportResult(test_id, "; ".join(config_problems), ())
    payloads: list[PayloadResult] = []
    try:
        for index, directive in enumerate(directives):
            try:
                payloads.append(chain.import_payload(index, directive))
            except _CheckFailed as failure:
                raise _CheckFailed(
                    f"payload {index} (block {directive.block_number}): {failure}"
                ) from None
        _check_last_block(chain, fixture)
    except _CheckFailed as failure:
        return ImportResult(test_id, str(failure), tuple(payloads))
    return ImportResult(test_id, None, tuple(payloads))


def _check_last_block(chain: _Chain, fixture: Mapping[str, Any]) -> None:
    """The client's head must be the block the fixture says the test ends on."""
    expected = fixture.get("lastblockhash")
    if not isinstance(expected, str):
        raise _CheckFailed("fixture has no lastblockhash")
    head = chain.head()
    if str(head.get("hash", "")).lower() != expected.lower():
        raise _CheckFailed(
            f"head is block {head.get('number')} {head.get('hash')}, "
            f"the fixture's lastblockhash is {expected}"
        )


def _genesis_failure(
    rpc: RpcClient, network: str, header: Mapping[str, Any], expected: str
) -> str | None:
    """Why the client's genesis is not the fixture's (hash `expected`), or None if it is."""
    block = rpc.get_block_by_number(0).result
    found = str((block or {}).get("hash", "")).lower()
    if found == expected:
        return None
    reasons = [f"client genesis hash {found} is not the fixture's {expected}"]
    if (
        block
        and str(block.get("stateRoot", "")).lower() != str(header.get("stateRoot", "")).lower()
    ):
        reasons.append(
            f"state root {block.get('stateRoot')} is not the fixture's {header.get('stateRoot')}"
        )
    reasons.extend(derived_header_mismatches(network, header))
    return "; ".join(reasons)


def _genesis_hash_of(header: Mapping[str, Any]) -> str:
    """The fixture's genesis hash, which the client's must equal."""
    value = header.get("hash")
    if not isinstance(value, str):
        raise BadInput("genesis header has no hash to check the client's genesis against")
    return value.lower()


def import_engine_tests(
    network: str,
    genesis_header: Mapping[str, Any],
    pre: Mapping[str, Mapping[str, Any]],
    tests: Sequence[tuple[str, Mapping[str, Any]]],
    geth_bin: Path,
    *,
    chain_id: int = TEST_CHAIN_ID,
    extra_args: Sequence[str] = (),
    temp_parent: Path | None = None,
) -> GroupImportResult:
    """
    Import `tests`, all built on one genesis, into one new geth node.

    The node's genesis must hash to the header's `hash`; otherwise no test
    runs and every one reports why. Between tests the chain goes back to
    genesis; if that fails, or the node stops answering, the remaining
    tests are reported as not run rather than run on a wrong chain.
    """
    genesis_hash = _genesis_hash_of(genesis_header)
    with tempfile.TemporaryDirectory(prefix="balgen-genesis-", dir=temp_parent) as scratch:
        genesis_path = Path(scratch) / "genesis.json"
        write_geth_genesis(genesis_path, network, genesis_header, pre, chain_id=chain_id)
        with (
            GethProcess(
                geth_bin, genesis_path, extra_args=extra_args, temp_parent=temp_parent
            ) as geth,
            geth.rpc_client() as rpc,
            geth.engine_client() as engine,
        ):
            failure = _genesis_failure(rpc, network, genesis_header, genesis_hash)
            if failure is not None:
                reason = f"genesis mismatch: {failure}"
                return GroupImportResult(
                    network=network,
                    genesis_hash=genesis_hash,
                    client_version=geth.client_version,
                    tests=tuple(ImportResult(test_id, reason, ()) for test_id, _ in tests),
                    failure=reason,
                )
            results = _import_in_turn(_Chain(rpc, engine, genesis_hash), geth, network, tests)
            return GroupImportResult(
                network=network,
                genesis_hash=genesis_hash,
                client_version=geth.client_version,
                tests=tuple(results),
                failure=None,
            )


def _import_in_turn(
    chain: _Chain,
    geth: GethProcess,
    network: str,
    tests: Sequence[tuple[str, Mapping[str, Any]]],
) -> list[ImportResult]:
    """Run the tests one after another, back at genesis before each but the first."""
    results: list[ImportResult] = []
    not_run_reason: str | None = None
    for position, (test_id, fixture) in enumerate(tests):
        if not_run_reason is None and position > 0:
            try:
                chain.roll_back_to_genesis()
            except _CheckFailed as failure:
                not_run_reason = f"not run: rolling back to genesis failed: {failure}"
            except RpcTransportError as error:
                not_run_reason = f"not run: no answer from geth: {error}"
        if not_run_reason is not None:
            results.append(ImportResult(test_id, not_run_reason, ()))
            continue
        try:
            results.append(_import_test(chain, network, test_id, fixture))
        except RpcTransportError as error:
            results.append(
                ImportResult(test_id, f"no answer from geth: {error}\n{geth.log_tail(10)}", ())
            )
            not_run_reason = f"not run: geth stopped answering during {test_id}"
    return results


def import_engine_fixture(
    fixture: Mapping[str, Any],
    genesis_header: Mapping[str, Any],
    pre: Mapping[str, Mapping[str, Any]],
    geth_bin: Path,
    *,
    test_id: str = "",
    extra_args: Sequence[str] = (),
    temp_parent: Path | None = None,
) -> ImportResult:
    """
    Import one `blockchain_test_engine` fixture into its own geth node.

    `genesis_header` and `pre` are the fixture's `genesisBlockHeader` and
    `pre`; they are separate arguments so that callers streaming a large
    fixture file can hand them over without the rest.
    """
    network = fixture.get("network")
    if not isinstance(network, str):
        raise BadInput(f"fixture {test_id or '(unnamed)'}: no network")
    group = import_engine_tests(
        network,
        genesis_header,
        pre,
        [(test_id, fixture)],
        geth_bin,
        chain_id=fixture_chain_id(fixture.get("config")),
        extra_args=extra_args,
        temp_parent=temp_parent,
    )
    return group.tests[0]


def import_engine_group(
    pre_alloc: Mapping[str, Any],
    fixtures: Sequence[tuple[str, Mapping[str, Any]]],
    geth_bin: Path,
    *,
    extra_args: Sequence[str] = (),
    temp_parent: Path | None = None,
) -> GroupImportResult:
    """
    Import the `blockchain_test_engine_x` fixtures of one pre-alloc group.

    `pre_alloc` is the group's `pre_alloc/<hash>.json` (network, genesis,
    pre); `fixtures` are (test id, fixture) pairs in the order to run them.
    """
    network = pre_alloc.get("network")
    if not isinstance(network, str):
        raise BadInput("pre-alloc group: no network")
    genesis_header = pre_alloc.get("genesis")
    pre = pre_alloc.get("pre")
    if not isinstance(genesis_header, Mapping) or not isinstance(pre, Mapping):
        raise BadInput("pre-alloc group: needs a genesis header and a pre alloc")
    if pre_alloc.get("chainId") is not None:
        chain_id = parse_quantity(pre_alloc["chainId"], "pre-alloc group chainId")
    else:
        chain_id = fixture_chain_id(fixtures[0][1].get("config") if fixtures else None)
    return import_engine_tests(
        network,
        genesis_header,
        pre,
        fixtures,
        geth_bin,
        chain_id=chain_id,
        extra_args=extra_args,
        temp_parent=temp_parent,
    )
