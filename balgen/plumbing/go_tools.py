"""
The environment of a Go program balgen runs as a tool (geth's `evm` as t8n and as a verifier, and
balgen's own `balgen-state-root` and `balgen-state-build`), never of a client it measures.

Go's collector starts a cycle each time the heap doubles (`GOGC=100`) from a 4 MB floor, so a run that
builds a block's tries and throws them away collects dozens of times; at `GOGC=400` it collects a
quarter as often, at the cost of a larger heap. Collection changes when memory is freed, never what is
computed. Measured (2026-11-30, this 2-core machine, the two settings in turn): `evm blocktest` over the
demo's 78 fixtures 92.1 and 86.1 CPU-s at 100, 81.7 and 72.4 at 400 (11-16% less; 800 no better on a
quarter of them), its peak memory 40 to 55 MB on a 60M fixture; the demo's whole fill 213 and 226 CPU-s at
100, 203 and 222 at 400; `balgen state build` of a million accounts 17.4 and 18.8 CPU-s at 100, 16.6 and
17.0 at 400, its peak memory 0.3 to 0.6 GB. A client keeps its own settings: the replay measures the
client as its operators run it (`replay.cpu_placement` records them).
"""

from __future__ import annotations

import os

GOGC_FOR_TOOLS = "400"
"""The collector's target for balgen's Go tools, unless the user's environment sets `GOGC`."""


def go_tool_environment() -> dict[str, str]:
    """This process's environment with `GOGC_FOR_TOOLS`, for a Go tool's process; a `GOGC` the user set stays."""
    environment = dict(os.environ)
    environment.setdefault("GOGC", GOGC_FOR_TOOLS)
    return environment
