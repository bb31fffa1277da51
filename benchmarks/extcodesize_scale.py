"""
Filling the largest contract sets: `extcodesize-greedy-64KB` at 30M and 60M.

At 60M gas the block reads about 18,600 unique 64 KB contracts, 1.2 GB of code,
and every fixture format carries it. For each gas value this runs the real
`balgen fill` (one workload, `--setup genesis` unless told otherwise) in a
process of its own and prints:

- wall time of the fill;
- balgen's peak memory (the fill process's VmHWM: generator, checks, writers);
- t8n's peak memory (the largest of its runs, taken by a wrapper around the
  pinned `evm` that records each run's maximum resident size);
- the fixtures' size on disk (three formats and the pre-alloc group).

Targets: 60M/64 KB filled in at most 10 minutes, balgen's peak at most 2 GiB.
Needs about 25 GB of free disk at 60M (outputs and t8n's scratch); the
outputs are deleted afterwards unless `--keep`.

    .venv/bin/python benchmarks/extcodesize_scale.py [--gas-benchmark-values 30,60] [--setup genesis] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from balgen.plumbing.toolchain import pinned_evm

TARGET_WALL_SECONDS = 600
TARGET_BALGEN_PEAK_BYTES = 2 * 2**30

T8N_WRAPPER = """#!{python}
# Runs the real evm and appends its peak resident size (KiB) to a log.
import resource, subprocess, sys
code = subprocess.call([{evm!r}, *sys.argv[1:]])
with open({log!r}, "a") as log:
    log.write(f"{{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}}\\n")
sys.exit(code)
"""

FILL_AND_REPORT_PEAK = """
import sys
from balgen.commands.main import main
code = main(sys.argv[1:])
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        print("balgen-peak-kib", line.split()[1], file=sys.stderr)
sys.exit(code)
"""


def fill_once(gas_millions: str, setup: str, scratch: Path) -> dict[str, float]:
    """Fill `extcodesize-greedy-64KB-<gas>M` and measure it."""
    log = scratch / "t8n-peaks.log"
    wrapper = scratch / "evm-measured"
    wrapper.write_text(T8N_WRAPPER.format(python=sys.executable, evm=str(pinned_evm()), log=str(log)))
    wrapper.chmod(0o755)
    output = scratch / "fixtures"
    name = f"extcodesize-greedy-64KB-{gas_millions}M"
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-c", FILL_AND_REPORT_PEAK, "fill", "--code-sizes", "64", "--setup", setup,
         "--gas-benchmark-values", gas_millions, "-k", name, "--evm-bin", str(wrapper), "--output", str(output)],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    wall = time.perf_counter() - started
    if completed.returncode != 0:
        sys.exit(f"fill of {name} failed:\n{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}")
    peak = next(int(line.split()[1]) for line in completed.stderr.splitlines() if line.startswith("balgen-peak-kib"))
    t8n_peaks = [int(line) for line in log.read_text().split()]
    size = sum(path.stat().st_size for path in output.rglob("*.json"))
    return {"wall": wall, "balgen_peak": peak * 1024, "t8n_peak": max(t8n_peaks) * 1024, "disk": size, "t8n_runs": len(t8n_peaks)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gas-benchmark-values", default="30,60")
    parser.add_argument("--setup", choices=["genesis", "blocks"], default="genesis")
    parser.add_argument("--keep", type=Path, default=None, help="keep the fixtures in this folder")
    args = parser.parse_args()
    rows = []
    for gas in args.gas_benchmark_values.split(","):
        scratch = Path(tempfile.mkdtemp(prefix="balgen-scale-", dir=args.keep.parent if args.keep else None))
        try:
            print(f"filling extcodesize-greedy-64KB-{gas}M (--setup {args.setup}) ...", flush=True)
            rows.append((gas, fill_once(gas, args.setup, scratch)))
            if args.keep:
                shutil.copytree(scratch / "fixtures", args.keep / f"{gas}M", dirs_exist_ok=True)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    gib = 2**30
    print(f"\n{'workload':<34} {'wall s':>8} {'balgen peak':>12} {'t8n peak':>10} {'t8n runs':>9} {'on disk':>9}")
    for gas, row in rows:
        print(
            f"{f'extcodesize-greedy-64KB-{gas}M':<34} {row['wall']:>8.1f} {row['balgen_peak'] / gib:>10.2f} G"
            f" {row['t8n_peak'] / gib:>8.2f} G {row['t8n_runs']:>9} {row['disk'] / gib:>7.2f} G"
        )
    sixty = dict(rows).get("60")
    if sixty is None:
        return 0
    wall_ok = sixty["wall"] <= TARGET_WALL_SECONDS
    memory_ok = sixty["balgen_peak"] <= TARGET_BALGEN_PEAK_BYTES
    print(f"\n60M/64KB wall {sixty['wall']:.0f} s (target {TARGET_WALL_SECONDS} s): {'PASS' if wall_ok else 'MISS'}")
    print(f"60M/64KB balgen peak {sixty['balgen_peak'] / gib:.2f} GiB (target 2 GiB): {'PASS' if memory_ok else 'MISS'}")
    return 0 if wall_ok and memory_ok else 1


if __name__ == "__main__":
    sys.exit(main())
