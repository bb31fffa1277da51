"""
The client's chain as the replay sees it: its head, rewinding it, and
whether a block is already known.

Every rewind is verified, because a rollback that silently did nothing is
the commonest way for a replay to report nonsense: the blocks it should
have removed are still there, and the client answers their `newPayload`
with an instant VALID. `debug_setHead` (go-ethereum, Besu) deletes the
blocks above the target, so a resent block really executes again.
"""

from __future__ import annotations

import re
from typing import Any

from ..clients.engine_client import RpcClient, RpcError

_QUANTITY = re.compile(r"0x[0-9a-fA-F]+")


class CheckFailed(Exception):
    """A check of the replay failed; the message is the test's failure reason."""


class RollbackFailed(CheckFailed):
    """The chain could not be brought back to where a test must start."""


def block_label(block: dict[str, Any]) -> str:
    """`block N 0x…` of an RPC block object, for messages."""
    number = block.get("number")
    shown = int(number, 16) if isinstance(number, str) and number.startswith("0x") else number
    return f"block {shown} {block.get('hash')}"


class ClientChain:
    """The client's canonical chain, read and rewound over its RPC endpoint."""

    def __init__(self, rpc: RpcClient) -> None:
        self.rpc = rpc

    def head(self) -> dict[str, Any]:
        """
        The client's latest block (header fields only), with a `hash` and a
        hex `number`: a reply without them is a failed check, not a crash.
        """
        block = self.rpc.get_block_by_number("latest").result
        if (
            not isinstance(block, dict)
            or not isinstance(block.get("hash"), str)
            or not isinstance(block.get("number"), str)
            or not _QUANTITY.fullmatch(block["number"])
        ):
            raise CheckFailed(f"eth_getBlockByNumber(latest) returned {block!r:.200}")
        return block

    def head_number(self) -> int:
        """The number of the client's latest block."""
        return int(self.head()["number"], 16)

    def block_hash_at(self, number: int) -> str | None:
        """The canonical block hash at `number`, None if the client has none."""
        block = self.rpc.get_block_by_number(number).result
        return str(block.get("hash")).lower() if isinstance(block, dict) else None

    def is_known(self, block_hash: str) -> bool:
        """Whether the client already holds the block (`eth_getBlockByHash`)."""
        return self.rpc.get_block_by_hash(block_hash).result is not None

    def expect_head(self, number: int, block_hash: str, after: str) -> None:
        """The head must be block `number` `block_hash`; `after` says what preceded."""
        head = self.head()
        if str(head["hash"]).lower() != block_hash:
            raise RollbackFailed(
                f"after {after} the head is {block_label(head)}, not block {number} {block_hash}"
            )

    def roll_back_to(self, number: int, block_hash: str) -> None:
        """
        Rewind the head to block `number`, which must be `block_hash`, and
        verify it.

        `debug_setHead` refuses to "rewind" to the current head or above
        ("not allowed to rewind to a future block"), so it is only called
        when the head is higher; the verification runs in every case.
        """
        head_number = self.head_number()
        action = f"head at block {head_number}"
        if head_number > number:
            action = f"debug_setHead({hex(number)})"
            try:
                self.rpc.set_head(number)
            except RpcError as error:
                raise RollbackFailed(f"{action} failed: {error.message}") from None
        self.expect_head(number, block_hash, action)
