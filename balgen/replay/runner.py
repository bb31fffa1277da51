"""
The replay itself: every test of every genesis group, sent to a client
through the Engine API, checked, and timed.

Per test:

1. The client's head must be the parent of the test's first payload; a
   head above it (a previous test, a previous run) is rewound first.
2. The setup payloads go in, each `newPayload` then `forkchoiceUpdated`.
3. The benchmark payload (the last one) is executed `warmup + repeat`
   times, each time as a new sibling of the block (`sibling_blocks`: the
   same transactions on the same parent, another `extraData`): the first
   execution is the fixture's own block, every later one a block the
   client has never seen, executed in full on the parent's state, with no
   rollback in between and no forkchoice update (the head stays at the
   parent). Before every send `eth_getBlockByHash` must not know the
   block: a client answers a known block with VALID at once, without
   executing it, and such an answer is flagged. Where the client logs its
   own time for the block, the client-side time must agree with it within
   `AGREEMENT_MARGIN`; an execution that does not is recorded as discarded
   and another sibling executed in its place. With `--cold` the client is
   restarted before each measured execution, with `--drop-caches` the OS
   page cache is dropped right before it. `--repeat N` measures N times;
   `--repeat auto` until the median is known well enough (`repeat_policy`).
   With `--modes`, one client per mode serves the test, and the
   executions go in rounds: each round executes the block once per mode,
   in an order that rotates from round to round.
4. A forkchoice update makes the fixture's own block the head, which must
   be `lastblockhash`; where the client's log shows it, the mode must be
   the one asked for (`mode_evidence`). Then the chain is rewound to the
   pre-test head and verified, so the next test starts where it should;
   not after the last test of a group on a client balgen started, which
   is stopped next (for reth, whose rollback is a datadir copy put back,
   that saves a stop and a start, and the copy taken before the test).

Checks (a failed one ends the test with its reason; the run goes on): the
genesis hash is the fixture's; every `newPayload` status is the expected
one (VALID, or INVALID where the fixture has a `validationError`, or the
fixture's JSON-RPC `errorCode`); every `forkchoiceUpdated` is VALID; the
head after the benchmark payload is `lastblockhash`; geth's slow-block
counters of each measured execution are where the workload model puts
them (`expected_counts`); an INVALID answer must give a reason that
means one of the fixture's expected exceptions, for the clients whose
messages balgen maps (`rejections`). A payload the fixture
expects to be INVALID is sent once: clients remember rejected blocks and
answer a resend from that memory (geth: "links to previously rejected
block"), not by executing it. One it labels `testing`, just before the
benchmark payload, is a timed rejection: executed like the benchmark
payload, each execution after the first a sibling of the lie (`rejections`).

Faults: a JSON-RPC error to any call fails the test with the method and the
error, and the run goes on. A client that stops answering (killed, hung past
the timeout, refusing the JWT) or cannot be restarted fails the test it was
serving, keeping what that test had executed; a client balgen started is
then replaced by a fresh one for the rest of the group (at most
`MAX_CLIENT_REPLACEMENTS` times), while the rest of a group on a client the
user runs is reported not run.

This module runs the suite, its groups and each test on its clients, given
as (mode, client) pairs (mode None without `--modes`); the concerns are
their own modules: one test's steps (`steps`), the rounds of executions
(`rounds`), the agreement policy (`agreement`), intake probes (`intake`),
the client's head (`positioning`), one payload sent and recorded
(`payload_io`), a test's result (`fixture_results`).
"""


from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..clients.modes import ClientMode
from ..clients.engine_client import RpcError, RpcTransportError
from ..plumbing.errors import BadInput
from ..results.schema import FixtureResult, RunState, Verdict
from .agreement import INTAKE_PROBES
from .client_chain import CheckFailed
from .discovery import FixtureRef, ReplayGroup, Suite, load_test
from .fixture_results import fixture_name, fixture_result
from .options import ReplayObserver, ReplayOptions
from .payload_io import check_status as _check_status, failure_reason
from .positioning import ClientLost
from .rounds import benchmark_executions, guarded, ratio_interval_width, rotated, run_rounds
from .steps import TestReplay
from .targets import ReplayClient, ReplayTarget

__all__ = [
    "INTAKE_PROBES", "ModeClient", "ModeTarget", "ReplayObserver", "ReplayOptions", "_check_status", "fixture_name",
    "genesis_failure", "replay_group", "replay_suite", "replay_test", "rotated", "without_modes",
]  # fmt: skip
"""The names callers import from here; the steps' own modules hold the rest."""

MAX_CLIENT_REPLACEMENTS = 2
"""Fresh clients started per group after the previous one was lost: enough
for an occasional crash, bounded for a build that crashes on every test."""


def _run_steps(replays: Sequence[TestReplay], paired_width: float | None) -> str | None:
    """
    The test's steps on its clients (one per mode); each replay's failure
    is in its `failure`, a lost client in its `lost`. Returns why the group
    cannot go on on these clients, or None.
    """
    for replay in replays:
        guarded(replay, replay.run_setup)
    run_rounds(replays, paired_width)
    broken = None
    for replay in replays:
        guarded(replay, replay.finish)
        if replay.pre_test is None or replay.lost or replay.last_on_client:
            continue
        try:
            replay.position.rewind(*replay.pre_test)
        except (CheckFailed, RpcError) as rollback_failure:
            problem = f"rolling back to the pre-test head failed: {failure_reason(rollback_failure)}"
            replay.failure = problem if replay.failure is None else f"{replay.failure}; then {problem}"
            broken = problem
        except (RpcTransportError, ClientLost) as error:
            replay.lose(error)
    lost = [replay for replay in replays if replay.lost]
    if lost:
        where = "" if lost[0].mode is None else " in mode " + ", ".join(r.mode.name for r in lost if r.mode is not None)
        broken = f"the client was lost during {replays[0].test.ref.test_id}{where}"
    return broken


ModeClient = tuple[ClientMode | None, ReplayClient]
"""A client serving a test, and the mode it runs in (None without `--modes`)."""
ModeTarget = tuple[ClientMode | None, ReplayTarget]
"""Where the clients of one mode come from (None: a run without `--modes`)."""


def without_modes(target: ReplayTarget) -> tuple[ModeTarget]:
    """The one target of a run without `--modes`, as the pair every entry point takes."""
    return ((None, target),)


def replay_test(
    clients: Sequence[ModeClient],
    ref: FixtureRef,
    genesis_hash: str,
    options: ReplayOptions,
    observer: ReplayObserver,
    last_on_clients: bool = False,
) -> tuple[list[FixtureResult], str | None, bool]:
    """
    Run one test on each of `clients` (one per mode); return its results
    (one per mode), why the group cannot go on on these clients (None if it
    can), and whether a client itself was lost. `last_on_clients`: no test
    follows on them and balgen stops them next, so the chain is not rewound.
    """
    started = time.perf_counter()
    modes = [mode for mode, _ in clients]
    try:
        test = load_test(ref)
        problems = clients[0][1].config_problems(test)
    except BadInput as error:  # the file changed since discovery checked it
        return [fixture_result(ref, genesis_hash, f"malformed fixture: {error}", mode=m) for m in modes], None, False
    if problems:
        return [fixture_result(ref, genesis_hash, "; ".join(problems), test=test, mode=m) for m in modes], None, False
    total, _ = benchmark_executions(test.benchmark, options)
    paired = options.repeat_auto and len(clients) > 1
    replays = [TestReplay(client, test, options, observer, mode, paired, last_on_clients) for mode, client in clients]
    total += len(test.rejected) * replays[0].rejection_executions()[0]
    observer.test_started(ref, sum(len(test.setup) + total + replay.intake_probes for replay in replays))
    broken: str | None = None
    try:
        broken = _run_steps(replays, options.ci_width if paired else None)
    except KeyboardInterrupt:  # the run stops, but what this test measured is kept
        for replay in replays:
            done = len(replay.executions)
            reason = f"interrupted after {done} of {len(test.setup) + total + replay.intake_probes} payload executions"
            observer.test_finished(fixture_result(ref, genesis_hash, reason, test=test, replay=replay, started=started))
        raise
    except (RpcTransportError, ClientLost) as error:  # outside any one client's step: every client is suspect
        for replay in replays:
            replay.lose(error)
        broken = f"the client was lost during {ref.test_id}"
    lost = any(replay.lost for replay in replays)
    results = [
        fixture_result(
            ref, genesis_hash, replay.failure, test=test, replay=replay, started=started,
            ratio_width=None if index == 0 else ratio_interval_width(replays[0].executions, replay.executions),
        ).model_copy(
            update={"rollback_method": replay.position.rollback_record}
        )
        for index, replay in enumerate(replays)
    ]
    return results, broken, lost


def genesis_failure(client: ReplayClient, group: ReplayGroup) -> str | None:
    """Why the client's genesis is not the group's, or None if it is."""
    try:
        block = client.rpc.get_block_by_number(0).result
    except RpcError as error:
        return f"genesis mismatch: {failure_reason(error)}"
    found = str(block.get("hash", "")).lower() if isinstance(block, dict) else ""
    if found == group.genesis.genesis_hash:
        return None
    reasons = [f"client genesis hash {found or None} is not the fixture's {group.genesis.genesis_hash}"]
    reasons += client.genesis_problems(group.genesis, block if isinstance(block, dict) else None)
    return "genesis mismatch: " + "; ".join(reasons)


@dataclass(frozen=True)
class GroupOutcome:
    """How a group's run on its clients ended."""

    stop: bool
    """`--fail-fast` and a test failed: the run ends here."""
    left: tuple[FixtureRef, ...] = ()
    """Tests not reported yet because a client was lost before them."""
    lost_reason: str | None = None
    """Why the client was lost, for the tests that no client runs."""


def _genesis_failures(clients: Sequence[ModeClient], group: ReplayGroup) -> str | None:
    """Why any client's genesis is not the group's (naming the mode in a modes run), or None."""
    for mode, client in clients:
        try:
            failure = genesis_failure(client, group)
        except RpcTransportError as error:
            failure = f"no answer from the client to the genesis check: {error}"
        if failure is not None:
            return failure if mode is None else f"mode {mode.name}: {failure}"
    return None


def replay_group(
    clients: Sequence[ModeClient],
    group: ReplayGroup,
    options: ReplayOptions,
    observer: ReplayObserver,
    stopped_after: bool = False,
) -> GroupOutcome:
    """
    Every test of a group on its clients (one, or one per mode), in order,
    until the run must stop (`--fail-fast`), or a client is lost (the tests
    after are handed back in `left`, unreported, for new clients or a
    not-run verdict). `stopped_after`: balgen stops the clients after the
    group, so its last test leaves their chains where it ends.
    """
    modes = [mode for mode, _ in clients]
    for _, client in clients:
        observer.group_started(group, client.client_version)
    stop_reason = _genesis_failures(clients, group)
    verdict_of_rest = Verdict.FAILED
    for index, ref in enumerate(group.tests):
        lost = False
        if stop_reason is not None:
            results = [fixture_result(ref, group.genesis.genesis_hash, stop_reason, verdict=verdict_of_rest, mode=m) for m in modes]
        else:
            last = stopped_after and index == len(group.tests) - 1
            results, broken, lost = replay_test(clients, ref, group.genesis.genesis_hash, options, observer, last)
            if broken is not None:
                stop_reason, verdict_of_rest = f"not run: {broken}", Verdict.NOT_RUN
        for result in results:
            observer.test_finished(result)
        if options.fail_fast and not all(result.passed for result in results):
            return GroupOutcome(stop=True)
        if lost:
            return GroupOutcome(stop=False, left=group.tests[index + 1 :], lost_reason=stop_reason)
    return GroupOutcome(stop=False)


def _report_all(
    refs: Sequence[FixtureRef],
    genesis_hash: str,
    reason: str,
    verdict: Verdict,
    options: ReplayOptions,
    observer: ReplayObserver,
    modes: Sequence[ClientMode | None] = (None,),
) -> bool:
    """Report `refs` (in each mode) with one reason; False if `--fail-fast` stops the run."""
    for ref in refs:
        for mode in modes:
            observer.test_finished(fixture_result(ref, genesis_hash, reason, verdict=verdict, mode=mode))
        if options.fail_fast:
            return False
    return True


def _replay_on_new_clients(
    targets: Sequence[ModeTarget], group: ReplayGroup, options: ReplayOptions, observer: ReplayObserver
) -> GroupOutcome:
    """
    The group's tests on clients opened for them, one per mode, all started
    before the first test and all released whatever happens (Ctrl-C too).
    """
    modes = [mode for mode, _ in targets]
    with contextlib.ExitStack() as stack:
        clients: list[ModeClient] = []
        for mode, target in targets:
            try:
                clients.append((mode, stack.enter_context(target.open(group.genesis))))
            except BadInput as error:  # ClientError: the client could not be initialised or started
                reason = f"client could not start: {error}" if mode is None else f"mode {mode.name}: client could not start: {error}"
                go_on = _report_all(
                    group.tests, group.genesis.genesis_hash, reason, Verdict.FAILED, options, observer, modes
                )
                return GroupOutcome(stop=not go_on)
        managed = all(target.kind == "managed" for _, target in targets)
        return replay_group(clients, group, options, observer, stopped_after=managed)


def replay_suite(
    suite: Suite,
    targets: Sequence[ModeTarget],
    options: ReplayOptions,
    observer: ReplayObserver,
) -> RunState:
    """
    Every group of the suite, each on its own clients from `targets` (one
    per mode of a modes run; `without_modes` for a plain run). A client that cannot be started fails its
    group's tests, and the run goes on. A client lost in the middle of a
    group is replaced by a fresh one for the group's remaining tests when
    balgen starts the clients (see the module docstring); otherwise those
    tests are not run.
    """
    modes = [mode for mode, _ in targets]
    managed = all(each.kind == "managed" for _, each in targets)
    for group in suite.groups:
        tests = group.tests
        replacements = 0
        while tests:
            outcome = _replay_on_new_clients(targets, ReplayGroup(group.genesis, tests), options, observer)
            if outcome.stop:
                return RunState.STOPPED
            tests = outcome.left
            if tests and (not managed or replacements == MAX_CLIENT_REPLACEMENTS):
                reason = outcome.lost_reason or "not run: the client was lost"
                if replacements:
                    reason += f" (after {replacements} fresh clients)"
                if not _report_all(tests, group.genesis.genesis_hash, reason, Verdict.NOT_RUN, options, observer, modes):
                    return RunState.STOPPED
                tests = ()
            replacements += 1
    return RunState.COMPLETE
