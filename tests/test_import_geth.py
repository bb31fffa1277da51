"""
Proof with real parts: filled fixtures are accepted by the pinned geth.

The default suite at 1M gas (every family and fill level) on Amsterdam with
setup blocks, and one fixture per family for the other forks and the genesis
placement, are filled; then `balgen replay` sends the shared
`blockchain_test_engine_x` group to one geth node (with the contract sets set
up by blocks; those in the genesis, each a group of its own:
tests/test_code_sets.py) and a `blockchain_test_engine` fixture
(state_root) to a node of its own, through the JWT-authenticated
Engine API with the fixture's payload versions, each payload VALID and the head
at `lastblockhash`; and both EVMs, geth's `evm blocktest` and revm's `revme
blockchaintest`, pass every `blockchain_test`.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from balgen.commands.replay import run_replay
from balgen.plumbing.toolchain import pinned_revme
from balgen.commands.verify import run_verify

from fill_runs import shared_sample_fill, shared_suite_fill

pytestmark = pytest.mark.integration

CASES = [("Amsterdam", "blocks"), ("Amsterdam", "genesis"), ("Osaka", "blocks"), ("Prague", "blocks")]


@pytest.fixture(scope="module", params=CASES, ids=[f"{fork}-{setup}" for fork, setup in CASES])
def filled(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, Path]:
    """The whole suite on the default (Amsterdam, blocks), one fixture per family elsewhere (`one_fixture_per_family`)."""
    fork, setup = request.param
    if (fork, setup) == CASES[0]:
        completed, output = shared_suite_fill(tmp_path_factory, fork)
    else:
        completed, output = shared_sample_fill(tmp_path_factory, fork, *(["--setup", setup] if setup != "blocks" else []))
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return fork, setup, output


def fixtures_of(folder: Path) -> list[tuple[str, dict]]:
    entries = []
    for path in sorted(folder.glob("for_*/**/*.json")):
        entries.extend(json.loads(path.read_text()).items())
    return entries


def replayed(path: Path, output: Path, *formats: str) -> dict:
    """`balgen replay` of `path` once per test (no repeats, no wait for geth's start-up work), and its results.json
    (imports, not timings, are tested)."""
    code = run_replay(
        [str(path), *formats, "--warmup", "0", "--repeat", "1", "--agreement", "record", "--settle-limit", "0", "--output", str(output)]
    )
    results = json.loads((output / "results.json").read_text())
    failures = [(t["test_id"], t["failure"]) for t in results["tests"] if t["verdict"] != "passed"]
    assert code == 0 and not failures, failures
    return results


def one_per_family(names: list[str]) -> list[str]:
    """The first fixture of each workload family (the name part before the first '-')."""
    firsts: dict[str, str] = {}
    for name in sorted(names):
        firsts.setdefault(name.split("-", 1)[0], name)
    return sorted(firsts.values())


def test_engine_fixtures_import_valid_on_their_own_genesis(filled: tuple[str, str, Path], tmp_path: Path) -> None:
    # One node per fixture is costly, and what an engine fixture adds to the
    # tests around it is the Engine API on its own genesis: each fixture's own
    # genesis and blocks pass both EVMs in the blockchain_test of the same
    # test (below), and every payload imports through engine_x (below; the
    # contract sets placed in the genesis, each a group of its own, in
    # tests/test_code_sets.py). One fixture per fork and placement, state_root
    # (a genesis with storage, and its setup blocks), proves the own-genesis
    # form. The contract sets set up by blocks, the default suite's greedy
    # ones of about 300 contracts among them, import on engine_x's shared
    # node (below), not on a node of their own genesis each.
    _, _, output = filled
    fixtures = dict(fixtures_of(output / "blockchain_tests_engine"))
    assert len(fixtures) == len(fixtures_of(output / "blockchain_tests")) >= 6
    firsts = one_per_family(list(fixtures))
    chosen = [next(n for n in firsts if n.startswith("state_root"))]
    results = replayed(output, tmp_path / "run", "--format", "engine", "-k", " or ".join(chosen))
    assert [t["test_id"] for t in results["tests"]] == chosen
    assert len({t["genesis_hash"] for t in results["tests"]}) == len(chosen), "one genesis each"
    for test in results["tests"]:
        assert test["format"] == "blockchain_test_engine"
        phases = [p["phase"] for p in fixtures[test["test_id"]]["engineNewPayloads"]]
        assert phases[-1] == "testing" and phases.count("testing") == 1
        statuses = [e["status"] for e in test["executions"]]
        assert statuses == ["VALID"] * len(phases), statuses


def test_engine_x_group_imports_valid_on_one_node(filled: tuple[str, str, Path], tmp_path: Path) -> None:
    # Set up by blocks, the contract sets share the group, their setup rolled back like any test's; placed
    # in the genesis each is a group of its own, replayed in tests/test_code_sets.py.
    fork, setup, output = filled
    root = output / "blockchain_tests_engine_x"
    shared = setup == "blocks"
    fixtures = [(name, fixture) for name, fixture in fixtures_of(root) if shared or not name.startswith("extcode")]
    assert any(name.startswith("extcode") for name, _ in fixtures) == shared
    if (fork, setup) == CASES[0]:  # greedy sets too: about 300 contracts each, set up by blocks
        assert any(name.startswith("extcode") and "-greedy-" in name for name, _ in fixtures)
    (group_file,) = [root / "pre_alloc" / f"{hash_}.json" for hash_ in {f["preHash"] for _, f in fixtures}]
    pre_alloc = json.loads(group_file.read_text())
    assert sorted(pre_alloc["testIds"]) == sorted(name for name, _ in fixtures)
    results = replayed(root, tmp_path / "run", *([] if shared else ["-k", "not extcode"]))
    group_genesis = {f["engineNewPayloads"][0]["params"][0]["parentHash"] for _, f in fixtures}
    assert {t["genesis_hash"] for t in results["tests"]} == group_genesis and len(group_genesis) == 1
    assert sorted(t["test_id"] for t in results["tests"]) == sorted(pre_alloc["testIds"])


@pytest.mark.skipif(not pinned_revme().is_file(), reason="revme not built (make tools needs cargo)")
def test_every_evm_passes_every_blockchain_test(filled: tuple[str, str, Path]) -> None:
    """geth's `evm blocktest`, revm's `revme blockchaintest` and ethereumjs, through `balgen verify`, on
    every `blockchain_test` of every fork and placement (the engine import is the replays above)."""
    *_, output = filled
    count = len(fixtures_of(output / "blockchain_tests"))
    assert count == len(fixtures_of(output / "blockchain_tests_engine")) >= 6
    printed = io.StringIO()
    code = run_verify([str(output), "--without", "engine"], console=Console(file=printed, width=1000))
    assert code == 0, printed.getvalue()[-3000:]
    fork, *_ = filled
    # balgen's ethereumjs verifier builds Amsterdam chains only: a fixture of another fork it cannot judge
    ethereumjs = f"{count}/{count}" if fork == "Amsterdam" else f"0/0 ({count} not applicable)"
    summary = f"{count} fixtures: geth {count}/{count}, revm {count}/{count}, ethereumjs {ethereumjs}, engine left out"
    assert summary in printed.getvalue()
