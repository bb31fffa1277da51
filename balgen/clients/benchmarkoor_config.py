"""
The benchmarkoor configuration that runs every client in every one of its modes on balgen's fixtures.

Where a user runs many clients on many machines, benchmarkoor
(github.com/ethpandaops/benchmarkoor) is the engine: it starts each client in
a container, replays an EEST fixture folder against it and tabulates the
times. `balgen genesis --layout benchmarkoor` writes the genesis tree its EEST
source reads (`local_genesis_dir`) and, beside it, this configuration: one
instance per client and mode, the mode's flags as the instance's
`extra_args`, so a fleet produces the same per-mode table for the clients
balgen cannot run here. A client benchmarkoor has no type for (`ClientKind.
benchmarkoor_client` is None) is left out, and the file's first lines say
so. The file is checked by benchmarkoor's own loader
(`scripts/benchmarkoor_config/`, tests/test_benchmarkoor_config.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from .kind import ClientKind

FILE_NAME = "benchmarkoor.yaml"


def instances(kinds: Sequence[ClientKind]) -> list[dict[str, Any]]:
    """One benchmarkoor instance per client and mode (one without extra arguments for a client without modes)."""
    found: list[dict[str, Any]] = []
    for kind in kinds:
        if kind.benchmarkoor_client is None:
            continue
        if not kind.modes:
            found.append({"id": kind.name, "client": kind.benchmarkoor_client})
        for mode in kind.modes.values():
            instance: dict[str, Any] = {"id": f"{kind.name}-{mode.name}", "client": kind.benchmarkoor_client}
            if mode.flags:
                instance["extra_args"] = list(mode.flags)
            found.append(instance)
    return found


def configuration(kinds: Sequence[ClientKind], fixtures: Path, genesis_dir: Path) -> str:
    """
    The YAML text: an EEST fixtures source reading `fixtures` (a
    `blockchain_tests_engine_x` folder; benchmarkoor takes its parent and
    the folder's name) and the genesis tree under `genesis_dir`, and the
    instances. Paths are absolute: benchmarkoor resolves them from where it
    runs, not from the file.
    """
    left_out = [kind.name for kind in kinds if kind.benchmarkoor_client is None]
    source = {
        "local_fixtures_dir": str(fixtures.resolve().parent),
        "fixtures_subdir": fixtures.name,
        "local_genesis_dir": str(genesis_dir.resolve()),
    }
    document = {
        "runner": {
            "benchmark": {"results_dir": "./results", "tests": {"source": {"eest_fixtures": source}}},
            "instances": instances(kinds),
        }
    }
    header = "# Written by `balgen genesis --layout benchmarkoor`: one instance per client and mode.\n"
    if left_out:
        header += f"# Left out (benchmarkoor has no client type for them): {', '.join(left_out)}.\n"
    return header + yaml.safe_dump(document, sort_keys=False)
