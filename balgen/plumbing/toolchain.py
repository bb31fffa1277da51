"""
Where the pinned binaries live, and where balgen looks for them.

`make tools` builds go-ethereum's `evm` and `geth` and revm's `revme` at
their pinned versions into the git-ignored `tools/bin` folder of the
checkout. An installed balgen has no checkout, so it looks in order: the
folder `BALGEN_TOOLS` names (then only there, so that a test or a user can
say exactly which binaries run), else `tools/bin` of the checkout balgen runs
from, `tools/bin` of the current directory, and the folders of `PATH`.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import BadInput

GO_ETHEREUM_VERSION = "v1.17.10"
EARLIER_AMSTERDAM_VERSION = "v1.17.5"
"""A go-ethereum release with an earlier Amsterdam gas schedule, built into
`tools/v1.17.5/bin` for the tests that fill and import with it."""

TOOLS_VARIABLE = "BALGEN_TOOLS"


def checkout_root() -> Path | None:
    """The checkout balgen runs from (an editable install), or None for an installed wheel."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "fillers").is_dir() else None


def cache_root() -> Path:
    """
    Where balgen keeps what it measures or builds once (gas rules, background
    states): `BALGEN_CACHE`, the checkout's git-ignored `.cache/`, or
    (installed without a checkout) `$XDG_CACHE_HOME/balgen`, by default
    `~/.cache/balgen`.
    """
    configured = os.environ.get("BALGEN_CACHE")
    checkout = checkout_root()
    if configured:
        return Path(configured)
    if checkout is not None:
        return checkout / ".cache"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "balgen"


def _tool_folders() -> list[Path]:
    """The search path without `PATH`: `BALGEN_TOOLS` alone, or the checkout's and the current directory's tools/bin."""
    configured = os.environ.get(TOOLS_VARIABLE)
    if configured:
        return [Path(configured)]
    roots = [root for root in (checkout_root(), Path.cwd()) if root is not None]
    return list(dict.fromkeys(root / "tools" / "bin" for root in roots))


def tool_folders() -> list[Path]:
    """Every folder searched for a pinned binary, in order (see the module docstring)."""
    if os.environ.get(TOOLS_VARIABLE):
        return _tool_folders()
    on_path = [Path(folder) for folder in os.environ.get("PATH", "").split(os.pathsep) if folder]
    return list(dict.fromkeys(_tool_folders() + on_path))


def tool_search() -> str:
    """Where balgen looks, in one phrase for a message: `BALGEN_TOOLS=...`, or the folders then PATH."""
    if os.environ.get(TOOLS_VARIABLE):
        return f"{TOOLS_VARIABLE}={os.environ[TOOLS_VARIABLE]}"
    return ", ".join(str(folder) for folder in _tool_folders()) + ", PATH"


def located(name: str) -> Path | None:
    """The first runnable file called `name` on the search path."""
    for folder in tool_folders():
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def required_tool(name: str, otherwise: str) -> Path:
    """The binary `name` from the search path, or bad input saying where balgen looked and what else to do."""
    found = located(name)
    if found is None:
        raise BadInput(f"{name}: not found in {tool_search()} (run `make tools`, set {TOOLS_VARIABLE}, or {otherwise})")
    return found


def _pinned(name: str) -> Path:
    """Where `name` is, or where `make tools` would put it: the first folder searched."""
    return located(name) or _tool_folders()[0] / name


def tools_bin() -> Path:
    """The folder the pinned `evm` comes from (the first one searched when there is none)."""
    return pinned_evm().parent


def pinned_evm() -> Path:
    """The pinned t8n (`evm`)."""
    return _pinned("evm")


def pinned_geth() -> Path:
    """The pinned client (`geth`)."""
    return _pinned("geth")


def pinned_geth_bal_switch() -> Path:
    """The pinned geth with `--bal.executionmode` (scripts/geth_bal_switch/), for benchmarks by BAL mode."""
    return _pinned("geth-bal-switch")


def release_bin(version: str) -> Path:
    """Folder holding the `evm` and `geth` of another go-ethereum release, next to the pinned ones."""
    return tools_bin().parent / version / "bin"


def pinned_revme() -> Path:
    """The second EVM `balgen verify` runs (`revme`, pinned in scripts/install-tools.sh)."""
    return _pinned("revme")


def bundled_reth() -> Path:
    """The optimised reth build `scripts/install-tools.sh` unpacks from `../shared/clients/reth-7b3432d-release.gz`."""
    return _pinned("reth")
