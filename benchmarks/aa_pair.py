"""
How honest `balgen report`'s verdicts are on this machine: an A/A pair of the
default suite, and the same geth slowed down, in one command.

It fills the default suite at 1M gas (or takes `--fixtures`), then replays it
three times at once, each run starting its own geth through the geth preset:
`aa1` and `aa2` with the pinned geth, `slowed` with the same geth given a
tenth of the CPU (stopped and continued every 10 ms, as `cpulimit` does).
The runs go at the same time so that the machine's other load weighs on each
alike. It then prints what `balgen report aa1 aa2 slowed` concludes:

- the share of tests the A/A pair calls "no significant change" (the issue's
  bar: at least 95%), and its noise floor;
- how many tests the slowed geth is called significantly slower on.

    .venv/bin/python benchmarks/aa_pair.py [--fixtures DIR] [--repeat 5] [--work out/aa-pair]

The report itself (terminal tables, report.md, report.png) is in `--work/report/`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from balgen.clients.throttled_client import write_throttled_client
from balgen.results.comparison import compare, load_runs
from balgen.plumbing.toolchain import pinned_geth

BALGEN = [sys.executable, "-m", "balgen.commands.main"]
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fixtures", type=Path, help="a filled suite (default: fill the default suite at 1M)")
    parser.add_argument("--repeat", type=int, default=5, help="measured executions per test and run")
    parser.add_argument("--work", type=Path, default=Path("out/aa-pair"), help="where fixtures, runs and report go")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    fixtures = args.fixtures
    if fixtures is None:
        fixtures = args.work / "fixtures"
        if not fixtures.exists():
            print(f"filling the default suite at 1M into {fixtures}", flush=True)
            subprocess.run([*BALGEN, "fill", "--gas-benchmark-values", "1", "-n", "2", "--output", str(fixtures)], check=True)
    engine_x = fixtures / "blockchain_tests_engine_x"
    runs = {name: args.work / "runs" / name for name in ("aa1", "aa2", "slowed")}
    slowed_geth = write_throttled_client(pinned_geth(), args.work / "throttled-geth", share=0.1)
    client_bin = {"slowed": ["--client-bin", str(slowed_geth)]}
    started = time.monotonic()
    processes = {
        name: subprocess.Popen(
            [*BALGEN, "replay", str(engine_x), "--repeat", str(args.repeat), "--label", name, "--output", str(output),
             *client_bin.get(name, [])],
            stdout=subprocess.DEVNULL,
        )
        for name, output in runs.items()
    }  # fmt: skip
    print(f"replaying {engine_x} three times at once (aa1, aa2, slowed), {args.repeat} measured executions each", flush=True)
    failed = [name for name, process in processes.items() if process.wait() != 0]
    if failed:
        print(f"replay failed: {', '.join(failed)} (see {args.work / 'runs'})", file=sys.stderr)
        return 1
    print(f"replayed in {time.monotonic() - started:.0f} s")
    report = subprocess.run([*BALGEN, "report", *map(str, runs.values()), "--output", str(args.work / "report")])
    comparison = compare(load_runs(list(runs.values())))
    same, slowed = comparison.summaries
    assert same.noise is not None, "aa1 and aa2 must be an A/A pair"
    unchanged = same.noise.compared - same.noise.significant
    print(
        f"A/A pair: {unchanged}/{same.noise.compared} tests no significant change "
        f"({unchanged / same.noise.compared:.1%}), noise floor {same.noise.floor:.1f}%"
    )
    print(f"slowed geth (a tenth of the CPU): {slowed.slower}/{slowed.compared} tests significantly slower, {slowed.faster} faster")
    return report.returncode


if __name__ == "__main__":
    raise SystemExit(main())
