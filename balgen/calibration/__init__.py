"""
Gas rules measured from the t8n a fill is given, not assumed.

`calibrated_fork` runs the calibration block (`probe`) once per t8n binary
and fork under a tracer, derives the gas rules from what t8n did
(`measure`), checks that they explain the whole block, and names the spec
they match. The result is cached under the binary's SHA-256 in
`.cache/gas-rules/` of the checkout (`BALGEN_CACHE` elsewhere; an installed
balgen without a checkout uses the user's cache folder), so a fill
pays the calibration once per binary: about a second.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path


from ..chain.alloc import genesis_entries, write_alloc_entries
from ..chain.builder import block_env, genesis_header, genesis_state_root
from ..chain.state_roots import STATE_ROOT_TOOL, check_reported_root
from ..chain.t8n import TransitionTool
from ..ethereum.chain_constants import CHAIN_ID
from ..plumbing.errors import BadInput
from ..ethereum.forks import Fork
from ..ethereum.gas_costs import GasCosts
from ..plumbing.file_digests import file_sha256
from ..plumbing.output_files import keep_text
from ..plumbing.toolchain import cache_root, located
from ..model.transactions import sign
from .measure import STEP_TRACER, UnmodelledRule, check_receipts, check_static_costs, measure_rules, observations
from .probe import CalibrationBlock

CALIBRATION_VERSION = 2
"""Bumped whenever the calibration block, the derivation or a known spec's name changes, so that old
cache entries are not reused (2: the v1.17.6-v1.17.8 spec became v1.17.6-v1.17.10)."""


def cache_folder() -> Path:
    """Where measured rules are kept: `gas-rules/` of balgen's cache (`toolchain.cache_root`)."""
    return cache_root() / "gas-rules"


def calibrated_fork(t8n: TransitionTool, fork: Fork, workdir: Path) -> Fork:
    """`fork` with the gas rules `t8n` implements; bad input if balgen cannot model them."""
    return dataclasses.replace(fork, gas=calibrated_gas(t8n, fork, workdir))


def calibrated_gas(t8n: TransitionTool, fork: Fork, workdir: Path) -> GasCosts:
    """The gas rules `t8n` implements for `fork`, from the cache or measured now."""
    path = cache_folder() / f"{fork.name.lower()}-v{CALIBRATION_VERSION}-{file_sha256(t8n.binary)[:32]}.json"
    cached = _read_cached(path)
    if cached is not None:
        return cached
    try:
        gas = measure_gas(t8n, fork, workdir)
    except UnmodelledRule as error:
        raise BadInput(f"--evm-bin {t8n.binary}: {fork.name} gas rule balgen cannot model: {error}") from None
    _write_cached(path, gas)
    return gas


def measure_gas(t8n: TransitionTool, fork: Fork, workdir: Path) -> GasCosts:
    """Run the calibration block under the step tracer and derive, check and name its rules."""
    specs = fork.known_gas
    block = CalibrationBlock(with_reservoir=specs[0].has_state_gas)
    workdir.mkdir(parents=True, exist_ok=True)
    alloc_path = workdir / "calibration-genesis.json"
    write_alloc_entries(alloc_path, genesis_entries(fork, sorted(block.pre().items())))
    genesis = genesis_header(fork, genesis_state_root(t8n, alloc_path, workdir / "genesis"))
    signed = [sign(tx.spec, CHAIN_ID) for tx in block.transactions()]
    result = t8n.transition(
        fork,
        alloc_path,
        block_env(fork, genesis, [genesis]),
        [tx.raw for tx in signed],
        workdir / "traced",
        label=f"{fork.name} gas calibration",
        tracer=STEP_TRACER,
    )
    observed = observations(block, result.receipts, result.traces, [tx.hash for tx in signed])
    check_static_costs(observed)
    measured = measure_rules(block, observed, specs[0])
    check_receipts(block, observed, result.gas_used, measured)
    return name_spec(measured, specs, fork)


def check_t8n(t8n: TransitionTool, fork: Fork, workdir: Path, tracer: str) -> None:
    """
    One transaction of the calibration block (the probe, which runs every
    operation balgen prices) under the native `tracer`, so that what a fill
    relies on of its t8n is refused once, in one line, before any fixture: a
    t8n without the tracer (a stock evm, where balgen fills with its access
    tracer; t8n instantiates a tracer only for a block with a transaction),
    or one whose state roots of the genesis and of the block are not those
    `balgen-state-root` computes from the allocations. The same two binaries
    answer the same way, so a pass is kept under both their digests
    (`passed_check`) and a fill checks a build of them once, not in every
    process and worker.
    """
    passed = passed_check(t8n, fork, tracer)
    if passed.exists():
        return
    block = CalibrationBlock(with_reservoir=fork.known_gas[0].has_state_gas)
    workdir.mkdir(parents=True, exist_ok=True)
    alloc_path = workdir / "check-genesis.json"
    write_alloc_entries(alloc_path, genesis_entries(fork, sorted(block.pre().items())))
    genesis_root = genesis_state_root(t8n, alloc_path, workdir / "genesis")
    check_reported_root(genesis_root, alloc_path, "--evm-bin: the calibration genesis's stateRoot")
    genesis = genesis_header(fork, genesis_root)
    first = sign(block.transactions()[0].spec, CHAIN_ID)
    env = block_env(fork, genesis, [genesis])
    result = t8n.transition(fork, alloc_path, env, [first.raw], workdir / "block", label="--evm-bin", tracer=tracer)
    check_reported_root(result.state_root, result.alloc_path, "--evm-bin: the calibration block 1's stateRoot")
    keep_text(passed, "passed\n")


def passed_check(t8n: TransitionTool, fork: Fork, tracer: str) -> Path:
    """Where `check_t8n`'s pass of `t8n` (and of the `balgen-state-root` it compared roots with) is kept."""
    state_root = located(STATE_ROOT_TOOL)
    roots = "no-state-root" if state_root is None else file_sha256(state_root)[:16]
    name = f"check-{fork.name.lower()}-{tracer}-v{CALIBRATION_VERSION}-{file_sha256(t8n.binary)[:32]}-{roots}"
    return cache_folder() / name


def name_spec(measured: GasCosts, specs: tuple[GasCosts, ...], fork: Fork) -> GasCosts:
    """The known spec the rules equal, or the measured rules named after the nearest spec and their difference."""
    for spec in specs:
        if spec.first_difference(measured) is None:
            return spec
    nearest = min(specs, key=lambda spec: sum(a != b for a, b in zip(spec.rules().values(), measured.rules().values())))
    return measured.named(f"{fork.name} (measured; {nearest.spec} but {nearest.first_difference(measured)})")


def _read_cached(path: Path) -> GasCosts | None:
    try:
        return GasCosts(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None  # absent, or written by another balgen: measure again


def _write_cached(path: Path, gas: GasCosts) -> None:
    """Written atomically, so that parallel fill workers never read half a file (a read-only checkout
    measures every time)."""
    keep_text(path, json.dumps(dataclasses.asdict(gas), indent=1, sort_keys=True))
