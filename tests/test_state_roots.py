"""
balgen-state-root gives the state root t8n gives, for an allocation and for it with accounts replaced or removed.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from balgen.chain.alloc import write_alloc_entries
from balgen.chain.builder import genesis_state_root
from balgen.chain.state_roots import Background, StateRoots, answer_deadline, state_root_tool, workload_slots_generated
from balgen.chain.t8n import TransitionTool
from balgen.plumbing.errors import TransitionToolError
from balgen.ethereum.hextypes import zero_padded_hex
from balgen.plumbing.toolchain import pinned_evm

ADDRESSES = [f"0x{index:040x}" for index in range(1, 9)]
accounts = st.fixed_dictionaries(
    {
        "nonce": st.integers(0, 3).map(hex),
        "balance": st.integers(0, 10**20).map(hex),
        "code": st.sampled_from(["0x", "0x00", "0x6001600055"]),
        # Zero values included: t8n stores none of them.
        "storage": st.dictionaries(st.integers(0, 4).map(zero_padded_hex), st.integers(0, 2**256 - 1).map(zero_padded_hex), max_size=3),
    }
)
allocs = st.dictionaries(st.sampled_from(ADDRESSES), accounts, max_size=6)
replacements = st.dictionaries(st.sampled_from(ADDRESSES), st.none() | accounts, max_size=4)


@pytest.fixture(scope="module")
def t8n() -> TransitionTool:
    return TransitionTool(pinned_evm())


def t8n_root(t8n: TransitionTool, alloc: dict, folder: Path) -> bytes:
    path = folder / "alloc.json"
    write_alloc_entries(path, sorted(alloc.items()))
    return genesis_state_root(t8n, path, folder / "root")


@pytest.mark.integration
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=allocs, questions=st.lists(replacements, min_size=1, max_size=3))
def test_roots_with_replaced_accounts_are_t8ns(t8n: TransitionTool, base: dict, questions: list[dict]) -> None:
    """Each question starts from the base again: an answer does not carry an earlier question's replacements."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        write_alloc_entries(folder / "base.json", sorted(base.items()))
        roots = StateRoots(state_root_tool(), folder / "base.json")
        try:
            assert roots.base_root == t8n_root(t8n, base, folder / "base")
            for index, replaced in enumerate(questions):
                write_alloc_entries(folder / f"replace{index}.json", sorted(replaced.items()))
                expected = {a: account for a, account in {**base, **replaced}.items() if account is not None}
                assert roots.with_accounts(folder / f"replace{index}.json") == t8n_root(t8n, expected, folder / f"t8n{index}")
        finally:
            roots.close()


@pytest.mark.integration
@settings(max_examples=12, deadline=None)
@given(base=allocs, blocks=st.lists(replacements, min_size=1, max_size=4))
def test_kept_roots_are_the_roots_of_every_block_so_far_asked_of_the_base(base: dict, blocks: list[dict]) -> None:
    """
    A chain's blocks given one at a time, each with only its own accounts, have
    the roots of the base with every account changed so far replaced; after
    the chain the base is back, so the same chain again has the same roots.
    """
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        write_alloc_entries(folder / "base.json", sorted(base.items()))
        so_far: dict = {}
        for index, block in enumerate(blocks):
            write_alloc_entries(folder / f"block{index}.json", sorted(block.items()))
            so_far.update(block)
            write_alloc_entries(folder / f"so-far{index}.json", sorted(so_far.items()))
        roots = StateRoots(state_root_tool(), folder / "base.json")
        try:
            chains = []
            for _ in range(2):
                with roots.kept() as root_with:
                    chains.append([root_with(folder / f"block{index}.json") for index in range(len(blocks))])
            from_the_base = [roots.with_accounts(folder / f"so-far{index}.json") for index in range(len(blocks))]
            assert chains == [from_the_base, from_the_base]
        finally:
            roots.close()


@pytest.mark.integration
def test_a_chain_that_fails_midway_leaves_the_base(tmp_path: Path) -> None:
    """A fill check failing between two blocks does not leave its accounts in the next chain's state."""
    write_alloc_entries(tmp_path / "base.json", [(ADDRESSES[0], {"balance": "0x1"})])
    write_alloc_entries(tmp_path / "block.json", [(ADDRESSES[0], None), (ADDRESSES[1], {"balance": "0x2"})])
    roots = StateRoots(state_root_tool(), tmp_path / "base.json")
    try:
        with pytest.raises(ValueError, match="a check failed"), roots.kept() as root_with:
            assert root_with(tmp_path / "block.json") != roots.base_root
            raise ValueError("a check failed")
        with roots.kept() as root_with:
            assert root_with(tmp_path / "base.json") == roots.base_root
    finally:
        roots.close()


@pytest.mark.integration
def test_an_unreadable_replacement_names_the_file_and_the_account(tmp_path: Path) -> None:
    write_alloc_entries(tmp_path / "base.json", [(ADDRESSES[0], {"balance": "0x1"})])
    (tmp_path / "bad.json").write_text('{"%s": {"balance": "lots"}}' % ADDRESSES[1])
    roots = StateRoots(state_root_tool(), tmp_path / "base.json")
    try:
        with pytest.raises(TransitionToolError, match=r'over .*base\.json: .*bad\.json: account 0x0*2: invalid hex or decimal integer "lots"$'):
            roots.with_accounts(tmp_path / "bad.json")
        with pytest.raises(TransitionToolError, match=r"missing\.json: .*no such file"):
            StateRoots(state_root_tool(), tmp_path / "missing.json")
    finally:
        roots.close()


def test_the_base_answers_deadline_grows_with_the_workload_slots_it_generates(tmp_path: Path) -> None:
    """Over a background with workload slots the tool builds every contract's generated storage before its
    first answer (13,214 contracts x 1,024 slots in the stateful suite's group over mainnet-tenth): a
    deadline of the file's size alone stopped that build as a hang on a loaded machine."""
    alloc = {ADDRESSES[0]: {"balance": "0x1", "code": "0x"}, ADDRESSES[1]: {"balance": "0x0", "code": "0x6001600055"},
             ADDRESSES[2]: {"balance": "0x0", "code": "0x00"}, ADDRESSES[3]: {"balance": "0x5"}}  # fmt: skip
    write_alloc_entries(tmp_path / "alloc.json", sorted(alloc.items()))
    background = Background(tmp_path, workload_slots=1024, seed=0)
    assert workload_slots_generated(tmp_path / "alloc.json", background) == 2 * 1024
    assert workload_slots_generated(tmp_path / "alloc.json", Background(tmp_path)) == 0
    size = (tmp_path / "alloc.json").stat().st_size
    assert answer_deadline(size, 13_214 * 1024) - answer_deadline(size) > 600
