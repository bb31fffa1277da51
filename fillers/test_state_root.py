"""Fillers for `state_root`: disjoint storage overwrites into one deep storage trie or one contract per transaction."""

import pytest

from balgen.generators import state_root


@pytest.mark.workload(family=state_root.FAMILY)
def test_state_root(workload, fill):
    """Disjoint storage overwrites into one deep storage trie or one contract per transaction."""
    fill(workload)
