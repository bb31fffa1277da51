"""
The transactions, receipts and state of a live chain, through its JSON-RPC URL only.

Blocks are read with their full transactions in the range asked for; the
rest (receipts, storage, code) per transaction or account as the checks
need it, and traces per block where the client answers a block trace for
its transactions (per transaction where it does not). Every call goes to
the one URL the user gave.

A chain's answers are input like a file the user gives: each is read as the
typed model of what its method returns (`RpcClient.call_as`), so one that is
not (a block number as a JSON integer, a null head, a transaction without
fields, text that is not hex) is one line naming the method and the field,
never a traceback in the check that would have used it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, TypeAdapter, ValidationError

from ..clients.engine_client import RpcAnswerError, RpcClient, RpcError
from ..ethereum.hextypes import exactly
from ..export.yaml_text import counted
from ..plumbing.errors import BadInput

_HEX = re.compile(r"0x[0-9a-fA-F]*")


def _rpc_quantity(value: object) -> int:
    """A JSON-RPC quantity: 0x-prefixed hex text, nothing else (a JSON number is not one)."""
    if isinstance(value, str) and _HEX.fullmatch(value) and len(value) > 2:
        return int(value, 16)
    raise ValueError(f"{value!r:.80} is not a 0x-hex quantity")


def _rpc_data(value: object) -> bytes:
    """JSON-RPC data: 0x-prefixed hex text of whole bytes."""
    if isinstance(value, str) and _HEX.fullmatch(value) and len(value) % 2 == 0:
        return bytes.fromhex(value[2:])
    raise ValueError(f"{value!r:.80} is not 0x-hex data")


RpcQuantity = Annotated[int, BeforeValidator(_rpc_quantity)]
RpcData = Annotated[bytes, BeforeValidator(_rpc_data)]
RpcAddress = Annotated[bytes, BeforeValidator(_rpc_data), AfterValidator(exactly(20))]
RpcHash = Annotated[str, AfterValidator(lambda text: "0x" + exactly(32)(_rpc_data(text)).hex())]


class ChainModel(BaseModel):
    """An answer's object: read by the JSON names, other members ignored."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)


class ChainTx(ChainModel):
    """A transaction as the chain holds it (a full transaction object of `eth_getBlockByNumber`)."""

    block: RpcQuantity = Field(alias="blockNumber")
    position: RpcQuantity = Field(alias="transactionIndex")
    hash: RpcHash
    sender: RpcAddress = Field(alias="from")
    nonce: RpcQuantity
    to: RpcAddress | None = None
    data: RpcData = Field(b"", alias="input")
    gas: RpcQuantity
    value: RpcQuantity

    @property
    def where(self) -> str:
        return f"block {self.block} tx {self.position} ({self.hash})"


class ChainBlock(ChainModel):
    """A block of `eth_getBlockByNumber` with full transactions: what the check reads of it."""

    number: RpcQuantity
    miner: RpcAddress
    transactions: list[ChainTx] = Field(default_factory=list)


class ChainHeader(ChainModel):
    """The latest header, for the fields a fork adds (`chain_fit`): the number, and which members it has."""

    model_config = ConfigDict(frozen=True, extra="allow")

    number: RpcQuantity

    def has(self, field_name: str) -> bool:
        return field_name in (self.model_extra or {})


class ChainForkConfig(ChainModel):
    """EIP-7910's `eth_config` entry for the current fork: the system contracts it runs."""

    system_contracts: dict[str, RpcAddress] = Field(default_factory=dict, alias="systemContracts")


class ChainConfig(ChainModel):
    current: ChainForkConfig | None = None


class ChainReceipt(ChainModel):
    status: RpcQuantity
    gas_used: RpcQuantity = Field(alias="gasUsed")


class TracedAccount(ChainModel):
    """One account of geth's prestateTracer: the fields it lists (each changed one, in diff mode) and storage slots."""

    balance: RpcQuantity | None = None
    nonce: StrictInt | RpcQuantity | None = None
    code: RpcData | None = None
    storage: dict[RpcQuantity, RpcData] = Field(default_factory=dict)

    def lists(self, field_name: str) -> bool:
        return getattr(self, field_name) is not None


PrestateTrace = dict[RpcAddress, TracedAccount]


class PrestateDiff(ChainModel):
    pre: PrestateTrace = Field(default_factory=dict)
    post: PrestateTrace = Field(default_factory=dict)


def head_number(rpc: RpcClient) -> int:
    return rpc.call_as(RpcQuantity, "eth_blockNumber")


def block_at(rpc: RpcClient, number: int) -> ChainBlock:
    """Block `number` with its full transactions; a chain without it is bad input."""
    block = rpc.call_as(ChainBlock | None, "eth_getBlockByNumber", [hex(number), True])
    if block is None:
        raise BadInput(f"{rpc.url}: block {number} is missing")
    if block.number != number:
        raise BadInput(f"{rpc.url}: eth_getBlockByNumber({number}) answered block {block.number}")
    return block


def blocks_in(rpc: RpcClient, first: int, last: int) -> Iterator[ChainBlock]:
    """Blocks first..last, one call each, in order."""
    for number in range(first, last + 1):
        yield block_at(rpc, number)


def receipt_of(rpc: RpcClient, tx: ChainTx) -> ChainReceipt:
    receipt = rpc.call_as(ChainReceipt | None, "eth_getTransactionReceipt", [tx.hash])
    if receipt is None:
        raise BadInput(f"{rpc.url}: no receipt for {tx.where}")
    return receipt


def storage_at(rpc: RpcClient, address: bytes, slot: int, block: int) -> int:
    return int.from_bytes(rpc.call_as(RpcData, "eth_getStorageAt", ["0x" + address.hex(), hex(slot), hex(block)]), "big")


def code_at(rpc: RpcClient, address: bytes, block: int | str) -> bytes:
    tag = hex(block) if isinstance(block, int) else block
    return rpc.call_as(RpcData, "eth_getCode", ["0x" + address.hex(), tag])


def latest_header(rpc: RpcClient) -> ChainHeader | None:
    return rpc.call_as(ChainHeader | None, "eth_getBlockByNumber", ["latest", False])


def chain_config(rpc: RpcClient) -> ChainConfig | None:
    """EIP-7910's `eth_config`, or None from a client without it."""
    try:
        return rpc.call_as(ChainConfig | None, "eth_config")
    except RpcError:
        return None


class NoTrace(Exception):
    """The RPC does not trace the transaction (no debug API, or no state to trace on); the message says why."""


class NoBlockTrace(Exception):
    """
    The RPC's block trace cannot stand for its transactions' own traces (the
    method or the tracer refused, or an answer that is not the block's
    transactions); the message says which. Each is then traced on its own.
    """


BLOCK_TRACE = "debug_traceBlockByNumber"


def _tracer_options(diff: bool) -> dict[str, Any]:
    return {"tracer": "prestateTracer", "tracerConfig": {"diffMode": diff}}


def _trace(rpc: RpcClient, kind: Any, tx: ChainTx, diff: bool) -> Any:
    try:
        return rpc.call_as(kind, "debug_traceTransaction", [tx.hash, _tracer_options(diff)])
    except RpcError as error:
        raise NoTrace(error.message) from None


def prestate_trace(rpc: RpcClient, tx: ChainTx) -> PrestateTrace:
    """geth's prestateTracer of `tx`: every account and slot it accessed; NoTrace when the RPC offers no such trace."""
    return _trace(rpc, PrestateTrace, tx, diff=False)


def prestate_diff(rpc: RpcClient, tx: ChainTx) -> PrestateDiff:
    """The same tracer in diff mode: what `tx` changed, before and after."""
    return _trace(rpc, PrestateDiff, tx, diff=True)


class BlockTraceEntry(ChainModel):
    """One transaction's part of a block trace: its hash, and its tracer's result or why there is none."""

    tx_hash: RpcHash | None = Field(None, alias="txHash")
    result: Any = None
    error: Any = None


def _block_trace_entries(rpc: RpcClient, number: int, diff: bool) -> list[BlockTraceEntry]:
    try:
        return rpc.call_as(list[BlockTraceEntry], BLOCK_TRACE, [hex(number), _tracer_options(diff)])
    except RpcError as error:
        raise NoBlockTrace(f"{BLOCK_TRACE} of block {number}: {error.message}") from None
    except RpcAnswerError as error:
        raise NoBlockTrace(str(error)) from None


def _block_traced(rpc: RpcClient, number: int, txs: list[ChainTx], kind: TypeAdapter[Any], diff: bool) -> dict[str, Any]:
    """
    Each of `txs`' results in block `number`'s trace, read as `kind`, by tx
    hash: the entry at its position must name it (the answer is of this
    block, in its order) and hold a result that is a trace of that kind.
    """
    entries = _block_trace_entries(rpc, number, diff)
    traced = {}
    for tx in txs:
        if tx.position >= len(entries):
            answered = counted(len(entries), "transaction")
            raise NoBlockTrace(f"{BLOCK_TRACE} of block {number} answered {answered}, without {tx.where}")
        entry = entries[tx.position]
        if entry.tx_hash != tx.hash:
            raise NoBlockTrace(
                f"{BLOCK_TRACE} of block {number} names {entry.tx_hash or 'no transaction'} at position {tx.position}, "
                f"not {tx.hash}"
            )
        try:
            traced[tx.hash] = kind.validate_python(entry.result)
        except ValidationError:
            problem = "no prestate trace" if entry.error is None else f"the error {str(entry.error)[:200]!r}"
            raise NoBlockTrace(f"{BLOCK_TRACE} of block {number} has {problem} for {tx.where}") from None
    return traced


_PLAIN = TypeAdapter(PrestateTrace)
_DIFF = TypeAdapter(PrestateDiff)


def block_prestate_traces(rpc: RpcClient, number: int, txs: list[ChainTx]) -> dict[str, tuple[PrestateTrace, PrestateDiff]]:
    """
    `prestate_trace` and `prestate_diff` of each of `txs` (transactions of
    block `number`), by tx hash, from two block traces: a client traces a
    transaction by executing the block's transactions before it, so one
    block trace per mode costs what tracing its last transaction does.
    NoBlockTrace when they cannot stand for the transactions' own traces.
    """
    accessed = _block_traced(rpc, number, txs, _PLAIN, diff=False)
    changed = _block_traced(rpc, number, txs, _DIFF, diff=True)
    return {tx.hash: (accessed[tx.hash], changed[tx.hash]) for tx in txs}
