"""
Load: one long `balgen replay` against the pinned geth, watching balgen's and
geth's open file descriptors and memory over the run.

Fills every family at 1M gas (39 fixtures) and replays them as
`blockchain_test_engine` fixtures, so that each test gets its own genesis and
therefore its own geth (39 geth starts and stops, each with new Engine API and
RPC clients, slow-block log, datadir), with `--warmup 1 --repeat R`: at the
default R = 20, 39 x (setup payloads + 21) = 852 payloads and about as many
rollbacks. `balgen replay` runs as a subprocess, exactly as a user runs it;
this script samples /proc every 0.2 s: balgen's open file descriptors and
RSS, and the same for every geth running under the run's TMPDIR.

The bound (exit code 1 if broken, 2 if the run itself failed):

- balgen's open file descriptors never exceed `FD_BOUND`, whatever the number
  of groups and payloads (a leak of one descriptor per group or per test
  would pass it within the run);
- balgen's RSS grows by less than `RSS_GROWTH_BOUND_MIB` after warm-up (the
  first 10% of the payloads), over the rest of the run;
- at most one geth runs at any moment, and none is left when balgen exits;
- every test passes and every payload is in `executions.csv`.

    .venv/bin/python benchmarks/replay_soak.py [FIXTURES] [--repeat 20] [--format engine]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from balgen.replay.discovery import discover, load_test
from balgen.replay.outputs import EXECUTIONS_CSV
from balgen.results.schema import RESULTS_JSON, RunResult

FD_BOUND = 16
"""Open descriptors balgen may hold at any sample. It needs about 7 at most: stdio, the
two kept-alive connections to geth, geth's log, the slow-block log while it is read and a result
file being written; a leak of one per group (39 here) or per test would break it."""
RSS_GROWTH_BOUND_MIB = 20.0
"""RSS balgen may gain after warm-up: results accumulate (about 1 kB per execution), nothing else should."""
MIN_PAYLOADS = 500
WARM_UP = 0.1
"""Fraction of the payloads after which memory should be at its working size."""
SAMPLE_SECONDS = 0.2


@dataclass(frozen=True)
class Sample:
    """One look at the processes."""

    seconds: float
    payloads: int
    balgen_fds: int
    balgen_rss_mib: float
    geth_pids: tuple[int, ...]
    geth_fds: int
    geth_rss_mib: float


def _rss_mib(pid: int) -> float:
    for line in (Path("/proc") / str(pid) / "status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _fds(pid: int) -> int:
    return len(os.listdir(Path("/proc") / str(pid) / "fd"))


def geth_pids(scratch: Path) -> tuple[int, ...]:
    """Running geth nodes (not `geth init`, not zombies) whose command line names `scratch`."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and command[0].endswith(b"geth") and b"init" not in command and str(scratch).encode() in b" ".join(command):
            pids.append(int(entry.name))
    return tuple(sorted(pids))


def _payloads_done(output: Path) -> int:
    try:
        with open(output / EXECUTIONS_CSV, "rb") as stream:
            return max(0, sum(1 for _ in stream) - 1)
    except OSError:
        return 0


class Sampler(threading.Thread):
    """Samples balgen (`pid`) and the geth nodes under `scratch` until stopped."""

    def __init__(self, pid: int, scratch: Path, output: Path) -> None:
        super().__init__(daemon=True)
        self.pid, self.scratch, self.output = pid, scratch, output
        self.samples: list[Sample] = []
        self.started = time.monotonic()
        self.stopped = threading.Event()
        self.geth_seen: set[int] = set()

    def run(self) -> None:
        while not self.stopped.wait(SAMPLE_SECONDS):
            try:
                self.samples.append(self.sample())
            except (FileNotFoundError, ProcessLookupError):  # a process ended between the reads
                continue

    def sample(self) -> Sample:
        geths = geth_pids(self.scratch)
        self.geth_seen.update(geths)
        geth_fds = geth_rss = 0.0
        for pid in geths:
            try:
                geth_fds += _fds(pid)
                geth_rss += _rss_mib(pid)
            except OSError:
                continue
        return Sample(
            seconds=time.monotonic() - self.started,
            payloads=_payloads_done(self.output),
            balgen_fds=_fds(self.pid),
            balgen_rss_mib=_rss_mib(self.pid),
            geth_pids=geths,
            geth_fds=int(geth_fds),
            geth_rss_mib=geth_rss,
        )


def planned_payloads(fixtures: Path, formats: str, warmup: int, repeat: int) -> tuple[int, int, int]:
    """(tests, genesis groups, payloads) the replay will send."""
    suite = discover(fixtures, None, formats)
    payloads = 0
    for group in suite.groups:
        for ref in group.tests:
            test = load_test(ref)
            payloads += len(test.setup) + warmup + repeat
    return suite.test_count, len(suite.groups), payloads


def fill(output: Path) -> None:
    """Every family at 1M gas, as `balgen fill` writes them."""
    print(f"filling every family at 1M gas into {output} ...", flush=True)
    subprocess.run(
        [sys.executable, "-m", "balgen.commands.main", "fill", "--gas-benchmark-values", "1", "-n", "2", "--output", str(output)],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def _timeline(samples: list[Sample], total: int) -> None:
    """Per tenth of the payloads, the largest figures sampled while it was being sent."""
    print(f"\n{'payloads':>11} {'until s':>8} {'balgen fds':>11} {'balgen RSS MiB':>15} {'geth nodes':>11} {'geth fds':>9} {'geth RSS MiB':>13}")
    for tenth in range(10):
        low, high = tenth * total // 10, (tenth + 1) * total // 10
        part = [s for s in samples if low <= s.payloads < high or (tenth == 9 and s.payloads >= high)]
        if not part:
            continue
        print(
            f"{f'{low}-{high}':>11} {part[-1].seconds:>8.1f} {max(s.balgen_fds for s in part):>11} "
            f"{max(s.balgen_rss_mib for s in part):>15.1f} {max(len(s.geth_pids) for s in part):>11} "
            f"{max(s.geth_fds for s in part):>9} {max(s.geth_rss_mib for s in part):>13.1f}"
        )


def verdict(samples: list[Sample], total: int, geth_left: tuple[int, ...]) -> bool:
    """Print the figures and the bound; True if the bound holds."""
    warm = [s for s in samples if s.payloads < WARM_UP * total] or samples[:1]
    after = [s for s in samples if s.payloads >= WARM_UP * total] or samples[-1:]
    rss_at_warm_up = max(s.balgen_rss_mib for s in warm)
    growth = max(s.balgen_rss_mib for s in after) - rss_at_warm_up
    max_fds = max(s.balgen_fds for s in samples)
    most_geths = max(len(s.geth_pids) for s in samples)
    with_geth = [s for s in samples if s.geth_pids]
    print(f"\nsamples: {len(samples)} (every {SAMPLE_SECONDS} s)")
    print(
        f"balgen open fds: min {min(s.balgen_fds for s in samples)}, median "
        f"{statistics.median(s.balgen_fds for s in samples):.0f}, max {max_fds} (bound: never above {FD_BOUND})"
    )
    print(
        f"balgen RSS: {rss_at_warm_up:.1f} MiB at warm-up ({WARM_UP:.0%} of the payloads), max after "
        f"{max(s.balgen_rss_mib for s in after):.1f} MiB, at the end {samples[-1].balgen_rss_mib:.1f} MiB: "
        f"growth {growth:+.1f} MiB (bound: < {RSS_GROWTH_BOUND_MIB:.0f} MiB)"
    )
    if with_geth:
        print(
            f"geth: max fds {max(s.geth_fds for s in with_geth)}, max RSS {max(s.geth_rss_mib for s in with_geth):.1f} MiB, "
            f"median RSS {statistics.median(s.geth_rss_mib for s in with_geth):.1f} MiB"
        )
    print(f"geth nodes at once: at most {most_geths} (bound: 1); left after the run: {len(geth_left)} (bound: 0)")
    held = max_fds <= FD_BOUND and growth < RSS_GROWTH_BOUND_MIB and most_geths <= 1 and not geth_left
    print(f"bound: {'held' if held else 'BROKEN'}")
    return held


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fixtures", type=Path, nargs="?", help="a balgen fill output folder (default: fill every family at 1M now)")
    parser.add_argument("--repeat", type=int, default=20, help="measured executions per test (default 20)")
    parser.add_argument("--format", default="engine", choices=["engine", "engine_x", "auto"], help="default engine: one geth per test")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="balgen-soak-") as folder:
        work = Path(folder)
        fixtures = args.fixtures or work / "fixtures"
        if args.fixtures is None:
            fill(fixtures)
        tests, groups, total = planned_payloads(fixtures, args.format, 1, args.repeat)
        print(f"replaying {tests} tests in {groups} genesis groups: {total} payloads (--warmup 1 --repeat {args.repeat})")
        if total < MIN_PAYLOADS:
            print(f"fewer than {MIN_PAYLOADS} payloads: raise --repeat", file=sys.stderr)
            return 2
        scratch, output = work / "tmp", work / "run"
        scratch.mkdir()
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "balgen.commands.main", "replay", str(fixtures), "--format", args.format, "--warmup", "1",
             "--repeat", str(args.repeat), "--label", "soak", "--output", str(output)],
            env=os.environ | {"TMPDIR": str(scratch)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        sampler = Sampler(process.pid, scratch, output)
        sampler.start()
        _, stderr = process.communicate()
        sampler.stopped.set()
        sampler.join()
        left = geth_pids(scratch)
        wall = time.monotonic() - started
        run = RunResult.model_validate_json((output / RESULTS_JSON).read_text())
        sent = _payloads_done(output)
        print(
            f"balgen replay exited with {process.returncode} after {wall:.1f} s: {run.counts}, {sent} payloads sent, "
            f"{len(sampler.geth_seen)} geth nodes seen"
        )
        if process.returncode != 0 or sent != total or not sampler.samples:
            print(stderr.decode(errors="replace")[-2000:], file=sys.stderr)
            print("the run did not pass every test or send every payload", file=sys.stderr)
            return 2
        _timeline(sampler.samples, total)
        return 0 if verdict(sampler.samples, total, left) else 1


if __name__ == "__main__":
    sys.exit(main())
