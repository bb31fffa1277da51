"""Cold code reads of CREATE2 contract sets: `extcodesize`, `extcodehash`, `extcodecopy` (one filler per opcode)."""

import pytest

from balgen.generators import extcode

EXTCODESIZE, EXTCODEHASH, EXTCODECOPY = extcode.FAMILIES


@pytest.mark.workload(family=EXTCODESIZE)
def test_extcodesize(workload, fill):
    fill(workload)


@pytest.mark.workload(family=EXTCODEHASH)
def test_extcodehash(workload, fill):
    fill(workload)


@pytest.mark.workload(family=EXTCODECOPY)
def test_extcodecopy(workload, fill):
    fill(workload)
