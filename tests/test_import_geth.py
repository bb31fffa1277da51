"""
Proof with real parts: filled fixtures are accepted by the pinned geth.

Small suites (1M gas, every family and fill level) are filled for every fork
and both setup placements, then: every `blockchain_test_engine` fixture is
imported into its own geth node and every `blockchain_test_engine_x` group
into one node per group, through the JWT-authenticated Engine API with the
fixture's payload versions, each payload VALID and the head at
`lastblockhash`; and geth's `evm blocktest` passes every `blockchain_test`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from balgen.replay.importer import import_engine_fixture, import_engine_group
from balgen.toolchain import pinned_evm, pinned_geth

pytestmark = pytest.mark.integration

CASES = [("Amsterdam", "blocks"), ("Amsterdam", "genesis"), ("Osaka", "blocks"), ("Prague", "blocks")]


@pytest.fixture(scope="module", params=CASES, ids=[f"{fork}-{setup}" for fork, setup in CASES])
def filled(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    fork, setup = request.param
    output = tmp_path_factory.mktemp(f"fill-{fork}-{setup}")
    subprocess.run(
        [sys.executable, "-m", "balgen.cli", "fill", "--fork", fork, "--setup", setup,
         "--gas-benchmark-values", "1", "--output", str(output)],
        check=True,
        capture_output=True,
    )
    return fork, output


def fixtures_of(folder: Path) -> list[tuple[str, dict]]:
    entries = []
    for path in sorted(folder.glob("for_*/**/*.json")):
        entries.extend(json.loads(path.read_text()).items())
    return entries


def test_every_engine_fixture_imports_valid(filled: tuple[str, Path]) -> None:
    fork, output = filled
    fixtures = fixtures_of(output / "blockchain_tests_engine")
    assert len(fixtures) == 6
    for name, fixture in fixtures:
        phases = [payload["phase"] for payload in fixture["engineNewPayloads"]]
        assert phases[-1] == "testing" and phases.count("testing") == 1
        result = import_engine_fixture(
            fixture, fixture["genesisBlockHeader"], fixture["pre"], pinned_geth(), test_id=name
        )
        assert result.passed, f"{name}: {result.failure}"
        assert [p.status for p in result.payloads] == ["VALID"] * len(phases)


def test_engine_x_group_imports_valid_on_one_node(filled: tuple[str, Path]) -> None:
    _, output = filled
    root = output / "blockchain_tests_engine_x"
    (group_file,) = (root / "pre_alloc").glob("*.json")
    pre_alloc = json.loads(group_file.read_text())
    fixtures = fixtures_of(root)
    assert sorted(pre_alloc["testIds"]) == sorted(name for name, _ in fixtures)
    assert {fixture["preHash"] for _, fixture in fixtures} == {group_file.stem}
    result = import_engine_group(pre_alloc, fixtures, pinned_geth())
    assert result.passed, [(t.test_id, t.failure) for t in result.tests if not t.passed] or result.failure


def test_evm_blocktest_passes_every_blockchain_test(filled: tuple[str, Path]) -> None:
    _, output = filled
    files = sorted((output / "blockchain_tests").glob("for_*/**/*.json"))
    assert len(files) == 6
    for path in files:
        completed = subprocess.run(
            [str(pinned_evm()), "blocktest", str(path)], capture_output=True, text=True, check=False
        )
        report = json.loads(completed.stdout)
        assert completed.returncode == 0 and all(entry["pass"] for entry in report), (
            f"{path.name}: {completed.stdout[-500:]}{completed.stderr[-500:]}"
        )
