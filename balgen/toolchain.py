"""
Where the pinned binaries live.

`make tools` builds go-ethereum's `evm` and `geth` and revm's `revme` at
their pinned versions into the git-ignored `tools/bin` folder of the
checkout; `BALGEN_TOOLS` points elsewhere if needed.
"""

from __future__ import annotations

import os
from pathlib import Path

GO_ETHEREUM_VERSION = "v1.17.8"
EARLIER_AMSTERDAM_VERSION = "v1.17.5"
"""A go-ethereum release with an earlier Amsterdam gas schedule, built into
`tools/v1.17.5/bin` for the tests that fill and import with it."""


def tools_bin() -> Path:
    """Folder holding the pinned binaries."""
    configured = os.environ.get("BALGEN_TOOLS")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parent.parent / "tools" / "bin"


def pinned_evm() -> Path:
    """The pinned t8n (`evm`)."""
    return tools_bin() / "evm"


def pinned_geth() -> Path:
    """The pinned client (`geth`)."""
    return tools_bin() / "geth"


def release_bin(version: str) -> Path:
    """Folder holding the `evm` and `geth` of another go-ethereum release, next to the pinned ones."""
    return tools_bin().parent / version / "bin"


def pinned_revme() -> Path:
    """The second EVM `balgen verify` runs (`revme`, pinned in scripts/install-tools.sh)."""
    return tools_bin() / "revme"


def bundled_reth() -> Path:
    """The reth build `scripts/install-tools.sh` unpacks when `../shared/clients/reth-*.gz` exists."""
    return tools_bin() / "reth"
