"""
`balgen genesis --layout benchmarkoor` writes a benchmarkoor configuration with one
instance per client and mode, which benchmarkoor's own loader
(`tools/bin/balgen-benchmarkoor-config`, scripts/benchmarkoor_config/) reads back.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from balgen.clients.benchmarkoor_config import FILE_NAME, configuration
from balgen.clients.kinds import KINDS
from balgen.commands.genesis import run_genesis
from balgen.plumbing.toolchain import located

LOADER = "balgen-benchmarkoor-config"


def _expected_instances() -> list[dict[str, object]]:
    """Each client benchmarkoor knows, in each of its modes, with that mode's flags."""
    expected = []
    for kind in KINDS.values():
        if kind.benchmarkoor_client is None:
            continue
        for mode in kind.modes.values() or [None]:
            expected.append({
                "id": kind.name if mode is None else f"{kind.name}-{mode.name}",
                "client": kind.benchmarkoor_client,
                "extra_args": [] if mode is None else list(mode.flags),
            })  # fmt: skip
    return expected


def test_one_instance_per_client_and_mode(tmp_path: Path) -> None:
    fixtures = tmp_path / "fill" / "blockchain_tests_engine_x"
    text = configuration(list(KINDS.values()), fixtures, tmp_path / "bm")
    document = yaml.safe_load(text)
    instances = document["runner"]["instances"]
    by_id = {instance["id"]: instance for instance in instances}
    assert by_id["geth-sequential"] == {"id": "geth-sequential", "client": "geth", "extra_args": ["--bal.executionmode=sequential"]}
    assert by_id["reth-full"] == {"id": "reth-full", "client": "reth"}  # reth's default needs no flag
    assert [{**each, "extra_args": each.get("extra_args", [])} for each in instances] == _expected_instances()
    left_out = [kind.name for kind in KINDS.values() if kind.benchmarkoor_client is None]
    assert left_out and f"# Left out (benchmarkoor has no client type for them): {', '.join(left_out)}." in text
    source = document["runner"]["benchmark"]["tests"]["source"]["eest_fixtures"]
    assert source == {
        "local_fixtures_dir": str(fixtures.parent.resolve()),
        "fixtures_subdir": "blockchain_tests_engine_x",
        "local_genesis_dir": str((tmp_path / "bm").resolve()),
    }


@pytest.mark.integration
@pytest.mark.skipif(located(LOADER) is None, reason=f"{LOADER} not built (make tools)")
def test_benchmarkoors_own_loader_reads_the_configuration(serial_chain_fill: Path, tmp_path: Path) -> None:
    out = tmp_path / "bm"
    assert run_genesis([str(serial_chain_fill), "--client", "all", "--layout", "benchmarkoor", "--output", str(out)]) == 0
    loader = str(located(LOADER))
    read = subprocess.run([loader, str(out / FILE_NAME)], capture_output=True, text=True, check=False, cwd=tmp_path)
    assert read.returncode == 0, read.stderr
    summary = json.loads(read.stdout)
    assert summary["instances"] == _expected_instances()
    assert summary["local_genesis_dir"] == str(out.resolve())
    assert (Path(summary["local_fixtures_dir"]) / summary["fixtures_subdir"]) == (serial_chain_fill / "blockchain_tests_engine_x").resolve()
    # The loader is no rubber stamp: an instance of a client type benchmarkoor lacks is refused.
    document = yaml.safe_load((out / FILE_NAME).read_text())
    document["runner"]["instances"].append({"id": "unknown", "client": "parity"})
    refused = tmp_path / "refused.yaml"
    refused.write_text(yaml.safe_dump(document))
    read = subprocess.run([loader, str(refused)], capture_output=True, text=True, check=False, cwd=tmp_path)
    assert read.returncode == 1 and 'unknown client type "parity"' in read.stderr
