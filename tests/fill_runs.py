"""`balgen fill` run as a user runs it (a process of its own, its t8n and workers), for the test modules that need real fixtures."""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from balgen.ethereum.forks import AMSTERDAM
from balgen.generators.catalog import default_families, planned_workloads
from balgen.plumbing.toolchain import EARLIER_AMSTERDAM_VERSION, release_bin
from balgen.model.workload import FillLevel, Placement
from in_process import balgen_forked

FILL_TIMEOUT = 900
"""A default-suite fill takes minutes on 2 busy cores; a hung t8n still ends the test."""


def run_fill(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = FILL_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """
    `balgen fill ARGS` in a fork of the test process (`balgen_forked`); the
    caller judges the outcome. A fill's own process, its t8n and its workers
    are a user's; a new interpreter would add half a CPU-second of imports
    the test process has already made. Fills that test signals or the
    installed command itself start `balgen` as a new process.
    """
    return balgen_forked("fill", *args, cwd=cwd, env=env, timeout=timeout)


def fill_fixtures(output: Path, *args: str | Path) -> Path:
    """`balgen fill --output OUTPUT ARGS`, which must succeed; returns OUTPUT."""
    completed = run_fill("--output", output, *args)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return output


def _session_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every xdist worker of this session shares (each worker's basetemp is inside it)."""
    basetemp = tmp_path_factory.getbasetemp()
    return basetemp.parent if basetemp.name.startswith("popen-gw") else basetemp


def shared_fill(tmp_path_factory: pytest.TempPathFactory, *args: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """
    `balgen fill --output DIR ARGS`, run once per session for every test
    module and xdist worker that asks for the same ARGS, and its outcome.

    A default-suite fill is most of a test run's CPU time, and several
    modules check the same fill from different sides (layout, import into
    geth, both EVMs); the first to ask fills under a lock, the others wait
    and read. Callers must not change the files: copy them first.
    """
    key = hashlib.sha256(json.dumps(args).encode()).hexdigest()[:16]
    folder = _session_root(tmp_path_factory) / "shared-fills" / key
    folder.mkdir(parents=True, exist_ok=True)
    outcome = folder / "outcome.json"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not outcome.exists():
            completed = run_fill("--output", folder / "out", *args, cwd=folder)
            outcome.write_text(json.dumps([completed.returncode, completed.stdout, completed.stderr]))
    returncode, stdout, stderr = json.loads(outcome.read_text())
    return subprocess.CompletedProcess(["balgen", "fill", *args], returncode, stdout, stderr), folder / "out"


def shared_suite_fill(
    tmp_path_factory: pytest.TempPathFactory, fork: str = "Amsterdam", *args: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The default suite at 1M for `fork` (plus ARGS), filled once per session (`shared_fill`)."""
    return shared_fill(tmp_path_factory, "--gas-benchmark-values", "1", "--fork", fork, *args)


def copied_from_suite_fill(tmp_path_factory: pytest.TempPathFactory, test_ids: list[str]) -> Path:
    """
    The files of `test_ids` in the three formats, and their pre-alloc groups, copied from the session's
    default-suite fill at 1M (`shared_suite_fill`) into a folder of a fill's layout. A module that
    replays a few of the suite's tests copies them rather than filling them (a fill of a few is about 3
    CPU-s, and `make test` makes the suite's anyway). A group's `testIds` still lists the suite's other
    tests: replay needs each test listed, not each listed test present.
    """
    completed, suite = shared_suite_fill(tmp_path_factory)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    folder = tmp_path_factory.mktemp("suite-copy")
    for test_id in test_ids:
        paths = sorted(suite.rglob(f"{test_id}.json"))
        assert len(paths) == 3, (test_id, paths)
        for path in paths:
            fixture = json.loads(path.read_text())[test_id]
            groups = suite / path.relative_to(suite).parts[0] / "pre_alloc"
            pre_alloc = [groups / f"{fixture['preHash']}.json"] if "preHash" in fixture else []
            for original in (path, *pre_alloc):
                copy = folder / original.relative_to(suite)
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(original, copy)
    return folder


def one_fixture_per_family() -> list[str]:
    """
    The 1M fixture names of a sample with one fixture of every family, the
    fill level and the variant rotating from family to family.

    The forks and the placement other than the default (Amsterdam, setup
    blocks) are filled with this sample only: their layout, payload
    versions, geth import and both EVMs are the same for every fixture of
    a family, and every family and fill level is filled whole on the
    default (and built on Osaka in tests/test_families.py).
    """
    names = []
    for index, family in enumerate(default_families()):
        fill = list(FillLevel)[index % len(FillLevel)]
        chosen = [p for p in planned_workloads(family, AMSTERDAM, [1_000_000], Placement.BLOCKS) if p.params.fill is fill]
        names.append(chosen[index % len(chosen)].name)
    return names


def keyword_for(names: list[str]) -> str:
    """The `-k` expression that selects exactly the fixtures `names`."""
    return " or ".join(names)


def shared_sample_fill(
    tmp_path_factory: pytest.TempPathFactory, fork: str = "Amsterdam", *args: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`one_fixture_per_family` at 1M for `fork` (plus ARGS), filled once per session (`shared_fill`)."""
    return shared_suite_fill(tmp_path_factory, fork, "-k", keyword_for(one_fixture_per_family()), *args)


def shared_earlier_amsterdam_fill(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """
    Every family and variant at 1M and fill level `max` with go-ethereum
    v1.17.5's t8n (the Amsterdam the reth build implements), contracts
    deployed by setup blocks, contract sets aside (their groups have a genesis
    each, see tests/test_code_sets.py); filled once per session (`shared_fill`)
    for geth and reth of that spec, and it must succeed.
    """
    completed, output = shared_fill(
        tmp_path_factory, "--evm-bin", str(release_bin(EARLIER_AMSTERDAM_VERSION) / "evm"),
        "--gas-benchmark-values", "1", "-k", "max and not extcode",
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return output
