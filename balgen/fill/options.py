"""
The options of `balgen fill` that other commands share.

`balgen fill` checks its options before pytest starts, the plugin reads them
again inside pytest, and `balgen export spamoor` takes the same gas values:
one parser and one set of defaults serve all three, so a value is accepted or
refused the same way everywhere.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from ..plumbing.errors import BadInput

DEFAULT_GAS_BENCHMARK_VALUES = "30,60"
DEFAULT_OUTPUT = "fixtures"


MIN_GAS_VALUE = 1_000_000
"""The smallest benchmark gas value: every family's largest single transaction (an `interact` call,
about 0.33M gas) fits, and it is the size the tests fill at."""
MAX_GAS_VALUE = 1_000_000_000
"""The largest: the 1,000M that block gas limits are studied toward; past it a fill or export would
run for hours on values no client accepts (mainnet is at 60M)."""


def parse_gas_benchmark_values(text: str) -> list[int]:
    """
    `30,60` -> [30_000_000, 60_000_000]: whole gas amounts from MIN_GAS_VALUE to
    MAX_GAS_VALUE; anything else is bad input. The one rule for `balgen fill`, its
    pytest plugin and `balgen export`.
    """
    values = []
    for part in text.split(","):
        part = part.strip()
        try:
            gas = Decimal(part) * 1_000_000
        except InvalidOperation:
            raise BadInput(f"--gas-benchmark-values: {part!r} is not a number of millions (e.g. 30,60)") from None
        if not gas.is_finite() or gas != gas.to_integral_value():
            raise BadInput(f"--gas-benchmark-values: {part!r} is not a whole amount of gas in millions (e.g. 30,60)")
        if not MIN_GAS_VALUE <= gas <= MAX_GAS_VALUE:
            raise BadInput(
                f"--gas-benchmark-values: {part!r} is outside {MIN_GAS_VALUE // 1_000_000} to "
                f"{MAX_GAS_VALUE // 1_000_000} (millions of gas)"
            )
        values.append(int(gas))
    if len(set(values)) != len(values):
        raise BadInput(f"--gas-benchmark-values: {text!r} lists a value twice")
    return values
