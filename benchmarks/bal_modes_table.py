"""
docs/bal-modes.md's table again, in one command: the stateful suite at 30M and 60M on geth and reth in
each client's modes (sequential, full, nobatchio, geth-bal-switch's executionless, and full again: the A/A pair), with balgen's noise controls,
each test's verdict judged against that run's own A/A floor, and the regressions that floor lets it call.

Per client: fill the suite (geth's fixtures with go-ethereum v1.17.10's t8n, reth's with v1.17.5's,
as docs/bal-modes.md says why), replay it as one modes run, take the floor of its `full#2`/`full` pair
(per-round ratios), then `balgen report RUN --noise-threshold FLOOR` writes the tables, every test's
verdict and the pictures to `WORK/<client>-report/`. It ends with a summary per client: the floor, and
the significant regressions against `sequential` beyond it. Runs take the machine to themselves: one
after the other, nothing else running (geth's run took 5 minutes, reth's 35 on 2 cores before the
noise controls; expect more rounds now).

    .venv/bin/python benchmarks/bal_modes_table.py [--work out/bal-modes] [--clients geth,reth]
        [--ci-width 2] [--repeat-cap 40] [--disturbance-limit 10] [--client-cpus CPUS --balgen-cpus CPUS]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from balgen.clients.kinds import kind_named
from balgen.results.comparison import compare, load_runs

BALGEN = [sys.executable, "-m", "balgen.commands.main"]
FILL = ["fill", "--gas-benchmark-values", "30,60", "--setup", "genesis", "-k", "not extcode"]
FILL_T8N = {"geth": [], "reth": ["--evm-bin", "tools/v1.17.5/bin/evm"]}
"""reth 7b3432d implements the Amsterdam of go-ethereum v1.17.5's t8n (docs/bal-modes.md)."""


def modes_of(client: str) -> str:
    """Every built-in mode of `client` (geth-bal-switch's `executionless` too), then `full` again: the A/A pair."""
    return ",".join([*kind_named(client).modes, "full"])


def run(command: list[str]) -> int:
    """Run one balgen command, echoing it; its exit code."""
    print("balgen " + " ".join(command), flush=True)
    return subprocess.run([*BALGEN, *command]).returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("out/bal-modes"))
    parser.add_argument("--clients", default="geth,reth")
    parser.add_argument("--ci-width", type=float, default=2.0)
    parser.add_argument("--repeat-cap", type=int, default=40)
    parser.add_argument("--disturbance-limit", type=float, default=10.0)
    parser.add_argument("--client-cpus", default=None, help="e.g. 1 (on 2 cores the client then has one: see docs/replay.md)")
    parser.add_argument("--balgen-cpus", default=None)
    args = parser.parse_args()
    controls = ["--repeat", "auto", "--ci-width", str(args.ci_width), "--repeat-cap", str(args.repeat_cap),
                "--disturbance-limit", str(args.disturbance_limit)]  # fmt: skip
    for option, value in (("--client-cpus", args.client_cpus), ("--balgen-cpus", args.balgen_cpus)):
        controls += [option, value] if value else []
    summary = []
    for client in args.clients.split(","):
        fixtures, output, report = (args.work / f"{client}-{part}" for part in ("fx", "modes", "report"))
        if not fixtures.exists() and run([*FILL, "--output", str(fixtures), *FILL_T8N[client]]) != 0:
            return 2
        replayed = run(["replay", str(fixtures), "--format", "engine_x", "--client", client, "--modes", modes_of(client),
                        "--warmup", "1", *controls, "--label", f"{client}-modes", "--output", str(output)])  # fmt: skip
        if replayed not in (0, 1):
            return 2
        runs = load_runs([output])
        ((_, _, noise),) = compare(runs).noise_pairs
        floor = noise.floor or 0.0
        if run(["report", str(output), "--noise-threshold", f"{floor:.1f}", "--output", str(report)]) != 0:
            return 2
        judged = compare(runs, worst=1000, noise_threshold=floor)
        called = [f"{r.name.removeprefix(client + '-modes-')} {r.test_id} {r.delta:+.1f}%" for r in judged.worst]
        summary.append(f"{client}: A/A floor {floor:.1f}% ({noise.significant}/{noise.compared} tests called in the pair); "
                       f"regressions beyond it: {', '.join(called) or 'none'}; tables in {report / 'report.md'}")  # fmt: skip
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
