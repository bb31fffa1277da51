"""
The A/A noise floor of a modes run, and what each of balgen's noise controls contributes to it.

Replays one filled suite several times as an A/A modes run (`--modes full,full`: two nodes of the
same build and flags, executed in interleaved rounds), each time with one more control than the
last, one configuration after the other (never at once: each must have the machine to itself):

1. `as-before`: `--warmup 1 --repeat 4`, the method of docs/bal-modes.md's 18% floor;
2. `more-rounds`: `--repeat auto`, rounds until every test's interval of the median per-round
   ratio spans at most `--ci-width` (or `--repeat-cap` rounds);
3. `disturbance`: and `--disturbance-limit`: executions during which other processes ran are replaced;
4. `cores`: and `--client-cpus`/`--balgen-cpus`: the client on its cores, balgen on its own
   (on 2 cores the client then has one: it is another configuration of the client, recorded).

For each it prints the floor (95th percentile of |Δ| over the tests) judged both ways from the same
executions: by the two runs' medians (`--unpaired`) and by per-round ratios (the report's default
for a modes run), how many tests the pair called changed, the median rounds per test, the
executions replaced as disturbed, and the CPU time other processes took during the executions.

    .venv/bin/python benchmarks/noise_floor.py FIXTURES [--client geth] [-k 30M] [--ci-width 2] [--repeat-cap 40]
        [--client-cpus 1 --balgen-cpus 0] [--disturbance-limit 10] [--only NAME,...] [--work out/noise-floor]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from balgen.results.comparison import compare, load_run, load_runs
from balgen.results.measurements import Role
from balgen.results.schema import RunResult

BALGEN = [sys.executable, "-m", "balgen.commands.main"]


def configurations(args: argparse.Namespace) -> dict[str, list[str]]:
    """Each configuration's own options, every one adding a control to the one before."""
    auto = ["--warmup", "1", "--repeat", "auto", "--ci-width", str(args.ci_width), "--repeat-cap", str(args.repeat_cap)]
    disturbance = [*auto, "--disturbance-limit", str(args.disturbance_limit)]
    return {
        "as-before": ["--warmup", "1", "--repeat", "4"],
        "more-rounds": auto,
        "disturbance": disturbance,
        "cores": [*disturbance, "--client-cpus", args.client_cpus, "--balgen-cpus", args.balgen_cpus],
    }


def floors(run: Path) -> tuple[str, str, int, int]:
    """(unpaired floor, paired floor, tests called changed (paired), tests compared) of an A/A modes run."""
    found = []
    for paired in (False, True):
        comparison = compare(load_runs([run]), paired=paired)
        ((_, _, noise),) = comparison.noise_pairs
        found.append(noise)
    unpaired, paired_noise = found
    shown = ["-" if noise.floor is None else f"{noise.floor:.1f}%" for noise in (unpaired, paired_noise)]
    return shown[0], shown[1], paired_noise.significant, paired_noise.compared


def execution_facts(result: RunResult) -> tuple[float, int, float]:
    """(median measured executions per test and mode, executions replaced as disturbed, other processes' CPU s)."""
    measured = [sum(e.role is Role.MEASURED for e in test.executions) for test in result.tests]
    executions = [e for test in result.tests for e in test.executions if e.role is not Role.SETUP]
    disturbed = sum(bool(e.disturbed) and e.role is Role.DISCARDED for e in executions)
    other = sum(e.other_cpu_ms or 0.0 for e in executions) / 1000
    return (statistics.median(measured) if measured else 0.0), disturbed, other


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fixtures", type=Path, help="a filled suite (e.g. the stateful suite at 30M, see docs/bal-modes.md)")
    parser.add_argument("--client", default="geth", help="the client (a preset with a `full` mode)")
    parser.add_argument("--format", default="engine_x")
    parser.add_argument("-k", dest="keyword", default=None, help="select tests as balgen replay's -k does (e.g. 30M)")
    parser.add_argument("--ci-width", type=float, default=2.0, help="--repeat auto's target width of each ratio's interval, percent")
    parser.add_argument("--repeat-cap", type=int, default=40)
    parser.add_argument("--disturbance-limit", type=float, default=10.0, help="percent of one core")
    parser.add_argument("--client-cpus", default="1")
    parser.add_argument("--balgen-cpus", default="0")
    parser.add_argument("--only", default=None, help="comma-separated configurations to run (default all)")
    parser.add_argument("--work", type=Path, default=Path("out/noise-floor"))
    args = parser.parse_args()
    chosen = configurations(args)
    if args.only:
        chosen = {name: chosen[name] for name in args.only.split(",")}
    rows = []
    for name, options in chosen.items():
        output = args.work / name
        started = time.monotonic()
        command = [
            *BALGEN, "replay", str(args.fixtures), "--format", args.format, "--client", args.client,
            "--modes", "full,full", "--label", name, "--output", str(output), *options,
            *(["-k", args.keyword] if args.keyword else []),
        ]  # fmt: skip
        print(" ".join(command[2:]), flush=True)
        if subprocess.run(command, stdout=subprocess.DEVNULL).returncode not in (0, 1):
            print(f"{name}: the replay did not run (see above)", file=sys.stderr)
            return 2
        seconds = time.monotonic() - started
        unpaired, paired, called, compared = floors(output)
        rounds, disturbed, other = execution_facts(load_run(output, check_figures=False))
        rows.append((name, unpaired, paired, f"{called}/{compared}", f"{rounds:g}", str(disturbed), f"{other:.1f}", f"{seconds:.0f}"))
    header = ("configuration", "floor (medians)", "floor (per-round ratios)", "called", "rounds", "disturbed", "other CPU s", "wall s")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
