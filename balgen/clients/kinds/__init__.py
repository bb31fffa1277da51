"""
The registry of the execution clients balgen knows: one module per client.

Each module of this folder declares its client's `ClientKind`
(`balgen.clients.kind`) as `KIND`; adding a client is adding a module, which
the registry finds by itself. The generic code finds a client by its
`--client` name (`kind_named`), by its `web3_clientVersion`
(`kind_of_version`) or by the preset balgen started (`kind_of_preset`).
"""

from __future__ import annotations

import importlib
import pkgutil

from ...plumbing.errors import BadInput
from ..kind import ClientKind
from ..presets import ClientPreset


def _kinds() -> dict[str, ClientKind]:
    """The `KIND` of every module of this folder, by name: the reference client first, then by name."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        kind = getattr(importlib.import_module(f"{__name__}.{module.name}"), "KIND", None)
        if not isinstance(kind, ClientKind):
            raise TypeError(f"{__name__}.{module.name}: declares no ClientKind as KIND")
        if kind.name != module.name:
            raise TypeError(f"{__name__}.{module.name}: its client is named {kind.name!r}, not after its module")
        found.append(kind)
    references = [kind for kind in found if kind.reference]
    if len(references) != 1:
        raise TypeError(f"{__name__}: {len(references)} reference clients, not one")
    return {kind.name: kind for kind in sorted(found, key=lambda kind: (not kind.reference, kind.name))}


KINDS: dict[str, ClientKind] = _kinds()
"""Every client balgen knows, by its `--client` name; the reference client first."""

DEFAULT = next(iter(KINDS.values()))
"""The client a replay starts when none is named: the reference client `make tools` builds."""


def kind_named(name: str, option: str = "--client") -> ClientKind:
    """The client called `name` (any case), or `BadInput` naming the known ones."""
    try:
        return KINDS[name.lower()]
    except KeyError:
        raise BadInput(f"{option} {name!r}: unknown client (known: {', '.join(KINDS)})") from None


def kind_of_version(client_version: str | None) -> ClientKind | None:
    """The client a `web3_clientVersion` names (`Geth/v1.17.8-stable/...`), if balgen knows it."""
    return next((kind for kind in KINDS.values() if kind.names_version(client_version)), None)


def kind_of_preset(preset: ClientPreset) -> ClientKind | None:
    """The client whose preset `preset` is (a `--client-args` config merged in keeps its name); None for `--client-cmd`."""
    return KINDS.get(preset.name)
