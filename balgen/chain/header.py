"""
Block headers: their fields per fork, their RLP, their hash.

The header is a pydantic model whose aliases are the blockchain-test JSON
names, so the header hashed here and the one written to fixtures are the same
object. Optional fields that a fork does not have are None and left out of
both the RLP and the JSON. Each field a fork adds says from which upgrade on
it is required (`RequiredFrom`, execution-spec-tests' `HeaderForkRequirement`
turned around: the field names the upgrade, the fork says whether it has it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any

import rlp
from ..ethereum.keccak import keccak
from pydantic import BaseModel, ConfigDict, Field

from ..ethereum.chain_constants import EMPTY_OMMERS_HASH, EMPTY_TRIE_ROOT
from ..ethereum.forks import Fork
from ..ethereum.hextypes import Data, ZeroPaddedHex


@dataclass(frozen=True)
class RequiredFrom:
    """Marks a header field that every fork from `upgrade` (`balgen.ethereum.forks.UPGRADES`) on has."""

    upgrade: str


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
    withdrawals_root: Annotated[Data | None, RequiredFrom("Shanghai")] = Field(None, alias="withdrawalsRoot")
    blob_gas_used: Annotated[ZeroPaddedHex | None, RequiredFrom("Cancun")] = Field(None, alias="blobGasUsed")
    excess_blob_gas: Annotated[ZeroPaddedHex | None, RequiredFrom("Cancun")] = Field(None, alias="excessBlobGas")
    parent_beacon_block_root: Annotated[Data | None, RequiredFrom("Cancun")] = Field(
        None, alias="parentBeaconBlockRoot"
    )
    requests_hash: Annotated[Data | None, RequiredFrom("Prague")] = Field(None, alias="requestsHash")
    block_access_list_hash: Annotated[Data | None, RequiredFrom("Amsterdam")] = Field(
        None, alias="blockAccessListHash"
    )
    slot_number: Annotated[ZeroPaddedHex | None, RequiredFrom("Amsterdam")] = Field(None, alias="slotNumber")

    @classmethod
    def upgrade_of(cls, field: str) -> str | None:
        """The upgrade `field` comes with, or None for a field every fork has."""
        rules = [rule for rule in cls.model_fields[field].metadata if isinstance(rule, RequiredFrom)]
        return rules[0].upgrade if rules else None

    @classmethod
    def requires(cls, fork: Fork, field: str) -> bool:
        """Whether a header of `fork` carries `field`."""
        upgrade = cls.upgrade_of(field)
        return upgrade is None or fork.includes(upgrade)

    @classmethod
    def for_fork(cls, fork: Fork, **fields: Any) -> Header:
        """
        The header of a `fork` block from `fields`: the fields the fork does
        not have are dropped, and one it has must be given (`ValueError`
        naming it), as execution-spec-tests' `FixtureHeader` checks.
        """
        kept = {name: value for name, value in fields.items() if cls.requires(fork, name)}
        missing = [
            name
            for name in cls.model_fields
            if cls.upgrade_of(name) is not None and cls.requires(fork, name) and kept.get(name) is None
        ]
        if missing:
            raise ValueError(f"a {fork.name} header requires {', '.join(missing)}, not given")
        return cls(**kept)

    def with_values(self, **updates: Any) -> Header:
        """This header with the fields in `updates` changed: a new model, whose RLP and hash are its own."""
        return type(self)(**{**{name: getattr(self, name) for name in type(self).model_fields}, **updates})

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


def has_block_access_list(fork: Fork) -> bool:
    """Whether `fork`'s blocks carry an EIP-7928 access list: its headers hash one."""
    return Header.requires(fork, "block_access_list_hash")


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
