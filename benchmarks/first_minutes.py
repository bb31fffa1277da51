"""
A new user's first minutes, timed as the README reports them: `make test` and `make demo` in a fresh clone
with tools present, against their targets, each run with the machine's speed just before and after it.

The checkout's HEAD (what is committed) is cloned into a temporary folder and the checkout's `tools/` is
hard-linked into it (`cp -al`: the state of a machine that has run `make tools`; a `make` there rebuilds
nothing); `make venv` runs untimed; then each command runs `--runs` times, its wall time and the CPU time
of everything it started (user + system, from the kernel's accounting of waited-for children) measured.
The same work costs up to half more CPU on this project's shared 2-core machine when it is slow, so each
run is printed with the reference loop's CPU time (`balgen.plumbing.machine_speed`) before and after it:
compare runs only where those are alike. The demo's own phase table (fill, verify, replay) is read from
its output. Each command's output is kept in the clone's `first-minutes-logs/`; every 30 s the run prints
its time so far and the last line the command wrote.

    .venv/bin/python benchmarks/first_minutes.py [--runs N] [--only test|demo] [--keep] [--record CSV] [--plot PNG]

`--record CSV` appends every run to CSV (one row each: when it started, the commit, the figures above), and
`--plot PNG` draws every run the CSV holds: each command's wall time against the reference loop, the target
beside it. The project keeps its runs in `docs/first-minutes.csv` and the picture in
`docs/images/first-minutes.png`; `--runs 0 --plot PNG --record CSV` redraws it without running anything.

Exit code 0 when every run passed (whether or not it met its target: this measures, the README says what
was met), 1 when a command failed, 2 for bad input (no tools/ to link, a record that is not one or a
folder for it or the picture that does not exist).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from balgen.plumbing.machine_speed import reference_seconds
from balgen.plumbing.output_files import write_figure_atomically
from balgen.plumbing.processes import cpu_seconds, error_line, start, stop_group
from balgen.plumbing.stop_signals import Stopped, report_stop, stop_exit_code, stop_signals_unwind

ROOT = Path(__file__).resolve().parent.parent

TARGETS = {"test": 240.0, "demo": 360.0}
"""Seconds each `make` target should take with tools present (the project's brief: 4 and 6 minutes)."""

PROGRESS_EVERY = 30.0
"""Seconds between progress lines while a command runs."""

DEADLINE = 3600.0
"""Seconds a command may run before it is stopped (its whole process group) and reported failed."""

PHASE_ROW = re.compile(r"│ (fill|verify|replay)\s+│\s+(\d+) min ([\d.]+) s\s+│\s+(\d+) min ([\d.]+) s")
"""A row of the demo's phase table: the phase, its wall time and its CPU time."""


RECORD_COLUMNS = (
    "started", "commit", "command", "run", "wall_s", "cpu_s", "loop_before", "loop_after", "exit_code",
    "fill_wall_s", "verify_wall_s", "replay_wall_s", "fill_cpu_s", "verify_cpu_s", "replay_cpu_s",
)  # fmt: skip
"""The record's columns: a run's figures as `report` prints them (a phase's are empty for `make test`)."""


class SetUpFailed(Exception):
    """The clone could not be made ready: what failed, in one line."""


class BadRecord(Exception):
    """The record file cannot be read as one: where and why, in one line."""


@dataclass(frozen=True)
class Run:
    """One timed command."""

    target: str
    number: int
    started: str
    """When it started, UTC, to the minute (ISO 8601)."""
    commit: str
    wall: float
    cpu: float
    exit_code: int
    speed_before: float
    speed_after: float
    phases: dict[str, tuple[float, float]]
    """The demo's phases: (wall, CPU) seconds each."""


def last_line(log: Path) -> str:
    """What `log` says last (`error_line` of its final 4 KB: a Go crash's cause, not its stack), shortened for a progress line."""
    with log.open("rb") as handle:
        handle.seek(max(0, log.stat().st_size - 4096))
        return error_line(handle.read().decode(errors="replace"))[:100]


def demo_phases(log: Path) -> dict[str, tuple[float, float]]:
    """The demo's phase table from its output: phase -> (wall, CPU) seconds."""
    phases = {}
    for match in PHASE_ROW.finditer(log.read_text(errors="replace")):
        name, wall_min, wall_s, cpu_min, cpu_s = match.groups()
        phases[name] = (int(wall_min) * 60 + float(wall_s), int(cpu_min) * 60 + float(cpu_s))
    return phases


def timed_make(clone: Path, target: str, number: int, logs: Path) -> Run:
    """`make target` in `clone`, timed; its output in `logs`."""
    log = logs / f"{target}-{number}.log"
    speed_before = reference_seconds()
    started_at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    cpu_before, started = cpu_seconds(own=False), time.monotonic()
    env = {key: value for key, value in os.environ.items() if key not in ("BALGEN_TOOLS", "VIRTUAL_ENV")}
    with log.open("w") as output:
        process = start(["make", target], cwd=clone, env=env, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            while True:
                try:
                    process.wait(timeout=PROGRESS_EVERY)
                    break
                except subprocess.TimeoutExpired:
                    elapsed = time.monotonic() - started
                    if elapsed > DEADLINE:
                        print(f"  make {target}: stopped after {DEADLINE:.0f} s", flush=True)
                        break
                    print(f"  make {target} (run {number}): {elapsed:4.0f} s  {last_line(log)}", flush=True)
        finally:
            code = stop_group(process)
    wall, cpu = time.monotonic() - started, cpu_seconds(own=False) - cpu_before
    phases = demo_phases(log) if target == "demo" else {}
    return Run(target, number, started_at, head_commit(clone), wall, cpu, code, speed_before, reference_seconds(), phases)


def head_commit(clone: Path) -> str:
    """The clone's commit, abbreviated."""
    return subprocess.run(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)}:{seconds % 60:04.1f}"


def report(runs: list[Run]) -> None:
    """Each run's figures, its target and whether it met it, then the runs sorted by the machine's speed."""
    print()
    print(f"{'command':<10} {'run':>3} {'wall':>7} {'CPU s':>7} {'target':>7} {'met':>4} {'loop before/after':>18}  phases (wall/CPU s)")
    for run in sorted(runs, key=lambda r: (r.target, r.speed_before + r.speed_after)):
        met = "FAIL" if run.exit_code != 0 else ("yes" if run.wall <= TARGETS[run.target] else "no")
        phases = ", ".join(f"{name} {wall:.0f}/{cpu:.0f}" for name, (wall, cpu) in run.phases.items())
        print(
            f"make {run.target:<5} {run.number:>3} {minutes(run.wall):>7} {run.cpu:7.0f} {minutes(TARGETS[run.target]):>7} "
            f"{met:>4} {run.speed_before:8.2f} / {run.speed_after:.2f}  {phases}"
        )
    print("(rows sorted by the reference loop's CPU-s, lower is a quicker machine; a row compares with another only where those are alike)")


def record(runs: list[Run], path: Path) -> None:
    """Append `runs` to the record at `path` (made, with its header, when it does not exist)."""
    new = not path.exists() or path.stat().st_size == 0
    with path.open("a", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        if new:
            writer.writerow(RECORD_COLUMNS)
        for run in runs:
            phases = [f"{run.phases[name][index]:.1f}" if name in run.phases else "" for index in (0, 1) for name in ("fill", "verify", "replay")]
            writer.writerow([
                run.started, run.commit, run.target, run.number, f"{run.wall:.1f}", f"{run.cpu:.1f}",
                f"{run.speed_before:.2f}", f"{run.speed_after:.2f}", run.exit_code, *phases,
            ])  # fmt: skip


def recorded(path: Path) -> list[dict[str, str]]:
    """The runs the record at `path` holds; `BadRecord` naming the file, line and field when one is not a run."""
    try:
        with path.open(newline="") as handle:
            reader = csv.DictReader(handle)
            missing = [column for column in RECORD_COLUMNS if column not in (reader.fieldnames or [])]
            if missing:
                raise BadRecord(f"{path}: line 1: no column {missing[0]!r} (the header must name {', '.join(RECORD_COLUMNS)})")
            rows = list(reader)
    except OSError as error:
        raise BadRecord(f"{path}: {error.strerror or error}") from None
    for line, row in enumerate(rows, start=2):
        if row["command"] not in TARGETS:
            raise BadRecord(f"{path}: line {line}: command {row['command']!r} is neither {' nor '.join(sorted(TARGETS))}")
        for column in ("wall_s", "loop_before", "loop_after", "exit_code"):
            try:
                float(row[column])
            except (TypeError, ValueError):
                raise BadRecord(f"{path}: line {line}: {column} {row[column]!r} is not a number") from None
    return rows


def plot(rows: list[dict[str, str]], path: Path) -> None:
    """
    Each command's wall time against the machine's speed: one point per passed run at the mean of the
    loop's two readings, a bar from one to the other (how far the machine moved during the run), the
    target as a dashed line; runs within their target green, the others orange.
    """
    figure, axes = plt.subplots(1, len(TARGETS), figsize=(13, 5))
    for axis, target in zip(axes, sorted(TARGETS, key=lambda name: TARGETS[name]), strict=True):
        runs = [row for row in rows if row["command"] == target and float(row["exit_code"]) == 0]
        for run in runs:
            before, after, wall = float(run["loop_before"]), float(run["loop_after"]), float(run["wall_s"])
            colour = "tab:green" if wall <= TARGETS[target] else "tab:orange"
            axis.plot([before, after], [wall / 60] * 2, color=colour, alpha=0.5, linewidth=1)
            axis.plot((before + after) / 2, wall / 60, "o", color=colour)
        axis.axhline(TARGETS[target] / 60, linestyle="--", color="grey", label=f"target: {minutes(TARGETS[target])}")
        axis.plot([], [], "o", color="tab:green", label="within the target")
        axis.plot([], [], "o", color="tab:orange", label="over it")
        days = sorted({run["started"][:10] for run in runs})
        when = "" if not days else f", {days[0]}" if len(days) == 1 else f", {days[0]} to {days[-1]}"
        axis.set_title(f"make {target} from a fresh clone with tools present ({len(runs)} runs{when})", fontsize=10)
        axis.set_xlabel("reference loop, CPU-s, before and after the run (lower: a quicker machine)")
        axis.set_ylabel("wall time, minutes")
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    figure.tight_layout()
    try:
        write_figure_atomically(figure, path, dpi=100)
    finally:
        plt.close(figure)


def fresh_clone(into: Path) -> Path:
    """HEAD cloned into `into`, the checkout's tools hard-linked into it, its venv made."""
    clone = into / "balgen"
    for command in (["git", "clone", "-q", str(ROOT), str(clone)], ["cp", "-al", str(ROOT / "tools"), str(clone / "tools")]):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SetUpFailed(f"{' '.join(command[:2])} failed (exit {done.returncode}): {(done.stderr.strip().splitlines() or [''])[-1]}")
    print(f"clone of {head_commit(clone)} in {clone}; make venv ...", flush=True)
    log = into / "venv.log"
    with log.open("w") as output:
        made = subprocess.run(["make", "venv"], cwd=clone, stdout=output, stderr=subprocess.STDOUT, check=False)
    if made.returncode != 0:
        raise SetUpFailed(f"make venv failed in the clone (exit {made.returncode}): {last_line(log)}")
    return clone



def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="times each command runs, alternating (default 1)")
    parser.add_argument("--only", choices=sorted(TARGETS), default=None, help="time one command only")
    parser.add_argument("--keep", action="store_true", help="keep the clone and its logs (printed at the end)")
    parser.add_argument("--record", type=Path, default=None, help="CSV file every run is appended to")
    parser.add_argument("--plot", type=Path, default=None, help="PNG of every run --record's file holds (after this one's)")
    args = parser.parse_args()
    if args.runs < (0 if args.plot else 1):
        print(f"first_minutes: --runs must be at least {0 if args.plot else 1}, not {args.runs}", file=sys.stderr)
        return 2
    if args.plot is not None and args.record is None:
        print("first_minutes: --plot draws the runs of a --record file: name one", file=sys.stderr)
        return 2
    for given in (args.record, args.plot):
        if given is not None and not given.parent.is_dir():
            print(f"first_minutes: {given}: its folder {given.parent} does not exist", file=sys.stderr)
            return 2
    try:
        if args.record is not None and args.record.exists():
            recorded(args.record)  # a record that cannot be read is refused before an hour of runs, not after
    except BadRecord as bad:
        print(f"first_minutes: {bad}", file=sys.stderr)
        return 2
    code = run_and_record(args) if args.runs else 0
    if args.plot is not None and code == 0:
        try:
            plot(recorded(args.record), args.plot)
        except BadRecord as bad:
            print(f"first_minutes: {bad}", file=sys.stderr)
            return 2
        print(f"written {args.plot} from {args.record}", flush=True)
    return code


def run_and_record(args: argparse.Namespace) -> int:
    """The runs `args` ask for, in a fresh clone, appended to `args.record` when given; the exit code."""
    if not (ROOT / "tools" / "bin" / "geth").is_file():
        print(f"first_minutes: {ROOT / 'tools'} has no built tools to link (run `make tools` first)", file=sys.stderr)
        return 2
    targets = [args.only] if args.only else ["test", "demo"]
    with stop_signals_unwind():  # Ctrl-C, SIGTERM, SIGHUP: the running make's group stopped, the clone removed
        try:
            code, runs = measure(targets, args.runs, args.keep)
        except KeyboardInterrupt as stop:
            report_stop("first_minutes: stopped; the running command's processes were stopped and the clone removed")
            return stop_exit_code(stop) if isinstance(stop, Stopped) else 130
    if args.record is not None and runs:
        record(runs, args.record)
        print(f"{len(runs)} runs appended to {args.record}", flush=True)
    return code


def measure(targets: list[str], run_count: int, keep: bool) -> tuple[int, list[Run]]:
    """Each of `targets` timed `run_count` times in a fresh clone; the exit code and the runs."""
    folder = Path(tempfile.mkdtemp(prefix="balgen-first-minutes-"))
    runs: list[Run] = []
    try:
        clone = fresh_clone(folder)
        logs = clone / "first-minutes-logs"
        logs.mkdir()
        for number in range(1, run_count + 1):
            for target in targets:
                print(f"make {target} (run {number} of {run_count}) ...", flush=True)
                runs.append(timed_make(clone, target, number, logs))
                failed = "" if runs[-1].exit_code == 0 else f": {last_line(logs / f'{target}-{number}.log')}"
                print(f"  {minutes(runs[-1].wall)}, {runs[-1].cpu:.0f} CPU-s, exit {runs[-1].exit_code}{failed}", flush=True)
        report(runs)
    except SetUpFailed as failure:
        print(f"first_minutes: {failure}", file=sys.stderr)
        return 1, runs
    finally:
        if keep:
            print(f"kept: {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    return (0 if all(run.exit_code == 0 for run in runs) else 1), runs


if __name__ == "__main__":
    sys.exit(main())
