"""
ethereumjs as a third EVM that checks block access lists: `verify.mjs` run on a batch of fixture files.

`make tools` installs `@ethereumjs/vm` 10.1.3 and its sibling packages at the versions
`scripts/ethereumjs/package-lock.json` pins, with `scripts/ethereumjs/verify.mjs` beside them, into
`tools/ethereumjs` (next to `tools/bin`, wherever balgen finds its binaries). verify.mjs runs every
block of `blockchain_test`, `blockchain_test_engine` and `blockchain_test_engine_x` fixtures with the
fixture's BAL given, so ethereumjs compares the BAL it builds from execution with the fixture's
(which neither revm 43 nor a header hash check does), then the last block hash and the post-state.
It prints a version record (the Amsterdam gas schedule ethereumjs charges), then one JSON line per
fixture, read back here as typed outcomes. With `setup_from_bal` (what `balgen verify` asks for balgen's
own fixtures) the blocks before each fixture's last, its setup, are applied from their BAL instead of
executed (their BAL's hash, their header and the state root the BAL's changes give are checked): geth's
`evm blocktest` and revme execute every block, so ethereumjs's time goes to the benchmark blocks.

Each run is its own process group, killed whole when its deadline passes or balgen is stopped
(Ctrl-C and the stop signals unwind through here as `KeyboardInterrupt`). The deadline grows with
the gas the fixtures' blocks use: ethereumjs is an interpreter in JavaScript, far slower than geth,
so `EthereumjsRuns` keeps one run per core going while balgen does its other checks.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..plumbing import processes
from ..plumbing.errors import BadInput
from ..plumbing.file_digests import file_sha256
from ..fixtures.reading import read_fixture_document
from ..plumbing.output_files import keep_text
from ..plumbing.toolchain import TOOLS_VARIABLE, cache_root, tools_bin
from .outcomes import Outcome, Verifier, last_line

ETHEREUMJS_VERSION = "10.1.3"
"""The `@ethereumjs/vm` version scripts/ethereumjs/package.json pins (its siblings at the same)."""

SCRIPT = "verify.mjs"
SETUP_FROM_BAL = "--setup-from-bal"
"""verify.mjs's switch: setup blocks (every block before a fixture's last) applied from their BAL."""

START_CHECKS_PASSED = "BALGEN_ETHEREUMJS_START_CHECKS_PASSED"
"""verify.mjs's switch: the start checks of its four replacements of ethereumjs code (the one-pass RLP,
the BAL's sort keys, the word handlers, the one-pass setup state: each compared with ethereumjs's own on
generated inputs) passed on these very files and this node before, so it installs them without running
the checks. They are deterministic, so a pass is kept per install (`start_checks_pass`) and each run
after the first is spared them: about 0.6 of a start's 1.2 CPU-s, measured on this 2-core machine
(2026-11-29, `node verify.mjs` with no files, 1.4-1.6 CPU-s with the checks and 0.5-0.7 without)."""

REPLACEMENTS = ("rlp", "bal_sort", "opcode_handlers", "setup_state")
"""The version record's fields that describe the four replacements `START_CHECKS_PASSED` is about."""

REPLACED_BY_ETHEREUMJS = "ethereumjs's"
"""How the version record's description of a replacement begins when ethereumjs's own code runs instead
(its check failed, or a BALGEN_ETHEREUMJS_OWN_* switch kept it)."""

NODE_OPTIONS = ("--max-semi-space-size=64", "--single-threaded")
"""How V8 runs verify.mjs; both change when memory is collected and code compiled, never what is computed.

`--max-semi-space-size=64`: the young generation up to 64 MB per semi-space (16 by default). verify.mjs
makes short-lived trie nodes, byte arrays and BigInts by the million, and a young generation that holds a
block's worth of them scavenges less often and promotes less to the old one (2026-11-29, four 60M fixtures
side by side, twice: 27.2 and 25.5 CPU-s by default, 25.5 and 24.5 with it; the collector's share of a
profile from 14.5% to 10.5%; 32 MB and 128 MB both cost more than 64).

`--single-threaded`: garbage collection and optimising compilation on the main thread, not on helper
threads. `balgen verify` runs one node per core (`EthereumjsRuns`' workers), so helper threads only take
a core from the other runs, and their hand-offs cost CPU of their own. Measured (2026-11-30, the same four
60M fixtures in one node, one after the other): 25.0, 24.1 and 24.9 CPU-s with helper threads, 20.3, 20.2
and 21.0 without, for 3-4% more wall time per run."""

BASE_SECONDS = 60.0
"""Node's start, the imports and the genesis states, before any block runs."""

SECONDS_PER_MGAS = 5.0
"""Deadline per million gas the fixtures' blocks use. The slowest rate measured (ethereumjs 10.1.3,
Node 20, 2 cores shared with a dozen other processes) was 0.36 Mgas/s of wall time: 86 s for
`serial_chain-max-30M` (31 Mgas, 12 s of CPU). Setup blocks that deploy contract sets run far faster
per gas (most of their gas is EIP-8037 state gas), so the deadline is generous there."""


@dataclass(frozen=True)
class EthereumjsInstall:
    """Where the verifier runs from: Node, and the folder with node_modules and verify.mjs."""

    node: Path
    folder: Path

    @property
    def script(self) -> Path:
        return self.folder / SCRIPT


@dataclass(frozen=True)
class GasSchedule:
    """The Amsterdam prices ethereumjs charges, which tell EIP-8038's revisions apart."""

    cold_sload: int
    create: int
    eips: tuple[int, ...]


@dataclass(frozen=True)
class VersionRecord:
    """The first line verify.mjs prints: what verified the fixtures."""

    version: str
    """e.g. `@ethereumjs/vm 10.1.3`."""
    amsterdam_gas: GasSchedule
    start_checks_passed: bool = False
    """The run checked its replacements (`START_CHECKS_PASSED`) and every one passed."""


@dataclass(frozen=True)
class EthereumjsOutcome(Outcome):
    """One fixture's outcome with ethereumjs's detail: what kind of disagreement, at which block."""

    kind: str | None = None
    """None when it passed; `bal` (the BAL ethereumjs built differs beyond balance entries), `fees`
    (only in balance entries: a gas-rule disagreement), `bal_hash`, `execution` (state root, receipts,
    gas used, or a transaction refused), `header`, `post_state`, `chain` (last block hash), `genesis`,
    `format` (a block that does not decode or hash as declared), `input`, `error` (ethereumjs threw)."""
    block: int | None = None
    """The block it failed at (1 is the first after genesis), or the number of blocks run."""
    first_difference: str | None = None
    """The first entry that differs: e.g. `0xADDR storageReads: execution [...], given [...]`."""


@dataclass(frozen=True)
class EthereumjsRun:
    """The version record and one outcome per fixture of the files given."""

    version: VersionRecord | None
    """None only when the run was killed before it printed one."""
    outcomes: list[EthereumjsOutcome]


def ethereumjs_folder() -> Path:
    """`tools/ethereumjs` beside the folder balgen takes its binaries from (`BALGEN_TOOLS`, or tools/bin)."""
    return tools_bin().parent / "ethereumjs"


NODE_RECORD = "node.json"
"""The node scripts/install-tools.sh installed ethereumjs with: its path (relative to the folder for the Node.js
release package-lock.json pins, absolute for PATH's), `--version` and sha256."""


def located_ethereumjs(node: Path | None = None, folder: Path | None = None) -> EthereumjsInstall:
    """
    The installed verifier (in `folder`, else `ethereumjs_folder()`) and the Node it runs under:
    `node` if given, else the one it was installed with (`NODE_RECORD`), checked to be that very
    file, not whichever `node` comes first on PATH (a script named node that prints passing
    verdicts would pass anything). `BadInput` in one line naming what is missing or changed.
    """
    folder = folder if folder is not None else ethereumjs_folder()
    if not ((folder / SCRIPT).is_file() and (folder / "node_modules" / "@ethereumjs" / "vm").is_dir()):
        configured = f" ({TOOLS_VARIABLE}={os.environ[TOOLS_VARIABLE]})" if os.environ.get(TOOLS_VARIABLE) else ""
        raise BadInput(f"ethereumjs: not installed in {folder}{configured} (run `make tools`, which needs npm)")
    found_node = node if node is not None else recorded_node(folder)
    if not (found_node.is_file() and os.access(found_node, os.X_OK)):
        raise BadInput(f"node: not found at {found_node} (the ethereumjs verifier needs Node >= 20)")
    return EthereumjsInstall(found_node, folder)


def recorded_node(folder: Path) -> Path:
    """The node `folder`'s ethereumjs was installed with, if it is still the file recorded (its sha256)."""
    record_path = folder / NODE_RECORD
    try:
        record = json.loads(record_path.read_text())
        path, digest = folder / record["path"], str(record["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        raise BadInput(
            f"ethereumjs: {record_path} does not say which node it was installed with (run `make tools`)"
        ) from None
    try:
        found = file_sha256(path)
    except OSError as error:
        raise BadInput(
            f"node: {path}, which ethereumjs was installed with, cannot be read ({error.strerror}); run `make tools`"
        ) from None
    if found != digest:
        raise BadInput(
            f"node: {path} is not the node ethereumjs was installed with (sha256 {found[:12]}…, "
            f"recorded {digest[:12]}…); run `make tools` to install with this one"
        )
    return path


def fixture_blocks_gas(fixture: Any) -> list[int]:
    """The gas each block of one fixture uses (its headers' or payloads' `gasUsed`), in order; none for a non-fixture."""
    if not isinstance(fixture, dict):
        return []
    headers = [int(block.get("blockHeader", {}).get("gasUsed", "0x0"), 16) for block in fixture.get("blocks") or []]
    payloads = [int(p["params"][0].get("gasUsed", "0x0"), 16) for p in fixture.get("engineNewPayloads") or []]
    return headers + payloads


WORK_PER_FILE_BYTE = 1
"""What a byte of a fixture file costs ethereumjs when its setup blocks are applied from their BAL, in gas
of an executed block: reading the file, decoding the setup blocks (each transaction's signature is
checked), writing their BAL into the state and its root. Measured (2026-11-29, verify.mjs, CPU seconds per
fixture): about 0.12 CPU-s per executed Mgas and 0.12 per MB of file, e.g. `extcodehash-greedy-60M`
(60 Mgas executed, 43 MB, 18.6 Ggas of setup) 12.3 s, `mixed_dep-max-group1-60M` (60 Mgas, 15 MB) 10.5 s.
The one-pass RLP, the WebAssembly keccak and the direct word conversions cut both kinds of work alike
(10:50 UTC, load 16, old and new run in turn: 12.8-14.4 to 9.3-11.3 s and 11.9-12.7 to 9.0-12.1 s), so a
byte still weighs a gas. The setup's own gas says little there: the contract sets' deployments are
141 Ggas of the suite's 145 and are applied in seconds."""


def work_from_bal(executed_gas: int, file_bytes: int) -> int:
    """ethereumjs's work on a file whose setup it applies from the BAL: the gas it executes, plus its bytes' worth."""
    return executed_gas + WORK_PER_FILE_BYTE * file_bytes


def block_gas(files: Iterable[Path]) -> int:
    """The gas every block of every fixture in `files` uses."""
    return sum(sum(fixture_blocks_gas(fixture)) for path in files for fixture in read_fixture_document(path).values())


BATCHES_PER_WORKER = 2
"""Runs per worker `batches` makes: enough that the workers end close together and the progress bar moves,
few enough that node's start (`MIN_BATCH_WORK`'s 0.7 CPU-s was 0.95 at load 15: 0.07 node, 0.37 loading
ethereumjs, 0.5 verify.mjs's start checks)
and its JIT's warm-up are paid a few times, not once per file. Measured (2026-11-29, the demo's 78 files,
each fixture's CPU-s from verify.mjs, batched by `work_from_bal` and handed to two workers in turn): two per
worker end within 3.2 CPU-s of each other and the later at 153.9 CPU-s; four (the value before) within 6.1,
at 157.2, with four more node starts (3.8 CPU-s); one within 14.8."""


MIN_BATCH_WORK = 30_000_000
"""The least work (in `work`'s gas) worth a batch of its own beyond one per worker: node's start, loading
ethereumjs and the start checks of verify.mjs's replacements cost about 0.7 CPU-s, a fifth of a batch this
size (about 0.1 CPU-s per Mgas). A suite filled at 1M gas (39 files, about 50M of work) had been cut in
eight batches, six of its 13 CPU-s in node starts; it now runs in two."""


def batch_count(files: Sequence[Path], work: Mapping[Path, int], workers: int) -> int:
    """How many batches `batches` makes: one per `MIN_BATCH_WORK` of work, at least one per worker, at most
    `BATCHES_PER_WORKER` per worker, never more than files."""
    worthwhile = -(-sum(work[file] for file in files) // MIN_BATCH_WORK)
    return min(len(files), max(1, workers) * BATCHES_PER_WORKER, max(max(1, workers), worthwhile))


def batches(files: Sequence[Path], work: Mapping[Path, int], workers: int) -> list[list[Path]]:
    """
    `files` in `batch_count` batches of about equal work (by `work`, per file: the gas ethereumjs
    executes, or `work_from_bal`): each file goes to the lightest batch so far, the most work first. The
    batches come heaviest first and each lists its files heaviest first, so the last runs to start are
    short ones.
    """
    count = batch_count(files, work, workers)
    filled: list[tuple[int, list[Path]]] = [(0, []) for _ in range(count)]
    for file in sorted(files, key=lambda file: -work[file]):
        lightest = min(range(count), key=lambda index: filled[index][0])
        total, members = filled[lightest]
        filled[lightest] = (total + work[file], [*members, file])
    return [members for _, members in sorted(filled, key=lambda batch: -batch[0]) if members]


def deadline_for(gas: int) -> float:
    """Seconds the run of fixtures whose blocks use `gas` may take before it is killed."""
    return BASE_SECONDS + SECONDS_PER_MGAS * gas / 1_000_000


def run_ethereumjs(
    files: Sequence[Path], install: EthereumjsInstall, deadline: float | None = None, setup_from_bal: bool = False
) -> EthereumjsRun:
    """
    verify.mjs on `files` (every fixture in each), within `deadline` seconds (by default
    `deadline_for` their block gas); `setup_from_bal`: each fixture's blocks before its last are
    applied from their BAL, not executed. Every fixture of every file gets an outcome: one ethereumjs did
    not report (it crashed or ran out of time) fails with what stopped it. Input verify.mjs refuses
    (exit 2) is `BadInput` with its line.
    """
    with EthereumjsRuns(install, workers=1) as runs:
        runs.submit(files, deadline, setup_from_bal=setup_from_bal)
        return next(iter(runs.finished()))


class EthereumjsRuns:
    """
    verify.mjs runs going on beside balgen's other work, up to `workers` at a time (ethereumjs is
    single-threaded and the slowest verifier by far, so it runs on every core while geth, revm and
    the engine import take their turns). Each run is one node process in its own process group;
    leaving the context (finished, an error, a stop signal) stops every run still going.
    """

    def __init__(self, install: EthereumjsInstall, workers: int) -> None:
        self.install = install
        self.workers = max(1, workers)
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="ethereumjs")
        self._futures: list[Future[EthereumjsRun]] = []
        self._running: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self._stopping = False
        self._start_checks_pass = start_checks_pass(install)

    def __enter__(self) -> EthereumjsRuns:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def submit(
        self,
        files: Sequence[Path],
        deadline: float | None = None,
        on_progress: Callable[[int], None] | None = None,
        names: Mapping[Path, Sequence[str]] | None = None,
        setup_from_bal: bool = False,
    ) -> None:
        """
        Queue a run of verify.mjs on `files`. `on_progress` is called (from a worker thread) with how
        many more of the run's outcomes are known: as verify.mjs prints each fixture's verdict, and at
        the run's end for the rest, so that every outcome counts once. With `names` (per file, the
        tests the caller has already read), the outcomes are those tests', and no file is read again
        here. `setup_from_bal`: see `run_ethereumjs`.
        """
        files = list(files)
        seconds = deadline_for(block_gas(files)) if deadline is None else deadline
        command = [str(self.install.node), *NODE_OPTIONS, str(self.install.script), *([SETUP_FROM_BAL] if setup_from_bal else []), *map(str, files)]
        self._futures.append(self._pool.submit(self._run, command, files, seconds, names, on_progress))

    def finished(self) -> list[EthereumjsRun]:
        """Every run's outcome, in the order submitted, once all have ended (`BadInput` of the first that raised)."""
        return [future.result() for future in self._futures]

    def close(self) -> None:
        """Stop every run still going (their process groups whole) and the workers."""
        with self._lock:
            self._stopping = True
            running = list(self._running)
        for future in self._futures:
            future.cancel()
        for process in running:
            processes.stop_group(process)
        self._pool.shutdown(wait=True)

    def _run(
        self, command: list[str], files: list[Path], deadline: float, names: Mapping[Path, Sequence[str]] | None,
        on_progress: Callable[[int], None] | None,
    ) -> EthereumjsRun:  # fmt: skip
        # Output to files, not pipes: nobody reads a run's output before it ends, and a long stack
        # trace must not fill a pipe and stall it. node finds its packages beside the script.
        with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
            with self._lock:
                if self._stopping:
                    raise _Stopped
                passed = self._start_checks_pass is not None and self._start_checks_pass.is_file()
                env = os.environ | {START_CHECKS_PASSED: "1" if passed else "0"}
                process = processes.start(command, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, env=env)
                self._running.add(process)
            printed = PrintedVerdicts(stdout.fileno(), names, on_progress)
            timed_out = False
            try:
                timed_out = not printed.follow_until_exit(process, deadline)
            finally:
                processes.stop_group(process)
                with self._lock:
                    self._running.discard(process)
            if self._stopping:
                raise _Stopped
            stdout.seek(0)
            stderr.seek(0)
            run = _read_run(
                files, stdout.read().decode(errors="replace"), stderr.read().decode(errors="replace"),
                None if timed_out else process.returncode, deadline, names,
            )  # fmt: skip
            if run.version is not None and run.version.start_checks_passed and self._start_checks_pass is not None:
                keep_text(self._start_checks_pass, "passed\n")
            printed.count_the_rest(len(run.outcomes))
            return run


class _Stopped(Exception):
    """A run ended by `EthereumjsRuns.close`: nobody waits for its outcome."""


PROGRESS_POLL = 0.5
"""Seconds between looks at a running verify.mjs's output for verdicts it has printed."""


class PrintedVerdicts:
    """
    The verdicts a running verify.mjs has printed (a JSON line per fixture after its version record),
    counted as they appear in its output file, for the progress bar: a batch of 60M fixtures runs a
    minute or more, and counted only at its end the bar stood still that long. Only the tests the
    caller asked for (`names`) count; the file is read with `pread`, which leaves the offset node
    writes at (the two share it) where it is.
    """

    def __init__(self, fd: int, names: Mapping[Path, Sequence[str]] | None, on_progress: Callable[[int], None] | None) -> None:
        self._fd, self._on_progress = fd, on_progress
        self._wanted = None if names is None else {(str(file), name) for file, tests in names.items() for name in tests}
        self._read = 0
        self._partial = b""
        self.counted = 0

    def follow_until_exit(self, process: subprocess.Popen[bytes], deadline: float) -> bool:
        """Wait for `process`, counting verdicts meanwhile; False if it was still running at `deadline` seconds."""
        ends = time.monotonic() + deadline
        while True:
            try:
                process.wait(timeout=max(0.0, min(PROGRESS_POLL, ends - time.monotonic())))
                return True
            except subprocess.TimeoutExpired:
                self._count_new()
                if time.monotonic() >= ends:
                    return False

    def count_the_rest(self, outcomes: int) -> None:
        """At the run's end: report the outcomes not yet counted (those printed last, and those of fixtures it never reached)."""
        self._report(max(0, outcomes - self.counted))

    def _count_new(self) -> None:
        if self._on_progress is None:
            return
        chunk = os.pread(self._fd, 1 << 20, self._read)
        self._read += len(chunk)
        *lines, self._partial = (self._partial + chunk).split(b"\n")
        self._report(sum(self._wanted_verdict(line) for line in lines))

    def _wanted_verdict(self, line: bytes) -> bool:
        try:
            record = json.loads(line)
        except ValueError:
            return False
        if not (isinstance(record, dict) and "name" in record and "file" in record):
            return False  # the version record, or a line that is no verdict (read again at the end)
        return self._wanted is None or (str(record["file"]), str(record["name"])) in self._wanted

    def _report(self, more: int) -> None:
        if more and self._on_progress is not None:
            self.counted += more
            self._on_progress(more)


def _read_run(
    files: Sequence[Path], stdout: str, stderr: str, returncode: int | None, deadline: float,
    names: Mapping[Path, Sequence[str]] | None,
) -> EthereumjsRun:  # fmt: skip
    """A run's outcomes from what verify.mjs printed; `returncode` None: killed at its `deadline`."""
    timed_out = returncode is None
    if returncode == 2:
        raise BadInput(f"ethereumjs verifier: {last_line(stderr)}")
    try:
        lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    except ValueError as error:
        raise BadInput(f"ethereumjs verifier printed a line that is not JSON ({error}); its verdicts cannot be read") from None
    has_version = bool(lines) and "verifier" in lines[0]
    if not has_version and not timed_out:
        raise BadInput(f"ethereumjs verifier printed no version record (exit {returncode}): {last_line(stderr)}")
    stopped = (
        f"not reported: ethereumjs ran out of its {deadline:.1f} s deadline and was killed" if timed_out
        else f"not reported: ethereumjs exited with code {returncode}: {last_line(stderr)}"
    )  # fmt: skip
    try:
        version = _version(lines[0]) if has_version else None
        return EthereumjsRun(version, _outcomes(files, lines[1:] if has_version else [], stopped, names))
    except (KeyError, TypeError, ValueError) as error:  # a field missing, or of another type
        raise BadInput(
            f"ethereumjs verifier printed a record without the fields verify.mjs writes ({type(error).__name__}: "
            f"{error}); its verdicts cannot be read"
        ) from None


def _version(record: dict[str, Any]) -> VersionRecord:
    gas = record["amsterdam_gas"]
    replacements = [str(record.get(name, REPLACED_BY_ETHEREUMJS)) for name in REPLACEMENTS]
    passed = record.get("start_checks") == "run" and not any(text.startswith(REPLACED_BY_ETHEREUMJS) for text in replacements)
    return VersionRecord(record["version"], GasSchedule(gas["cold_sload"], gas["create"], tuple(gas["eips"])), passed)


def start_checks_pass(install: EthereumjsInstall) -> Path | None:
    """
    Where a pass of verify.mjs's start checks on `install` is kept: named after the node binary's digest
    and the install's scripts and package-lock (which pins every package `npm ci` put beside them), so
    any change to what the checks compare runs them again. None where the install cannot be read.
    """
    digest = hashlib.sha256()
    try:
        digest.update(file_sha256(install.node).encode())
        for path in sorted([*install.folder.glob("*.mjs"), install.folder / "package-lock.json"]):
            content = path.read_bytes()
            digest.update(f"{path.name}\0{len(content)}\0".encode() + content)
    except OSError:
        return None
    return cache_root() / "ethereumjs" / f"start-checks-passed-{digest.hexdigest()[:32]}"


def _outcomes(
    files: Sequence[Path], reports: list[dict[str, Any]], stopped: str, names: Mapping[Path, Sequence[str]] | None
) -> list[EthereumjsOutcome]:
    """
    One outcome per fixture of `files` (or per test `names` lists), in file order; a fixture without
    a report fails with `stopped`.
    """
    for report in reports:
        if not isinstance(report["ok"], bool):  # "ok": "no" must not read as a pass
            raise TypeError(f"ok is {report['ok']!r}, not true or false")
    by_fixture = {(Path(report["file"]), report["name"]): report for report in reports}
    outcomes = []
    for path in files:
        for name in read_fixture_document(path) if names is None else names[path]:
            report = by_fixture.get((path, name))
            if report is None:
                outcomes.append(EthereumjsOutcome(Verifier.ETHEREUMJS, name, path, stopped, kind="error"))
                continue
            outcomes.append(
                EthereumjsOutcome(
                    Verifier.ETHEREUMJS,
                    name,
                    path,
                    None if report["ok"] else str(report["reason"]),
                    kind=report["kind"],
                    block=report["block"],
                    first_difference=report["first_difference"],
                )
            )
    return outcomes
