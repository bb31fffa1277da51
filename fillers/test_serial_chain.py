"""Fillers for `serial_chain`: one shared slot, read and written first by every transaction."""

import pytest

from balgen.generators.serial_chain import serial_chain


@pytest.mark.workload(generator=serial_chain)
def test_serial_chain(workload, fill):
    """Every transaction depends on the previous one from its first opcode."""
    fill(workload)
