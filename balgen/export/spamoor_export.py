"""
The whole spamoor export: every planned workload as files, in memory.

Per workload a `spamoor run` file (`<name>.yaml`, one replay-eest spammer
with comments on what differs from the fixture) and the payload file it
references (`payloads/<name>.yaml`); then `all.yaml`, which includes every
workload's file. Nothing is written here: a workload that cannot be
exported stops the export before any file exists, and the caller writes
the folder at once.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import __version__
from ..errors import FillCheckFailed
from ..generators.catalog import PlannedWorkload
from ..workload import Placement, Workload
from .addresses import ownership
from .chain_order import ordered_transactions
from .dependencies import dependency_groups, footprint
from .payloads import TX_TYPE, GroupPayload, PayloadTx, group_payload
from .shape import shape_notes
from .spammer import replay_eest_config, spammer_entry
from .unexportable import UnexportableWorkload
from .yaml_text import comment, counted, yaml_block

ALL_FILE = "all.yaml"
PAYLOAD_FOLDER = "payloads"


def config_file(name: str) -> str:
    return f"{name}.yaml"


def payload_file(name: str) -> str:
    return f"{PAYLOAD_FOLDER}/{name}.yaml"


def workload_payloads(workload: Workload) -> tuple[list[GroupPayload], list[str]]:
    """One payload per dependency group, and the notes on the shape they keep."""
    txs = ordered_transactions(workload)
    owned = ownership(workload, txs)
    footprints = [footprint(ordered, owned) for ordered in txs]
    groups = dependency_groups(footprints)
    payloads = [group_payload(workload.name, i, [txs[j] for j in group], owned) for i, group in enumerate(groups)]
    return payloads, shape_notes(workload, payloads, footprints)


def payload_tx_fields(tx: PayloadTx) -> dict[str, object]:
    """A replay-eest `Tx` in its YAML keys; no fee fields (the spammer sets fees)."""
    fields: dict[str, object] = {"from": tx.sender, "type": TX_TYPE}
    if tx.to is not None:
        fields["to"] = tx.to
    fields.update(data=tx.data, gas=tx.gas, value=hex(tx.value))
    return fields


def payload_text(workload: Workload, payloads: Sequence[GroupPayload]) -> str:
    """The replay-eest payload file of one workload."""
    header = comment(
        [
            f"balgen {__version__}: replay-eest payloads of {workload.name}, one per dependency group, each in "
            "the fixture's transaction order with the fixture's data, gas limits and values.",
            "$contract[N] is the N-th contract the payload's deployer creates; senders are the payload's wallets.",
        ]
    )
    body = {
        "payloads": [
            {"name": payload.name, "txs": [payload_tx_fields(tx) for tx in payload.txs]} for payload in payloads
        ]
    }
    return header + yaml_block(body)


def description(workload: Workload, payloads: Sequence[GroupPayload]) -> str:
    setup = sum(len(payload.setup_txs) for payload in payloads)
    total = sum(len(payload.txs) for payload in payloads)
    return (
        f"balgen {__version__} {workload.name} ({workload.fork.name}): {setup} set-up and {total - setup} "
        f"benchmark transactions in {counted(len(payloads), 'replay-eest payload')}"
    )


def config_text(workload: Workload, payloads: Sequence[GroupPayload], notes: Sequence[str]) -> str:
    """The `spamoor run` file of one workload: comments, then its one spammer."""
    config = replay_eest_config(workload, payload_file(workload.name), payloads)
    header = comment(
        [
            f"balgen {__version__} spamoor export of {workload.name} ({workload.fork.name}).",
            "Run it from the export folder (payload_file is relative to the working directory):",
            f"    spamoor run {config_file(workload.name)} -h <rpc url> -p <funded private key>",
            f"Funding: {counted(config.max_wallets, 'wallet')} of {config.refill_amount / 1e18:g} ETH each, enough "
            f"for every gas limit at base_fee {config.base_fee} gwei; raise refill_amount with base_fee.",
            "How the live run differs from the fixture:",
        ]
    )
    entry = spammer_entry(workload, description(workload, payloads), config)
    return header + comment(notes, bullet="- ") + yaml_block([entry])


def built(planned: PlannedWorkload) -> Workload:
    """The workload as the fixtures have it with set-up blocks; an impossible one is unexportable."""
    if planned.params.placement is not Placement.BLOCKS:
        raise ValueError(f"{planned.name}: the spamoor export needs set-up blocks, not {planned.params.placement}")
    try:
        return planned.build()
    except FillCheckFailed as error:
        raise UnexportableWorkload(f"{planned.name}: {error}") from None


def workload_files(workload: Workload) -> dict[str, str]:
    """The spamoor file and the payload file of one workload."""
    payloads, notes = workload_payloads(workload)
    return {
        config_file(workload.name): config_text(workload, payloads, notes),
        payload_file(workload.name): payload_text(workload, payloads),
    }


def all_text(names: Sequence[str]) -> str:
    """`all.yaml`: every workload's file, included in catalog order."""
    header = comment(
        [
            f"balgen {__version__} spamoor export: {len(names)} workloads.",
            "Run from this folder, it runs every workload at once; to measure one workload run its own "
            "file, or pick spammers with -s/--spammers:",
            "    spamoor run all.yaml -h <rpc url> -p <funded private key>",
        ]
    )
    return header + yaml_block([{"include": config_file(name)} for name in names])


def spamoor_export(planned: Sequence[PlannedWorkload]) -> dict[str, str]:
    """
    Every file of the export, by path relative to the export folder.

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
    if failures:
        others = f" (and {len(failures) - 1} more of the {len(planned)} workloads)" if len(failures) > 1 else ""
        raise UnexportableWorkload(f"cannot export {failures[0]}{others}")
    files[ALL_FILE] = all_text([item.name for item in planned])
    return files
