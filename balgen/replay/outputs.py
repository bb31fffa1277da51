"""
The files of a run, rewritten after every test.

`results.json` (the `RunResult` model), `executions.csv` (one row per
payload execution) and benchmarkoor-fetch's `runtimes.csv` / `mgas_s.csv`
(one row per passed test, columns exactly as benchmarkoor-fetch 0.3.2
writes them, so scripts reading its output read these too). Each file is
replaced atomically (temporary file, fsync, rename) once a test is over:
a run killed half-way leaves every completed test on disk and no torn
file.
"""

from __future__ import annotations

import contextlib
import csv
import io
import statistics
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic_core import PydanticSerializationError

from ..plumbing.errors import BadInput
from ..plumbing.output_files import check_not_a_dangling_link, check_writable, write_text_atomically
from ..plumbing.printable import without_surrogates
from ..results.measurements import Execution, Role
from ..results.schema import RESULTS_JSON, FixtureResult, RunResult, RunState
from .discovery import FixtureRef, ReplayGroup

EXECUTIONS_CSV = "executions.csv"
RUNTIMES_CSV = "runtimes.csv"
MGAS_S_CSV = "mgas_s.csv"

RUNTIMES_COLUMNS = ("client_name", "fixture_name", "test_runtime_ms")
MGAS_S_COLUMNS = ("client_name", "fixture_name", "test_mgas_s")
EXECUTION_COLUMNS = (
    "label",
    "test_id",
    "role",
    "repetition",
    "payload_index",
    "block_number",
    "block_hash",
    "gas_used",
    "transaction_count",
    "status",
    "validation_error",
    "new_payload_ns",
    "forkchoice_updated_ns",
    "mgas_s",
    "known_before_send",
    "restarted_before",
    "page_cache_dropped",
    "own_execution_ms",
    "own_state_read_ms",
    "own_state_hash_ms",
    "own_commit_ms",
    "own_total_ms",
    "own_mgas_s",
    "mode",
    "round",
    "order_in_round",
    "variant",
    "own_ms",
    "overhead_ms",
    "within_margin",
    "intake_ms",
    "other_cpu_ms",
    "disturbed",
)
"""The columns from `mode` on are a modes run's and the agreement check's (docs/replay.md, "Modes and the method"),
the last two the other load during the execution (docs/replay.md, "The noise floor")."""


def utc_now() -> str:
    """The current time, ISO 8601 in UTC, to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def default_output(label: str, root: Path = Path("results")) -> Path:
    """`results/<timestamp>-<label>/`, the timestamp in UTC."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return root / f"{stamp}-{label}"


class ResultsNotWritten(Exception):
    """A result file could not be written (disk full, folder removed or read-only)."""


def prepare_output(path: Path) -> Path:
    """
    Create the output folder; refuse one that already holds a run, so that
    no earlier result is overwritten by accident, and one that takes no files.
    """
    check_not_a_dangling_link(path)
    if path.exists() and not path.is_dir():
        raise BadInput(f"--output {path}: is a file")
    if (path / RESULTS_JSON).exists():
        raise BadInput(f"--output {path}: already holds a run ({RESULTS_JSON}); choose another folder")
    existed = path.is_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BadInput(f"--output {path}: cannot be created ({error.strerror})") from None
    try:
        check_writable(path)
    except BadInput:
        if not existed:
            with contextlib.suppress(OSError):
                path.rmdir()  # leave no folder behind for a rejected command
        raise
    return path


def client_name(client_version: str | None, fallback: str) -> str:
    """
    benchmarkoor's `client_name`: the client's name, the first part of its
    `web3_clientVersion` ("Geth/v1.17.8-stable/…" gives "geth").
    """
    if not client_version:
        return fallback
    return client_version.split("/", 1)[0].strip().lower() or fallback


def _csv_text(columns: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue()


def _blank(value: object) -> object:
    return "" if value is None else value


def execution_row(label: str, execution: Execution) -> list[object]:
    """One `executions.csv` row."""
    geth = execution.own_timing
    mgas = execution.mgas_per_second
    return [
        label,
        execution.test_id,
        execution.role.value,
        execution.repetition,
        execution.payload_index,
        execution.block_number,
        execution.block_hash,
        execution.gas_used,
        execution.transaction_count,
        execution.status,
        _blank(execution.validation_error),
        execution.new_payload_ns,
        _blank(execution.forkchoice_updated_ns),
        "" if mgas is None else f"{mgas:.3f}",
        int(execution.known_before_send),
        int(execution.restarted_before),
        int(execution.page_cache_dropped),
        *(
            [""] * 6
            if geth is None
            else [
                geth.execution_ms,
                geth.state_read_ms,
                geth.state_hash_ms,
                geth.commit_ms,
                geth.total_ms,
                geth.mgas_per_sec,
            ]
        ),
        _blank(execution.mode),
        _blank(execution.round),
        _blank(execution.order_in_round),
        _blank(execution.variant),
        "" if (own := execution.own_ms) is None else f"{own:.3f}",
        "" if (overhead := execution.overhead_ms) is None else f"{overhead:.3f}",
        "" if (within := execution.within_margin) is None else int(within),
        "" if (intake := execution.intake_ms) is None else f"{intake:.3f}",
        "" if (other := execution.other_cpu_ms) is None else f"{other:.1f}",
        "" if (disturbed := execution.disturbed) is None else int(disturbed),
    ]


def test_runtime_ms(result: FixtureResult) -> float | None:
    """
    benchmarkoor's per-test runtime: the benchmark step's newPayload plus
    forkchoiceUpdated time, here the median over the measured executions.
    """
    totals = [
        e.new_payload_ns + (e.forkchoice_updated_ns or 0)
        for e in result.executions
        if e.role is Role.MEASURED
    ]
    return statistics.median(totals) / 1e6 if totals else None


class RunWriter:
    """Keeps the run's results and rewrites its files after each test."""

    def __init__(self, output: Path, run: RunResult) -> None:
        self.output = output
        self.run = run
        self._client_names: dict[tuple[str, str | None], str] = {}
        self._group_client: str | None = None
        self.write()

    # -- ReplayObserver --------------------------------------------------

    def group_started(self, group: ReplayGroup, client_version: str | None) -> None:
        """Remember the client of the group, for results.json and `client_name`."""
        del group
        if client_version and client_version not in self.run.client_versions:
            self.run.client_versions.append(client_version)
        self._group_client = client_version

    def test_started(self, ref: FixtureRef, executions: int) -> None:
        """Nothing to write until the test is over."""
        del ref, executions

    def execution_done(self, execution: Execution) -> None:
        """Nothing to write until the test is over."""
        del execution

    def test_finished(self, result: FixtureResult) -> None:
        """Add the test and rewrite every file."""
        name = client_name(self._group_client, self.run.label)
        # A modes run has a row per test and mode: the mode goes into the client's name, as benchmarkoor
        # names one client instance per configuration.
        self._client_names[(result.test_id, result.mode)] = name if result.mode is None else f"{name}-{result.mode}"
        self.run.tests.append(result)
        self.write()

    # -- files -------------------------------------------------------------

    def finish(self, state: RunState) -> None:
        """Mark the run complete, interrupted or stopped, and write it a last time."""
        self.run.state = state
        self.run.finished_at = utc_now()
        self.write()

    def write(self) -> None:
        """Replace the four files with the current results, each atomically."""
        try:
            self._write_files()
        except OSError as error:
            raise ResultsNotWritten(
                f"cannot write the results to {self.output} ({error.strerror or error})"
            ) from None

    def _write_files(self) -> None:
        try:
            results_json = self.run.model_dump_json(indent=1)
        except PydanticSerializationError:  # a lone surrogate (a non-UTF-8 file name, a client's message)
            self.run = RunResult.model_validate(without_surrogates(self.run.model_dump()))
            results_json = self.run.model_dump_json(indent=1)
        write_text_atomically(self.output / RESULTS_JSON, results_json + "\n")
        write_text_atomically(
            self.output / EXECUTIONS_CSV,
            _csv_text(
                EXECUTION_COLUMNS,
                (execution_row(self.run.label, e) for t in self.run.tests for e in t.executions),
            ),
        )
        measured = [
            (t, runtime, t.median("mgas_per_second"))
            for t in self.run.tests
            if t.passed and (runtime := test_runtime_ms(t)) is not None
        ]
        write_text_atomically(
            self.output / RUNTIMES_CSV,
            _csv_text(
                RUNTIMES_COLUMNS,
                ([self._client_names.get((t.test_id, t.mode), self.run.label), t.fixture_name, runtime] for t, runtime, _ in measured),
            ),
        )
        write_text_atomically(
            self.output / MGAS_S_CSV,
            _csv_text(
                MGAS_S_COLUMNS,
                ([self._client_names.get((t.test_id, t.mode), self.run.label), t.fixture_name, mgas] for t, _, mgas in measured),
            ),
        )
