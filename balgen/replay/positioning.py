"""
Where a client's chain stands during a test: brought to the test's start, kept a way back to it,
restarted (`--cold`, timed rejections) and checked to end where the fixture says.
"""

from __future__ import annotations

from ..clients.process import ClientError
from .client_chain import CheckFailed, ClientChain, RollbackFailed, block_label
from .discovery import ReplayTest
from .targets import ReplayClient


class ClientLost(Exception):
    """The client can no longer serve the group: it stopped answering or did not restart."""


class Positioning:
    """One client's head during one test: moved by its rollback method, restarted, checked."""

    def __init__(self, client: ReplayClient, test: ReplayTest) -> None:
        self.client = client
        self.test = test

    @property
    def chain(self) -> ClientChain:
        """The client's chain over its current connection (a restart makes a new one)."""
        return ClientChain(self.client.rpc)

    def start_point(self) -> tuple[int, str]:
        """Bring the head to the first payload's parent; return that block."""
        first = self.test.payloads[0]
        parent = (first.block_number - 1, first.parent_hash)
        head = self.chain.head()
        if str(head["hash"]).lower() == first.parent_hash:
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
        """Restart the client (`--cold`, a timed rejection); its head must still be block `number` `block_hash`."""
        try:
            self.client.restart()
        except ClientError as error:  # the client did not come back
            raise ClientLost(f"restarting the client failed: {error}") from None
        self.chain.expect_head(number, block_hash, "restarting the client")

    def check_last_block(self, role_name: str, repetition: int) -> None:
        """The head must be the block the fixture says the test ends on."""
        head = self.chain.head()
        if str(head["hash"]).lower() != self.test.last_block_hash:
            raise CheckFailed(
                f"after the {role_name} execution {repetition + 1} the head is "
                f"{block_label(head)}, the fixture's lastblockhash is {self.test.last_block_hash}"
            )
