"""The header of a run's `results.json` (`RunResult` before any test ran): what was replayed, against what, and how."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from .. import __version__
from ..clients.kinds import KINDS
from ..clients.modes import ClientMode
from ..clients.start_work import idle_rule
from ..results.measurements import AGREEMENT_MARGIN_FRACTION, AGREEMENT_MARGIN_MS
from ..results.schema import RunResult
from .options import ReplayOptions
from .cpu_placement import cpu_list
from .outputs import utc_now
from .targets import ExternalClient, ManagedClient, target_description


def run_header(
    *,
    label: str,
    fixtures_path: Path,
    keyword: str | None,
    options: ReplayOptions,
    target: ManagedClient | ExternalClient,
    notes: Sequence[str] = (),
    modes: Sequence[ClientMode] = (),
    client_build: str | None = None,
) -> RunResult:
    """The header of `results.json`, before any test ran."""
    return RunResult(
        label=label,
        balgen_version=__version__,
        started_at=utc_now(),
        fixtures_path=str(fixtures_path),
        keyword=keyword,
        warmup=options.warmup,
        repeat=options.repeat,
        repeat_auto=options.repeat_auto,
        ci_width=options.ci_width if options.repeat_auto else None,
        cold=options.cold,
        drop_caches=options.drop_caches,
        fail_fast=options.fail_fast,
        target=target_description(target),
        notes=list(notes),
        method={**run_method(options, modes), "client_start": client_start(target)},
        modes=[mode_description(mode) for mode in modes],
        client_build=client_build,
    )


def mode_description(mode: ClientMode) -> dict[str, object]:
    """What results.json records about a mode (`RunResult.modes`)."""
    switches = None if mode.switches is None else dataclasses.asdict(mode.switches)
    return {"name": mode.name, "flags": list(mode.flags), "switches": switches, "verified": mode.verified}


def client_start(target: ManagedClient | ExternalClient) -> str:
    """What balgen waited for after starting a client (`clients.start_work`), for results.json's `method`."""
    if not isinstance(target, ManagedClient):
        return "a client balgen did not start: no wait"
    if target.settle_limit <= 0:
        return "no wait for a started client's own start-up work (--settle-limit 0)"
    return (
        f"after each start and restart of a client balgen starts, nothing sent until its process was idle "
        f"({idle_rule()}), at most {target.settle_limit:g} s"
    )


def run_method(options: ReplayOptions, modes: Sequence[ClientMode]) -> dict[str, object]:
    """How executions are isolated and checked, for results.json (`RunResult.method`)."""
    agreement = options.agreement
    return {
        "isolation": "sibling_blocks",
        "isolation_detail": "each execution of a valid benchmark payload is a new sibling of the block "
        "(same parent and transactions, extraData 'balgen sibling N'); no rollback, no forkchoice update between executions",
        "agreement_margin_ms": AGREEMENT_MARGIN_MS,
        "agreement_margin_fraction": AGREEMENT_MARGIN_FRACTION,
        "agreement": agreement.name,
        "intake_probes": {
            "per_test": agreement.intake_probes,
            "clients": "those whose own time starts after the payload's intake (geth's slow-block total_ms), not reth's whole insertion",
        },
        "own_time": {kind.name: kind.block_log.own_time for kind in KINDS.values() if kind.block_log is not None},
        "rounds": "each round executes every mode once, the order rotated by one per round" if modes else None,
        **noise_controls(options, modes),
    }


def noise_controls(options: ReplayOptions, modes: Sequence[ClientMode]) -> dict[str, object]:
    """What keeps other work out of the timed executions, as results.json records it (docs/replay.md, "The noise floor")."""
    paired = options.repeat_auto and len(modes) > 1
    return {
        "cpus": {
            "client": cpu_list(options.client_cpus) if options.client_cpus else "all",
            "balgen": cpu_list(options.balgen_cpus) if options.balgen_cpus else "all",
        },
        "balgen_during_execution": "idle: one blocking newPayload call; the progress display redraws on events, no timer thread",
        "stopping": (
            f"rounds until every mode's 95% interval of the median per-round ratio to {modes[0].name} spans "
            f"at most {options.ci_width:.1%}, at most {options.repeat} rounds"
            if paired
            else f"each test until the 95% interval of its median spans at most {options.ci_width:.1%}, at most {options.repeat} executions"
            if options.repeat_auto
            else f"{options.repeat} measured executions"
        ),
        "disturbance": {
            "measure": "CPU time of every process but the client and balgen during each newPayload (/proc/stat, /proc/PID/stat)",
            "limit_percent_of_a_core": options.disturbance_limit,
            "replaced": options.disturbance_limit is not None,
        },
    }
