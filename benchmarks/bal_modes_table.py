"""
docs/bal-modes.md's table again, in one command: the stateful suite at 30M and 60M on geth and reth in
each client's modes (sequential, full, nobatchio, geth-bal-switch's executionless, and full again: the A/A pair), with balgen's noise controls,
each test's verdict judged against that run's own A/A floor, and the regressions that floor lets it call.

Per client: fill the suite (geth's fixtures with go-ethereum v1.17.10's t8n, reth's with v1.17.5's,
as docs/bal-modes.md says why), replay it as one modes run, take the floor of its `full#2`/`full` pair
(per-round ratios), then `balgen report RUN --noise-threshold FLOOR` writes the tables, every test's
verdict and the pictures to `WORK/<client>-report/`. It ends with a summary per client: the floor, and
the significant regressions against `sequential` beyond it. Runs take the machine to themselves: one
after the other, nothing else running (geth's run took 17 minutes with `--repeat-cap 12`; reth's took 35
for 4 rounds while each node was restarted after every test, about 10 expected with `--repeat-cap 12` now
that its head stays on the genesis: docs/bal-modes.md, "Towards a 5% floor").

With `--state RECIPE` the suite is filled over that background state (docs/state.md) and replayed into
each client over it; `--cold` restarts each node before every measured execution and `--drop-caches`
also drops the page cache then, so a cold run reads the state from disk. Fixtures, runs and reports of
a state and a temperature get folders of their own (`WORK/geth-mainnet-tenth-cold-modes`...).

    .venv/bin/python benchmarks/bal_modes_table.py [--work out/bal-modes] [--clients geth,reth]
        [--repeat auto|N] [--ci-width 2] [--repeat-cap 40] [--disturbance-limit 10] [--client-cpus CPUS --balgen-cpus CPUS]
        [--state RECIPE] [--cold [--drop-caches]] [--gas 30,60] [-k KEYWORD] [--modes A,B,...]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

from balgen.clients.kinds import kind_named
from balgen.results.comparison import compare, load_runs

BALGEN = [sys.executable, "-m", "balgen.commands.main"]
FILL = ["fill", "--setup", "genesis", "-k", "not extcode"]
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
    parser.add_argument("--repeat", default="auto", help="rounds: auto (stop on --ci-width or --repeat-cap) or a number")
    parser.add_argument("--ci-width", type=float, default=2.0)
    parser.add_argument("--repeat-cap", type=int, default=40)
    parser.add_argument("--disturbance-limit", type=float, default=10.0)
    parser.add_argument("--client-cpus", default=None, help="e.g. 1 (on 2 cores the client then has one: see docs/replay.md)")
    parser.add_argument("--balgen-cpus", default=None)
    parser.add_argument("--modes", default=None, help="the modes to run (default: every built-in mode, then full again)")
    parser.add_argument("--gas", default="30,60", help="the gas values (millions) the suite is filled at")
    parser.add_argument("--state", default=None, help="fill and replay over this background state (a preset or recipe)")
    parser.add_argument("--cold", action="store_true", help="restart each node before every measured execution")
    parser.add_argument("--drop-caches", action="store_true", help="with --cold: drop the page cache too")
    parser.add_argument("-k", dest="keyword", default=None, help="replay only the tests this selects (balgen replay -k)")
    args = parser.parse_args()
    stopping = ["--ci-width", str(args.ci_width), "--repeat-cap", str(args.repeat_cap)] if args.repeat == "auto" else []
    controls = ["--repeat", args.repeat, *stopping, "--disturbance-limit", str(args.disturbance_limit)]
    for option, value in (("--client-cpus", args.client_cpus), ("--balgen-cpus", args.balgen_cpus),
                          ("-k", args.keyword)):  # fmt: skip
        controls += [option, value] if value else []
    controls += ["--cold"] * args.cold + ["--drop-caches"] * args.drop_caches
    state = ["--state", args.state] if args.state else []
    state_name = [re.sub(r"[^A-Za-z0-9.-]+", "_", args.state)] if args.state else []
    summary = []
    for client in args.clients.split(","):
        fixtures = args.work / "-".join([client, *state_name, "fx"])
        name = "-".join([client, *state_name, *(["cold"] if args.cold else [])])
        output, report = args.work / f"{name}-modes", args.work / f"{name}-report"
        filled = ["--gas-benchmark-values", args.gas, *state, "--output", str(fixtures), *FILL_T8N[client]]
        if not fixtures.exists() and run([*FILL, *filled]) != 0:
            return 2
        replayed = run(["replay", str(fixtures), "--format", "engine_x", "--client", client, "--modes", args.modes or modes_of(client),
                        "--warmup", "1", *controls, "--label", f"{name}-modes", "--output", str(output)])  # fmt: skip
        if replayed not in (0, 1):
            return 2
        runs = load_runs([output])
        pairs = compare(runs).noise_pairs
        floor = (pairs[0][2].floor or 0.0) if pairs else 0.0
        pair_text = f"{pairs[0][2].significant}/{pairs[0][2].compared} tests called in the pair" if pairs else "no A/A pair in --modes: no floor"
        if run(["report", str(output), "--noise-threshold", f"{floor:.1f}", "--output", str(report)]) != 0:
            return 2
        judged = compare(runs, worst=1000, noise_threshold=floor)
        called = [f"{r.name.removeprefix(name + '-modes-')} {r.test_id} {r.delta:+.1f}%" for r in judged.worst]
        summary.append(f"{name}: A/A floor {floor:.1f}% ({pair_text}); "
                       f"regressions beyond it: {', '.join(called) or 'none'}; tables in {report / 'report.md'}")  # fmt: skip
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
