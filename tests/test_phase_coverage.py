"""
What each phase of geth's and reth's own block timing covers (`kinds/<client>.py`'s `PHASES`), read from
their code: the citations hold at the pinned version, docs/bal-modes.md shows the tables as they are,
and the report's comparability follows them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from balgen.clients.kinds import KINDS
from balgen.clients.phase_coverage import PHASES
from balgen.plumbing.toolchain import GO_ETHEREUM_VERSION
from balgen.results.phase_comparability import phase_comparability
from balgen.results.phases import Phase
from balgen.results.schema import RunResult

ROOT = Path(__file__).resolve().parent.parent
GETH_SOURCES = (
    ROOT / "tools" / "src" / f"go-ethereum-{GO_ETHEREUM_VERSION}",
    Path.home() / "go" / "pkg" / "mod" / "github.com" / "ethereum" / f"go-ethereum@{GO_ETHEREUM_VERSION}",
)
GETH_LINES = {
    ("core/state_processor_parallel.go", 172): "wg.Go(func() error {",
    ("core/state_processor_parallel.go", 177): "stateApply = time.Since(start)",
    ("core/state_processor_parallel.go", 181): "stateHash = time.Since(start)",
    ("core/state_processor_parallel.go", 305): "if err := wg.Wait(); err != nil {",
    ("core/state_processor_parallel.go", 323): 'log.Debug("Parallel block execution"',
    ("core/blockchain.go", 2461): "stats.Execution = ptime - (statedb.AccountReads + statedb.StorageReads + statedb.CodeReads)",
    ("core/blockchain_stats.go", 209): "StateReadMs: durationToMs(s.AccountReads + s.StorageReads + s.CodeReads)",
    ("core/blockchain_stats.go", 210): "StateHashMs: durationToMs(s.AccountHashes + s.AccountUpdates + s.StorageUpdates)",
    ("core/state/statedb_eip_7928.go", 129): "s.AccountReads += time.Duration(ba.accountReads.Load())",
    ("core/block_validator.go", 200): "statedb.IntermediateRoot(rules)",
}
"""Lines geth's table cites, with what they must say (go-ethereum v1.17.10)."""


def _run(client: str, mode: str | None) -> RunResult:
    from balgen.results.schema import FixtureResult, Verdict

    test = FixtureResult(
        test_id="t", fixture_name="t", path="f.json", format="blockchain_test_engine_x", genesis_hash="0x" + "00" * 32,
        verdict=Verdict.PASSED, failure=None, mode=mode,
    )  # fmt: skip
    return RunResult(
        label="r", balgen_version="0", started_at="2026-01-01T00:00:00+00:00", fixtures_path="f", keyword=None,
        warmup=1, repeat=5, cold=False, fail_fast=False, target={"kind": "managed", "client": client}, tests=[test],
    )  # fmt: skip


@pytest.mark.skipif(not any(path.is_dir() for path in GETH_SOURCES), reason="needs go-ethereum's source (make tools)")
def test_geths_table_cites_lines_that_say_what_it_claims() -> None:
    source = next(path for path in GETH_SOURCES if path.is_dir())
    for (file, line), text in GETH_LINES.items():
        assert text in (source / file).read_text().splitlines()[line - 1], f"{file}:{line}"


def test_every_built_in_mode_of_geth_and_reth_has_a_path_and_every_path_every_phase() -> None:
    for name in ("geth", "reth"):
        table = KINDS[name].phases
        assert table is not None
        assert set(table.mode_paths) == set(KINDS[name].modes), name
        for path in table.paths.values():
            assert set(path) == set(PHASES) == {phase.value for phase in Phase}


def test_the_docs_show_each_table_as_the_code_has_it() -> None:
    text = (ROOT / "docs" / "bal-modes.md").read_text()
    for name in ("geth", "reth"):
        table = KINDS[name].phases
        assert table is not None
        for path in table.paths.values():
            for coverage in path.values():
                assert f"{coverage.covers}" in text and f"(`{coverage.source}`)" in text, (name, coverage.work)


def test_a_phase_is_compared_only_between_modes_on_which_it_times_the_same_work() -> None:
    sequential, full, nobatchio, twin = (_run("geth", mode) for mode in ("sequential", "full", "nobatchio", "full#2"))
    assert not phase_comparability(sequential, full, Phase.STATE_HASH).comparable
    assert phase_comparability(sequential, full, Phase.COMMIT).comparable
    assert all(phase_comparability(full, nobatchio, phase).comparable for phase in Phase), "one path: the same work"
    assert all(phase_comparability(full, twin, phase).comparable for phase in Phase)
    assert all(phase_comparability(_run("reth", "sequential"), _run("reth", "full"), phase).comparable for phase in Phase)
    mine = phase_comparability(sequential, _run("geth", "mine"), Phase.EXECUTION)
    assert not mine.comparable and "mode mine of geth is not known" in (mine.reason or "")
    across = phase_comparability(sequential, _run("reth", "sequential"), Phase.COMMIT)
    assert not across.comparable and "different clients" in (across.reason or "")
