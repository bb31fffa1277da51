"""
Block headers: their fields per fork, their RLP, their hash.

The header is a pydantic model whose aliases are the blockchain-test JSON
names, so the header hashed here and the one written to fixtures are the same
object. Optional fields that a fork does not have are None and left out of
both the RLP and the JSON.
"""

from __future__ import annotations

from functools import cached_property

import rlp
from eth_hash.auto import keccak
from pydantic import BaseModel, ConfigDict, Field

from ..hextypes import Data, ZeroPaddedHex

EMPTY_OMMERS_HASH = bytes.fromhex("1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347")
EMPTY_TRIE_ROOT = bytes.fromhex("56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421")
EMPTY_REQUESTS_HASH = bytes.fromhex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
EMPTY_BLOCK_ACCESS_LIST_HASH = keccak(rlp.encode([]))
"""keccak256(0xc0): the access-list hash of a genesis block."""


class Header(BaseModel):
    """A block header, named as execution-spec-tests' `FixtureHeader` names it."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, ignored_types=(cached_property,))

    parent_hash: Data = Field(alias="parentHash")
    ommers_hash: Data = Field(EMPTY_OMMERS_HASH, alias="uncleHash")
    fee_recipient: Data = Field(alias="coinbase")
    state_root: Data = Field(alias="stateRoot")
    transactions_trie: Data = Field(EMPTY_TRIE_ROOT, alias="transactionsTrie")
    receipts_root: Data = Field(EMPTY_TRIE_ROOT, alias="receiptTrie")
    logs_bloom: Data = Field(bytes(256), alias="bloom")
    difficulty: ZeroPaddedHex = Field(0, alias="difficulty")
    number: ZeroPaddedHex = Field(alias="number")
    gas_limit: ZeroPaddedHex = Field(alias="gasLimit")
    gas_used: ZeroPaddedHex = Field(0, alias="gasUsed")
    timestamp: ZeroPaddedHex = Field(alias="timestamp")
    extra_data: Data = Field(b"", alias="extraData")
    prev_randao: Data = Field(bytes(32), alias="mixHash")
    nonce: Data = Field(bytes(8), alias="nonce")
    base_fee_per_gas: ZeroPaddedHex | None = Field(None, alias="baseFeePerGas")
    withdrawals_root: Data | None = Field(None, alias="withdrawalsRoot")
    blob_gas_used: ZeroPaddedHex | None = Field(None, alias="blobGasUsed")
    excess_blob_gas: ZeroPaddedHex | None = Field(None, alias="excessBlobGas")
    parent_beacon_block_root: Data | None = Field(None, alias="parentBeaconBlockRoot")
    requests_hash: Data | None = Field(None, alias="requestsHash")
    block_access_list_hash: Data | None = Field(None, alias="blockAccessListHash")
    slot_number: ZeroPaddedHex | None = Field(None, alias="slotNumber")

    def rlp_fields(self) -> list[bytes | int]:
        """Header fields in consensus order, the absent optional ones left out."""
        return [
            getattr(self, name)
            for name in type(self).model_fields
            if getattr(self, name) is not None
        ]

    @cached_property
    def rlp(self) -> bytes:
        """The header's RLP encoding."""
        return rlp.encode(self.rlp_fields())

    @cached_property
    def hash(self) -> bytes:
        """The block hash: keccak256 of the header RLP."""
        return keccak(self.rlp)

    def json_with_hash(self) -> dict[str, str]:
        """The blockchain-test JSON of this header, `hash` included."""
        data = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        data["hash"] = "0x" + self.hash.hex()
        return data


BASE_FEE_MAX_CHANGE_DENOMINATOR = 8
ELASTICITY_MULTIPLIER = 2


def next_base_fee(parent: Header) -> int:
    """EIP-1559 base fee of the child of `parent`."""
    assert parent.base_fee_per_gas is not None
    target = parent.gas_limit // ELASTICITY_MULTIPLIER
    base_fee = parent.base_fee_per_gas
    if parent.gas_used == target:
        return base_fee
    if parent.gas_used > target:
        delta = max(base_fee * (parent.gas_used - target) // target // BASE_FEE_MAX_CHANGE_DENOMINATOR, 1)
        return base_fee + delta
    delta = base_fee * (target - parent.gas_used) // target // BASE_FEE_MAX_CHANGE_DENOMINATOR
    return base_fee - delta
