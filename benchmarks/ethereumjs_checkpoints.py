"""
What copy-on-write BAL checkpoints (scripts/ethereumjs/bal_checkpoints.mjs) buy the ethereumjs verifier:
the contract-set fixture `extcodesize-greedy-0.5KB` filled at each gas value given, then verify.mjs run
on its `blockchain_test` with ethereumjs 10.1.3's own checkpoints (a deep copy of the block's whole
access list per call frame) and with balgen's, timed, verdicts compared. The setup block creates one
contract per EXTCODESIZE the benchmark block makes, so its frames and its accounts both grow with the
gas: ethereumjs's own checkpoints grow with their product.

    .venv/bin/python benchmarks/ethereumjs_checkpoints.py [--gas-benchmark-values 3,10,20]

No target: it prints seconds per run and the ratio, and fails (exit 1) only if the verdicts differ.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from balgen.fill.options import parse_gas_benchmark_values
from balgen.verify.ethereumjs import block_gas, located_ethereumjs

FIXTURE = "extcodesize-greedy-0.5KB"


def timed_verdict(files: list[Path], *, cloning: bool) -> tuple[float, list[dict[str, object]]]:
    """verify.mjs on `files` with ethereumjs's checkpoints or balgen's: seconds, and its lines without times."""
    install = located_ethereumjs()
    environment = {**os.environ, "BALGEN_ETHEREUMJS_CLONING_CHECKPOINTS": "1" if cloning else "0"}
    started = time.perf_counter()
    completed = subprocess.run(
        [str(install.node), str(install.script), *map(str, files)], capture_output=True, text=True, env=environment, check=False
    )
    seconds = time.perf_counter() - started
    lines = [json.loads(line) for line in completed.stdout.splitlines()[1:]]
    return seconds, [{k: v for k, v in line.items() if k != "seconds"} for line in lines]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gas-benchmark-values", default="3,10,20", help="gas values in millions (default 3,10,20)")
    args = parser.parse_args(argv)
    values = parse_gas_benchmark_values(args.gas_benchmark_values)
    same = True
    with tempfile.TemporaryDirectory(prefix="balgen-checkpoints-") as scratch:
        output = Path(scratch) / "fixtures"
        subprocess.run(
            [sys.executable, "-m", "balgen.commands.main", "fill", "--gas-benchmark-values", args.gas_benchmark_values,
             "-k", FIXTURE, "--output", str(output)],
            check=True, capture_output=True,
        )  # fmt: skip
        print(f"{'gas':>6} {'block gas':>16} {'ethereumjs own':>15} {'copy-on-write':>14} {'ratio':>7}")
        for value in values:
            files = sorted((output / "blockchain_tests").rglob(f"{FIXTURE}-{value // 1_000_000}M.json"))
            cloning_s, cloning = timed_verdict(files, cloning=True)
            cow_s, cow = timed_verdict(files, cloning=False)
            same = same and cloning == cow
            print(f"{value // 1_000_000:>5}M {block_gas(files):>16,} {cloning_s:>14.1f}s {cow_s:>13.1f}s {cloning_s / cow_s:>6.1f}x")
    print("verdicts identical" if same else "VERDICTS DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
