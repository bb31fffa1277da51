"""
A fixture's genesis as go-ethereum's genesis fields and chain config, from
which `client_genesis` writes each client's genesis file.

A fixture carries its genesis as a block header plus the `pre` alloc, and
names its rules only by fork ("Prague"); the client needs an explicit chain
config. The config written here is, field for field, the one go-ethereum's
own blockchain-test runner uses for that fork name (`tests/init.go`, table
`Forks`, in v1.17.8): with it, a genesis hash that differs from the
fixture's means the fixture or the conversion is wrong, not the config.

Only the header fields `core.Genesis` stores are copied; the client derives
the rest (state root from the alloc, empty roots, zero beacon root, empty
requests and access-list hashes) and the replay compares the resulting
genesis hash with the fixture's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import BadInput

MAINNET_DEPOSIT_CONTRACT = "0x00000000219ab540356cBB839Cbe05303d7705Fa"
"""`params.MainnetChainConfig.DepositContractAddress`, which the test configs reuse."""

TEST_CHAIN_ID = 1
"""The chain id of every config in go-ethereum's `tests.Forks` table."""

EMPTY_TRIE_ROOT = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421"
EMPTY_UNCLE_HASH = "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347"
EMPTY_REQUESTS_HASH = "0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
EMPTY_BLOCK_ACCESS_LIST_HASH = EMPTY_UNCLE_HASH
"""keccak256(rlp([])), the same bytes as the empty uncle hash."""
ZERO_HASH = "0x" + "00" * 32
EMPTY_BLOOM = "0x" + "00" * 256


@dataclass(frozen=True)
class BlobConfig:
    """One `params.BlobConfig`: blob target, maximum and base-fee update fraction."""

    target: int
    max: int
    base_fee_update_fraction: int

    def to_geth_json(self) -> dict[str, int]:
        """The object `params.BlobConfig` unmarshals."""
        return {
            "target": self.target,
            "max": self.max,
            "baseFeeUpdateFraction": self.base_fee_update_fraction,
        }


# go-ethereum v1.17.8 params/config.go, Default*BlobConfig.
DEFAULT_BLOB_CONFIGS: dict[str, BlobConfig] = {
    "cancun": BlobConfig(3, 6, 3338477),
    "prague": BlobConfig(6, 9, 5007716),
    "bpo1": BlobConfig(10, 15, 8346193),
    "bpo2": BlobConfig(14, 21, 11684671),
}

# Block-numbered forks every post-merge entry of `tests.Forks` activates at
# block 0, in `params.ChainConfig` field order. DAO and Gray Glacier are
# deliberately absent: the table leaves them unset for these forks.
_GENESIS_BLOCK_FORKS = (
    "homesteadBlock",
    "eip150Block",
    "eip155Block",
    "eip158Block",
    "byzantiumBlock",
    "constantinopleBlock",
    "petersburgBlock",
    "istanbulBlock",
    "muirGlacierBlock",
    "berlinBlock",
    "londonBlock",
    "arrowGlacierBlock",
    "mergeNetsplitBlock",
)


@dataclass(frozen=True)
class GethTestFork:
    """What one `tests.Forks` entry activates beyond the block forks."""

    time_forks: tuple[str, ...]
    """`params.ChainConfig` timestamp fields set to 0, in field order."""
    blob_schedule: tuple[str, ...]
    """Keys of `DEFAULT_BLOB_CONFIGS` in the entry's `BlobScheduleConfig`."""
    has_requests_hash: bool
    has_block_access_list: bool


# Transcribed from go-ethereum v1.17.8 tests/init.go. Osaka and Amsterdam
# declare no blob config of their own: they inherit the latest earlier entry.
GETH_TEST_FORKS: dict[str, GethTestFork] = {
    "Prague": GethTestFork(
        time_forks=("shanghaiTime", "cancunTime", "pragueTime"),
        blob_schedule=("cancun", "prague"),
        has_requests_hash=True,
        has_block_access_list=False,
    ),
    "Osaka": GethTestFork(
        time_forks=("shanghaiTime", "cancunTime", "pragueTime", "osakaTime"),
        blob_schedule=("cancun", "prague"),
        has_requests_hash=True,
        has_block_access_list=False,
    ),
    "Amsterdam": GethTestFork(
        time_forks=(
            "shanghaiTime",
            "cancunTime",
            "pragueTime",
            "osakaTime",
            "bpo1Time",
            "bpo2Time",
            "amsterdamTime",
        ),
        blob_schedule=("cancun", "prague", "bpo1", "bpo2"),
        has_requests_hash=True,
        has_block_access_list=True,
    ),
}


def geth_test_fork(network: str) -> GethTestFork:
    """The `tests.Forks` entry for `network`, or `BadInput` naming the ones known."""
    try:
        return GETH_TEST_FORKS[network]
    except KeyError:
        known = ", ".join(GETH_TEST_FORKS)
        raise BadInput(
            f"network {network!r}: no geth chain config for it (known: {known})"
        ) from None


def geth_chain_config(network: str, *, chain_id: int = TEST_CHAIN_ID) -> dict[str, Any]:
    """
    The `params.ChainConfig` JSON go-ethereum's test runner uses for `network`.

    `chain_id` exists for fixtures filled with another chain id; left at its
    default the result is exactly the `tests.Forks` entry.
    """
    fork = geth_test_fork(network)
    config: dict[str, Any] = {"chainId": chain_id}
    config.update((name, 0) for name in _GENESIS_BLOCK_FORKS)
    config.update((name, 0) for name in fork.time_forks)
    config["terminalTotalDifficulty"] = 0
    config["depositContractAddress"] = MAINNET_DEPOSIT_CONTRACT
    config["blobSchedule"] = {
        name: DEFAULT_BLOB_CONFIGS[name].to_geth_json() for name in fork.blob_schedule
    }
    return config


def fixture_blob_schedule(fixture_config: Mapping[str, Any]) -> dict[str, BlobConfig]:
    """
    The `config.blobSchedule` of a fixture, by lower-cased fork name, or
    `BadInput` naming the malformed entry (discovery calls this, so that
    the comparison at run time cannot fail on the shape).
    """
    schedule = fixture_config.get("blobSchedule") or {}
    if not isinstance(schedule, Mapping):
        raise BadInput("config.blobSchedule: not an object")
    parsed = {}
    for name, entry in schedule.items():
        where = f"config.blobSchedule.{name}"
        if not isinstance(entry, Mapping):
            raise BadInput(f"{where}: not an object")
        parsed[str(name).lower()] = BlobConfig(
            target=parse_quantity(entry.get("target"), f"{where}.target"),
            max=parse_quantity(entry.get("max"), f"{where}.max"),
            base_fee_update_fraction=parse_quantity(
                entry.get("baseFeeUpdateFraction"), f"{where}.baseFeeUpdateFraction"
            ),
        )
    return parsed


def fixture_config_mismatches(network: str, fixture_config: Mapping[str, Any]) -> list[str]:
    """
    Where a fixture's `config` disagrees with the chain config geth will run.

    Only the blob schedule entries geth's config has are compared (fixtures
    also list named forks such as "Osaka" that geth's schedule folds into
    the previous entry); the chain id is not a disagreement, it is taken
    over (`fixture_chain_id`). A disagreement here would make the import
    fail later for a reason that is hard to trace back, so the replay
    reports it up front.
    """
    fork = geth_test_fork(network)
    fixture_schedule = fixture_blob_schedule(fixture_config)
    problems: list[str] = []
    for name in fork.blob_schedule:
        found = fixture_schedule.get(name)
        expected = DEFAULT_BLOB_CONFIGS[name]
        if found is not None and found != expected:
            problems.append(f"blobSchedule.{name} is {found}, geth uses {expected}")
    return problems


def fixture_chain_id(fixture_config: Mapping[str, Any] | None) -> int:
    """
    The chain id a fixture was filled with: its `config.chainid`, or 1.

    Transactions are signed for this id, so the client must run with it;
    for the usual fixtures it is 1 and the config is geth's exactly.
    """
    if not fixture_config or fixture_config.get("chainid") is None:
        return TEST_CHAIN_ID
    return parse_quantity(fixture_config["chainid"], "config.chainid")


def derived_header_mismatches(network: str, header: Mapping[str, Any]) -> list[str]:
    """
    Genesis header fields the client computes itself and that differ from
    the fixture's, apart from the state root (which depends on the alloc).

    A genesis hash mismatch alone says nothing about its cause; these
    constants are the usual suspects, so the replay lists them.
    """
    fork = geth_test_fork(network)
    expected: dict[str, str] = {
        "uncleHash": EMPTY_UNCLE_HASH,
        "transactionsTrie": EMPTY_TRIE_ROOT,
        "receiptTrie": EMPTY_TRIE_ROOT,
        "bloom": EMPTY_BLOOM,
        "withdrawalsRoot": EMPTY_TRIE_ROOT,
        "parentBeaconBlockRoot": ZERO_HASH,
    }
    if fork.has_requests_hash:
        expected["requestsHash"] = EMPTY_REQUESTS_HASH
    if fork.has_block_access_list:
        expected["blockAccessListHash"] = EMPTY_BLOCK_ACCESS_LIST_HASH
    problems = []
    for key, value in expected.items():
        found = header.get(key)
        if found is None:
            problems.append(f"genesis header has no {key}, the client derives {value}")
        elif str(found).lower() != value:
            problems.append(f"genesis header {key} is {found}, the client derives {value}")
    return problems


def parse_quantity(value: Any, what: str) -> int:
    """An integer given as int, `0x` hex or decimal text (fixtures use all three)."""
    if isinstance(value, bool):
        raise BadInput(f"{what}: {value!r} is not a number")
    if isinstance(value, int):
        result = value
    elif isinstance(value, str):
        try:
            result = int(value, 16) if value[:2] in ("0x", "0X") else int(value, 10)
        except ValueError:
            raise BadInput(f"{what}: {value!r} is not a number") from None
    else:
        raise BadInput(f"{what}: {value!r} is not a number")
    if result < 0:
        raise BadInput(f"{what}: {value!r} is negative")
    return result


def parse_hex_bytes(value: Any, what: str, *, length: int | None = None) -> bytes:
    """Bytes given as `0x` hex text, optionally of exactly `length` bytes."""
    if not isinstance(value, str) or value[:2] not in ("0x", "0X"):
        raise BadInput(f"{what}: {value!r} is not 0x-prefixed hex")
    try:
        data = bytes.fromhex(value[2:])
    except ValueError:
        raise BadInput(f"{what}: {value!r} is not 0x-prefixed hex") from None
    if length is not None and len(data) != length:
        raise BadInput(f"{what}: {len(data)} bytes, expected {length}")
    return data


def _quantity_hex(value: Any, what: str) -> str:
    """Canonical hex of a quantity, the form `math.HexOrDecimal64/256` reads."""
    return hex(parse_quantity(value, what))


def _word_hex(value: Any, what: str) -> str:
    """A storage key or value as 32-byte hex; geth rejects odd-length hex there."""
    number = parse_quantity(value, what)
    if number >= 2**256:
        raise BadInput(f"{what}: {value!r} does not fit in 32 bytes")
    return "0x" + number.to_bytes(32, "big").hex()


def _data_hex(value: Any, what: str, *, length: int | None = None) -> str:
    """Lower-case `0x` hex of a byte string, checked for shape."""
    return "0x" + parse_hex_bytes(value, what, length=length).hex()


def genesis_header_fields(network: str, header: Mapping[str, Any]) -> dict[str, Any]:
    """
    The `core.Genesis` fields taken from an EEST genesis header, `alloc` and
    `config` aside, in the order go-ethereum's test runner copies them.

    The optional fields are copied only when the header has them, as the
    runner does; the client fills in defaults for the rest.
    """
    geth_test_fork(network)
    return _header_fields(header, "genesisBlockHeader")


def _header_fields(header: Mapping[str, Any], name: str) -> dict[str, Any]:
    """`genesis_header_fields` for any fork; `name` is the header's key, for messages."""
    number = parse_quantity(header.get("number", 0), f"{name}.number")
    if number != 0:
        raise BadInput(f"{name}.number: {number}, a genesis block must be number 0")
    fields: dict[str, Any] = {
        "nonce": hex(int.from_bytes(_nonce_bytes(header.get("nonce", "0x" + "00" * 8), name), "big")),
        "timestamp": _quantity_hex(header.get("timestamp", 0), f"{name}.timestamp"),
        "extraData": _data_hex(header.get("extraData", "0x"), f"{name}.extraData"),
        "gasLimit": _quantity_hex(_required(header, "gasLimit", name), f"{name}.gasLimit"),
        "difficulty": _quantity_hex(header.get("difficulty", 0), f"{name}.difficulty"),
        "mixHash": _data_hex(header.get("mixHash", ZERO_HASH), f"{name}.mixHash", length=32),
        "coinbase": _data_hex(
            header.get("coinbase", "0x" + "00" * 20), f"{name}.coinbase", length=20
        ),
        "number": "0x0",
        "gasUsed": _quantity_hex(header.get("gasUsed", 0), f"{name}.gasUsed"),
        "parentHash": _data_hex(
            header.get("parentHash", ZERO_HASH), f"{name}.parentHash", length=32
        ),
    }
    for key in ("baseFeePerGas", "excessBlobGas", "blobGasUsed", "slotNumber"):
        if header.get(key) is not None:
            fields[key] = _quantity_hex(header[key], f"{name}.{key}")
    return fields


def _nonce_bytes(value: Any, name: str) -> bytes:
    """The 8-byte PoW nonce, which fixtures write as fixed-width hex."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**64:
        return value.to_bytes(8, "big")
    return parse_hex_bytes(value, f"{name}.nonce", length=8)


def _required(header: Mapping[str, Any], key: str, name: str) -> Any:
    """`header[key]`, or `BadInput` saying the genesis header lacks it."""
    if header.get(key) is None:
        raise BadInput(f"{name}: no {key}")
    return header[key]


def geth_alloc_account(address: str, account: Any) -> dict[str, Any]:
    """
    One `pre` account as a `types.Account` in the form geth reads without
    surprises: canonical hex quantities, 32-byte storage words, and only
    the fields that are set.
    """
    where = f"pre[{address}]"
    if not isinstance(account, Mapping):
        raise BadInput(f"{where}: not an object")
    converted: dict[str, Any] = {
        "balance": _quantity_hex(account.get("balance", 0), f"{where}.balance")
    }
    nonce = parse_quantity(account.get("nonce", 0), f"{where}.nonce")
    if nonce >= 2**64:
        raise BadInput(f"{where}.nonce: {nonce} does not fit in 64 bits")
    if nonce:
        converted["nonce"] = hex(nonce)
    code = _data_hex(account.get("code", "0x"), f"{where}.code")
    if code != "0x":
        converted["code"] = code
    storage = account.get("storage") or {}
    if not isinstance(storage, Mapping):
        raise BadInput(f"{where}.storage: not an object")
    if storage:
        converted["storage"] = {
            _word_hex(key, f"{where}.storage key"): _word_hex(value, f"{where}.storage[{key}]")
            for key, value in storage.items()
        }
    return converted


def _alloc_key(address: Any) -> str:
    """An alloc address as lower-case hex, checked to be 20 bytes."""
    return _data_hex(address, f"pre key {address!r}", length=20)


def check_genesis_state(header: Any, pre: Any, *, header_name: str) -> None:
    """
    Convert the genesis header and every `pre` account the way
    `write_client_genesis` will, writing nothing: a malformed genesis is then
    bad input found before the run, not a client that fails to start in
    the middle of it. The fork is not checked (a client the user runs may
    know forks balgen's geth config table does not).
    """
    if not isinstance(header, Mapping):
        raise BadInput(f"{header_name}: not an object")
    _header_fields(header, header_name)
    if not isinstance(pre, Mapping):
        raise BadInput("pre: not an object")
    for address, account in pre.items():
        _alloc_key(address)
        geth_alloc_account(address, account)
