"""Fillers for `prefetch`: a pointer chase through cold storage that only the access list's reads reveal."""

import pytest

from balgen.generators import prefetch


@pytest.mark.workload(family=prefetch.FAMILY)
def test_prefetch(workload, fill):
    """A pointer chase through cold storage that only the access list's reads reveal."""
    fill(workload)
