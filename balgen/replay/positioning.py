"""
Where a client's chain stands during a test: brought to the test's start, kept a way back to it,
restarted (`--cold`) and checked to end where the fixture says.
"""

from __future__ import annotations

from ..clients.presets import Rollback
from ..clients.process import ClientError
from .client_chain import CheckFailed, ClientChain, RollbackFailed, block_label
from .discovery import ReplayTest
from .engine_payloads import VALID
from .targets import ReplayClient

HEAD_KEPT = "head_kept"
"""The `rollback_method` of a test that left the client's head at its start (`Positioning.keeps_head`):
nothing was moved, so nothing was rolled back."""


class ClientLost(Exception):
    """The client can no longer serve the group: it stopped answering or did not restart."""


class Positioning:
    """One client's head during one test: moved by its rollback method, restarted, checked."""

    def __init__(self, client: ReplayClient, test: ReplayTest) -> None:
        self.client = client
        self.test = test

    @property
    def own_block_made_head(self) -> bool:
        """
        Whether a forkchoice update makes the fixture's own block head after
        the executions (then checked as `lastblockhash`). Not for a benchmark
        block expected VALID on a client whose rollback is a restart from a
        datadir copy: the head stays at the block's parent, and the fixture's
        block is checked by its VALID answer and its hash (`check_own_block`).
        Made head, it would have to be rolled back by a stop, a copy put back
        and a start per test and mode (reth answers `debug_setHead` with null),
        and with `--cold` the client may have forgotten it (reth keeps a block
        it did not make head in memory only, and answers SYNCING).
        """
        return self.client.rollback_method is not Rollback.RESTORE_COPY or self.test.benchmark.expected_status != VALID

    @property
    def keeps_head(self) -> bool:
        """
        Whether the head never leaves the test's start: the fixture's own
        block is not made head (`own_block_made_head`) and no setup payload
        moves it (a fill with `--setup genesis` puts every test on its group's
        genesis). Then nothing is rolled back and no datadir copy is taken.
        """
        return not self.own_block_made_head and not self.test.setup

    @property
    def rollback_record(self) -> str:
        """What `rollback_method` records for this test (`HEAD_KEPT`, or the client's method)."""
        return HEAD_KEPT if self.keeps_head else str(self.client.rollback_method)

    @property
    def chain(self) -> ClientChain:
        """The client's chain over its current connection (a restart makes a new one)."""
        return ClientChain(self.client.rpc)

    def start_point(self) -> tuple[int, str]:
        """
        Bring the head to the first payload's parent; return that block. A
        client already there whose memory grew past its preset's bound
        (`ReplayClient.memory_restart_due`: reth's pile of siblings) is
        restarted first, its head checked.
        """
        first = self.test.payloads[0]
        parent = (first.block_number - 1, first.parent_hash)
        head = self.chain.head()
        if str(head["hash"]).lower() == first.parent_hash:
            if self.client.memory_restart_due():
                self.restart(*parent)
            return parent
        if int(head["number"], 16) <= parent[0]:
            raise RollbackFailed(
                f"the client's head is {block_label(head)}, below the first payload's "
                f"parent block {parent[0]} {parent[1]}"
            )
        self.rewind(*parent)
        return parent

    def rewind(self, number: int, block_hash: str) -> bool:
        """
        The head back to block `number` `block_hash`, verified, by the
        client's rollback method; True if the client was restarted for it.
        """
        try:
            return self.client.rewind(number, block_hash)
        except ClientError as error:  # the client did not come back from a restore
            raise ClientLost(f"rolling back by {self.client.rollback_method} failed: {error}") from None

    def remember(self, number: int, block_hash: str) -> None:
        """Let the client keep what it needs to come back to this block (a datadir copy, or nothing)."""
        try:
            self.client.remember(number, block_hash)
        except ClientError as error:
            raise ClientLost(f"saving the client's state at block {number} failed: {error}") from None

    def restart(self, number: int, block_hash: str) -> None:
        """
        Restart the client (`--cold`); its head must still
        be block `number` `block_hash` (the parent of the payload sent next),
        also after an unclean stop its preset lets through
        (`ClientPreset.unclean_stop_checked_by_head`), else one line saying so.
        """
        try:
            stop_code = self.client.restart()
        except ClientError as error:  # the client did not come back
            raise ClientLost(f"restarting the client failed: {error}") from None
        after = "restarting the client" if stop_code == 0 else f"an unclean stop (exit code {stop_code}) and a restart"
        self.chain.expect_head(number, block_hash, after)

    def check_own_block(self, own_block_status: str | None) -> None:
        """
        Where the fixture's own block is not made head (`own_block_made_head`):
        it was answered `own_block_status`, which must be VALID (the client
        executed it on its parent and found the header's state, receipts and
        access-list roots), its hash must be the fixture's `lastblockhash`, and
        the head must still be the block's parent.
        """
        benchmark = self.test.benchmark
        if benchmark.block_hash != self.test.last_block_hash:
            raise CheckFailed(
                f"the benchmark block {benchmark.block_hash} is not the fixture's lastblockhash {self.test.last_block_hash}"
            )
        if own_block_status != VALID:
            raise CheckFailed(f"the fixture's own block {benchmark.block_hash} was answered {own_block_status}, not VALID")
        start = (benchmark.block_number - 1, benchmark.parent_hash)
        self.chain.expect_head(*start, "the benchmark executions (which leave the head at the block's parent)")

    def check_last_block(self, role_name: str, repetition: int) -> None:
        """The head must be the block the fixture says the test ends on."""
        head = self.chain.head()
        if str(head["hash"]).lower() != self.test.last_block_hash:
            raise CheckFailed(
                f"after the {role_name} execution {repetition + 1} the head is "
                f"{block_label(head)}, the fixture's lastblockhash is {self.test.last_block_hash}"
            )
