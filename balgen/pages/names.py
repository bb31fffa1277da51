"""The family, fill level and gas value a balgen test id spells (`[<namespace>/]<family>-<fill>[-<variant>]-<gas>M`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model.workload import FillLevel

OTHER = "other"
"""The family of a test whose id is not balgen's short form (an EEST fixture)."""
_GAS = re.compile(r"^\d+(\.\d+)?M$")


@dataclass(frozen=True)
class TestName:
    """What a test id says about its test, for the page's filters."""

    family: str
    fill: str
    """`max`, `half` or `greedy`; `-` where the id does not say."""
    gas: str
    """The benchmark gas value, e.g. `60M`; `-` where the id does not say."""


def test_name(test_id: str) -> TestName:
    """
    The parts of a balgen short test id, the family of a namespaced one its
    namespace (`invalid_bal_missing_read/mixed_dep-...` is `invalid_bal_missing_read`);
    `other`, `-`, `-` for any other id.
    """
    namespace, _, short = test_id.rpartition("/")
    parts = short.split("-")
    fills = {level.value for level in FillLevel}
    if len(parts) < 3 or not _GAS.match(parts[-1]) or parts[1] not in fills:
        gas = next((part for part in reversed(parts) if _GAS.match(part)), "-")
        return TestName(OTHER, "-", gas)
    return TestName(namespace or parts[0], parts[1], parts[-1])
