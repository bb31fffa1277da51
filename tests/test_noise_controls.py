"""
The means that keep other work out of the timed executions (docs/replay.md, "The noise floor"):
cores for the client and balgen, the client's thread settings recorded, other load detected from
the kernel's counters, the paired stopping rule of a modes run, and changes judged from per-round
ratios; and the agreement rule, written once.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy
import pytest

from balgen.plumbing.errors import BadInput
from balgen.replay.agreement import AgreementPolicy
from balgen.replay.cpu_placement import client_threads, parse_cpu_list, pinned_command
from balgen.replay.disturbance import TICK_MS, CpuSample, cpu_sample, disturbed, other_cpu_ms
from balgen.replay.options import ReplayOptions
from balgen.replay.rounds import Repetitions, paired_ratios, ratio_interval_width
from balgen.replay.run_header import run_method
from balgen.results.confidence import ChangeVerdict, change_between, paired_change
from balgen.results.measurements import Execution, Role, benchmark_statistics
from balgen.results.repeat_policy import RepeatPolicy, RepeatStop


def _fake_proc(root: Path, busy: tuple[int, ...], client: tuple[int, int], own: tuple[int, int]) -> Path:
    """A /proc with the counters `cpu_sample` reads: /proc/stat's cpu line and two processes' stat."""
    user, nice, system, idle, iowait, irq, softirq, steal = busy
    root.mkdir()
    (root / "stat").write_text(f"cpu  {user} {nice} {system} {idle} {iowait} {irq} {softirq} {steal} 0 0\ncpu0 1 2 3\n")
    for name, (utime, stime) in (("42", client), ("self", own)):
        (root / name).mkdir(parents=True, exist_ok=True)
        # The process name may hold spaces and parentheses: fields are read after the last ')'.
        (root / name / "stat").write_text(f"{name} (geth (x) y) S 1 2 3 4 5 6 7 8 9 10 {utime} {stime} 0 0 20 0\n")
    return root


def test_other_processes_cpu_time_is_the_machines_busy_time_less_the_clients_and_balgens(tmp_path: Path) -> None:
    before = cpu_sample(42, _fake_proc(tmp_path / "a", (100, 0, 50, 900, 5, 1, 1, 0), (30, 10), (5, 5)))
    after = cpu_sample(42, _fake_proc(tmp_path / "b", (110, 0, 56, 910, 5, 1, 2, 0), (36, 12), (5, 6)))
    assert before == CpuSample(busy=152, client=40, balgen=10)
    # busy +17 ticks, of which the client 8 and balgen 1: others 8 ticks
    assert other_cpu_ms(before, after) == pytest.approx(8 * TICK_MS)
    assert cpu_sample(None) is None and cpu_sample(424242, tmp_path / "a") is None
    assert other_cpu_ms(before, None) is None


def test_an_execution_is_disturbed_only_beyond_the_limit_and_at_least_a_tick() -> None:
    assert disturbed(40.0, 100.0, limit_percent=25) is True
    assert disturbed(20.0, 100.0, limit_percent=25) is False
    assert disturbed(TICK_MS, 10.0, limit_percent=0) is False, "one tick may be charged to anyone: not enough alone"
    assert disturbed(40.0, 100.0, limit_percent=None) is None, "without a limit it is only recorded"


def test_the_rule_agreement_is_checked_unless_record_or_cold_is_one_policy() -> None:
    assert ReplayOptions().agreement.checked and ReplayOptions().agreement.intake_probes == 3
    for options in (ReplayOptions(agreement_check=False), ReplayOptions(cold=True)):
        assert not options.agreement.checked and options.agreement.intake_probes == 0
        assert run_method(options, ())["agreement"] == "record"
    assert AgreementPolicy(requested=True, cold=False).name == "check"


def test_core_lists_are_checked_against_the_cores_balgen_has() -> None:
    mine = sorted(os.sched_getaffinity(0))
    assert parse_cpu_list(str(mine[0]), "--client-cpus") == (mine[0],)
    assert parse_cpu_list(f"{mine[0]}-{mine[-1]}", "--client-cpus") == tuple(range(mine[0], mine[-1] + 1))
    with pytest.raises(BadInput, match=r"--client-cpus '4096': core 4096 is not one balgen may use"):
        parse_cpu_list("4096", "--client-cpus")
    with pytest.raises(BadInput, match=r"--balgen-cpus 'x': a list of cores"):
        parse_cpu_list("x", "--balgen-cpus")
    with pytest.raises(BadInput, match="3-1 is no range"):
        parse_cpu_list("3-1", "--balgen-cpus")
    assert pinned_command("{bin} --datadir {datadir}", (1,)) == "taskset -c 1 {bin} --datadir {datadir}"


def test_the_clients_cores_and_thread_settings_are_read_from_proc(tmp_path: Path) -> None:
    (tmp_path / "7").mkdir()
    (tmp_path / "7" / "status").write_text("Name:\tgeth\nThreads:\t23\nCpus_allowed_list:\t1\n")
    (tmp_path / "7" / "environ").write_bytes(b"HOME=/root\0GOMAXPROCS=1\0")
    facts = client_threads(7, tmp_path)
    assert facts is not None
    assert (facts["cpus_allowed"], facts["threads"], facts["GOMAXPROCS"], facts["RAYON_NUM_THREADS"]) == ("1", "23", "1", "unset")
    assert client_threads(8, tmp_path) is None and client_threads(None) is None


def _measured(round_number: int, ns: int, mode: str) -> Execution:
    return Execution(
        test_id="t", role=Role.MEASURED, repetition=round_number, payload_index=1, block_number=2, block_hash="0x" + "ab" * 32,
        gas_used=30_000_000, transaction_count=10, status="VALID", new_payload_ns=ns, forkchoice_updated_ns=None,
        known_before_send=False, restarted_before=False, own_timing=None, mode=mode, round=round_number,
    )  # fmt: skip


def test_paired_ratios_join_the_executions_of_one_round() -> None:
    first = [_measured(r, 100, "a") for r in range(3)]
    other = [_measured(0, 110, "b"), _measured(2, 90, "b"), _measured(5, 1, "b")]
    assert paired_ratios(first, other) == [1.1, 0.9], "round 5 has no execution of the first mode"
    assert ratio_interval_width(first, other) is None, "fewer than 6 rounds give no 95% interval"


def test_a_modes_run_with_repeat_auto_stops_its_modes_together_else_at_the_cap() -> None:
    options = ReplayOptions(warmup=0, repeat=8, repeat_auto=True)

    class Benchmark:
        expected_status = "VALID"

    repetitions = Repetitions.of(Benchmark(), options, paired=True)  # type: ignore[arg-type]
    assert repetitions.policy == RepeatPolicy(count=8)
    stops = [repetitions.add_measured(100.0) for _ in range(8)]
    assert stops == [False] * 7 + [True] and repetitions.stop is RepeatStop.CAP
    alone = Repetitions.of(Benchmark(), options)  # type: ignore[arg-type]
    assert alone.policy.auto, "one mode alone keeps its own interval rule"


def test_paired_ratios_call_a_small_change_that_drifting_load_hides_from_the_medians() -> None:
    rng = numpy.random.default_rng(1)
    # 20 rounds whose load drifts by up to 40% from round to round; mode B is 4% faster in every round.
    drift = rng.uniform(0.8, 1.2, 20)
    baseline = list(100 * drift * rng.normal(1, 0.005, 20))
    faster = list(104 * drift * rng.normal(1, 0.005, 20))
    unpaired = change_between(baseline, faster)
    paired = paired_change([b / a for a, b in zip(baseline, faster, strict=True)])
    assert unpaired.verdict is ChangeVerdict.NO_CHANGE and unpaired.high - unpaired.low > 10
    assert paired.verdict is ChangeVerdict.FASTER and 2 < paired.low < 4 < paired.estimate < paired.high < 6
    assert paired_change([1.0, 1.1]).verdict is ChangeVerdict.TOO_FEW


class _FakeMode:
    """A `RoundTaker` whose executions take `ns` in every round (`run_rounds` drives it)."""

    def __init__(self, ns: int, cap: int) -> None:
        options = ReplayOptions(warmup=0, repeat=cap, repeat_auto=True)

        class Benchmark:
            expected_status = "VALID"

        self.ns = ns
        self.failure: str | None = None
        self.repetitions = Repetitions.of(Benchmark(), options, paired=True)  # type: ignore[arg-type]
        self.executions: list[Execution] = []
        self.placement: tuple[int, int] | None = None

    def place(self, placement: tuple[int, int] | None) -> None:
        self.placement = placement

    def execute_once(self) -> bool:
        assert self.placement is not None
        self.executions.append(_measured(self.placement[0], self.ns + self.placement[0] % 2, "m"))
        return self.repetitions.add_measured(self.ns)


def test_the_rounds_of_a_modes_run_stop_together_once_every_ratio_is_known() -> None:
    from balgen.replay.rounds import run_rounds

    steady = [_FakeMode(100_000, cap=30), _FakeMode(110_000, cap=30)]
    run_rounds(steady, paired_width=0.05)
    # 6 rounds: the fewest with a 95% interval of a median; the ratios barely move, so it is narrow at once
    assert [len(mode.executions) for mode in steady] == [6, 6]
    assert all(mode.repetitions.stop is RepeatStop.CI_WIDTH for mode in steady)
    capped = [_FakeMode(100_000, cap=8), _FakeMode(110_000, cap=8)]
    run_rounds(capped, paired_width=0.0)
    assert [len(mode.executions) for mode in capped] == [8, 8] and capped[0].repetitions.stop is RepeatStop.CAP


def test_the_progress_bar_redraws_on_events_with_no_timer_thread_waking_balgen() -> None:
    import io
    import threading

    from rich.console import Console

    from balgen.replay.discovery import FixtureRef
    from balgen.replay.progress import ReplayProgress

    output = io.StringIO()
    console = Console(file=output, force_terminal=True, width=120)
    before = threading.active_count()
    with ReplayProgress(console, total_tests=1) as progress:
        assert threading.active_count() == before, "no refresh thread runs while the client executes"
        progress.test_started(FixtureRef("serial_chain-max-1M", Path("f.json"), "blockchain_test_engine_x"), 7)
        progress.execution_done(_measured(0, 100, "m"))
        assert "serial_chain-max-1M (1/7)" in output.getvalue(), "drawn at the event, not by a timer"


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        (["--disturbance-limit", "-5"], "--disturbance-limit -5.0: a percentage of one core, 0 or more"),
        (["--client-cpus", "4096"], "--client-cpus '4096': core 4096 is not one balgen may use"),
        (["--balgen-cpus", "0-x"], "--balgen-cpus '0-x': a list of cores like 0 or 1-3 or 0,2"),
        (["--client-cpus", "0", "--engine-url", "http://127.0.0.1:1"], "--client-cpus: only for a client balgen starts"),
        (["--settle-limit", "-1"], "--settle-limit -1.0: seconds, 0 or more"),
        (["--settle-limit", "nan"], "--settle-limit nan: seconds, 0 or more"),
    ],
)
def test_bad_noise_options_are_one_line_exit_2_and_write_nothing(
    options: list[str], complaint: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from balgen.commands.replay import run_replay

    output = tmp_path / "out"
    assert run_replay([str(tmp_path), *options, "--output", str(output)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("balgen replay: ") and err.count("\n") == 1 and complaint in err, err
    assert not output.exists()


def test_a_modes_run_is_judged_by_round_ratios_where_three_rounds_pair_else_by_medians() -> None:
    from balgen.results.schema import FixtureResult, RunResult, Verdict
    from balgen.results.significance import changes_against

    def run(mode: str, rounds: dict[str, list[int]]) -> RunResult:
        tests = []
        for test_id, rounds_run in rounds.items():
            # every round 10% slower than the one before (drifting load), mode b 3% faster within each
            executions = [
                _measured(r, int(100_000_000 * 1.1**r / (1.03 if mode == "b" else 1)), mode).model_copy(update={"test_id": test_id})
                for r in rounds_run
            ]  # fmt: skip
            tests.append(FixtureResult(
                test_id=test_id, fixture_name=test_id, path="f.json", format="blockchain_test_engine_x", genesis_hash="0x" + "00" * 32,
                verdict=Verdict.PASSED, failure=None, executions=executions, mode=mode,
                statistics=benchmark_statistics(executions),
            ))  # fmt: skip
        return RunResult(
            label="m", balgen_version="0", started_at="2026-01-01T00:00:00+00:00", fixtures_path="f", keyword=None,
            warmup=0, repeat=8, cold=False, fail_fast=False, target={"kind": "managed"}, tests=tests,
        )  # fmt: skip

    a = run("a", {"paired": list(range(8)), "apart": [0, 1, 2, 3]})
    b = run("b", {"paired": list(range(8)), "apart": [4, 5, 6, 7]})
    changes = changes_against(a, b)
    assert changes["paired"].verdict is ChangeVerdict.FASTER and changes["paired"].estimate == pytest.approx(3.0, abs=0.01)
    # no round in common: judged by medians, where the drift shows as b being much slower
    assert changes["apart"].estimate < -20
    assert changes_against(a, b, paired=False)["paired"].verdict is ChangeVerdict.NO_CHANGE
