"""
Running go-ethereum's `evm t8n`, the reference state transition tool.

Allocations go to and from t8n as files and are never parsed here unless a
caller asks, so a large pre-state costs disk, not memory. Every call's wall
time is summed so fills can report how much of their time t8n takes.

A call can also run a go-ethereum tracer (`tracer=`) and return its
per-transaction results: t8n makes one tracer for the whole block and writes
its `result()` after each transaction to `trace-<txIndex>-<txHash>.json`.

- A native tracer (a registered name, such as balgen's access tracer that
  scripts/install-tools.sh builds into evm) runs in the block's real run:
  state root, alloc and traces all come from one execution.
- A JavaScript tracer (its code) cannot: the pre-transaction system calls
  (EIP-4788 beacon root, EIP-2935 parent hash) run opcodes under it before
  any transaction started it, and its `step` then dereferences a nil
  transaction context and crashes t8n. Its run therefore gets a copy of the
  allocation with those two contracts' code removed: the calls run no code,
  the transactions run as before (unless they call those two contracts), but
  the post-state is not the block's, so no alloc is written.
"""

from __future__ import annotations

import json
import os
import resource
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence, overload

import ijson
import orjson

from ..plumbing import processes
from ..plumbing.go_tools import go_tool_environment
from ..plumbing.errors import BadInput, TransitionToolError
from ..ethereum.forks import Fork, system_contract_code
from .alloc import iter_alloc, write_alloc_entries
from .tx_json import write_transactions_input

PRE_TRANSACTION_SYSTEM_CONTRACTS = frozenset(system_contract_code()[key][0].lower() for key in ("eip4788", "eip2935"))
"""Contracts t8n calls before the first transaction (beacon roots, history storage); their code is removed for JavaScript-traced runs."""


def is_javascript_tracer(tracer: str) -> bool:
    """A tracer given as JavaScript code (an object literal) rather than a native tracer's name."""
    return tracer.lstrip().startswith("{")


@dataclass(frozen=True)
class T8nResult:
    """What one `evm t8n` call returned."""

    result: dict[str, Any]
    alloc_path: Path
    """The post-state allocation file t8n wrote."""
    traces: Sequence[Any] = ()
    """With a tracer: its result for each included transaction, in receipt order, each read from
    its file in the call's workdir when asked for (`TraceFiles`)."""

    @property
    def state_root(self) -> bytes:
        return _bytes(self.result["stateRoot"])

    @property
    def gas_used(self) -> int:
        return int(self.result["gasUsed"], 16)

    @property
    def receipts(self) -> Sequence[dict[str, Any]]:
        return self.result.get("receipts") or []

    @property
    def rejected(self) -> list[dict[str, Any]]:
        return self.result.get("rejected") or []

    @property
    def block_access_list(self) -> bytes | None:
        """The BAL's RLP (read from its file if `read_result` put it in one)."""
        return access_list_bytes(self.access_list_source)

    @property
    def access_list_source(self) -> bytes | Path | None:
        """The BAL's RLP as `read_result` kept it: bytes, or the file a large one was written to."""
        return self.result.get("blockAccessList")

    @property
    def requests(self) -> list[bytes]:
        return [_bytes(r) for r in self.result.get("requests") or []]


def _bytes(value: str) -> bytes:
    return bytes.fromhex(value[2:] if value.startswith("0x") else value)


@dataclass
class TransitionTool:
    """A t8n binary, with the time spent inside it counted."""

    binary: Path
    busy_seconds: float = 0.0
    user_seconds: float = 0.0
    """CPU time t8n spent running its own code, summed over its calls."""
    system_seconds: float = 0.0
    """CPU time the kernel spent for t8n (its files: a traced block writes one per transaction)."""
    calls: int = 0
    _version: str | None = field(default=None, repr=False)
    slow_notice: Callable[[str], None] | None = field(default=None, repr=False)
    """Told once per call that has run `SLOW_NOTICE_SECONDS` (what it runs, until when it may), where
    no other output shows that balgen is waiting: `balgen fill`'s calibration of the t8n."""

    def version(self) -> str:
        """The binary's `--version` line; also proves the binary runs at all."""
        if self._version is None:
            self._version = probe_version(self.binary)
        return self._version

    def transition(
        self,
        fork: Fork,
        alloc_path: Path,
        env: dict[str, Any],
        txs: Iterable[bytes],
        workdir: Path,
        *,
        label: str,
        tracer: str | None = None,
    ) -> T8nResult:
        """Apply one block's transactions (signed envelopes) to the state in `alloc_path`."""
        return self.transition_raw(fork.name, alloc_path, env, txs, workdir, label=label, tracer=tracer)

    def transition_raw(
        self,
        fork_name: str,
        alloc_path: Path,
        env: dict[str, Any],
        txs: Iterable[bytes],
        workdir: Path,
        *,
        label: str,
        tracer: str | None = None,
        write_alloc: bool = True,
    ) -> T8nResult:
        """
        `transition` under any fork name t8n knows, balgen's forks or not.

        With a JavaScript `tracer` the run is a tracing run on a copy of the
        state (see the module docstring): its receipts and traces are the
        block's, its state root and alloc are not, so t8n writes no alloc.
        Without `write_alloc` neither (a contract set's post-state is gigabytes
        no one reads).
        """
        javascript = tracer is not None and is_javascript_tracer(tracer)
        workdir.mkdir(parents=True, exist_ok=True)
        env_path = workdir / "env.json"
        env_path.write_text(json.dumps(env))
        counted = _Counted(txs)
        txs_path = write_transactions_input(workdir, counted)
        deadline = t8n_deadline(_gas_limit(env), counted.count, _file_size(alloc_path))
        if javascript:
            alloc_path = without_pre_transaction_system_code(alloc_path, workdir / "traced-alloc.json")
        if tracer is not None:
            for stale in workdir.glob(TRACE_FILES):
                stale.unlink()
        command = [
            str(self.binary),
            "t8n",
            f"--state.fork={fork_name}",
            f"--input.alloc={alloc_path}",
            f"--input.env={env_path}",
            f"--input.txs={txs_path}",
            f"--output.basedir={workdir}",
            "--output.result=result.json",
            "--output.alloc=alloc.json" if write_alloc and not javascript else "--output.alloc=",
            "--output.body=body.rlp",
        ]
        if tracer is not None:
            command.append(f"--trace.tracer={tracer}")
        started, children_before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            completed = processes.run(
                command, deadline=deadline, env=go_tool_environment(), on_slow=self._on_slow(label, deadline)
            )
        except OSError as error:
            raise TransitionToolError(f"{label}: cannot run t8n {self.binary}: {error.strerror}") from None
        except processes.DeadlineExceeded:
            raise TransitionToolError(
                f"{label}: t8n {self.binary} did not finish within {deadline:.0f} s "
                f"(the deadline for {counted.count} transactions in a block of {_gas_limit(env):,} gas); stopped"
            ) from None
        finally:
            self.busy_seconds += time.perf_counter() - started
            children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
            self.user_seconds += children_after.ru_utime - children_before.ru_utime
            self.system_seconds += children_after.ru_stime - children_before.ru_stime
            self.calls += 1
        if completed.returncode != 0 and tracer is not None and not javascript and "failed instantiating tracer" in completed.stderr:
            raise BadInput(
                f"{label}: t8n {self.binary} has no tracer named {tracer} "
                "(balgen's access tracer is built into evm by scripts/install-tools.sh: make tools)"
            )
        if completed.returncode != 0:
            raise TransitionToolError(
                f"{label}: t8n {_exit_description(completed.returncode)}: {processes.error_line(completed.stderr)}"
            )
        try:
            result = read_result(workdir / "result.json")
        except (OSError, ValueError, ijson.JSONError) as error:
            raise TransitionToolError(f"{label}: t8n wrote no readable result.json: {error}") from None
        traces = read_traces(workdir, result["receipts"], len(result["rejected"]), label) if tracer is not None else ()
        return T8nResult(result=result, alloc_path=workdir / "alloc.json", traces=traces)

    def _on_slow(self, label: str, deadline: float) -> processes.SlowNotice | None:
        notice = self.slow_notice
        if notice is None:
            return None
        return processes.SlowNotice(
            SLOW_NOTICE_SECONDS,
            lambda: notice(f"{label}: t8n {self.binary} has not finished after {SLOW_NOTICE_SECONDS:.0f} s; "
                           f"waiting up to {deadline:.0f} s (its deadline), then it is stopped"),
        )  # fmt: skip


SLOW_NOTICE_SECONDS = 5.0
"""A calibration block is a handful of transactions, done in well under a second: after 5 s the user
is told that balgen waits, and how long it will."""

T8N_BASE_SECONDS = 60.0
T8N_SECONDS_PER_MILLION_GAS = 0.5
T8N_SECONDS_PER_TRANSACTION = 0.01
T8N_SECONDS_PER_ALLOC_MB = 0.1
"""A t8n call's deadline grows with its work (gas, transactions, the allocation it loads): every t8n call
of a 1000M workload together took about two minutes on two cores (docs/design.md); one 1000M call of
36,000 transactions gets about 15 minutes, so only a t8n that hangs meets its deadline."""


def t8n_deadline(gas_limit: int, transactions: int, alloc_bytes: int) -> float:
    """Seconds one t8n call may take for a block of `gas_limit` with `transactions` over an allocation file of `alloc_bytes`."""
    return (
        T8N_BASE_SECONDS
        + T8N_SECONDS_PER_MILLION_GAS * gas_limit / 1e6
        + T8N_SECONDS_PER_TRANSACTION * transactions
        + T8N_SECONDS_PER_ALLOC_MB * alloc_bytes / 1e6
    )


def _file_size(path: Path) -> int:
    """`path`'s size, 0 if it cannot be read (t8n then says why)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _gas_limit(env: dict[str, Any]) -> int:
    """The block gas limit of a t8n env (hex text, as balgen writes it, or a number)."""
    value = env.get("currentGasLimit", 0)
    return int(value, 16) if isinstance(value, str) else int(value)


class _Counted(Iterator[bytes]):
    """The transactions given to t8n, counted as they are written (they may be a generator)."""

    def __init__(self, txs: Iterable[bytes]) -> None:
        self._txs = iter(txs)
        self.count = 0

    def __next__(self) -> bytes:
        envelope = next(self._txs)
        self.count += 1
        return envelope


TRACE_FILES = "trace-*.json"

RECEIPT_FIELDS = ("status", "gasUsed", "transactionHash")
"""What balgen reads of a receipt; the rest (logs, the 256-byte bloom) is dropped while parsing."""


class Receipts(Sequence[dict[str, Any]]):
    """
    A block's receipts as balgen reads them (`RECEIPT_FIELDS`), packed into
    three arrays: a billion-gas block has tens of thousands, which as dicts
    of strings took tens of MB. Each is a dict again when asked for, its
    values spelled as t8n spells them (minimal hex quantities, 0x hashes).
    """

    def __init__(self) -> None:
        self._status = bytearray()
        self._gas_used = array("Q")
        self._hashes = bytearray()

    def append(self, receipt: dict[str, Any]) -> None:
        """Keep one receipt parsed from t8n's result."""
        self._status.append(int(receipt.get("status", "0x0"), 16))
        self._gas_used.append(int(receipt.get("gasUsed", "0x0"), 16))
        self._hashes += bytes.fromhex(str(receipt.get("transactionHash", "0x" + "00" * 32))[2:])

    def __len__(self) -> int:
        return len(self._status)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self[position] for position in range(*index.indices(len(self)))]
        position = index + len(self) if index < 0 else index
        if not 0 <= position < len(self):
            raise IndexError(f"receipt {index} of {len(self)}")
        return {
            "status": hex(self._status[position]),
            "gasUsed": hex(self._gas_used[position]),
            "transactionHash": self.transaction_hash(position),
        }

    def transaction_hash(self, index: int) -> str:
        """Receipt `index`'s transaction hash, 0x-hex."""
        return "0x" + self._hashes[32 * index : 32 * (index + 1)].hex()


HELD_RESULT_BYTES = 32 << 20
"""A result.json up to this size is parsed whole (orjson), a larger one as a stream of events (Python).
Mostly it is the access list's hex: a 60M contract-set setup block's result is 22 MB, 20 of them its
list, which streamed took a second."""
HELD_ACCESS_LIST_BYTES = 16 << 20
"""A block access list of more RLP than this is kept in a file (`ACCESS_LIST_FILE` in the block's
folder) and read when used (a 60M block's, at most 11 MB in the default suite, is held): a
billion-gas contract set's setup blocks each create 40,000 contracts, tens of MB of code, and a
fill keeps every block until its fixtures are written."""
ACCESS_LIST_FILE = "block-access-list.rlp"


def access_list_bytes(source: bytes | Path | None) -> bytes | None:
    """A block access list's RLP as `read_result` kept it: held, or read from its file now."""
    return source.read_bytes() if isinstance(source, Path) else source


def read_result(path: Path) -> dict[str, Any]:
    """
    t8n's result.json.

    A billion-gas block has tens of thousands of receipts, most of each its
    logs bloom: they are kept as `Receipts`, so the result held is a few MB
    whatever the block, and a large file is parsed as a stream. Top-level
    values are kept as they are (the access list as bytes); `rejected`
    entries and `requests` whole.
    """
    result: dict[str, Any] = {"receipts": Receipts(), "rejected": [], "requests": []}
    if path.stat().st_size <= HELD_RESULT_BYTES:
        document = orjson.loads(path.read_bytes())  # twice as fast; every quantity t8n writes in it is hex
        for key, value in document.items():
            if key in result:
                for item in value or ():
                    result[key].append(item)
            elif not isinstance(value, (dict, list)):
                result[key] = value
    else:
        _stream_result(path, result)
    if result.get("blockAccessList") is not None:
        # Its hex is twice the bytes, and a billion-gas block's list is megabytes.
        result["blockAccessList"] = _bytes(result["blockAccessList"])
        if len(result["blockAccessList"]) > HELD_ACCESS_LIST_BYTES:
            spilled = path.with_name(ACCESS_LIST_FILE)
            spilled.write_bytes(result["blockAccessList"])
            result["blockAccessList"] = spilled
    return result


def _stream_result(path: Path, result: dict[str, Any]) -> None:
    """Fill `result` from a large result.json one parser event at a time, keeping only what balgen reads."""
    entry: dict[str, Any] = {}
    with path.open("rb") as stream:
        for prefix, event, value in ijson.parse(stream):
            if prefix in ("receipts.item", "rejected.item"):
                if event == "start_map":
                    entry = {}
                elif event == "end_map":
                    result[prefix.split(".")[0]].append(entry)
            elif event in ("string", "number", "boolean", "null"):
                if prefix == "requests.item":
                    result["requests"].append(value)
                elif "." not in prefix:
                    result[prefix] = value
                else:
                    container, _, key = prefix.partition(".item.")
                    if (container == "receipts" and key in RECEIPT_FIELDS) or container == "rejected":
                        entry[key] = value


def without_pre_transaction_system_code(alloc_path: Path, copy_path: Path) -> Path:
    """A copy of the allocation, made one account at a time, whose pre-transaction system contracts have no code."""

    def entries() -> Iterator[tuple[str, dict[str, Any]]]:
        for address, account in iter_alloc(alloc_path):
            if address.lower() in PRE_TRANSACTION_SYSTEM_CONTRACTS:
                account = {**account, "code": "0x"}
            yield address, account

    write_alloc_entries(copy_path, entries())
    return copy_path


class TraceFiles(Sequence[Any]):
    """
    The tracer's results of a traced run, one file per transaction, each read
    when it is asked for: a billion-gas block has tens of thousands, and a
    caller that goes through them once holds one at a time. `path(index)`
    names the file of the index-th receipt's transaction.
    """

    def __init__(self, count: int, path: Callable[[int], str], label: str) -> None:
        self._count = count
        self._path = path
        self._label = label

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[position] for position in range(*index.indices(self._count))]
        position = index + self._count if index < 0 else index
        if not 0 <= position < self._count:
            raise IndexError(f"trace {index} of {self._count}")
        return self._read(self._path(position))

    def _read(self, path: str) -> Any:
        try:
            with open(path, "rb") as trace:  # parsed from its bytes: no text layer for tens of thousands of small files
                return json.loads(trace.read())
        except (OSError, ValueError) as error:
            name = os.path.basename(path)
            raise TransitionToolError(f"{self._label}: t8n wrote an unreadable trace {name}: {error}") from None


def read_traces(workdir: Path, receipts: Receipts, rejected: int, label: str) -> TraceFiles:
    """
    The tracer's result for each receipt, matched by transaction hash.

    t8n names the files `trace-<index>-<hash>.json`, the index counting every
    transaction it started: with none rejected, receipt i's is trace i and no
    file name needs holding; otherwise the hash in the name is what ties a
    trace to its receipt.
    """

    def numbered(index: int) -> str:
        # A string, not a Path: pathlib interns every file name, and the interned table never shrinks.
        return os.path.join(workdir, f"trace-{index}-{receipts.transaction_hash(index)}.json")

    path: Callable[[int], str] = numbered
    if rejected:
        by_hash = {found.stem.rsplit("-", 1)[-1].lower(): str(found) for found in workdir.glob(TRACE_FILES)}
        path = [by_hash.get(receipts.transaction_hash(index), numbered(index)) for index in range(len(receipts))].__getitem__
    written = set(os.listdir(workdir))  # one listing, not a stat per transaction
    for index in range(len(receipts)):
        if os.path.basename(path(index)) not in written:
            raise TransitionToolError(f"{label}: t8n wrote no trace for transaction {receipts.transaction_hash(index)}")
    return TraceFiles(len(receipts), path, label)


VERSION_DEADLINE = 60.0
"""Seconds `evm --version` may take (it answers at once; a loaded machine may add seconds)."""


def probe_version(binary: Path) -> str:
    """Run `binary --version`; a binary that is missing or fails it is bad input."""
    if not binary.exists():
        raise BadInput(f"--evm-bin: t8n binary not found: {binary}")
    if not os.access(binary, os.X_OK):
        raise BadInput(f"--evm-bin: t8n binary is not executable: {binary}")
    try:
        completed = processes.run([str(binary), "--version"], deadline=VERSION_DEADLINE)
    except processes.DeadlineExceeded:
        raise BadInput(f"--evm-bin: {binary} --version did not finish within {VERSION_DEADLINE:.0f} s; stopped") from None
    except OSError as error:
        raise BadInput(f"--evm-bin: cannot run {binary}: {error.strerror or error}") from None
    if completed.returncode != 0 or not completed.stdout.strip():
        raise BadInput(
            f"--evm-bin: {binary} --version {_exit_description(completed.returncode)}: "
            f"{processes.error_line(completed.stderr or completed.stdout)}"
        )
    return completed.stdout.strip().splitlines()[0]


def _exit_description(code: int) -> str:
    return f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"

