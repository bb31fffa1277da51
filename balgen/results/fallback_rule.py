"""
A per-block choice between sequential and parallel execution, read from the block's access list alone.

A client that executes every block with an access list in parallel gains on
blocks of independent work and can lose on others (reth's `max` fills in
docs/bal-modes.md). The access list and the transactions are all a client
has before it executes (`balgen.analysis.bal_features`), so the rule is a
threshold on one of those features: parallel when the feature is on one
side of it, sequential on the other (a decision stump; "always parallel" and
"always sequential" are the stumps without a threshold). It is fitted to a
modes run's own `sequential` and `full` times, choosing the feature,
threshold and side that give the least total time, ties to the simplest
(always parallel first, then the feature listed first).

A rule fitted to the tests it is judged on flatters itself, so each test's
choice here is made by the rule fitted to the *other* families' tests (leave
one family out): a family whose blocks behave like no other family's is
where the rule does not generalise, and that family's loss shows it.
The figures are the run's own medians; with a handful of families per
client the rule rests on little data, which the table says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..analysis.bal_features import BalFeatures
from .schema import RunResult

SEQUENTIAL = "sequential"
PARALLEL = "full"
"""The modes the rule chooses between: geth's and reth's names for sequential and parallel execution."""

FEATURES = tuple(BalFeatures.model_fields)
"""The features a rule may use, in order of preference on ties."""


@dataclass(frozen=True)
class MeasuredBlock:
    """One test's block: its features, and its median time in each of the two modes."""

    test_id: str
    family: str
    gas: int
    features: BalFeatures
    sequential_s: float
    parallel_s: float


@dataclass(frozen=True)
class Stump:
    """Parallel when `feature` is above `threshold` (or not above, with `parallel_above` False); None: a constant."""

    feature: str | None
    threshold: float
    parallel_above: bool

    def parallel(self, features: BalFeatures) -> bool:
        """Whether the rule executes a block of these features in parallel."""
        if self.feature is None:
            return self.parallel_above
        return (getattr(features, self.feature) > self.threshold) == self.parallel_above

    def describe(self) -> str:
        """`parallel if write_overlap <= 0.25`, or `always parallel`."""
        if self.feature is None:
            return "always parallel" if self.parallel_above else "always sequential"
        return f"parallel if {self.feature} {'>' if self.parallel_above else '<='} {self.threshold:g}"


ALWAYS_PARALLEL = Stump(None, 0.0, True)
ALWAYS_SEQUENTIAL = Stump(None, 0.0, False)


def family_of(test_id: str) -> str:
    """`mixed_dep-max-group1-30M` -> `mixed_dep`: balgen's test ids start with the family."""
    return test_id.split("-", 1)[0]


def chosen_seconds(rule: Stump, blocks: Sequence[MeasuredBlock]) -> float:
    """The total time of `blocks`, each in the mode `rule` chooses."""
    return sum(block.parallel_s if rule.parallel(block.features) else block.sequential_s for block in blocks)


def candidate_rules(blocks: Sequence[MeasuredBlock]) -> list[Stump]:
    """Both constants, then every feature's thresholds between two of its values in `blocks`, both sides."""
    rules = [ALWAYS_PARALLEL, ALWAYS_SEQUENTIAL]
    for feature in FEATURES:
        values = sorted({float(getattr(block.features, feature)) for block in blocks})
        for low, high in zip(values, values[1:]):
            threshold = round((low + high) / 2, 6)
            rules += [Stump(feature, threshold, True), Stump(feature, threshold, False)]
    return rules


def fit_rule(blocks: Sequence[MeasuredBlock]) -> Stump:
    """The candidate rule with the least total time over `blocks` (the first such: the simplest)."""
    best, best_seconds = ALWAYS_PARALLEL, chosen_seconds(ALWAYS_PARALLEL, blocks)
    for rule in candidate_rules(blocks):
        seconds = chosen_seconds(rule, blocks)
        if seconds < best_seconds * (1 - 1e-9):
            best, best_seconds = rule, seconds
    return best


Shown = tuple[str, float | str]
"""A figure as the reports show it, and the value a table sorts it by."""

TEST_COLUMNS = ("test", "rule (fitted without its family)", "chooses", "sequential ms", "full ms", "loss")
AGGREGATE_COLUMNS = ("policy", "MGas/s", "vs always parallel", "vs always sequential", "worst test", "its loss")
FAMILY_COLUMNS = ("family left out", "rule the others give", "tests", "family's loss")
"""The columns of the three tables, in the text report and on the page alike (`FallbackTable.sections`)."""


class FallbackRow(BaseModel):
    """One test: what the rule fitted without its family chooses, and what each mode took."""

    model_config = ConfigDict(frozen=True)

    test_id: str
    family: str
    rule: str
    """The rule fitted to the other families' tests."""
    choice: str
    sequential_ms: float
    parallel_ms: float
    loss_pct: float
    """How much longer the chosen mode took than the faster of the two (0 when the rule chose it)."""

    def shown(self) -> list[Shown]:
        return [(self.test_id, self.test_id), (self.rule, self.rule), (self.choice, self.choice),
                (f"{self.sequential_ms:.2f}", self.sequential_ms), (f"{self.parallel_ms:.2f}", self.parallel_ms),
                (f"{self.loss_pct:.1f}%", self.loss_pct)]  # fmt: skip


class FallbackAggregate(BaseModel):
    """One policy over the whole run: its aggregate throughput and its worst test."""

    model_config = ConfigDict(frozen=True)

    policy: str
    mgas_per_s: float
    against_parallel_pct: float
    against_sequential_pct: float
    worst_test: str | None
    worst_loss_pct: float
    """The largest loss of any test against the faster of its two modes."""

    def shown(self) -> list[Shown]:
        return [(self.policy, self.policy), (f"{self.mgas_per_s:.1f}", self.mgas_per_s),
                (f"{self.against_parallel_pct:+.1f}%", self.against_parallel_pct),
                (f"{self.against_sequential_pct:+.1f}%", self.against_sequential_pct),
                (self.worst_test or "-", self.worst_test or ""), (f"{self.worst_loss_pct:.1f}%", self.worst_loss_pct)]  # fmt: skip


class FamilyHeldOut(BaseModel):
    """A family left out of the fit: the rule the others gave, and what it cost that family."""

    model_config = ConfigDict(frozen=True)

    family: str
    rule: str
    tests: int
    loss_pct: float
    """The family's total time under that rule against the faster mode per test (0: every choice right)."""

    def shown(self) -> list[Shown]:
        return [(self.family, self.family), (self.rule, self.rule), (str(self.tests), self.tests),
                (f"{self.loss_pct:.1f}%", self.loss_pct)]


class FallbackTable(BaseModel):
    """The fallback rule on one client's modes run, as the report (and its HTML page) shows it."""

    model_config = ConfigDict(frozen=True)

    client: str
    run: str
    rule_on_all: str
    """The rule fitted to every test of the run (the one a client would ship)."""
    families: list[FamilyHeldOut]
    rows: list[FallbackRow]
    aggregates: list[FallbackAggregate]
    notes: list[str]

    def sections(self) -> list[tuple[str, tuple[str, ...], list[list[Shown]]]]:
        """
        (title, columns, rows) of its three tables, as the text report and the
        page both show them: per test, the rule's choice; per policy, the
        aggregate against always parallel and always sequential, with its worst
        test; per family left out of the fit, its loss (where the rule does not
        generalise).
        """
        who = f"{self.client}, {self.run}"
        return [
            (f"Fallback rule from the access list alone ({who}): per test, each family's rule fitted without it",
             TEST_COLUMNS, [row.shown() for row in self.rows]),
            (f"Fallback rule ({who}): aggregate; fitted to every test: {self.rule_on_all}; " + "; ".join(self.notes),
             AGGREGATE_COLUMNS, [row.shown() for row in self.aggregates]),
            (f"Fallback rule ({who}): where it does not generalise (a family's loss when left out of the fit)",
             FAMILY_COLUMNS, [row.shown() for row in self.families]),
        ]  # fmt: skip


def _loss(chosen: float, best: float) -> float:
    return round((chosen / best - 1) * 100, 1) if best > 0 else 0.0


def _aggregate(policy: str, seconds: Sequence[float], blocks: Sequence[MeasuredBlock]) -> FallbackAggregate:
    """A policy's aggregate MGas/s over the blocks, against the two constants, and its worst test."""
    gas = sum(block.gas for block in blocks)
    total = sum(seconds)
    parallel = sum(block.parallel_s for block in blocks)
    sequential = sum(block.sequential_s for block in blocks)
    losses = [(_loss(s, min(b.parallel_s, b.sequential_s)), b.test_id) for s, b in zip(seconds, blocks)]
    worst_loss, worst_test = max(losses, key=lambda pair: (pair[0], pair[1]))
    return FallbackAggregate(
        policy=policy,
        mgas_per_s=round(gas / total / 1e6, 1),
        against_parallel_pct=round((parallel / total - 1) * 100, 1),
        against_sequential_pct=round((sequential / total - 1) * 100, 1),
        worst_test=worst_test if worst_loss > 0 else None,
        worst_loss_pct=worst_loss,
    )


def fallback_table(client: str, run: str, blocks: Sequence[MeasuredBlock]) -> FallbackTable:
    """The rule evaluated leaving one family out at a time, on `blocks` (one client's modes run)."""
    families = sorted({block.family for block in blocks})
    notes = [f"{len(blocks)} tests in {len(families)} families: a rule fitted to this little data is a lead, not a policy"]
    held_out: dict[str, Stump] = {}
    for family in families:
        others = [block for block in blocks if block.family != family]
        held_out[family] = fit_rule(others) if others else ALWAYS_PARALLEL
    if len(families) < 2:
        notes.append("one family only: nothing to fit without it, its choice is always parallel")
    rows, chosen = [], []
    for block in blocks:
        rule = held_out[block.family]
        parallel = rule.parallel(block.features)
        seconds = block.parallel_s if parallel else block.sequential_s
        chosen.append(seconds)
        rows.append(
            FallbackRow(
                test_id=block.test_id, family=block.family, rule=rule.describe(),
                choice="parallel" if parallel else "sequential",
                sequential_ms=round(block.sequential_s * 1e3, 2), parallel_ms=round(block.parallel_s * 1e3, 2),
                loss_pct=_loss(seconds, min(block.parallel_s, block.sequential_s)),
            )
        )  # fmt: skip
    held = [
        FamilyHeldOut(
            family=family, rule=held_out[family].describe(), tests=len(members),
            loss_pct=_loss(chosen_seconds(held_out[family], members), sum(min(b.parallel_s, b.sequential_s) for b in members)),
        )
        for family in families
        if (members := [block for block in blocks if block.family == family])
    ]  # fmt: skip
    aggregates = [
        _aggregate("rule (each family left out of its fit)", chosen, blocks),
        _aggregate("always parallel", [block.parallel_s for block in blocks], blocks),
        _aggregate("always sequential", [block.sequential_s for block in blocks], blocks),
        _aggregate("faster mode per test (hindsight)", [min(b.parallel_s, b.sequential_s) for b in blocks], blocks),
    ]
    return FallbackTable(
        client=client, run=run, rule_on_all=fit_rule(blocks).describe(), families=held, rows=rows,
        aggregates=aggregates, notes=notes,
    )  # fmt: skip


def measured_blocks(sequential: RunResult, parallel: RunResult) -> list[MeasuredBlock]:
    """The tests both runs passed with a median time and the block's features, in `parallel`'s order."""
    def timed(result: RunResult) -> dict[str, tuple[int, float, BalFeatures | None]]:
        return {
            test.test_id: (test.benchmark_gas_used or 0, test.statistics.new_payload_ns.median / 1e9, test.bal_features)
            for test in result.tests
            if test.statistics is not None and test.statistics.new_payload_ns is not None and test.verdict == "passed"
        }

    before, after = timed(sequential), timed(parallel)
    blocks = []
    for test_id, (gas, parallel_s, features) in after.items():
        if test_id in before and features is not None and gas:
            blocks.append(MeasuredBlock(test_id, family_of(test_id), gas, features, before[test_id][1], parallel_s))
    return blocks


def fallback_tables(runs: Sequence[tuple[Path, RunResult]]) -> list[FallbackTable]:
    """One table per modes run among `runs` (each split per mode, with its path) that has `sequential` and `full`."""
    by_path: dict[Path, dict[str, RunResult]] = {}
    for path, result in runs:
        mode = next((test.mode for test in result.tests if test.mode), None)
        if mode is not None:
            by_path.setdefault(path, {})[mode] = result
    tables = []
    for path, modes in by_path.items():
        if SEQUENTIAL in modes and PARALLEL in modes:
            blocks = measured_blocks(modes[SEQUENTIAL], modes[PARALLEL])
            if blocks:
                client = str(modes[PARALLEL].target.get("client", "client"))
                tables.append(fallback_table(client, str(path), blocks))
    return tables
