"""
Fillers for `invalid_bal_<family>` (opt-in, `-k invalid_bal`): a benchmark block sent first with an
access list that lies, which the client must reject, then as it is.
"""

import pytest

from balgen.generators import invalid_bal

MIXED_DEP, STATE_ROOT, PREFETCH = invalid_bal.FAMILIES


@pytest.mark.workload(family=MIXED_DEP)
def test_invalid_bal_mixed_dep(workload, fill):
    """mixed_dep's benchmark block, first with a lying access list."""
    fill(workload)


@pytest.mark.workload(family=STATE_ROOT)
def test_invalid_bal_state_root(workload, fill):
    """state_root's benchmark block, first with a lying access list."""
    fill(workload)


@pytest.mark.workload(family=PREFETCH)
def test_invalid_bal_prefetch(workload, fill):
    """prefetch's benchmark block, first with a lying access list."""
    fill(workload)
