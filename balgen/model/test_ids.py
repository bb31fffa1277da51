"""
execution-spec-tests' test ids, given to balgen's fixtures beside their short names.

EEST names each fixture by its pytest node id, `path/test_file.py::test_name[params]`, the
params starting with `fork_<Fork>-<format>-benchmark-gas-value_<N>M` and ending with the
test's own. Tools that join benchmark results (benchmarkoor-fetch's `parse_test_titles`) read
the test, the gas value and the opcode from that shape, and leave any other name unparsed, so
balgen records the id in `_info` and in the replay's result files while the files keep their
short `<family>-<fill>[-<variant>]-<gas>M` keys.
"""

from __future__ import annotations

from .workload import Workload, gas_millions

INFO_KEY = "test-id"
"""Where a fixture's `_info` records its EEST-style test id."""


def eest_test_id(test_function: str, workload: Workload, format_name: str) -> str:
    """
    The id of `workload`'s fixture of `format_name`, filled by the pytest test
    `test_function` (`fillers/test_x.py::test_x`).
    """
    params = [
        f"fork_{workload.fork.name}",
        format_name,
        f"benchmark-gas-value_{gas_millions(workload.gas_benchmark_value)}M",
        workload.fill.value,
    ]
    if workload.variant:
        params.append(workload.variant)
    return f"{test_function}[{'-'.join(params)}]"
