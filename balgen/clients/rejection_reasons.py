"""
Which of execution-specs' `BlockException` names a client's rejection message means.

A client answers an invalid payload with INVALID and a free-form
`validationError`; the fixture names the exceptions it expects. As
execution-spec-tests' exception mappers do per client, each client's
messages are matched by pattern. The patterns were read off the clients'
own answers to balgen's `invalid_bal` fixtures (go-ethereum v1.17.8, reth
of v1.17.5's Amsterdam) and their sources.
"""

from __future__ import annotations

import re

_GETH_LIST = r"access list hash mismatch|invalid block access list"
"""go-ethereum's two messages for a list that is not the block's: the computed list's hash differs
(`core/block_validator.go`), or the list breaks a rule of its own (`bal.BlockAccessList.Validate`)."""
_RETH_LIST = r"block access list hash mismatch|Bal error: (Account|Slot) .* not found in BAL"
"""reth's: the computed list's hash differs, or execution needed an account or slot the list lacks."""

REASONS: dict[str, dict[str, re.Pattern[str]]] = {
    "geth": {
        name: re.compile(pattern)
        for name, pattern in {
            "INVALID_BLOCK_ACCESS_LIST": _GETH_LIST,
            "INVALID_BAL_EXTRA_ACCOUNT": _GETH_LIST,
            "INVALID_BAL_MISSING_ACCOUNT": _GETH_LIST,
            "INVALID_BAL_HASH": r"access list hash mismatch",
            "INVALID_BLOCK_HASH": r"^blockhash mismatch",
            "INCORRECT_BLOCK_FORMAT": r"failed to decode BAL|invalid block access list: .*(order|sorted|empty slot changes)",
            "BLOCK_ACCESS_LIST_GAS_LIMIT_EXCEEDED": r"exceeds size constraint",
        }.items()
    },
    "reth": {
        name: re.compile(pattern)
        for name, pattern in {
            "INVALID_BLOCK_ACCESS_LIST": _RETH_LIST,
            "INVALID_BAL_EXTRA_ACCOUNT": r"block access list hash mismatch",
            "INVALID_BAL_MISSING_ACCOUNT": r"block access list hash mismatch|Bal error: Account .* not found in BAL",
            "INVALID_BAL_HASH": r"block access list hash mismatch",
            "INVALID_BLOCK_HASH": r"^block hash mismatch",
            "BLOCK_ACCESS_LIST_GAS_LIMIT_EXCEEDED": r"block access list item cost exceeds gas limit",
        }.items()
    },
}
"""Per client (as `client_of_version` names it), per exception name, what its message matches."""


def client_of_version(client_version: str | None) -> str | None:
    """The client a `web3_clientVersion` names (`Geth/v1.17.8-stable/...` -> geth), if balgen maps its messages."""
    name = (client_version or "").split("/", 1)[0].lower()
    return name if name in REASONS else None


def reason_matches(client: str, exception: str, message: str) -> bool:
    """Whether `client`'s rejection `message` means `exception` (False for an exception it has no pattern for)."""
    pattern = REASONS[client].get(exception)
    return pattern is not None and pattern.search(message) is not None
