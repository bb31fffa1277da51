"""
A background state as a small recipe: how many accounts, contracts and storage slots, how the slots are shared out, the code sizes, and a seed.

A workload's own accounts are a few thousand at most; a real network's state
is hundreds of millions, its account trie eight or more levels deep, and a
client reads it from disk. A recipe names such a state in a few numbers;
`balgen-state-build` (scripts/state_build) generates every account and slot
from it, the same on every machine, so a state is named by the recipe's hash
and never shipped. Recipes come as a named preset (`PRESETS`, each saying what
it imitates) or inline, `accounts=10M,slots=100M,seed=1`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..plumbing.errors import BadInput

GENERATION = 1
"""The version of the rules that turn a recipe into accounts and slots (scripts/state_build/main.go's
`generation`); it is part of the recipe's hash, so a state built under other rules is never reused."""


class SlotDistribution(StrEnum):
    """How a recipe's storage slots are shared out among its contracts."""

    UNIFORM = "uniform"
    """Every contract holds the same number of slots (give or take one)."""
    ZIPF = "zipf"
    """Contract of rank r holds a share proportional to 1/r^s: a few contracts hold millions of slots and
    most a handful, as on a real network, where a few token and protocol contracts hold most of the storage."""


class StateRecipe(BaseModel):
    """
    A background state: `accounts` accounts in the account trie, of which
    `contracts` have code (`code_min` to `code_max` bytes each) and share
    `slots` storage slots as `distribution` says; the rest are plain accounts
    with a nonce and a balance. Every value derives from `seed`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int = Field(0, ge=0, lt=2**64)
    accounts: int = Field(ge=0, lt=2**32)
    contracts: int = Field(ge=0, lt=2**32)
    slots: int = Field(ge=0, lt=2**40)
    distribution: SlotDistribution = SlotDistribution.ZIPF
    zipf_exponent: float = Field(1.0, gt=0, le=4)
    code_min: int = Field(256, ge=1, le=65536)
    code_max: int = Field(8192, ge=1, le=65536)
    workload_slots: int = Field(0, ge=0, le=2**20)
    """Not part of the built state: how many generated slots each account of a group's pre-state that has
    code gets beside its own when the pre-state is put into the state (`balgen fill --state`), so that
    the slots the benchmark block reads and writes lie in a storage trie of real depth."""

    @model_validator(mode="after")
    def _consistent(self) -> StateRecipe:
        if self.contracts > self.accounts:
            raise ValueError(f"contracts ({self.contracts:,}) more than accounts ({self.accounts:,})")
        if self.slots and not self.contracts:
            raise ValueError("slots need contracts to hold them (contracts=0)")
        if self.code_min > self.code_max:
            raise ValueError(f"code sizes {self.code_min}-{self.code_max}: the first must not be the larger")
        return self

    def builder_json(self) -> dict[str, Any]:
        """The recipe as `balgen-state-build` reads it."""
        return self.model_dump(mode="json")

    @property
    def hash(self) -> str:
        """The recipe's name in caches and fixtures: the first 16 hex digits of sha256 over its canonical
        JSON and the generation rules. `workload_slots` is in it only when set, so a recipe without it
        keeps the hash (and the cached builds) it had before the key existed."""
        fields = self.builder_json()
        if not self.workload_slots:
            del fields["workload_slots"]
        canonical = json.dumps({"generation": GENERATION, **fields}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def built_part(self) -> StateRecipe:
        """The recipe of the state `balgen-state-build` builds: this one without its workload slots, which
        are added per group when its pre-state is put into the state (one build serves every value)."""
        return self.model_copy(update={"workload_slots": 0})

    def inline(self) -> str:
        """The recipe in the inline form `parse_recipe` reads, every key given (`workload_slots` only when set,
        as in `hash`)."""
        values = self.builder_json()
        return ",".join(
            f"{key}={values[field]}" for key, field in INLINE_KEYS.items() if values[field] or field != "workload_slots"
        )

    def describe(self) -> str:
        """One line a person reads: its size, the way its slots are shared out, its hash."""
        shape = (
            f"zipf {self.zipf_exponent:g}" if self.distribution is SlotDistribution.ZIPF else self.distribution.value
        )
        workload = f", {self.workload_slots:,} workload slots per contract" if self.workload_slots else ""
        return (
            f"{self.accounts:,} accounts ({self.contracts:,} contracts, code {self.code_min}-{self.code_max} B), "
            f"{self.slots:,} slots ({shape}){workload}, seed {self.seed} [{self.hash}]"
        )

    @property
    def mean_code_bytes(self) -> float:
        """The expected code bytes of one contract."""
        return (self.code_min + self.code_max) / 2


@dataclass(frozen=True)
class Preset:
    """A named recipe and what it imitates."""

    name: str
    recipe: StateRecipe
    imitates: str


def _preset(name: str, imitates: str, **fields: Any) -> Preset:
    return Preset(name, StateRecipe(**fields), imitates)


PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        _preset(
            "small",
            "the smallest state with a realistic shape: 1M accounts make a 6-level account trie, "
            "a small testnet's; the tests build a state of its million accounts",
            accounts=1_000_000, contracts=100_000, slots=2_000_000, workload_slots=256,
        ),
        _preset(
            "devnet",
            "a long-running devnet or young testnet: 7-8 levels of account trie, a few contracts with 100k+ slots",
            accounts=3_000_000, contracts=300_000, slots=20_000_000, workload_slots=256,
        ),
        _preset(
            "mainnet-tenth",
            "mainnet's shape at a smaller scale: 10M accounts (mainnet has about 300M) and 100M slots "
            "(about 1.5 billion), a tenth of the accounts being contracts whose storage follows Zipf's law, "
            "so the largest hold millions of slots like mainnet's big token contracts",
            accounts=10_000_000, contracts=1_000_000, slots=100_000_000, workload_slots=256,
        ),
    )
}
"""The named recipes, smallest first."""

INLINE_KEYS: dict[str, str] = {
    "seed": "seed",
    "accounts": "accounts",
    "contracts": "contracts",
    "slots": "slots",
    "distribution": "distribution",
    "zipf": "zipf_exponent",
    "code_min": "code_min",
    "code_max": "code_max",
    "workload_slots": "workload_slots",
}
"""The keys of the inline form and the recipe fields they set."""

_SUFFIXES = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "b": 10**9}
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)([kmgb]?)", re.IGNORECASE)


def _count(key: str, text: str) -> int:
    """A whole number, with an optional k, M or G (B) suffix: `100k`, `1.5M`."""
    match = _NUMBER.fullmatch(text.strip())
    if match is None:
        raise BadInput(f"state recipe: {key}={text}: not a number (e.g. 1000000, 100k, 1.5M)")
    value = float(match[1]) * _SUFFIXES[match[2].lower()]
    if value != int(value):
        raise BadInput(f"state recipe: {key}={text}: not a whole number")
    return int(value)


def _inline_fields(text: str) -> dict[str, Any]:
    """The recipe fields of an inline recipe, `contracts` defaulting to a tenth of the accounts."""
    fields: dict[str, Any] = {}
    for item in text.split(","):
        key, equals, value = item.partition("=")
        key = key.strip().lower().replace("-", "_")  # workload-slots is workload_slots
        if not equals or key not in INLINE_KEYS:
            raise BadInput(
                f"state recipe: {item.strip()!r}: expected KEY=VALUE with KEY one of {', '.join(INLINE_KEYS)} "
                f"(e.g. accounts=1M,slots=10M,seed=1), or a preset: {', '.join(PRESETS)}"
            )
        field = INLINE_KEYS[key]
        if field in fields:
            raise BadInput(f"state recipe: {key} given twice")
        if field == "distribution":
            fields[field] = value.strip()
        elif field == "zipf_exponent":
            try:
                fields[field] = float(value)
            except ValueError:
                raise BadInput(f"state recipe: {key}={value}: not a number") from None
        else:
            fields[field] = _count(key, value)
    if "accounts" not in fields:
        raise BadInput("state recipe: accounts=N is required (e.g. accounts=1M,slots=10M)")
    fields.setdefault("contracts", fields["accounts"] // 10 if fields.get("slots", 0) else 0)
    fields.setdefault("slots", 0)
    return fields


def parse_recipe(text: str) -> StateRecipe:
    """A preset's name or an inline recipe (`accounts=N,slots=M[,seed=S,...]`); `BadInput` naming what is wrong."""
    name = text.strip()
    if name in PRESETS:
        return PRESETS[name].recipe
    if "=" not in name:
        raise BadInput(f"state recipe: {name!r}: no such preset ({', '.join(PRESETS)}), nor KEY=VALUE,... (e.g. accounts=1M,slots=10M)")
    fields = _inline_fields(name)
    try:
        return StateRecipe(**fields)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "recipe"
        message = first["msg"].removeprefix("Value error, ")
        raise BadInput(f"state recipe {name!r}: {where}: {message}") from None
