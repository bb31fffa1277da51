"""
The whole spamoor export: every planned workload as files, in memory.

Per workload a `spamoor run` file (`<name>.yaml`, one replay-eest spammer
with comments on what differs from the fixture) and the payload file it
references (`payloads/<name>.yaml`); a workload whose set-up leaves
contracts at the same addresses on every chain (a contract set) also gets
`<name>.reuse.yaml`, which benchmarks again against what a first run left;
then `all.yaml`, which includes every workload's first-run file. Nothing is
written here: a workload that cannot be exported stops the export before
any file exists, and the caller writes the folder at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .. import __version__
from ..plumbing.errors import FillCheckFailed
from ..model.family import PlannedWorkload
from ..model.workload import Placement, Workload
from .addresses import Ownership, ownership
from .chain_order import OrderedTx, ordered_transactions, without
from .dependencies import dependency_groups, live_access_set
from .spamoor_payloads import TX_TYPE, GroupPayload, PayloadTx, group_payload
from .shape import once_per_chain_notes, shape_notes
from .spammer import ReplayEestConfig, replay_eest_config, spammer_entry
from .unexportable import UnexportableWorkload
from .yaml_text import comment, counted, yaml_block

ALL_FILE = "all.yaml"
PAYLOAD_FOLDER = "payloads"
REUSE_SUFFIX = ".reuse"
"""Stem suffix of the run that reuses the contracts an earlier run left on the chain."""


def config_file(stem: str) -> str:
    return f"{stem}.yaml"


def payload_file(stem: str) -> str:
    return f"{PAYLOAD_FOLDER}/{stem}.yaml"


@dataclass(frozen=True)
class ExportedRun:
    """One `spamoor run` of a workload: its payloads and the notes on the shape they keep."""

    workload: Workload
    stem: str
    """File name without `.yaml`, also the spammer's name."""
    payloads: list[GroupPayload]
    notes: list[str]


def exported_run(workload: Workload, txs: tuple[OrderedTx, ...], owned: Ownership, reuse: bool) -> ExportedRun:
    """
    One payload per dependency group of the workload's transactions `txs`;
    with `reuse`, of those left once the set-up calls that create contracts
    at chain-independent addresses are dropped (a first run put them there).
    """
    stem = workload.name + (REUSE_SUFFIX if reuse else "")
    if reuse:
        txs = without(txs, owned.once_per_chain)
    footprints = [live_access_set(ordered, owned) for ordered in txs]
    groups = dependency_groups(footprints)
    payloads = [group_payload(stem, i, [txs[j] for j in group], owned) for i, group in enumerate(groups)]
    persisting = once_per_chain_notes(
        config_file(workload.name), config_file(workload.name + REUSE_SUFFIX), len(owned.once_per_chain), reuse
    )
    notes = [*persisting, *shape_notes(workload, payloads, footprints)]
    return ExportedRun(workload, stem, payloads, notes)


def payload_tx_fields(tx: PayloadTx) -> dict[str, object]:
    """A replay-eest `Tx` in its YAML keys; no fee fields (the spammer sets fees)."""
    fields: dict[str, object] = {"from": tx.sender, "type": TX_TYPE}
    if tx.to is not None:
        fields["to"] = tx.to
    fields.update(data=tx.data, gas=tx.gas, value=hex(tx.value))
    return fields


def payload_text(run: ExportedRun) -> str:
    """The replay-eest payload file of one run."""
    header = comment(
        [
            f"balgen {__version__}: replay-eest payloads of {run.stem}, one per dependency group, each in "
            "the fixture's transaction order with the fixture's data, gas limits and values.",
            "$contract[N] is the N-th contract the payload's deployer creates; senders are the payload's wallets.",
        ]
    )
    body = {
        "payloads": [
            {"name": payload.name, "txs": [payload_tx_fields(tx) for tx in payload.txs]} for payload in run.payloads
        ]
    }
    return header + yaml_block(body)


def description(run: ExportedRun) -> str:
    setup = sum(len(payload.setup_txs) for payload in run.payloads)
    total = sum(len(payload.txs) for payload in run.payloads)
    return (
        f"balgen {__version__} {run.stem} ({run.workload.fork.name}): {setup} set-up and {total - setup} "
        f"benchmark transactions in {counted(len(run.payloads), 'replay-eest payload')}"
    )


def spammer_config(run: ExportedRun) -> ReplayEestConfig:
    """The replay-eest spammer config of one run: its seed names the run, so each run has wallets of its own."""
    return replay_eest_config(run.workload, run.stem, payload_file(run.stem), run.payloads)


def config_text(run: ExportedRun) -> str:
    """The `spamoor run` file of one run: comments, then its one spammer."""
    config = spammer_config(run)
    header = comment(
        [
            f"balgen {__version__} spamoor export of {run.stem} ({run.workload.fork.name}).",
            "Run it from the export folder (payload_file is relative to the working directory):",
            f"    spamoor run {config_file(run.stem)} -h <rpc url> -p <funded private key>",
            f"Funding: {counted(config.max_wallets, 'wallet')} of {config.refill_amount / 1e18:g} ETH each, enough "
            f"for every gas limit at base_fee {config.base_fee} gwei; raise refill_amount with base_fee.",
            "How the live run differs from the fixture:",
        ]
    )
    entry = spammer_entry(run.stem, description(run), config)
    return header + comment(run.notes, bullet="- ") + yaml_block([entry])


def built(planned: PlannedWorkload) -> Workload:
    """The workload as the fixtures have it with set-up blocks; an impossible one is unexportable."""
    if planned.params.placement is not Placement.BLOCKS:
        raise ValueError(f"{planned.name}: the spamoor export needs set-up blocks, not {planned.params.placement}")
    try:
        workload = planned.build()
    except FillCheckFailed as error:
        raise UnexportableWorkload(f"{planned.name}: {error}") from None
    if workload.invalid_access_list is not None:
        raise UnexportableWorkload(
            f"{planned.name}: its benchmark is a block whose access list lies ({workload.invalid_access_list.name}), "
            "which only a block builder can make: a mempool carries transactions, never an invalid block"
        )
    return workload


def workload_files(workload: Workload) -> dict[str, str]:
    """The spamoor file and the payload file of each run of one workload."""
    txs = ordered_transactions(workload)
    owned = ownership(workload, txs)
    runs = [exported_run(workload, txs, owned, reuse=False)]
    if owned.once_per_chain:
        runs.append(exported_run(workload, txs, owned, reuse=True))
    files = {}
    for run in runs:
        files[config_file(run.stem)] = config_text(run)
        files[payload_file(run.stem)] = payload_text(run)
    return files


def all_text(names: Sequence[str]) -> str:
    """`all.yaml`: every workload's file, included in catalog order."""
    header = comment(
        [
            f"balgen {__version__} spamoor export: {len(names)} workloads.",
            "Run from this folder, it runs every workload at once; to measure one workload run its own "
            "file, or pick spammers with -s/--spammers:",
            "    spamoor run all.yaml -h <rpc url> -p <funded private key>",
            f"A workload with a <name>{REUSE_SUFFIX}.yaml leaves its contracts on the chain: after this first "
            f"run, benchmark it again with <name>{REUSE_SUFFIX}.yaml (not included here).",
        ]
    )
    return header + yaml_block([{"include": config_file(name)} for name in names])


def spamoor_export(
    planned: Sequence[PlannedWorkload], exported: Callable[[PlannedWorkload], None] = lambda _: None
) -> dict[str, str]:
    """
    Every file of the export, by path relative to the export folder;
    `exported` is told of each workload done (a large gas value takes minutes).

    All workloads are tried, so the error names the first that cannot be
    exported and says how many others cannot either.
    """
    files: dict[str, str] = {}
    failures: list[str] = []
    for item in planned:
        try:
            files.update(workload_files(built(item)))
        except UnexportableWorkload as error:
            failures.append(str(error))
        exported(item)
    if failures:
        others = f" (and {len(failures) - 1} more of the {len(planned)} workloads)" if len(failures) > 1 else ""
        raise UnexportableWorkload(f"cannot export {failures[0]}{others}")
    files[ALL_FILE] = all_text([item.name for item in planned])
    return files
