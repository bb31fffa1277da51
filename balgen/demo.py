"""
`make demo`: fill the default suite, import it into a local geth, show the result.

The demo is the shortest proof that the fixtures are real: every
`blockchain_test_engine_x` group is imported into the pinned geth on
127.0.0.1 through the Engine API, every payload must be VALID and the head
must end at `lastblockhash`. It prints one row per fixture with its gas,
transaction count and the client-side time of the benchmark payload.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .cli import run_fill
from .replay.importer import GroupImportResult, import_engine_group
from .toolchain import pinned_geth

OUTPUT = Path("fixtures")


def engine_x_groups(output: Path) -> list[tuple[dict, list[tuple[str, dict]]]]:
    """Each pre-alloc group with its fixtures, in name order."""
    root = output / "blockchain_tests_engine_x"
    fixtures: dict[str, list[tuple[str, dict]]] = {}
    for path in sorted(root.glob("for_*/**/*.json")):
        for name, fixture in json.loads(path.read_text()).items():
            fixtures.setdefault(fixture["preHash"], []).append((name, fixture))
    groups = []
    for group_hash, members in sorted(fixtures.items()):
        pre_alloc = json.loads((root / "pre_alloc" / f"{group_hash}.json").read_text())
        groups.append((pre_alloc, sorted(members)))
    return groups


def result_table(results: list[GroupImportResult]) -> Table:
    """One row per imported fixture: gas, transactions, import time, verdict."""
    table = Table(title="balgen demo: fixtures imported into geth through the Engine API")
    for column in ("fixture", "txs", "gas used", "newPayload ms", "MGas/s", "result"):
        table.add_column(column, justify="left" if column in ("fixture", "result") else "right")
    for group in results:
        for test in group.tests:
            testing = [p for p in test.payloads if p.phase == "testing"]
            if testing:
                payload = testing[-1]
                ms = payload.new_payload_ns / 1e6
                row = [f"{payload.transaction_count}", f"{payload.gas_used:,}", f"{ms:.1f}", f"{payload.gas_used / 1e3 / ms:.0f}"]
            else:
                row = ["-", "-", "-", "-"]
            verdict = "[green]VALID[/]" if test.passed else f"[red]{test.failure}[/]"
            table.add_row(test.test_id, *row, verdict)
    return table


def main() -> int:
    console = Console(width=max(110, Console().width))
    console.print("[bold]1/2 filling the default suite[/] (serial_chain, keccak_chain; 30M and 60M; max, half, greedy)")
    code = run_fill(["--output", str(OUTPUT), "-n", "2"])
    if code != 0:
        console.print(f"[red]fill failed (exit {code})[/]")
        return code
    console.print("[bold]2/2 importing into geth[/] (pinned v1.17.8, 127.0.0.1, one node per pre-alloc group)")
    results = [import_engine_group(pre_alloc, members, pinned_geth()) for pre_alloc, members in engine_x_groups(OUTPUT)]
    console.print(result_table(results))
    failed = sum(1 for group in results for test in group.tests if not test.passed)
    total = sum(len(group.tests) for group in results)
    console.print(f"{total - failed} of {total} fixtures imported VALID with the expected head")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
