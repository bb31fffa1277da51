"""
Each test's CPU seconds, its children's included, printed beside `--durations`.

On a machine shared with other work, wall-clock durations say more about the
load than about the test; user + system time of the test process and every
process it waited for (its subprocesses, and the orphans it reaps as their
subreaper) is what a quiet run's wall time follows.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from balgen.plumbing.machine_speed import reference_line
from balgen.plumbing.processes import cpu_seconds

CPU_PROPERTY = "cpu_seconds"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    item.stash[_started] = cpu_seconds()
    return (yield)


_started = pytest.StashKey[float]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    report: pytest.TestReport = yield
    if call.when == "teardown" and _started in item.stash:
        report.user_properties.append((CPU_PROPERTY, cpu_seconds() - item.stash[_started]))
    return report


class CpuTable:
    """Collects the reports' CPU seconds (from every xdist worker) and prints the largest at the end."""

    def __init__(self) -> None:
        self.by_test: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == CPU_PROPERTY and report.when == "teardown":
                self.by_test[report.nodeid] = float(value)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        count = terminalreporter.config.getoption("durations")
        if count is None or not self.by_test:
            return
        by_module: dict[str, float] = defaultdict(float)
        for nodeid, seconds in self.by_test.items():
            by_module[nodeid.split("::")[0]] += seconds
        shown = len(self.by_test) if count == 0 else count
        terminalreporter.write_sep("=", f"largest {shown} test CPU seconds (children included)")
        for nodeid, seconds in sorted(self.by_test.items(), key=lambda row: -row[1])[:shown]:
            terminalreporter.write_line(f"{seconds:8.1f}s  {nodeid}")
        terminalreporter.write_sep("-", f"largest {min(shown, len(by_module))} modules, CPU seconds")
        for module, seconds in sorted(by_module.items(), key=lambda row: -row[1])[:shown]:
            terminalreporter.write_line(f"{seconds:8.1f}s  {module}")
        terminalreporter.write_line(f"{sum(self.by_test.values()):8.1f}s  in all tests")
        terminalreporter.write_line(reference_line())


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(CpuTable(), "cpu_table")
