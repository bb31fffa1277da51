"""
The options of `balgen fill` that other commands share.

`balgen fill` checks its options before pytest starts, the plugin reads them
again inside pytest, and `balgen export spamoor` takes the same gas values:
one parser and one set of defaults serve all three, so a value is accepted or
refused the same way everywhere.
"""

from __future__ import annotations

from .errors import BadInput

DEFAULT_GAS_VALUES = "30,60"
DEFAULT_OUTPUT = "fixtures"


def parse_gas_values(text: str) -> list[int]:
    """`30,60` -> [30_000_000, 60_000_000]; anything else is bad input."""
    values = []
    for part in text.split(","):
        part = part.strip()
        try:
            millions = float(part)
        except ValueError:
            raise BadInput(f"--gas-benchmark-values: {part!r} is not a number of millions (e.g. 30,60)") from None
        if not 0 < millions < 1e9 or millions * 1e6 != int(millions * 1e6):
            raise BadInput(f"--gas-benchmark-values: {part!r} must be a positive number of millions")
        values.append(int(millions * 1_000_000))
    if len(set(values)) != len(values):
        raise BadInput(f"--gas-benchmark-values: {text!r} lists a value twice")
    return values
