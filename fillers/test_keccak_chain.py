"""Fillers for `keccak_chain`: the shared-slot conflict comes after a long keccak chain."""

import pytest

from balgen.generators import keccak_chain


@pytest.mark.workload(family=keccak_chain.FAMILY)
def test_keccak_chain(workload, fill):
    """Speculative execution finds each conflict only at the end of the transaction."""
    fill(workload)
