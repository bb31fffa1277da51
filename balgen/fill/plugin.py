"""
balgen's pytest plugin: turns the fillers in `fillers/` into fixtures.

It is registered through the `pytest11` entry point `balgen.fill.plugin`, so it is
loaded into every pytest run of the environment balgen is installed in; it
acts only in a run that collects the fillers (`fills`), and leaves every other
run (the project's own tests, another project's) as it is: no signal handlers,
no scratch folder, no rewritten failure reports.

A filler is a test marked with the generator of its workload family:

    @pytest.mark.workload(family=serial_chain.FAMILY)
    def test_serial_chain(workload, fill):
        fill(workload)

The plugin parametrizes `workload` over every fill level, the family's variants and
`--gas-benchmark-values` entry, with the fixture name as the test id (so `-k`
selects by name), and `fill` builds, checks and writes the fixtures. A check
that fails is reported in one line naming the fixture; bad input (fork, gas
values, t8n binary, output folder) ends the run with exit code 2.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
import threading
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from ..analysis.tracer import ACCESS_TRACER
from ..calibration import calibrated_fork, check_t8n
from ..chain.header import has_block_access_list
from ..chain.state_roots import state_root_tool
from ..chain.t8n import TransitionTool
from ..plumbing.command_line import BAD_INPUT_EXIT_CODE
from ..plumbing.errors import BadInput, FillCheckFailed
from .session import FillResult, FillSession
from .options import DEFAULT_GAS_BENCHMARK_VALUES, DEFAULT_OUTPUT, parse_gas_benchmark_values
from ..ethereum.forks import DEFAULT_FORK, Fork, fork_by_name
from ..model.family import Family, PlannedWorkload
from ..generators.catalog import named_in, planned_workloads
from ..chain.background_state import BuiltState, load_built
from ..generators.code_set import DEFAULT_CODE_SIZES, parse_code_sizes
from ..plumbing.stop_signals import (
    install_stop_handlers, redeliver_lost_stops, restore_handlers, restore_unraisable_hook,
)  # fmt: skip
from ..plumbing.toolchain import required_tool
from ..model.workload import Placement, Workload

_session_key = pytest.StashKey[FillSession]()
_scratch_key = pytest.StashKey[Path]()
_signal_handlers_key = pytest.StashKey[dict[int, object]]()
_unraisable_hook_key = pytest.StashKey[Any]()
_options_key = pytest.StashKey["FillOptions"]()
_gc_thresholds_key = pytest.StashKey[tuple[int, int, int]]()

FILL_GC_THRESHOLDS = (20_000, 20, 100)
"""
The garbage collector's thresholds while a worker fills. A fill holds
hundreds of thousands of long-lived objects (a workload's transactions, an
access list's accounts, their renderings) and makes almost no reference
cycles, yet under the default (700, 10, 10) a full collection walked all of
them about twice per fixture: 1.8 s of 18 fixtures' 50 s. Under these, twice in all.
"""
_fills_key = pytest.StashKey[bool]()


def filler_folder() -> Path:
    """Where the fillers are: `fillers/` of the checkout, or `balgen/fillers/` of an installed wheel."""
    try:
        return Path(str(resources.files("balgen.fillers")))
    except ModuleNotFoundError:  # an editable install made before the fillers became `balgen.fillers`
        raise BadInput("balgen.fillers is not installed: reinstall balgen (`pip install -e '.[dev]'` in the checkout)") from None


def fills(config: pytest.Config) -> bool:
    """Whether this run collects balgen's fillers: one of its paths is, or lies in, the filler folder."""
    if _fills_key not in config.stash:
        fillers = filler_folder().resolve()
        paths = [(config.invocation_params.dir / argument.split("::")[0]).resolve() for argument in config.args]
        config.stash[_fills_key] = any(path == fillers or fillers in path.parents for path in paths)
    return config.stash[_fills_key]


class FillOptions:
    """The validated command-line options of a fill run."""

    def __init__(
        self,
        fork: Fork,
        gas_benchmark_values: list[int],
        evm_bin: Path,
        output: Path,
        placement: Placement,
        code_sizes: tuple[str, ...],
        state_root_bin: Path | None = None,
        background: BuiltState | None = None,
    ):
        self.fork = fork
        self.gas_benchmark_values = gas_benchmark_values
        self.evm_bin = evm_bin
        self.output = output
        self.placement = placement
        self.code_sizes = code_sizes
        self.state_root_bin = state_root_bin
        """`balgen-state-root`, for forks whose shared-genesis chains are applied (see `applied_chain`)."""
        self.background = background
        """The built background state the shared genesis goes into (`balgen fill --state`), if any."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("balgen", "balgen fill")
    group.addoption("--fork", default=DEFAULT_FORK.name, help="fork to fill for (Amsterdam, Osaka, Prague)")
    group.addoption(
        "--gas-benchmark-values",
        default=DEFAULT_GAS_BENCHMARK_VALUES,
        help="benchmark block gas values in millions, comma separated (default 30,60)",
    )
    group.addoption("--evm-bin", default=None, help="t8n binary (default: the pinned go-ethereum evm)")
    group.addoption("--output", default=DEFAULT_OUTPUT, help="fixture output folder (default fixtures/)")
    group.addoption(
        "--setup",
        default=Placement.BLOCKS.value,
        choices=[p.value for p in Placement],
        help="where pre-existing contracts come from: setup blocks or the genesis alloc",
    )
    group.addoption(
        "--state-folder",
        default=None,
        help="a built background state's folder (balgen fill --state builds it and gives it here)",
    )
    group.addoption(
        "--state-workload-slots",
        type=int,
        default=0,
        help="the --state recipe's workload slots: each group account that has code gets that many more",
    )
    group.addoption(
        "--code-sizes",
        default=",".join(DEFAULT_CODE_SIZES),
        help="contract set sizes in KB for the extcode* families, e.g. 0.5,24,64, or all (default 0.5)",
    )


def read_options(config: pytest.Config) -> FillOptions:
    """Validate the fill options; raises BadInput with a one-line reason."""
    evm = config.getoption("evm_bin")
    fork = fork_by_name(config.getoption("fork"))
    options = FillOptions(
        fork=fork,
        gas_benchmark_values=parse_gas_benchmark_values(config.getoption("gas_benchmark_values")),
        evm_bin=Path(evm) if evm else required_tool("evm", "give --evm-bin"),
        output=Path(config.getoption("output")),
        placement=Placement(config.getoption("setup")),
        code_sizes=parse_code_sizes(config.getoption("code_sizes"), fork),
        state_root_bin=state_root_tool() if has_block_access_list(fork) else None,
        background=None
        if config.getoption("state_folder") is None
        else load_built(Path(config.getoption("state_folder")), config.getoption("state_workload_slots")),
    )
    return options


def filling_fork(t8n: TransitionTool, fork: Fork, workdir: Path) -> Fork:
    """
    `fork` with the gas rules `t8n` implements, once `t8n` has shown it runs
    balgen's access tracer and reports true state roots: what a fill needs
    of its t8n, checked before any fixture (`calibration.check_t8n`).
    """
    calibrated = calibrated_fork(t8n, fork, workdir / "gas")
    check_t8n(t8n, fork, workdir / "check", ACCESS_TRACER)
    return calibrated


def missing_tools(fork: Fork) -> None:
    """`BadInput` naming the first helper binary the fill of `fork` needs and cannot find (`balgen-state-root`)."""
    if has_block_access_list(fork):
        state_root_tool()


SCRATCH_ENV = "BALGEN_FILL_SCRATCH"
"""The run's scratch folder, exported so that pytest-xdist's workers (which inherit it) work inside it."""


def pytest_configure(config: pytest.Config) -> None:
    """
    The controlling process owns one scratch folder for the whole run, which
    every worker's scratch lives in, so that removing it at the end leaves
    nothing behind even when a worker was killed. SIGTERM, SIGHUP and SIGQUIT
    become a KeyboardInterrupt (`stop_signals`), so a terminated fill unwinds
    as an interrupted one: t8n stopped, no partial fixture, scratch removed.
    """
    config.addinivalue_line("markers", "workload(family): a balgen workload family filler")
    if not fills(config):
        return
    _stopped_by.clear()  # a fill run in-process after an interrupted one starts afresh
    _collection_errors.clear()
    _filled_names.clear()
    if threading.current_thread() is threading.main_thread():
        config.stash[_signal_handlers_key] = install_stop_handlers()
    if not hasattr(config, "workerinput"):
        scratch = Path(tempfile.mkdtemp(prefix="balgen-fill-"))
        config.stash[_scratch_key] = scratch
        os.environ[SCRATCH_ENV] = str(scratch)


def pytest_unconfigure(config: pytest.Config) -> None:
    if not fills(config):
        return
    scratch = config.stash.get(_scratch_key, None)
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
        # What workers killed mid-write left (and the empty folder itself). An xdist
        # controller collects nothing, so it takes the output from the option.
        output = Path(config.getoption("output", DEFAULT_OUTPUT))
        shutil.rmtree(_staging_folder(output, scratch), ignore_errors=True)
        if os.environ.get(SCRATCH_ENV) == str(scratch):
            del os.environ[SCRATCH_ENV]
    previous = config.stash.get(_signal_handlers_key, None)
    if previous is not None:
        restore_handlers(previous)


_stopped_by: list[BaseException] = []


@pytest.hookimpl(wrapper=True)
def pytest_keyboard_interrupt(excinfo: pytest.ExceptionInfo[BaseException]) -> Iterator[None]:
    """
    Record the stop first, then let pytest describe it. A stop that lands
    where Python keeps no line number (a frame whose `tb_lineno` is None)
    made pytest's own description of it fail with a TypeError, and then its
    end-of-session report of the stop with an AssertionError (no description
    kept): the fill ended with that traceback and exit 1 instead of its one
    line and 128 + the signal. So the entries without a line are left out
    of what pytest describes; the stop is reported by `balgen fill` either way.
    """
    record_stop(excinfo)
    excinfo.traceback = excinfo.traceback.filter(_has_line_number)
    return (yield)


def _has_line_number(entry: pytest.TracebackEntry) -> bool:
    """Whether pytest can say where `entry` is (its `lineno` raises TypeError where Python kept none)."""
    try:
        return entry.lineno is not None
    except TypeError:
        return False


def record_stop(excinfo: pytest.ExceptionInfo[BaseException]) -> None:
    """Remember the interrupt that stopped this fill (`stopped_by`)."""
    if isinstance(excinfo.value, pytest.Session.Interrupted):
        return  # pytest's own "N errors during collection", a KeyboardInterrupt in name only
    _stopped_by.append(excinfo.value)


class CollectionError:
    """Why a filler module could not be collected: balgen's bad input (a `UsageError`), or anything else."""

    def __init__(self, node_id: str, report_text: str) -> None:
        self.node_id = node_id
        self.cause = collection_cause(report_text)
        self.bad_input = "UsageError" in report_text


_collection_errors: list[CollectionError] = []


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """Remember why a filler module could not be collected (xdist forwards its workers' reports here)."""
    if report.failed:
        _collection_errors.append(CollectionError(report.nodeid, report.longreprtext))


def collection_cause(text: str) -> str:
    """The cause line of a collection error's report: its last `E   ...` line, a usage error's message alone."""
    causes = [line[1:].strip() for line in text.splitlines() if line.startswith("E ") and line[1:].strip()]
    cause = causes[-1] if causes else next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")
    return cause.removeprefix("pytest.UsageError: ").removeprefix("UsageError: ") or "(no message)"


def collection_errors() -> list[CollectionError]:
    """Each filler module this process's last fill could not collect, with why."""
    return list(_collection_errors)


def stopped_by() -> BaseException | None:
    """The interrupt (Ctrl-C's, or `stop_signals.Stopped`) that stopped this process's fill, else None."""
    return _stopped_by[0] if _stopped_by else None


_filled_names: list[str] = []


def filled_names() -> frozenset[str]:
    """The fixtures this process's last fill wrote (for `balgen fill --verify`)."""
    return frozenset(_filled_names)


def _scratch_parent(config: pytest.Config) -> Path:
    """The run's scratch folder: the controller's own, or the one a worker inherited."""
    return config.stash.get(_scratch_key, None) or Path(os.environ[SCRATCH_ENV])


def _staging_folder(output: Path, run_scratch: Path) -> Path:
    """The hidden folder in `output` where the run's workers write before renaming."""
    return output / f".{run_scratch.name}"


def _options(config: pytest.Config) -> FillOptions:
    if _options_key not in config.stash:
        try:
            options = read_options(config)
            # Every schedule is sized with the gas rules of the t8n that fills it.
            t8n = TransitionTool(options.evm_bin)
            t8n.version()
            calibration = Path(tempfile.mkdtemp(prefix="calibration-", dir=_scratch_parent(config)))
            options.fork = filling_fork(t8n, options.fork, calibration)
            config.stash[_options_key] = options
        except BadInput as error:
            raise pytest.UsageError(str(error)) from None
    return config.stash[_options_key]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("workload")
    if marker is None or "workload" not in metafunc.fixturenames or not fills(metafunc.config):
        return
    options = _options(metafunc.config)
    family: Family = marker.kwargs["family"]
    if not named_in(family, metafunc.config.option.keyword or None):
        return  # an opt-in family: its filler collects nothing unless `-k` names it
    params = list(planned_workloads(family, options.fork, options.gas_benchmark_values, options.placement, options.code_sizes))
    ids = [planned.name for planned in params]
    metafunc.parametrize("workload", params, ids=ids, indirect=True)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # trylast: after `-k`/`-m` deselection, so the run's pre-alloc group holds
    # only the workloads that are actually filled.
    not_asked_for = [item for item in items if _unasked_opt_in(item)]
    if not_asked_for:
        items[:] = [item for item in items if item not in not_asked_for]
        config.hook.pytest_deselected(items=not_asked_for)
    planned = [
        item.callspec.params["workload"]
        for item in items
        if hasattr(item, "callspec") and isinstance(item.callspec.params.get("workload"), PlannedWorkload)
    ]
    if not planned:
        return
    options = _options(config)
    try:
        t8n = TransitionTool(options.evm_bin)
        t8n.version()
    except BadInput as error:
        raise pytest.UsageError(str(error)) from None
    run_scratch = _scratch_parent(config)
    config.stash[_session_key] = FillSession(
        t8n=t8n,
        output=options.output,
        all_gas_values=options.gas_benchmark_values,
        planned=planned,
        scratch=Path(tempfile.mkdtemp(prefix="session-", dir=run_scratch)),
        staging=_staging_folder(options.output, run_scratch),
        group_folder=run_scratch / "group",
        state_root_bin=options.state_root_bin,
        background=options.background,
    )
    config.stash[_gc_thresholds_key] = gc.get_threshold()
    gc.set_threshold(*FILL_GC_THRESHOLDS)


def _unasked_opt_in(item: pytest.Item) -> bool:
    """An opt-in family's filler that `pytest_generate_tests` left unparametrized: `-k` did not name it."""
    marker = item.get_closest_marker("workload")
    return marker is not None and not hasattr(item, "callspec") and marker.kwargs["family"].opt_in


@pytest.fixture
def workload(request: pytest.FixtureRequest) -> Workload:
    """The workload of this test id, built by its family's generator."""
    planned: PlannedWorkload = request.param
    try:
        return planned.build()
    except FillCheckFailed as error:
        raise FillCheckFailed(f"{request.node.callspec.id}: {error}") from None


@pytest.fixture
def fill(request: pytest.FixtureRequest) -> Callable[[Workload], FillResult]:
    """Fill a workload: build its chains, check them and write its fixtures."""
    session = request.config.stash[_session_key]

    def run(workload: Workload) -> FillResult:
        result = session.fill(workload, test_function=request.node.nodeid.split("[", 1)[0])
        request.node.user_properties.append(
            (
                "balgen_fixture",
                {
                    "name": result.name,
                    "txs": result.tx_count,
                    "gas_used": result.gas_used,
                    "t8n_seconds": result.t8n_seconds,
                    "one_pass_seconds": result.one_pass_seconds,
                    "one_pass_cpu_seconds": result.one_pass_cpu_seconds,
                    "stages": result.stages,
                },
            )
        )
        return result

    return run


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[Any]:
    report = yield
    if not fills(item.config):
        return report
    if call.excinfo is not None and isinstance(call.excinfo.value, (FillCheckFailed, BadInput)):
        name = item.callspec.id if hasattr(item, "callspec") else item.name
        message = str(call.excinfo.value)
        if not message.startswith(name):
            message = f"{name}: {message}"
        report.longrepr = message
        kind = "bad_input" if isinstance(call.excinfo.value, BadInput) else "check"
        report.user_properties.append(("balgen_failure", {"kind": kind, "message": message}))
    return report


def _reported(reporter: Any, key: str, *, passed_calls_only: bool = False) -> list[dict[str, Any]]:
    """Values balgen attached under `key` to the run's reports (xdist carries them over)."""
    return [
        value
        for reports in reporter.stats.values()
        for report in reports
        if not passed_calls_only or (getattr(report, "when", "") == "call" and report.passed)
        for name, value in getattr(report, "user_properties", [])
        if name == key
    ]


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    filled = _reported(terminalreporter, "balgen_fixture", passed_calls_only=True)
    _filled_names.extend(entry["name"] for entry in filled)
    if filled:
        terminalreporter.write_sep("-", f"balgen: {len(filled)} fixtures filled")
        for entry in sorted(filled, key=lambda e: e["name"]):
            terminalreporter.write_line(f"{entry['name']:<44} {entry['txs']:>6} txs {entry['gas_used']:>13,} gas")
    for failure in _reported(terminalreporter, "balgen_failure"):
        terminalreporter.write_line(f"balgen: FAILED {failure['message']}")


def pytest_sessionstart(session: pytest.Session) -> None:
    """
    A Ctrl-C or stop signal that lands in a finalizer is sent again
    (`stop_signals.redeliver_lost_stops`), not dropped while the fill runs
    on. Installed now, over the hook pytest's unraisable-exception plugin
    sets in its `pytest_configure`, which would only turn it into a warning.
    """
    if fills(session.config) and threading.current_thread() is threading.main_thread():
        session.config.stash[_unraisable_hook_key] = redeliver_lost_stops()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not fills(session.config):
        return
    previous_hook = session.config.stash.get(_unraisable_hook_key, None)
    if previous_hook is not None:
        restore_unraisable_hook(previous_hook)
    fill_session = session.config.stash.get(_session_key, None)
    if fill_session is not None:
        fill_session.close()
        gc.set_threshold(*session.config.stash[_gc_thresholds_key])
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    if any(failure["kind"] == "bad_input" for failure in _reported(reporter, "balgen_failure")):
        session.exitstatus = BAD_INPUT_EXIT_CODE
