"""Fillers for `serial_chain`: one shared slot, read and written first by every transaction."""

import pytest

from balgen.generators import serial_chain


@pytest.mark.workload(family=serial_chain.FAMILY)
def test_serial_chain(workload, fill):
    """Every transaction depends on the previous one from its first opcode."""
    fill(workload)
