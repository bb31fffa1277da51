"""
The run's pre-alloc group: one shared genesis for every small workload of a
fill, as execution-spec-tests' `blockchain_test_engine_x` groups them.

Building it means building every planned workload's pre-state, so the first
worker of a run to take the group folder's lock builds it there once and
every other worker reads it; a workload whose genesis is too large to share
(`joins_shared_group`) is a group of its own.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..chain.alloc import alloc_json, genesis_accounts, iter_fixture_alloc, write_alloc
from ..chain.builder import BuiltChain, genesis_header
from ..chain.header import Header
from ..chain.state_roots import Background, StateRoots
from ..ethereum.forks import Fork
from ..fixtures.files import PRE_ALLOC_FOLDER
from ..fixtures.models import BlockchainEngineXFixture
from ..fixtures.render import pre_alloc_group
from ..model.family import PlannedWorkload
from ..model.workload import Account, Address, Workload
from ..plumbing.errors import FillCheckFailed
from ..plumbing.streamed_json import StreamedObject, indented_chunks


@dataclass
class PreAllocGroupState:
    """A pre-alloc group as one process knows it once its genesis is built."""

    group_hash: str
    test_ids: list[str]
    alloc_path: Path
    genesis: Header
    written: bool = False


def group_hash(test_ids: Sequence[str]) -> str:
    """Deterministic 8-byte id of a group from its sorted test ids (as execution-spec-tests packs groups)."""
    digest = hashlib.sha256("\n".join(sorted(test_ids)).encode()).digest()
    return f"0x{int.from_bytes(digest[:8], 'big'):016x}"


def joins_shared_group(workload: Workload, over_background: bool) -> bool:
    """
    Whether `workload`'s engine_x chain runs on the run's shared genesis, as
    every workload's does but two kinds: one whose genesis is itself large (a
    contract set placed in the genesis, tens of thousands of contracts the
    shared genesis would hold for every set), and a large-state one when the
    group is over a background state (a contract set's group stays its own
    there, off the background, as it has been measured). A contract set set up
    by blocks has a small pre-state and shares the group: a client imports its
    setup and rolls it back like any test's, instead of being started (and
    `init`) once for each set.
    """
    if workload.generated_pre:
        return False
    return not (workload.large_state and over_background)


def own_pre_alloc_group(workload: Workload, chain: BuiltChain) -> PreAllocGroupState:
    """The pre-alloc group of a workload that does not join the shared one: its own genesis, for it alone."""
    return PreAllocGroupState(
        group_hash=group_hash([workload.name]),
        test_ids=[workload.name],
        alloc_path=chain.genesis_alloc_path,
        genesis=chain.genesis,
    )


GROUP_GENESIS = "genesis.json"
GROUP_SUMMARY = "group.json"
"""The group's test ids and state root, written last: a folder holding it holds a complete group."""


def build_group_genesis(
    fork: Fork, planned: Sequence[PlannedWorkload], folder: Path, state_root_bin: Path, background: Background | None = None
) -> StateRoots:
    """
    Write the group genesis of `planned` (its alloc, and a summary of its test
    ids and state root) into `folder`; give back `balgen-state-root` over it,
    whose root the summary holds (go-ethereum's trie, as t8n's: the tests
    check the two agree, and a client importing the group checks it again).
    With `background` (a built background state) the genesis is that state
    with the group's accounts (and their workload slots) put into it.
    """
    # Only each workload's pre-state is kept: at a billion gas a workload's
    # transactions take tens of MB, and the group holds every workload's.
    pres: dict[str, Mapping[Address, Account]] = {}
    for workload in planned:
        try:
            built = workload.build()
        except FillCheckFailed:
            # That workload fails its own test; it must not fail every other one.
            continue
        if joins_shared_group(built, background is not None):
            pres[workload.name] = built.pre
    write_alloc(folder / GROUP_GENESIS, alloc_json(genesis_accounts(fork, pres.values())))
    roots = StateRoots(state_root_bin, folder / GROUP_GENESIS, background)
    try:
        summary = folder / f"{GROUP_SUMMARY}.partial"
        summary.write_text(json.dumps({"test-ids": sorted(pres), "state-root": "0x" + roots.base_root.hex()}))
        summary.replace(folder / GROUP_SUMMARY)
    except BaseException:
        roots.close()
        raise
    return roots


def read_group_genesis(fork: Fork, folder: Path) -> PreAllocGroupState:
    """The group genesis `build_group_genesis` wrote into `folder`."""
    summary = json.loads((folder / GROUP_SUMMARY).read_text())
    test_ids = summary["test-ids"]
    return PreAllocGroupState(
        group_hash=group_hash(test_ids),
        test_ids=test_ids,
        alloc_path=folder / GROUP_GENESIS,
        genesis=genesis_header(fork, bytes.fromhex(summary["state-root"][2:])),
    )


def take_group_genesis(
    fork: Fork,
    planned: Sequence[PlannedWorkload],
    folder: Path,
    state_root_bin: Callable[[], Path],
    wait: bool,
    background: Background | None = None,
) -> tuple[PreAllocGroupState, StateRoots | None] | None:
    """
    The group genesis of `planned` in `folder`, built under the folder's lock
    if no worker has built it yet (with `balgen-state-root` over it, when this
    process built it), or read if one has. Without `wait`, None while another
    worker holds the lock.
    """
    folder.mkdir(parents=True, exist_ok=True)
    roots = None
    with (folder / "lock").open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None
        if not (folder / GROUP_SUMMARY).exists():
            roots = build_group_genesis(fork, planned, folder, state_root_bin(), background)
    return read_group_genesis(fork, folder), roots


def group_file(output: Path, group: PreAllocGroupState) -> Path:
    """Where execution-spec-tests keeps a group: `blockchain_tests_engine_x/pre_alloc/<hash>.json`."""
    return output / BlockchainEngineXFixture.fixture_format.folder / PRE_ALLOC_FOLDER / f"{group.group_hash}.json"


def background_file(output: Path, group: PreAllocGroupState) -> Path:
    """
    Where a group over a background state says which (`<hash>.background`,
    beside the group file: execution-spec-tests' group file allows no other
    key, and a runner that reads every `*.json` of `pre_alloc/` must not
    take it for a group).
    """
    return group_file(output, group).with_suffix(".background")


def group_json(fork: Fork, group: PreAllocGroupState) -> Iterable[str]:
    """The group file's text, its `pre` streamed from the group genesis one account at a time."""
    document = pre_alloc_group(fork, group.test_ids, group.genesis).json_dict()
    document["pre"] = StreamedObject(lambda: iter_fixture_alloc(group.alloc_path), floatless=True)
    return indented_chunks(document)
