"""
The EIP-7907 analysis in one command: block time against contract code size
with cold caches, measured on the real client.

For each size it fills the CREATE2 contract set and its attack block
(`<opcode>-greedy-<size>-<gas>M`, `--setup genesis`: the set is in the
genesis, so the benchmark block is the only block geth executes), replays it
into balgen's geth with `--cold` (geth restarted before each measured
execution) and `--drop-caches` (the OS page cache dropped as well, when this
user may), and reads per execution geth's own slow-block entry: its block
time, state-read time, and how many codes it read, how many code bytes it
fetched from the database and how many code-cache misses it had. It writes

- `eip7907.md`: the table (size, block time, MGas/s, code bytes read, cache
  misses, with the spread of the measured executions) and how it was made;
- `eip7907.csv`: the same figures, one row per size;
- `eip7907.png`: block time against code size (client-side newPayload and
  geth's own total and state-read time), the p5-p95 spread as error bars.

    .venv/bin/python benchmarks/eip7907_sweep.py --sizes 0.5,5,24,64 --gas 30 [--repeat 5] [--output DIR]

Fixtures are kept in `--work` (default `out/eip7907/`) and reused when the
same workload is already there (a 64 KB set at 30M is about 3.4 GiB of
fixtures and takes minutes to fill); `--refill` fills again. The replay's own
results (`results.json` per size) stay in `--work/runs/`. Disk: about 6 x
the set's code per size (docs/workloads.md); memory: geth initialises the
whole set from its genesis file (about 3 GiB of RAM for 64 KB at 30M).
"""

from __future__ import annotations

import argparse
import csv
import io
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy  # noqa: E402

from balgen.ethereum.forks import fork_by_name  # noqa: E402
from balgen.generators.code_set import parse_code_sizes  # noqa: E402
from balgen.replay.page_cache import drop_caches_problem  # noqa: E402
from balgen.results.comparison import load_run  # noqa: E402
from balgen.results.measurements import Role  # noqa: E402
from balgen.results.schema import RunResult  # noqa: E402

BALGEN = [sys.executable, "-m", "balgen.commands.main"]
MIB = 2**20
OPCODES = ("extcodesize", "extcodehash", "extcodecopy")


@dataclass(frozen=True)
class SizeResult:
    """One size's measured executions, summarised."""

    size: str
    executions: int
    new_payload_ms: tuple[float, float, float]
    """p5, median, p95 of the client-side newPayload time."""
    own_total_ms: tuple[float, float, float]
    own_state_read_ms: float
    mgas_per_second: float
    client_read_bytes: int
    """Bytes geth's process read during the newPayload (`rchar`), page cache hits included."""
    storage_read_bytes: int
    """Of those, bytes that came from the storage device: page-cache misses (`read_bytes`)."""
    codes_read: int
    code_cache_misses: int
    prepared: str


def spread(values: Sequence[float]) -> tuple[float, float, float]:
    """(p5, median, p95), linear interpolation as everywhere in balgen."""
    p5, median, p95 = numpy.percentile(values, [5, 50, 95])
    return float(p5), float(median), float(p95)


def workload_name(opcode: str, size: str, gas: str) -> str:
    """The fixture name balgen gives the size's greedy attack block."""
    return f"{opcode}-greedy-{size}-{gas}M"


def run(command: list[str], what: str) -> None:
    """Run one balgen command, its output passed through; stop the sweep if it fails."""
    print(f"== {what}: {' '.join(command[2:])}", flush=True)
    started = time.perf_counter()
    completed = subprocess.run(command)
    if completed.returncode != 0:
        sys.exit(f"eip7907_sweep: {what} failed (exit code {completed.returncode})")
    print(f"== {what}: done in {time.perf_counter() - started:.0f} s", flush=True)


def fill(name: str, size: str, gas: str, folder: Path, refill: bool) -> None:
    """Fill the size's workload into `folder`, unless it is there already."""
    if folder.is_dir() and any(folder.rglob(f"{name}.json")) and not refill:
        print(f"== fill {name}: reusing {folder}", flush=True)
        return
    shutil.rmtree(folder, ignore_errors=True)
    run(
        [*BALGEN, "fill", "--code-sizes", size.removesuffix("KB"), "--setup", "genesis",
         "--gas-benchmark-values", gas, "-k", name, "--output", str(folder)],
        f"fill {name}",
    )


def replay(name: str, fixtures: Path, output: Path, args: argparse.Namespace, drop: bool) -> RunResult:
    """Replay the workload cold; its results."""
    shutil.rmtree(output, ignore_errors=True)
    command = [*BALGEN, "replay", str(fixtures), "-k", name, "--cold", "--warmup", str(args.warmup),
               "--repeat", str(args.repeat), "--label", name, "--output", str(output)]
    if drop:
        command.append("--drop-caches")
    run(command, f"replay {name}")
    return load_run(output)


def summarise(size: str, result: RunResult) -> SizeResult:
    """The table's row from one size's run."""
    test = result.tests[0]
    measured = [e for e in test.executions if e.role is Role.MEASURED and e.own_timing is not None]
    if not test.passed or not measured:
        sys.exit(f"eip7907_sweep: {test.test_id} did not pass: {test.failure}")
    counts = [e.own_timing.counts for e in measured if e.own_timing is not None and e.own_timing.counts is not None]
    reads = [e.client_reads for e in measured if e.client_reads is not None]
    if len(counts) != len(measured) or len(reads) != len(measured):
        sys.exit(f"eip7907_sweep: {test.test_id}: geth's counters or its process read counters are missing")
    prepared = {" + ".join(step for step, done in (("restarted", e.restarted_before),
                                                   ("page cache dropped", e.page_cache_dropped)) if done)
                for e in measured}
    return SizeResult(
        size=size,
        executions=len(measured),
        new_payload_ms=spread([e.new_payload_ns / 1e6 for e in measured]),
        own_total_ms=spread([e.own_timing.total_ms for e in measured if e.own_timing]),
        own_state_read_ms=statistics.median(e.own_timing.state_read_ms for e in measured if e.own_timing),
        mgas_per_second=statistics.median(m for e in measured if (m := e.mgas_per_second) is not None),
        client_read_bytes=int(statistics.median(r.read_bytes_total for r in reads)),
        storage_read_bytes=int(statistics.median(r.storage_bytes for r in reads)),
        codes_read=int(statistics.median(c.reads.code for c in counts)),
        code_cache_misses=int(statistics.median(c.code_cache.misses for c in counts)),
        prepared=", ".join(sorted(prepared)) or "none",
    )


COLUMNS = (
    "size", "executions", "block time ms (newPayload, median)", "p5-p95 ms", "geth total ms",
    "geth state read ms", "MGas/s", "bytes read by geth", "of which from storage (page-cache misses)",
    "geth: codes read", "geth: code-cache misses",
)


def cells(row: SizeResult) -> list[str]:
    """One table row as text."""
    p5, median, p95 = row.new_payload_ms
    return [
        row.size, str(row.executions), f"{median:,.1f}", f"{p5:,.1f}-{p95:,.1f}", f"{row.own_total_ms[1]:,.1f}",
        f"{row.own_state_read_ms:,.1f}", f"{row.mgas_per_second:,.1f}", f"{row.client_read_bytes / MIB:,.1f} MiB",
        f"{row.storage_read_bytes / MIB:,.1f} MiB", f"{row.codes_read:,}", f"{row.code_cache_misses:,}",
    ]


def markdown(rows: Sequence[SizeResult], args: argparse.Namespace, versions: Sequence[str]) -> str:
    """The table and how it was made."""
    lines = [
        f"# EIP-7907 sweep: {args.opcode} at {args.gas}M gas", "",
        f"- command: `benchmarks/eip7907_sweep.py --sizes {args.sizes} --gas {args.gas} --opcode {args.opcode} "
        f"--warmup {args.warmup} --repeat {args.repeat}`",
        f"- client: {', '.join(versions) or 'unknown'}; each measured execution prepared: {rows[0].prepared if rows else '-'}",
        "- block time: client-side `engine_newPayload` round trip; geth total / state read: its slow-block log",
        "- bytes read: geth's process during the newPayload, from `/proc/<pid>/io` (`rchar`; `read_bytes` = from "
        "the storage device, i.e. page-cache misses)",
        "- geth's own code-read and code-cache counters (slow-block log) are 0 for blocks it executes in parallel "
        "from their access list (v1.17.8), i.e. every Amsterdam block", "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "|".join("---" if i == 0 else "---:" for i in range(len(COLUMNS))) + "|",
    ]
    lines += ["| " + " | ".join(cells(row)) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def write_csv(rows: Sequence[SizeResult], path: Path) -> None:
    """One row per size, every figure as a number."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["size", "executions", "new_payload_ms_p5", "new_payload_ms_median", "new_payload_ms_p95",
                     "geth_total_ms_median", "geth_state_read_ms_median", "mgas_s_median", "client_read_bytes",
                     "storage_read_bytes", "geth_codes_read", "geth_code_cache_misses"])
    for row in rows:
        writer.writerow([row.size, row.executions, *(f"{v:.3f}" for v in row.new_payload_ms),
                         f"{row.own_total_ms[1]:.3f}", f"{row.own_state_read_ms:.3f}", f"{row.mgas_per_second:.2f}",
                         row.client_read_bytes, row.storage_read_bytes, row.codes_read, row.code_cache_misses])
    path.write_text(buffer.getvalue())


def plot(rows: Sequence[SizeResult], args: argparse.Namespace, path: Path) -> None:
    """Block time (left) and bytes read (right) against code size, log-scaled size axis."""
    sizes = [float(row.size.removesuffix("KB")) for row in rows]
    figure, (times, reads) = plt.subplots(1, 2, figsize=(13, 5))
    medians = [row.new_payload_ms[1] for row in rows]
    errors = [[m - row.new_payload_ms[0] for m, row in zip(medians, rows)],
              [row.new_payload_ms[2] - m for m, row in zip(medians, rows)]]
    times.errorbar(sizes, medians, yerr=errors, marker="o", capsize=4, label="newPayload (client side), p5-p95")
    times.plot(sizes, [row.own_total_ms[1] for row in rows], marker="s", label="geth total_ms (slow-block log)")
    times.plot(sizes, [row.own_state_read_ms for row in rows], marker="^", label="geth state_read_ms")
    times.set_ylabel("ms (median of the measured executions)")
    reads.plot(sizes, [row.client_read_bytes / MIB for row in rows], marker="o", label="read by geth (rchar)")
    reads.plot(sizes, [row.storage_read_bytes / MIB for row in rows], marker="s", label="from storage (read_bytes)")
    reads.set_ylabel("MiB read during the newPayload (median)")
    for axis in (times, reads):
        axis.set_xscale("log")
        axis.set_xticks(sizes, [row.size for row in rows])
        axis.set_xlabel("contract code size")
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    prepared = rows[0].prepared if rows else "-"
    figure.suptitle(f"{args.opcode}, greedy, {args.gas}M gas, each measured execution: {prepared}")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="0.5,5,24,64", help="code sizes in KB (default 0.5,5,24,64)")
    parser.add_argument("--gas", default="30", help="gas value in millions (default 30)")
    parser.add_argument("--opcode", choices=OPCODES, default="extcodesize")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-drop-caches", action="store_true", help="keep the OS page cache (it is dropped when permitted)")
    parser.add_argument("--refill", action="store_true", help="fill again even if the fixtures are there")
    parser.add_argument("--work", type=Path, default=Path("out/eip7907"), help="fixtures and replay results")
    parser.add_argument("--output", type=Path, default=None, help="table and plot (default: --work)")
    args = parser.parse_args(argv)
    sizes = parse_code_sizes(args.sizes, fork_by_name("Amsterdam"))
    problem = drop_caches_problem()
    drop = not args.no_drop_caches and problem is None
    if not args.no_drop_caches and problem is not None:
        print(f"note: the page cache is not dropped: {problem}", flush=True)
    output = args.output or args.work
    output.mkdir(parents=True, exist_ok=True)
    rows, versions = [], set()
    for size in sizes:
        name = workload_name(args.opcode, size, args.gas)
        fixtures = args.work / "fixtures" / name
        fill(name, size, args.gas, fixtures, args.refill)
        result = replay(name, fixtures, args.work / "runs" / name, args, drop)
        versions.update(result.client_versions)
        rows.append(summarise(size, result))
        print(" | ".join(cells(rows[-1])), flush=True)
    (output / "eip7907.md").write_text(markdown(rows, args, sorted(versions)))
    write_csv(rows, output / "eip7907.csv")
    plot(rows, args, output / "eip7907.png")
    print(f"written {output / 'eip7907.md'}, eip7907.csv and eip7907.png", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
