"""
Fillers for `invalid_bal_<family>` (opt-in, `-k invalid_bal`): a benchmark block sent first with an
access list that lies, which the client must reject, then as it is. One filler per family whose
declaration says its block gets invalid twins (`Family.lies_it_cannot_tell`).
"""

import pytest

from balgen.generators import invalid_bal
from balgen.generators.catalog import families
from balgen.model.family import Family


def _filler(family: Family):
    @pytest.mark.workload(family=family)
    def filler(workload, fill):
        fill(workload)

    filler.__name__ = filler.__qualname__ = f"test_{family.name}"
    filler.__doc__ = f"{family.name.removeprefix(invalid_bal.FAMILY_PREFIX)}'s benchmark block, first with a lying access list."
    return filler


for _family in invalid_bal.twins(families()):
    globals()[f"test_{_family.name}"] = _filler(_family)
