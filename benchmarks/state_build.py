"""
What building a background state takes, at several sizes, and what mainnet's would take by extrapolation.

Each recipe is built (or found in the cache) with `balgen state build`; the
table gives, from each build's record, the accounts, slots, code, the disk
its geth datadir takes, the builder's CPU and wall seconds, its peak memory
and the account trie's leaf depth. A least-squares fit of CPU seconds and
disk over the builds (per account with its share of code, and per slot) then scales to mainnet's size (about 300M accounts and 1.5
billion slots), with the memory the sort of its account keys needs.

    .venv/bin/python benchmarks/state_build.py                     # 100k, small (1M), mainnet-tenth (10M/100M)
    .venv/bin/python benchmarks/state_build.py --recipes accounts=100k,slots=200k small --cache /tmp/states

The mainnet-tenth build takes about 20 GB and, on this project's loaded 2-core machine, over an hour:
run it with `nice` in the background. Builds already in the cache are only read.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy

from balgen.chain.background_state import RECORD, states_folder
from balgen.model.state_recipe import parse_recipe
from balgen.plumbing.toolchain import cache_root

BALGEN = [sys.executable, "-m", "balgen.commands.main"]
MAINNET_ACCOUNTS = 300_000_000
MAINNET_SLOTS = 1_500_000_000
ACCOUNT_KEY_BYTES = 36
"""What the builder holds per account while it walks them in hashed-key order (a hash and an index)."""


def mean_depth(depths: list[int]) -> float:
    return sum(depth * count for depth, count in enumerate(depths)) / max(1, sum(depths))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipes", nargs="+", default=["accounts=100k,slots=200k", "small", "mainnet-tenth"])
    parser.add_argument("--cache", type=Path, default=None, help="balgen's cache folder (default: balgen's own)")
    args = parser.parse_args()
    cache = args.cache or cache_root()
    records = []
    for text in args.recipes:
        recipe = parse_recipe(text)
        record_path = states_folder(cache) / recipe.built_part().hash / RECORD  # built without its workload slots
        if not record_path.exists():
            print(f"building {text} ...", flush=True)
            subprocess.run([*BALGEN, "state", "build", text, "--cache", str(cache)], check=True)
        records.append((text, recipe, json.loads(record_path.read_text())))
    print()
    print(f"{'recipe':<28} {'accounts':>12} {'slots':>13} {'code GB':>8} {'disk GB':>8} {'CPU s':>8} {'wall s':>8} {'peak MiB':>9} {'depth':>11}")
    for text, _, record in records:
        depths = record["account-leaf-depths"]
        print(
            f"{text:<28} {record['accounts']:>12,} {record['slots']:>13,} {record['code-bytes'] / 1e9:>8.2f} "
            f"{record['disk-bytes'] / 1e9:>8.2f} {record['cpu-seconds']:>8.0f} {record['wall-seconds']:>8.0f} "
            f"{record['peak-memory-bytes'] / 2**20:>9,.0f} {mean_depth(depths):>5.1f}/{len(depths) - 1:<5}"
        )
    # Each build as a sum of a per-account cost (the account with its share of code, which every recipe
    # scales with the accounts) and a per-slot cost, fitted by least squares; builds with as many slots
    # per account cannot tell the two apart, so the fit needs one with another ratio (mainnet-tenth's 10).
    terms = numpy.array([[r["accounts"], r["slots"]] for _, _, r in records], dtype=float)
    cpu = numpy.linalg.lstsq(terms, numpy.array([r["cpu-seconds"] for _, _, r in records]), rcond=None)[0]
    disk = numpy.linalg.lstsq(terms, numpy.array([r["disk-bytes"] for _, _, r in records]), rcond=None)[0]
    mainnet = numpy.array([MAINNET_ACCOUNTS, MAINNET_SLOTS])
    print()
    print(f"fit: CPU {cpu[0] * 1e6:.1f} us/account, {cpu[1] * 1e6:.1f} us/slot; "
          f"disk {disk[0]:.0f} B/account (its code included), {disk[1]:.0f} B/slot")
    print(
        f"mainnet ({MAINNET_ACCOUNTS / 1e6:.0f}M accounts, {MAINNET_SLOTS / 1e9:.1f}B slots): about "
        f"{float(mainnet @ cpu) / 3600:.1f} CPU hours, {float(mainnet @ disk) / 1e9:.0f} GB of disk, and "
        f"{MAINNET_ACCOUNTS * ACCOUNT_KEY_BYTES / 2**30:.1f} GiB of memory for the sorted account keys"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
