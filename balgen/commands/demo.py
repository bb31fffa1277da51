"""
`make demo`: fill the default suite, verify it, replay it against a local geth, show the result.

The demo is the shortest proof that the fixtures are real and the shortest
tour of the main commands: `balgen fill` writes the default suite, `balgen
verify` runs every `blockchain_test` through three EVMs (geth's, revm's and
ethereumjs, which also checks every BAL against its own execution) and imports
every engine fixture into geth, then `balgen replay`
sends every `blockchain_test_engine_x` group to the pinned
geth on 127.0.0.1 through the Engine API, checks every step (genesis hash,
every status, the head at `lastblockhash`, every rollback, no known block
resent) and measures the benchmark payload of each fixture (one warm-up and
five measured executions), ending with the summary table.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from .fill import run_fill
from .replay import run_replay
from ..replay.outputs import default_output
from .verify import run_verify

OUTPUT = Path("fixtures")


def main() -> int:
    console = Console(width=max(110, Console().width))
    console.print("[bold]1/3 filling the default suite[/] (balgen fill -n 2)")
    code = run_fill(["--output", str(OUTPUT), "-n", "2"])
    if code != 0:
        console.print(f"[red]fill failed (exit {code})[/]")
        return code
    console.print("[bold]2/3 verifying it[/] (balgen verify: geth's evm blocktest, revm's revme, ethereumjs, engine import into geth)")
    code = run_verify([str(OUTPUT)], console=console)
    if code != 0:
        console.print(f"[red]verification failed (exit {code})[/]")
        return code
    console.print("[bold]3/3 replaying it against geth[/] (pinned v1.17.10, 127.0.0.1, one node per genesis group)")
    return run_replay(
        [str(OUTPUT / "blockchain_tests_engine_x"), "--label", "demo", "--output", str(default_output("demo"))]
    )


if __name__ == "__main__":
    sys.exit(main())
