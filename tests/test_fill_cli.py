"""
`balgen fill` as a user runs it: a subprocess, small gas values, real t8n
(the commands refused before pytest starts run in the test process).

What a user relies on: the files land exactly where the documented layout
says, in the right format for the right fork; the same command gives the same
bytes (in parallel too); `-k` selects; bad input is one line on stderr, exit
code 2 and nothing written; and a t8n that dies mid-run leaves no partial or
temporary files behind.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from balgen.ethereum.forks import AMSTERDAM, FORKS, Fork
from balgen.generators.catalog import all_planned_workloads, families, planned_workloads
from balgen.plumbing.toolchain import GO_ETHEREUM_VERSION, pinned_evm
from balgen.model.workload import Placement

from fill_runs import one_fixture_per_family, shared_sample_fill, shared_suite_fill
from in_process import balgen_forked, balgen_in_process

FORMATS = {
    "blockchain_tests": "blockchain_test",
    "blockchain_tests_engine": "blockchain_test_engine",
    "blockchain_tests_engine_x": "blockchain_test_engine_x",
}
ENGINE_VERSIONS = {"Amsterdam": ("5", "4"), "Osaka": ("4", "3"), "Prague": ("4", "3")}
ALL_NAMES = sorted(p.name for p in all_planned_workloads(AMSTERDAM, [1_000_000], Placement.BLOCKS))
LARGE_STATE_NAMES = [name for name in ALL_NAMES if name.startswith("extcode")]
"""Contract-set workloads: placed in the genesis (`--setup genesis`) each gets a pre-alloc group of its own;
set up by blocks (the default) they join the shared one."""
OPT_IN_NAMES = [
    p.name for family in families() if family.opt_in for p in planned_workloads(family, AMSTERDAM, [1_000_000], Placement.BLOCKS)
]
"""The opt-in families' workloads: filled when `-k` names them (the per-fork samples do), in the shared group."""
SHARED_NAMES = sorted(ALL_NAMES + OPT_IN_NAMES)
"""The shared group's tests with the setup in blocks: every workload."""
PRE_ALLOC = re.compile(r"blockchain_tests_engine_x/pre_alloc/0x[0-9a-f]{16}\.json")


def files_under(root: Path) -> dict[str, bytes]:
    """Every file under `root` (hidden ones included), by relative path."""
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def fixture_paths(fork: str, names: list[str]) -> set[str]:
    folder = f"for_{fork.lower()}_at_0001M"
    return {
        f"{format_dir}/{folder}/{name.split('-')[0]}/{name}.json" for format_dir in FORMATS for name in names
    }


def split_layout(files: dict[str, bytes], shared_required: bool = True) -> tuple[set[str], str | None]:
    """(fixture file paths, the shared pre_alloc file path); every other group holds one contract-set test
    placed in the genesis."""
    pre_allocs = [path for path in files if PRE_ALLOC.fullmatch(path)]
    test_ids = {path: json.loads(files[path])["testIds"] for path in pre_allocs}
    shared = [path for path, ids in test_ids.items() if not (len(ids) == 1 and ids[0] in LARGE_STATE_NAMES)]
    assert len(shared) == 1 or (not shared and not shared_required), f"expected one shared pre_alloc group, found {shared}"
    return set(files) - set(pre_allocs), shared[0] if shared else None


@pytest.fixture(scope="module")
def evm_version() -> str:
    completed = subprocess.run([str(pinned_evm()), "--version"], capture_output=True, text=True, check=True)
    return completed.stdout.strip().splitlines()[0]


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The default suite at 1M (for a fork, with extra arguments), filled once per session."""

    def fill(*args: str, fork: str = "Amsterdam") -> tuple[subprocess.CompletedProcess[str], Path]:
        return shared_suite_fill(tmp_path_factory, fork, *args)

    return fill


@pytest.fixture(scope="module")
def sample_filled(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One fixture per family at 1M (`one_fixture_per_family`, for a fork, with extra arguments), filled once per session."""

    def fill(*args: str, fork: str = "Amsterdam") -> tuple[subprocess.CompletedProcess[str], Path]:
        return shared_sample_fill(tmp_path_factory, fork, *args)

    return fill


# --- (a) layout and content ---------------------------------------------------


@pytest.mark.parametrize("fork", FORKS.values(), ids=lambda fork: fork.name)
def test_every_fork_plans_the_whole_suite(fork: Fork) -> None:
    """Osaka and Prague are filled with one fixture per family below: their suite is the default's, none left out."""
    assert sorted(p.name for p in all_planned_workloads(fork, [1_000_000], Placement.BLOCKS)) == ALL_NAMES


@pytest.mark.integration
@pytest.mark.parametrize("fork", ["Amsterdam", "Osaka", "Prague"])
def test_fill_writes_the_documented_layout_and_formats(filled: Any, sample_filled: Any, evm_version: str, fork: str) -> None:
    """The whole default suite on Amsterdam; on the other forks one fixture per family (the layout is per fixture)."""
    names = ALL_NAMES if fork == "Amsterdam" else sorted(one_fixture_per_family())
    completed, output = filled(fork=fork) if fork == "Amsterdam" else sample_filled(fork=fork)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]

    files = files_under(output)
    fixtures, pre_alloc_path = split_layout(files)
    assert fixtures == fixture_paths(fork, names)

    new_payload, forkchoice_updated = ENGINE_VERSIONS[fork]
    group = json.loads(files[pre_alloc_path])
    group_hash = Path(pre_alloc_path).stem
    for path in sorted(fixtures):
        name = Path(path).stem
        content = json.loads(files[path])
        assert list(content) == [name], f"{path} must hold exactly the fixture {name}"
        fixture = content[name]
        info = fixture["_info"]
        assert info["fixture-format"] == FORMATS[path.split("/")[0]], path
        assert info["filling-transition-tool"] == evm_version, path
        assert GO_ETHEREUM_VERSION.lstrip("v") in info["filling-transition-tool"], path
        assert info["fixture-name"] == name, path
        assert fixture["network"] == fork, path
        if "engineNewPayloads" in fixture:
            payloads = fixture["engineNewPayloads"]
            phases = [payload["phase"] for payload in payloads]
            assert set(phases) <= {"setup", "testing"}, path
            assert phases.count("testing") == 1 and phases[-1] == "testing", f"{path}: phases {phases}"
            assert {p["newPayloadVersion"] for p in payloads} == {new_payload}, path
            assert {p["forkchoiceUpdatedVersion"] for p in payloads} == {forkchoice_updated}, path
            has_bal = fork == "Amsterdam"
            assert all(("blockAccessList" in p["params"][0]) == has_bal for p in payloads), path
        if path.startswith("blockchain_tests_engine_x/"):
            assert fixture["preHash"] == group_hash, path  # set up by blocks, every workload shares the group
            assert ("postStateHash" in fixture) == (name in LARGE_STATE_NAMES), path  # a contract set's by its root

    # execution-spec-tests' group file exactly: these keys only (its model forbids others), chainId an integer.
    assert list(group) == ["testIds", "environment", "network", "chainId", "pre"]
    assert group["testIds"] == [name for name in SHARED_NAMES if name in names]
    assert group["network"] == fork and group["chainId"] == 1


# --- (b) selection, determinism and parallel workers ---------------------------------


@pytest.mark.integration
def test_keyword_fills_only_the_selected_fixture(filled: Any) -> None:
    completed, output = filled("-k", "keccak_chain-max")
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    files = files_under(output)
    fixtures, pre_alloc_path = split_layout(files)
    assert fixtures == fixture_paths("Amsterdam", ["keccak_chain-max-1M"])
    # The pre-alloc group describes what was filled, not what was deselected.
    group = json.loads(files[pre_alloc_path])
    assert group["testIds"] == ["keccak_chain-max-1M"]

    # Fixtures on their own genesis do not depend on what else was selected.
    _, full_output = filled()
    full_files = files_under(full_output)
    for format_dir in ("blockchain_tests", "blockchain_tests_engine"):
        (path,) = [p for p in fixtures if p.startswith(format_dir + "/")]
        assert files[path] == full_files[path], path


@pytest.mark.integration
def test_keyword_matching_nothing_is_bad_input(tmp_path: Path) -> None:
    output = tmp_path / "out"
    completed = balgen_forked("fill", "--gas-benchmark-values", "1", "--output", output, "-k", "no_such_family", cwd=tmp_path)
    assert completed.returncode == 2
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and "no_such_family" in lines[0], completed.stderr
    assert not output.exists(), "a fill that matched nothing leaves no output folder"


@pytest.mark.integration
def test_two_fills_serial_and_parallel_give_the_same_bytes(sample_filled: Any) -> None:
    """
    Determinism and parallel workers at once: a second fill, with `-n 2`, must match the first byte for
    byte. One fixture per family with the setup in genesis: both workers fill, the shared pre-alloc group
    and contract sets of their own among them (the serial fill is the one tests/test_import_geth.py imports).
    """
    serial, serial_output = sample_filled("--setup", "genesis")
    parallel, parallel_output = sample_filled("--setup", "genesis", "-n", "2")
    assert serial.returncode == 0 and parallel.returncode == 0, parallel.stdout[-2000:] + parallel.stderr[-2000:]
    serial_files, parallel_files = files_under(serial_output), files_under(parallel_output)
    assert sorted(serial_files) == sorted(parallel_files)
    differing = [path for path in serial_files if serial_files[path] != parallel_files[path]]
    assert not differing, f"files differ between a serial and a -n 2 fill: {differing}"
    leftovers = [path.name for output in (serial_output, parallel_output) for path in output.iterdir() if path.name.startswith(".")]
    assert not leftovers, f"hidden staging folders left in the output: {leftovers}"


# --- (c) bad input ----------------------------------------------------------------


def crashing_t8n(folder: Path) -> Path:
    script = folder / "crashing-evm"
    script.write_text("#!/bin/sh\necho 'fatal: something broke' >&2\nexit 1\n")
    script.chmod(0o755)
    return script


BAD_INPUT = {
    "unknown-fork": (["--fork", "Shanghai"], ["--fork", "Shanghai"]),
    "gas-not-a-number": (["--gas-benchmark-values", "30,abc"], ["--gas-benchmark-values", "abc"]),
    "gas-negative": (["--gas-benchmark-values=-5"], ["--gas-benchmark-values", "-5"]),
    "gas-zero": (["--gas-benchmark-values", "0"], ["--gas-benchmark-values", "'0'"]),
    "gas-twice": (["--gas-benchmark-values", "30,30"], ["--gas-benchmark-values", "twice"]),
    "missing-evm-bin": (["--evm-bin", "{tmp}/no-such-evm"], ["--evm-bin", "no-such-evm", "not found"]),
    "evm-bin-not-executable": (["--evm-bin", "{tmp}/plain-file"], ["--evm-bin", "not executable"]),
    "crashing-t8n": (["--evm-bin", "{tmp}/crashing-evm"], ["--evm-bin", "exited with code 1"]),
    "bad-workers": (["-n", "many"], ["-n", "many"]),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path: Path, case: str) -> None:
    arguments, complaint = BAD_INPUT[case]
    crashing_t8n(tmp_path)
    (tmp_path / "plain-file").write_text("not a program\n")
    output = tmp_path / "out"
    completed = balgen_in_process("fill", "--output", output, *(a.format(tmp=tmp_path) for a in arguments), cwd=tmp_path)
    assert completed.returncode == 2, completed.stdout[-2000:] + completed.stderr[-2000:]
    lines = completed.stderr.splitlines()
    assert len(lines) == 1, f"want one line on stderr, got: {completed.stderr!r}"
    for word in complaint:
        assert word in lines[0], lines[0]
    assert completed.stdout == ""
    assert not output.exists(), f"{output} was created for a rejected command"


def test_missing_pinned_evm_is_bad_input(tmp_path: Path) -> None:
    """Without --evm-bin and without the pinned tools, the user is told which binary is missing."""
    empty_tools = tmp_path / "tools"
    empty_tools.mkdir()
    output = tmp_path / "out"
    env = {**os.environ, "BALGEN_TOOLS": str(empty_tools)}
    completed = balgen_in_process("fill", "--gas-benchmark-values", "1", "--output", output, cwd=tmp_path, env=env)
    assert completed.returncode == 2
    lines = completed.stderr.splitlines()
    assert len(lines) == 1, completed.stderr
    assert lines[0] == (
        f"balgen fill: evm: not found in BALGEN_TOOLS={empty_tools} (run `make tools`, set BALGEN_TOOLS, or give --evm-bin)"
    )
    assert not output.exists()


@pytest.mark.integration
@pytest.mark.parametrize("where", ["under-a-file", "proc"])
def test_unwritable_output_is_bad_input(tmp_path: Path, where: str) -> None:
    # Tests may run as root, for whom a 0o500 folder is writable: use paths
    # nobody can create instead.
    blocker = tmp_path / "afile"
    blocker.write_text("keep me\n")
    output = blocker / "out" if where == "under-a-file" else Path("/proc/balgen-fixtures")
    completed = balgen_in_process("fill", "--gas-benchmark-values", "1", "--output", output, cwd=tmp_path)
    assert completed.returncode == 2, completed.stdout[-2000:] + completed.stderr[-2000:]
    lines = completed.stderr.splitlines()
    assert len(lines) == 1 and "--output" in lines[0] and str(output) in lines[0], completed.stderr
    assert completed.stdout == ""
    assert blocker.read_text() == "keep me\n"
    assert not output.exists()


def test_gas_value_below_the_floor_is_refused_before_filling(tmp_path: Path) -> None:
    """
    A gas value below 1M (where one transaction of some family would not fit) is refused up
    front for the whole command, as `balgen export` refuses it (issue 17): it used to fail
    its fixtures one by one at exit code 1 and leave an empty folder.
    """
    output = tmp_path / "out"
    completed = balgen_in_process(
        "fill", "--gas-benchmark-values", "0.02,1", "--output", output, "-k", "serial_chain-max", cwd=tmp_path
    )
    assert completed.returncode == 2, completed.stdout[-2000:] + completed.stderr[-2000:]
    assert completed.stderr == "balgen fill: --gas-benchmark-values: '0.02' is outside 1 to 1000 (millions of gas)\n"
    assert not output.exists()


# --- (d) t8n killed in the middle of the run ------------------------------------------


def dying_t8n(folder: Path, good_calls: int) -> Path:
    """An `evm` that answers --version and its first `good_calls` t8n calls, then SIGKILLs itself."""
    counter = folder / "t8n-calls"
    script = folder / "dying-evm"
    script.write_text(
        "#!/bin/bash\n"
        f'if [ "$1" = "--version" ]; then exec "{pinned_evm()}" "$@"; fi\n'
        f'n=$(( $(cat "{counter}" 2>/dev/null || echo 0) + 1 ))\n'
        f'echo "$n" > "{counter}"\n'
        f'if [ "$n" -le {good_calls} ]; then exec "{pinned_evm()}" "$@"; fi\n'
        "kill -9 $$\n"
    )
    script.chmod(0o755)
    return script


@pytest.mark.integration
def test_t8n_killed_mid_fill_leaves_no_partial_fixture(tmp_path: Path) -> None:
    # Enough calls for the first workload's chains and part of the second's.
    evm = dying_t8n(tmp_path, good_calls=12)
    output = tmp_path / "out"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    completed = balgen_forked(
        "fill", "--gas-benchmark-values", "1", "--evm-bin", evm, "--output", output, cwd=tmp_path, env=env
    )  # a fork: the fill's session and its t8n calls in a process of their own, without a new interpreter's imports
    assert completed.returncode == 2, completed.stdout[-2000:] + completed.stderr[-2000:]

    report = completed.stdout + completed.stderr
    failed = [name for name in ALL_NAMES if re.search(rf"FAILED\b.*\b{re.escape(name)}\b.*killed", report)]
    assert failed, f"no line names a failed fixture:\n{report}"

    files = files_under(output)
    assert not [path for path in files if path.endswith(".tmp") or "/." in "/" + path], sorted(files)
    fixtures, _ = split_layout(files, shared_required=False)  # the run may die before any shared workload
    written = {Path(path).stem for path in fixtures}
    for name in failed:
        assert name not in written, f"{name} failed but has fixture files"
    # What was filled before t8n died is complete: all three formats.
    assert written, "the first workload filled before t8n died should be written"
    assert fixtures == fixture_paths("Amsterdam", sorted(written))
    assert written | set(failed) == set(ALL_NAMES)
    # The run's scratch folder is gone too.
    assert not any(scratch.iterdir()), sorted(p.name for p in scratch.iterdir())
