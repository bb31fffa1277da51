"""
The parts of a modes run and of sibling-block measurement that need no
client: the ordered trie root, sibling variants rebuilt to their fixture's
block hash, the mode tables and `--modes` parsing, reth's and geth's log
lines that prove a mode, the agreement margin, and the rotation of rounds.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest
import rlp
from trie import HexaryTrie

from balgen.chain.ordered_trie import ordered_trie_root
from balgen.clients.kind import prove_mode
from balgen.clients.kinds import KINDS, geth, reth
from balgen.clients.mode_evidence import ModeNotInEffect
from balgen.clients.modes import ClientMode
from balgen.clients.modes import parse_modes as parse_modes_of
from balgen.clients.slow_block_log import ExecutionPath, ClientBlockTiming, SlowBlockLogReader
from balgen.plumbing.errors import BadInput
from balgen.fixtures.reading import read_fixture_document
from balgen.replay.discovery import discover, load_test, parse_test
from balgen.replay.runner import rotated
from balgen.replay.sibling_blocks import SiblingBlocks, UnknownPayloadShape
from balgen.results.measurements import Execution, Role, allowed_overhead_ms
from fill_runs import shared_fill
from test_replay_units import HASH, SLOW_BLOCK_JSON  # geth's entry of a sequential block (it counted code reads)


RETH_SLOW = (
    "2026-11-27T18:09:08.195854Z  WARN reth::slow_block: Slow block block.number=2 block.hash={hash} "
    "block.gas_used=998585 block.tx_count=35 timing.execution_ms=4 timing.state_read_ms=0 timing.state_hash_ms=3 "
    "timing.total_ms=8 throughput.mgas_per_sec=\"120.0\" state_reads.accounts=77 state_reads.storage_slots=54 "
    "state_reads.code=7 state_reads.code_bytes=2214 state_writes.accounts=73 state_writes.accounts_deleted=0 "
    "state_writes.storage_slots=37 state_writes.storage_slots_deleted=0 state_writes.code=0 state_writes.code_bytes=0 "
    "cache.account.hits=0 cache.account.misses=77 cache.storage.hits=0 cache.storage.misses=54 "
    "cache.code.hits=1 cache.code.misses=6"
)
RETH_EXECUTED = (
    '2026-11-27T18:09:08.190879Z DEBUG validate_block_with_state{{parent=0x{parent} type_name="payload"}}'
    ":execute_block{bal}: engine::tree::payload_validator: Executed block{via} elapsed=1.457475ms"
)
RETH_ADDED = (
    "2026-11-27T18:09:08.196081Z  INFO reth_node_events::node: Block added to canonical chain number=2 "
    "hash={hash} peers=0 txs=35 gas_used=998.59Kgas gas_throughput=101.78Mgas/second elapsed={elapsed}"
)


def reth_block_lines(block_hash: str, *, bal: bool, elapsed: str = "9.810867ms") -> list[str]:
    """The three lines reth 2.5 logs for one executed block, in its order."""
    return [
        RETH_EXECUTED.format(parent="11" * 32, bal="_bal" if bal else "", via=" via BAL path" if bal else ""),
        RETH_SLOW.format(hash=block_hash),
        RETH_ADDED.format(hash=block_hash, elapsed=elapsed),
    ]


# -- the ordered trie ----------------------------------------------------------


@pytest.mark.parametrize("count", [0, 1, 2, 16, 17, 128, 129, 300])
def test_ordered_trie_root_is_the_reference_tries(count: int) -> None:
    """Against py-trie's HexaryTrie, with values short enough to be embedded and long enough to be hashed."""
    rng = random.Random(count)
    values = [rng.randbytes(rng.choice([1, 20, 31, 32, 33, 200])) for _ in range(count)]
    reference = HexaryTrie({})
    for index, value in enumerate(values):
        reference[rlp.encode(index)] = value
    assert ordered_trie_root(values) == reference.root_hash


# -- sibling blocks ----------------------------------------------------------


@pytest.fixture(scope="module")
def engine_fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1M fill of two families (Amsterdam, balgen's t8n): real payloads to rebuild headers from."""
    completed, output = shared_fill(
        tmp_path_factory, "--gas-benchmark-values", "1", "-k", "mixed_dep-max-group1 or serial_chain-max"
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return output


def test_a_sibling_is_the_same_block_with_another_extra_data_and_hash(engine_fixtures: Path) -> None:
    suite = discover(engine_fixtures, "mixed_dep-max-group1", "auto")
    benchmark = load_test(suite.groups[0].tests[0]).benchmark
    siblings = SiblingBlocks.of(benchmark)
    assert siblings.variant(0) is benchmark
    hashes = {siblings.variant(number).block_hash for number in range(6)}
    assert len(hashes) == 6, "every variant has a hash of its own"
    variant = siblings.variant(3)
    original, changed = benchmark.params[0], variant.params[0]
    assert changed["extraData"] == "0x" + b"balgen sibling 3".hex()
    assert {key for key in original if original[key] != changed[key]} == {"extraData", "blockHash"}
    assert variant.params[1:] == benchmark.params[1:]
    assert (variant.block_number, variant.parent_hash, variant.gas_used) == (
        benchmark.block_number, benchmark.parent_hash, benchmark.gas_used,
    )  # fmt: skip


def test_a_payload_whose_header_does_not_rebuild_makes_no_sibling(engine_fixtures: Path) -> None:
    suite = discover(engine_fixtures, "serial_chain-max", "auto")
    benchmark = load_test(suite.groups[0].tests[0]).benchmark
    params = [dict(benchmark.params[0]), *benchmark.params[1:]]
    params[0]["transactions"] = params[0]["transactions"][:-1]  # a transactions root the hash does not commit to
    from dataclasses import replace

    with pytest.raises(UnknownPayloadShape, match="hashes to 0x[0-9a-f]{64}, not to its blockHash"):
        SiblingBlocks.of(replace(benchmark, params=params))


# -- what discovery checked, reused ----------------------------------------------


def test_a_test_unchanged_since_discovery_loads_as_a_fresh_check_reads_it(engine_fixtures: Path) -> None:
    """The payloads discovery checked, given their params again, are what checking the file anew gives."""
    suite = discover(engine_fixtures, "mixed_dep-max-group1", "auto")
    ref = suite.groups[0].tests[0]
    assert ref.checked is not None and all(not directive.params for directive in ref.checked.directives)
    fresh = parse_test(ref, read_fixture_document(ref.path)[ref.test_id])
    loaded = load_test(ref)
    assert loaded.payloads == fresh.payloads
    assert loaded.benchmark.params[0]["transactions"], "the benchmark payload is sent with its transactions"


def test_a_file_rewritten_after_discovery_is_checked_again(engine_fixtures: Path, tmp_path: Path) -> None:
    """A transaction mangled after discovery is bad input naming it, not sent because discovery once checked the file."""
    copy = tmp_path / "fixtures"
    shutil.copytree(engine_fixtures / "blockchain_tests_engine_x", copy)
    ref = discover(copy, "serial_chain-max", "auto").groups[0].tests[0]
    document = json.loads(ref.path.read_text())
    document[ref.test_id]["engineNewPayloads"][-1]["params"][0]["transactions"][0] = "0xnothex"
    ref.path.write_text(json.dumps(document))
    written = ref.path.stat().st_mtime_ns
    os.utime(ref.path, ns=(written + 10**9, written + 10**9))  # a later time even on a coarse clock
    with pytest.raises(BadInput, match=r"transactions\[0\]: '0xnothex' is not 0x-prefixed hex"):
        load_test(ref)


# -- modes -------------------------------------------------------------------


def parse_modes(text: str, client: str) -> tuple[ClientMode, ...]:
    """`--modes TEXT` for the client named `client` (one balgen has no preset for knows no mode)."""
    return parse_modes_of(text, client, KINDS[client].modes if client in KINDS else {})


def test_the_reports_three_modes_for_reth_and_geth() -> None:
    reth = KINDS["reth"].modes
    assert reth["sequential"].flags == (
        "--engine.disable-bal-parallel-execution", "--engine.disable-bal-parallel-state-root", "--engine.disable-bal-batch-io",
    )  # fmt: skip
    assert reth["full"].flags == ()
    assert reth["nobatchio"].flags == ("--engine.disable-bal-batch-io",)
    assert [KINDS["geth"].modes[name].flags for name in ("sequential", "full", "nobatchio")] == [
        ("--bal.executionmode=sequential",), ("--bal.executionmode=full",), ("--bal.executionmode=nobatchio",),
    ]  # fmt: skip
    assert not KINDS["besu"].modes["full"].verified and not KINDS["nethermind"].modes["full"].verified


def test_a_mode_listed_twice_is_an_aa_pair_with_names_apart() -> None:
    modes = parse_modes("full,sequential,full", "reth")
    assert [mode.name for mode in modes] == ["full", "sequential", "full#2"]
    assert modes[0].flags == modes[2].flags and modes[2].kind == "full"


def test_a_user_defined_mode_works_for_any_client() -> None:
    (mode,) = parse_modes("small=--engine.cross-block-cache-size 64", "custom")
    assert (mode.name, mode.flags, mode.switches) == ("small", ("--engine.cross-block-cache-size", "64"), None)


@pytest.mark.parametrize(
    ("text", "client", "complaint"),
    [
        ("fast", "reth", "--modes 'fast': unknown mode for --client reth (known: sequential, full, nobatchio"),
        ("full", "custom", "unknown mode for --client custom (known: none"),
        ("full,,sequential", "reth", "a comma-separated list of modes"),
        ("2x=--flag", "reth", "a mode's name is a letter"),
    ],
)
def test_bad_modes_name_what_is_wrong(text: str, client: str, complaint: str) -> None:
    with pytest.raises(BadInput, match=None) as raised:
        parse_modes(text, client)
    assert complaint in str(raised.value)


# -- the client's log proves the mode -----------------------------------------


def test_reth_lines_give_the_execution_path_and_the_whole_insertion_time(tmp_path: Path) -> None:
    log = tmp_path / "reth.log"
    log.write_text("\n".join(reth_block_lines(HASH, bal=True, elapsed="9.810867ms")) + "\n")
    timing = SlowBlockLogReader(log, reth.timings).timing_of(HASH, wait=0.0, needs_insert=True)
    assert timing is not None
    assert timing.execution_path is ExecutionPath.BAL
    assert timing.insert_ms == pytest.approx(9.810867)
    assert timing.total_ms == 8.0 and timing.own_ms == pytest.approx(9.810867)
    log.write_text("\n".join(reth_block_lines(HASH, bal=False, elapsed="1.15880221s")) + "\n")
    timing = SlowBlockLogReader(log, reth.timings).timing_of(HASH)
    assert timing is not None and timing.execution_path is ExecutionPath.SEQUENTIAL
    assert timing.insert_ms == pytest.approx(1158.80221)


def test_the_reader_waits_for_reths_insertion_line(tmp_path: Path) -> None:
    """reth's logger writes after the call is answered: a missing `Block added` line is waited for, not skipped."""
    log = tmp_path / "reth.log"
    lines = reth_block_lines(HASH, bal=True)
    log.write_text("\n".join(lines[:2]) + "\n")
    reader = SlowBlockLogReader(log, reth.timings)
    timing = reader.timing_of(HASH, wait=0.05, needs_insert=True)
    assert timing is not None and timing.insert_ms is None, "given up after the wait, the entry is still kept"


def _reth_timing(bal: bool) -> ClientBlockTiming:
    timing = next(t for line in reth_block_lines(HASH, bal=bal) if (t := reth.parse_line(line)) is not None)
    return timing.model_copy(update={"execution_path": ExecutionPath.BAL if bal else ExecutionPath.SEQUENTIAL})


def test_reth_in_the_wrong_mode_fails_naming_the_mode() -> None:
    sequential = parse_modes("sequential", "reth")[0]
    proof = prove_mode(reth.KIND, sequential, [_reth_timing(bal=False)] * 3)
    assert proof.proven == ("parallel execution off (reth's execution path (Executed block [via BAL path]), 3 of 3 executions)",)
    assert any("batch IO off" in line for line in proof.unproven)
    with pytest.raises(ModeNotInEffect, match=r"mode sequential \(--engine.disable-bal-parallel-execution .*parallel execution should be off.* in 2 of 3"):
        prove_mode(reth.KIND, sequential, [_reth_timing(bal=True), _reth_timing(bal=False), _reth_timing(bal=True)])


def test_geths_parallel_line_read_cache_and_no_batch_io_line_prove_its_three_modes() -> None:
    parallel_line = "DEBUG[11-28|12:00:00.000] Parallel block execution number=2 txs=1 system=1ms txexec=2ms stateapply=1ms statehash=1ms elapsed=5ms"
    no_batch_io_line = "INFO [11-28|12:00:00.000] Executing block in parallel without BAL batch IO number=2 hash=abcdef..123456"
    entry = f"WARN [11-28|12:00:00.001] {SLOW_BLOCK_JSON}"  # its read cache counted 1 hit and 2 misses
    (sequential,) = geth.timings([entry])
    (parallel,) = geth.timings([parallel_line, entry.replace('"hits":1,"misses":2', '"hits":0,"misses":0')])
    (no_batch_io,) = geth.timings([no_batch_io_line, parallel_line, entry])
    assert (sequential.execution_path, parallel.execution_path) == (ExecutionPath.SEQUENTIAL, ExecutionPath.BAL)
    modes = {mode.name: mode for mode in parse_modes("sequential,full,nobatchio", "geth")}
    assert prove_mode(geth.KIND, modes["sequential"], [sequential]).proven[1].startswith("parallel execution off")
    assert len(prove_mode(geth.KIND, modes["full"], [parallel]).proven) == 3, "executed, in parallel, with batch IO"
    assert len(prove_mode(geth.KIND, modes["nobatchio"], [no_batch_io]).proven) == 3
    with pytest.raises(ModeNotInEffect, match="mode nobatchio .*batch IO should be off"):
        prove_mode(geth.KIND, modes["nobatchio"], [parallel])
    with pytest.raises(ModeNotInEffect, match="mode full .*parallel execution should be on"):
        prove_mode(geth.KIND, modes["full"], [sequential])
    (unshown,) = geth.timings([entry.replace('"hits":1,"misses":2', '"hits":0,"misses":0')])
    with pytest.raises(ModeNotInEffect, match=r"mode sequential .*parallel execution off not proven: .* absent in 1 executions"):
        prove_mode(geth.KIND, modes["sequential"], [unshown])


def _geth_parallel_entry() -> ClientBlockTiming:
    """A slow-block entry as geth logs a block on its BAL path: reads are the accounts written, no code."""
    entry = geth.parse_line(f"WARN [11-21|20:08:29.123] {SLOW_BLOCK_JSON}")
    assert entry is not None and entry.counts is not None
    reads = entry.counts.reads.model_copy(update={"code": 0, "accounts": entry.counts.writes.accounts})
    return entry.model_copy(update={"counts": entry.counts.model_copy(update={"reads": reads}), "without_batch_io_logged": False})


def test_geths_executionless_line_gives_its_phases_and_proves_that_mode_alone(tmp_path: Path) -> None:
    """Only geth-bal-switch's executionless line proves that mode, and it contradicts every executing mode."""
    log = tmp_path / "geth.log"
    log.write_text(
        f"INFO [11-28|22:00:00.000] Applied block access list without execution number=2 hash={HASH} txs=3"
        " apply_ms=1.250 hash_ms=0.500 commit_ms=2.125\n"
        f"WARN [11-28|22:00:00.010] {SLOW_BLOCK_JSON}\n"
    )
    applied = SlowBlockLogReader(log, geth.timings).timing_of(HASH)
    assert applied is not None and applied.executionless is not None
    assert (applied.executionless.apply_ms, applied.executionless.hash_ms, applied.executionless.commit_ms) == (1.25, 0.5, 2.125)
    json_line = (
        '{"t":"2026-11-28T22:00:00Z","lvl":"info","msg":"Applied block access list without execution","number":2,'
        f'"hash":"{HASH}","txs":3,"apply_ms":"1.5","hash_ms":"0.25","commit_ms":"3.000"}}'
    )
    assert geth.executionless_phases([json_line])[HASH].apply_ms == 1.5, "geth's JSON log format is read too"
    applied = applied.model_copy(update={"counts": _geth_parallel_entry().counts})
    executed = _geth_parallel_entry()
    modes = {mode.name: mode for mode in parse_modes("sequential,full,nobatchio,executionless", "geth")}
    proof = prove_mode(geth.KIND, modes["executionless"], [applied] * 2)
    assert proof.proven == ("execution off (geth-bal-switch's 'Applied block access list without execution' line or its absence, 2 of 2 executions)",)
    with pytest.raises(ModeNotInEffect, match="mode executionless .*execution should be off.* in 1 of 2"):
        prove_mode(geth.KIND, modes["executionless"], [applied, executed])
    for name in ("sequential", "full", "nobatchio"):
        with pytest.raises(ModeNotInEffect, match=f"mode {name} .*: execution should be on"):
            prove_mode(geth.KIND, modes[name], [applied])


def test_executionless_asked_of_a_client_without_it_lists_the_modes_it_has(capsys: pytest.CaptureFixture[str]) -> None:
    """Said first, in one line, exit 2: before the client's binary is looked for or any fixture read."""
    from balgen.commands.replay import run_replay

    assert run_replay(["fixtures-that-are-not-read", "--client", "reth", "--modes", "sequential,executionless"]) == 2
    assert capsys.readouterr().err == (
        "balgen replay: --modes 'executionless': unknown mode for --client reth (known: sequential, full, nobatchio;"
        " executionless is a mode of geth only; or define one as NAME=FLAGS)\n"
    )


def test_geths_no_batch_io_line_belongs_to_the_entry_after_it(tmp_path: Path) -> None:
    log = tmp_path / "geth.log"
    log.write_text(
        "INFO [11-27|18:00:00.000] Executing block in parallel without BAL batch IO number=2 hash=abcdef..123456\n"
        f"WARN [11-27|18:00:00.010] {SLOW_BLOCK_JSON}\n"
    )
    timing = SlowBlockLogReader(log, geth.timings).timing_of(HASH)
    assert timing is not None and timing.without_batch_io_logged is True
    log.write_text(f"WARN [11-27|18:00:00.010] {SLOW_BLOCK_JSON}\n")
    timing = SlowBlockLogReader(log, geth.timings).timing_of(HASH)
    assert timing is not None and timing.without_batch_io_logged is False


def test_geths_parallel_execution_debug_line_belongs_to_the_entry_after_it(tmp_path: Path) -> None:
    # core/state_processor_parallel.go:323-327 at DEBUG, terminal format: a duration in µs comes quoted
    log = tmp_path / "geth.log"
    log.write_text(
        # verbatim from geth v1.17.10 (--log.vmodule core/state_processor_parallel.go=4) but the numbers
        'DEBUG[11-28|22:41:50.557] Parallel block execution                 number=2 txs=36 system=1.204ms   '
        'txexec=41.5ms   stateapply="812.1µs" statehash=23.25ms    elapsed=44.001ms\n'
        f"WARN [11-27|18:00:00.010] {SLOW_BLOCK_JSON}\n"
        f"WARN [11-27|18:00:00.020] {SLOW_BLOCK_JSON.replace(HASH, '0x' + 'cd' * 32)}\n"
    )
    reader = SlowBlockLogReader(log, geth.timings)
    timing = reader.timing_of(HASH)
    assert timing is not None and timing.parallel is not None
    assert (timing.parallel.txexec_ms, timing.parallel.stateapply_ms, timing.parallel.statehash_ms) == (41.5, 0.8121, 23.25)
    assert timing.parallel.system_ms == 1.204 and timing.parallel.elapsed_ms == 44.001
    later = SlowBlockLogReader(log, geth.timings).timing_of("0x" + "cd" * 32)
    assert later is not None and later.parallel is None, "the line is the block's before it, not the next one's"
    assert geth.parallel_phases("DEBUG Parallel block execution system=1x txexec=1ms stateapply=1ms statehash=1ms elapsed=1ms") is None


# -- the agreement margin and the rounds ----------------------------------------


def _execution(new_payload_ms: float, own: ClientBlockTiming | None) -> Execution:
    return Execution(
        test_id="t", role=Role.MEASURED, repetition=0, payload_index=1, block_number=2, block_hash=HASH,
        gas_used=1_000_000, transaction_count=1, status="VALID", new_payload_ns=int(new_payload_ms * 1e6),
        forkchoice_updated_ns=None, known_before_send=False, restarted_before=False, own_timing=own,
    )  # fmt: skip


def test_the_client_side_time_must_agree_with_the_clients_own() -> None:
    own = _reth_timing(bal=True).model_copy(update={"insert_ms": 20.0})
    assert allowed_overhead_ms(20.0) == pytest.approx(12.0)
    assert _execution(31.9, own).within_margin is True
    assert _execution(32.1, own).within_margin is False
    assert _execution(1_150.0, own.model_copy(update={"insert_ms": 1_158.8})).within_margin is True
    restart_artefact = own.model_copy(update={"insert_ms": None, "total_ms": 155.0})
    assert _execution(2_000.0, restart_artefact).overhead_ms == pytest.approx(1_845.0)
    assert _execution(2_000.0, restart_artefact).within_margin is False
    assert _execution(5.0, None).within_margin is None


def test_the_margin_allows_for_the_client_s_intake_of_the_payload() -> None:
    """A 60M payload geth takes 35 ms to decode and hash before its block timer starts is not a disagreement."""
    own = _reth_timing(bal=True).model_copy(update={"insert_ms": None, "total_ms": 130.0})
    assert allowed_overhead_ms(130.0, intake_ms=35.0) == pytest.approx(58.0)
    decoded = _execution(130.0 + 45.0, own)
    assert decoded.within_margin is False, "without the intake: 45 ms over 23 ms allowed"
    assert decoded.model_copy(update={"intake_ms": 35.0}).within_margin is True
    assert decoded.model_copy(update={"intake_ms": 10.0}).within_margin is False, "the intake is measured, not assumed"


def test_rounds_rotate_so_no_mode_is_always_first() -> None:
    modes = ["sequential", "full", "nobatchio"]
    orders = [rotated(modes, round_number) for round_number in range(3)]
    assert orders == [
        ["sequential", "full", "nobatchio"], ["full", "nobatchio", "sequential"], ["nobatchio", "sequential", "full"],
    ]  # fmt: skip
    assert {order[0] for order in orders} == set(modes)


def test_a_modes_run_reads_as_one_run_per_mode_for_the_report(tmp_path: Path) -> None:
    """`balgen report RUN` of a modes run compares its modes, the first as baseline; full and full#2 are one build."""
    from balgen.results.comparison import load_runs, same_build
    from balgen.results.schema import FixtureResult, RunResult, Verdict

    def result(mode: str) -> FixtureResult:
        return FixtureResult(
            test_id="t", fixture_name="t", path="p", format="blockchain_test_engine_x", genesis_hash=HASH,
            verdict=Verdict.PASSED, failure=None, mode=mode,
        )  # fmt: skip

    modes = parse_modes("sequential,full,full", "reth")
    run = RunResult(
        label="reth", balgen_version="0", started_at="2026-11-27T00:00:00+00:00", fixtures_path="f", keyword=None,
        warmup=1, repeat=5, cold=False, fail_fast=False, target={"kind": "managed", "client": "reth"},
        modes=[{"name": mode.name, "flags": list(mode.flags)} for mode in modes],
        tests=[result(mode.name) for mode in modes],
    )  # fmt: skip
    (tmp_path / "results.json").write_text(run.model_dump_json())
    runs = load_runs([tmp_path])
    assert [loaded.name for loaded in runs] == ["reth-sequential", "reth-full", "reth-full#2"]
    assert [[test.mode for test in loaded.result.tests] for loaded in runs] == [["sequential"], ["full"], ["full#2"]]
    assert same_build(runs[1].result, runs[2].result) and not same_build(runs[0].result, runs[1].result)


@pytest.mark.parametrize(
    ("modes", "line"),
    [
        (
            "sequential=--bal.executionmode=full",
            "balgen replay: --modes 'sequential=--bal.executionmode=full': named after geth's mode sequential "
            "(--bal.executionmode=sequential), but its flags lack --bal.executionmode=sequential; rename it or give that mode's flags",
        ),
        (
            "sequential,full=--cache 64",
            "balgen replay: --modes 'full=--cache 64': named after geth's mode full (--bal.executionmode=full), "
            "but its flags lack --bal.executionmode=full; rename it or give that mode's flags",
        ),
    ],
)
def test_a_mode_claiming_a_built_in_name_with_other_flags_is_refused(
    modes: str, line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A result named after a built-in mode must be that mode: one line naming the mode and what it lacks, exit 2."""
    from balgen.commands.replay import run_replay

    binary = tmp_path / "geth"
    binary.write_text("#!/bin/sh\necho '--bal.executionmode --cache'\n")
    binary.chmod(0o755)
    code = run_replay([str(tmp_path / "fixtures"), "--client-bin", str(binary), "--modes", modes, "--output", str(tmp_path / "out")])
    assert code == 2 and capsys.readouterr().err == line + "\n"
    assert not (tmp_path / "out").exists()


def test_a_claim_with_the_built_in_flags_is_proven_as_that_mode() -> None:
    (claim,) = parse_modes("full=--bal.executionmode=full --cache 64", "geth")
    assert claim.switches == KINDS["geth"].modes["full"].switches and claim.flags[-2:] == ("--cache", "64")
    with pytest.raises(BadInput, match="include --engine.disable-bal-batch-io, which only another mode has"):
        parse_modes("full=--engine.disable-bal-batch-io", "reth")
