"""
Gas rules measured from the t8n: each go-ethereum release's Amsterdam is
recognised, cached per binary, and a t8n balgen cannot model is refused before
anything is filled.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from balgen.calibration import cache_folder, calibrated_gas, check_t8n, passed_check
from balgen.chain.t8n import TransitionTool
from balgen.plumbing.errors import BadInput
from balgen.ethereum.forks import AMSTERDAM, OSAKA, PRAGUE
from balgen.ethereum.gas_costs import AMSTERDAM_GAS, AMSTERDAM_V1_17_5_GAS, LEGACY_GAS
from balgen.fill.plugin import ACCESS_TRACER
from balgen.plumbing.toolchain import EARLIER_AMSTERDAM_VERSION, pinned_evm, release_bin

from fill_runs import run_fill

pytestmark = pytest.mark.integration

EARLIER_EVM = release_bin(EARLIER_AMSTERDAM_VERSION) / "evm"


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test measures afresh, into a cache of its own."""
    monkeypatch.setenv("BALGEN_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.mark.parametrize(
    "fork, expected", [(AMSTERDAM, AMSTERDAM_GAS), (OSAKA, LEGACY_GAS), (PRAGUE, LEGACY_GAS)], ids=lambda v: getattr(v, "name", "")
)
def test_pinned_t8n_measures_as_the_known_spec(tmp_path: Path, fork, expected) -> None:
    gas = calibrated_gas(TransitionTool(pinned_evm()), fork, tmp_path / "work")
    assert gas == expected, expected.first_difference(gas)


@pytest.mark.skipif(not EARLIER_EVM.exists(), reason=f"go-ethereum {EARLIER_AMSTERDAM_VERSION} not built")
def test_earlier_release_measures_as_its_own_amsterdam(tmp_path: Path) -> None:
    gas = calibrated_gas(TransitionTool(EARLIER_EVM), AMSTERDAM, tmp_path / "work")
    assert gas == AMSTERDAM_V1_17_5_GAS, AMSTERDAM_V1_17_5_GAS.first_difference(gas)
    assert gas.cold_sload == 3000 and gas.create2_base == 11000 and gas.tx_gas_limit_total_cap is None


def test_rules_are_cached_per_binary_and_a_broken_entry_is_measured_again(tmp_path: Path, own_cache: Path) -> None:
    first = TransitionTool(pinned_evm())
    gas = calibrated_gas(first, AMSTERDAM, tmp_path / "a")
    assert first.calls == 2  # the genesis root and the traced block
    (entry,) = (own_cache / "gas-rules").iterdir()
    assert json.loads(entry.read_text())["cold_sload"] == gas.cold_sload
    again = TransitionTool(pinned_evm())
    assert calibrated_gas(again, AMSTERDAM, tmp_path / "b") == gas and again.calls == 0
    entry.write_text("{not json")
    third = TransitionTool(pinned_evm())
    assert calibrated_gas(third, AMSTERDAM, tmp_path / "c") == gas and third.calls == 2


def test_a_t8n_passes_its_check_once_per_build_and_a_failed_check_is_not_kept(tmp_path: Path) -> None:
    first = TransitionTool(pinned_evm())
    check_t8n(first, AMSTERDAM, tmp_path / "a", ACCESS_TRACER)
    assert first.calls == 2  # the genesis root and the block under the tracer
    again = TransitionTool(pinned_evm())
    check_t8n(again, AMSTERDAM, tmp_path / "b", ACCESS_TRACER)
    assert again.calls == 0, "the same evm and balgen-state-root, checked in another process or worker"
    for _ in range(2):
        with pytest.raises(BadInput, match="has no tracer named notBuiltIn"):
            check_t8n(TransitionTool(pinned_evm()), AMSTERDAM, tmp_path / "c", "notBuiltIn")
    assert not passed_check(TransitionTool(pinned_evm()), AMSTERDAM, "notBuiltIn").exists()


def _receipt_tampering_t8n(folder: Path) -> Path:
    """A t8n that runs the pinned one and then charges one more gas on every receipt."""
    script = folder / "evm"
    script.write_text(
        f"""#!{sys.executable}
import json, pathlib, subprocess, sys
completed = subprocess.run([{str(pinned_evm())!r}, *sys.argv[1:]])
base = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--output.basedir=")), None)
if base and completed.returncode == 0:
    path = pathlib.Path(base) / "result.json"
    result = json.loads(path.read_text())
    for receipt in result.get("receipts") or []:
        receipt["gasUsed"] = hex(int(receipt["gasUsed"], 16) + 1)
    path.write_text(json.dumps(result))
sys.exit(completed.returncode)
"""
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_a_t8n_balgen_cannot_model_is_refused_naming_the_rule(tmp_path: Path) -> None:
    t8n = TransitionTool(_receipt_tampering_t8n(tmp_path))
    with pytest.raises(BadInput, match=r"gas rule balgen cannot model: floor_zero_byte"):
        calibrated_gas(t8n, AMSTERDAM, tmp_path / "work")
    assert not (cache_folder()).exists() or not any(cache_folder().iterdir())


def test_fill_with_such_a_t8n_stops_before_filling(tmp_path: Path) -> None:
    completed = run_fill(
        "--evm-bin", _receipt_tampering_t8n(tmp_path), "--output", tmp_path / "out", "--gas-benchmark-values", "1",
        env={**os.environ},
    )
    assert completed.returncode == 2
    (line,) = completed.stderr.strip().splitlines()
    assert "gas rule balgen cannot model: floor_zero_byte" in line
    assert not (tmp_path / "out").exists()
