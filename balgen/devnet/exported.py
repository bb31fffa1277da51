"""
An exported workload read back: which workload a spamoor file runs, rebuilt from the model.

The file names its workload and fork in the spammer's description; balgen
builds that workload and its export again, and the file must be exactly what
this balgen writes for it. So the check compares the chain with the model the
file was made from, and a file from another balgen version or edited by hand
is refused rather than checked against the wrong design.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..plumbing.errors import BadInput
from ..plumbing.user_files import read_user_text
from ..export.addresses import ownership
from ..export.chain_order import ordered_transactions
from ..export.spamoor_export import (
    ALL_FILE, REUSE_SUFFIX, ExportedRun, built, config_text, exported_run, payload_file, payload_text, spammer_config,
)
from ..export.spammer import ReplayEestConfig
from ..ethereum.forks import Fork, fork_by_name
from ..model.family import PlannedWorkload
from ..generators.catalog import all_planned_workloads
from ..generators.code_set import DEFAULT_CODE_SIZES
from ..model.workload import Placement

DESCRIPTION = re.compile(r"^balgen \S+ (?P<stem>\S+) \((?P<fork>\w+)\):")
"""How `spamoor_export.description` starts: version, run name, fork."""


@dataclass(frozen=True)
class ExportedWorkload:
    """One `spamoor run` file and the export run it holds, rebuilt."""

    path: Path
    run: ExportedRun

    @property
    def fork(self) -> Fork:
        return self.run.workload.fork

    @property
    def config(self) -> ReplayEestConfig:
        """The spammer's config as the file holds it (read_exported checked the file is exactly this)."""
        return spammer_config(self.run)


def planned_by_name(name: str, fork: Fork, where: Path) -> PlannedWorkload:
    """The workload called `name` (`<family>-<fill>[-<variant>]-<gas>M`) for `fork`."""
    try:
        gas = round(float(name.rsplit("-", 1)[-1].removesuffix("M")) * 1_000_000)
    except ValueError:
        raise BadInput(f"{where}: {name!r} is not a balgen workload name") from None
    sizes = tuple(part for part in name.split("-") if part.endswith("KB")) or DEFAULT_CODE_SIZES
    for planned in all_planned_workloads(fork, [gas], Placement.BLOCKS, None, sizes):
        if planned.name == name:
            return planned
    raise BadInput(f"{where}: no balgen workload is called {name!r}")


def spammer_of(path: Path) -> dict:
    """The one spammer entry of a `spamoor run` file balgen wrote."""
    text = read_user_text(path)  # a FIFO, a device or a file larger than memory allows is one line
    try:
        entries = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise BadInput(f"{path}: cannot read it as a spamoor file ({error})") from None
    if not (isinstance(entries, list) and len(entries) == 1 and isinstance(entries[0], dict)):
        raise BadInput(f"{path}: not a workload file of a balgen spamoor export (one spammer entry)")
    return entries[0]


def read_exported(path: Path) -> ExportedWorkload:
    """The workload `path` runs, rebuilt; its files must be what this balgen exports for it."""
    entry = spammer_of(path)
    found = DESCRIPTION.match(str(entry.get("description", "")))
    if not found:
        raise BadInput(f"{path}: description: not written by balgen's spamoor export")
    stem, fork = found["stem"], fork_by_name(found["fork"])
    reuse = stem.endswith(REUSE_SUFFIX)
    workload = built(planned_by_name(stem.removesuffix(REUSE_SUFFIX), fork, path))
    txs = ordered_transactions(workload)
    run = exported_run(workload, txs, ownership(workload, txs), reuse)
    payloads = path.parent / payload_file(stem)
    for file, text in ((path, config_text(run)), (payloads, payload_text(run))):
        if read_user_text(file) != text:
            raise BadInput(
                f"{file}: differs from what this balgen exports for {stem}; check it with the balgen that wrote "
                "it, or export again"
            )
    return ExportedWorkload(path, run)


def workload_files(path: Path) -> list[Path]:
    """A workload file as given, or every workload an export folder's all.yaml includes."""
    if path.is_file():
        return [path]
    index = path / ALL_FILE
    if not index.is_file():
        raise BadInput(f"{path}: neither a workload file nor an export folder (no {ALL_FILE})")
    try:
        entries = yaml.safe_load(read_user_text(index)) or []
    except yaml.YAMLError as error:
        raise BadInput(f"{index}: cannot read it as a spamoor file ({error})") from None
    return [path / entry["include"] for entry in entries if isinstance(entry, dict) and "include" in entry]
