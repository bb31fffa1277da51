"""Fillers for `prefetch_miss`: cold reads from where the previous transaction moved the cursor, which a prefetcher from the pre-state misses."""

import pytest

from balgen.generators import prefetch_miss


@pytest.mark.workload(family=prefetch_miss.FAMILY)
def test_prefetch_miss(workload, fill):
    """Cold reads from where the previous transaction moved the cursor, which a prefetcher from the pre-state misses."""
    fill(workload)
