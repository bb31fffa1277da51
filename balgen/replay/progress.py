"""
What a person watching a replay sees: a progress bar while it runs (plain
lines when the output is not a terminal, so logs and CI stay readable) and
a summary table at the end.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape as markup_escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..plumbing.printable import escaped
from ..results.measurements import Distribution, Execution
from ..results.schema import FixtureResult, Verdict
from .discovery import FixtureRef, ReplayGroup, filled_with

_VERDICT_STYLE = {Verdict.PASSED: "green", Verdict.FAILED: "red", Verdict.NOT_RUN: "yellow"}


class ReplayProgress:
    """A `ReplayObserver` that shows the run's progress, one step per test."""

    def __init__(self, console: Console, total_tests: int) -> None:
        self.console = console
        self.total = total_tests
        self.done = 0
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._test_id = ""
        self._expected = 0
        self._sent = 0
        if console.is_terminal:
            self._bar = Progress(
                TextColumn("[bold]replay[/]"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                console=console,
                transient=True,
                # Redrawn on each event only: no timer thread wakes balgen while the client executes a block.
                auto_refresh=False,
            )
            self._task = self._bar.add_task("", total=total_tests)

    def __enter__(self) -> ReplayProgress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def group_started(self, group: ReplayGroup, client_version: str | None) -> None:
        """Say which client serves the next tests."""
        filler = filled_with(group.tests[0]) if group.tests else None
        self.console.print(
            f"genesis {group.genesis.genesis_hash[:18]}… ({group.genesis.network}, "
            f"{len(group.tests)} tests) on {client_version or 'the client'}; "
            f"filled with {filler or 'an unnamed t8n'}",
            highlight=False,
        )

    def test_started(self, ref: FixtureRef, executions: int) -> None:
        """Show the running test in the bar."""
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, description=f"{ref.test_id} (0/{executions})", refresh=True)
        self._expected = executions
        self._sent = 0
        self._test_id = ref.test_id

    def execution_done(self, execution: Execution) -> None:
        """Count the payloads of the running test."""
        self._sent += 1
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, description=f"{self._test_id} ({self._sent}/{self._expected})", refresh=True)

    def test_finished(self, result: FixtureResult) -> None:
        """Advance the bar; print failures (and, without a terminal, every test)."""
        self.done += 1
        if self._bar is not None and self._task is not None:
            self._bar.advance(self._task)
            self._bar.refresh()
        if result.passed and self._bar is not None:
            return
        line = f"[{self.done}/{self.total}] {shown_id(result)}: {result.verdict.value}"
        median_ms = result.median("new_payload_ns")
        if median_ms is not None:
            line += f", newPayload median {median_ms / 1e6:.2f} ms"
        if result.time_to_reject_ns is not None:
            line += f", time to reject median {result.time_to_reject_ns.median / 1e6:.2f} ms"
        if result.failure:
            line += f": {escaped(result.failure.splitlines()[0])}"
        self.console.print(line, style=_VERDICT_STYLE[result.verdict], highlight=False, soft_wrap=True, markup=False)


def _ms(distribution: Distribution | None, scale: float = 1e6) -> str:
    return "-" if distribution is None else f"{distribution.median / scale:.2f}"


def _spread(distribution: Distribution | None) -> str:
    if distribution is None:
        return "-"
    return f"{distribution.p5 / 1e6:.2f}–{distribution.p95 / 1e6:.2f}"


def _cv(distribution: Distribution | None) -> str:
    return "-" if distribution is None or distribution.cv is None else f"{distribution.cv * 100:.1f}%"


def shown_id(result: FixtureResult) -> str:
    """The test's id, with its mode in a modes run (`mixed_dep-max-group1-1M [sequential]`)."""
    return result.test_id if result.mode is None else f"{result.test_id} [{result.mode}]"


REJECT_COLUMN = "reject ms"
"""The median time the client took to answer INVALID to the test's lying twin of its block."""


def summary_table(results: Sequence[FixtureResult], title: str) -> Table:
    """One row per test: its verdict and the medians of the measured executions."""
    table = Table(title=title)
    columns = ("test", "txs", "gas used", "newPayload ms", "p5–p95 ms", "CV", "MGas/s", "FCU ms", "client total ms", "result")
    rejections = any(result.time_to_reject_ns is not None for result in results)
    if rejections:  # the invalid block's time to reject, beside the valid block's newPayload
        columns = (*columns[:4], REJECT_COLUMN, *columns[4:])
    for column in columns:
        table.add_column(column, justify="left" if column in ("test", "result") else "right")
    for result in results:
        stats = result.statistics
        verdict = (
            f"[{_VERDICT_STYLE[result.verdict]}]{result.verdict.value}"
            + (f": {markup_escape(escaped(result.failure.splitlines()[0]))}" if result.failure else "")
            + "[/]"
        )
        mgas = None if stats is None else stats.mgas_per_second
        table.add_row(
            shown_id(result),
            "-" if result.benchmark_transaction_count is None else str(result.benchmark_transaction_count),
            "-" if result.benchmark_gas_used is None else f"{result.benchmark_gas_used:,}",
            _ms(None if stats is None else stats.new_payload_ns),
            *([_ms(result.time_to_reject_ns)] if rejections else []),
            _spread(None if stats is None else stats.new_payload_ns),
            _cv(None if stats is None else stats.new_payload_ns),
            "-" if mgas is None else f"{mgas.median:.0f}",
            _ms(None if stats is None else stats.forkchoice_updated_ns),
            _ms(None if stats is None else stats.own_total_ms, scale=1.0),
            verdict,
        )
    return table
