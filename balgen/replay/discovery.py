"""
Finding, checking and grouping the fixtures a replay runs.

`balgen replay PATH` takes a fixture file or a folder of them, ours or
execution-spec-tests': `blockchain_test_engine` (each fixture carries its
genesis and pre-state) and `blockchain_test_engine_x` (fixtures point to a
shared `pre_alloc/<preHash>.json` group). Tests are grouped by genesis, since
one client instance serves every test built on the same genesis.

Everything is checked before the first payload is sent (JSON syntax, the
format, every payload entry through its typed model down to the length and
range of each value, the hashes, the blob schedule, the pre-alloc reference,
the genesis header, a pre-alloc group's genesis hash as computed from its
environment and `pre` (`read_pre_alloc_genesis`), and every `pre` account as
balgen's geth will take them): a bad fixture is one line naming
the file, the test and the field, exit code 2, and no half-finished run. Every
value is read through the fixture models (`fixtures/models.py`) by
`fixtures/reading.py`, which never holds a `pre` whole: it is checked one
account at a time, and read again the same way into the client's genesis file.
Only the small facts are kept from discovery; payloads are read again when
their test runs, so a suite of thousands of large fixtures never sits in memory.
What discovery checked of a test's payloads is kept without the payloads
(`CheckedPayloads`): a file unchanged since (the same modification time) is
not checked a second time when its test runs, only read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import rlp

from ..analysis.bal_features import BalFeatures, payload_features
from ..chain.background_state import INFO_KEY as BACKGROUND_INFO_KEY
from ..model.state_recipe import parse_recipe
from ..clients.chain_config import network_fork
from ..clients.genesis_fields import client_genesis_header
from ..clients.genesis_files import alloc_state_root
from ..ethereum.chain_constants import CHAIN_ID
from ..plumbing.command_line import keyword_matcher, matches
from ..plumbing.errors import BadInput
from ..fixtures.files import (
    find_pre_alloc,
    fixture_files,
    fixture_format,
    format_names,
    formats_where,
    pre_hash_of,
    string_field,
)
from ..fixtures.formats import FORMATS, FixtureFormat
from ..fixtures.models import FixtureAccount, FixtureConfig, FixtureEnvironment, FixtureGenesisHeader
from ..fixtures.reading import StreamedPre, read_fixture_document, validated, validated_value
from ..ethereum.hextypes import Hash32, Uint64, data_hex
from ..model.test_ids import INFO_KEY as TEST_ID_KEY
from ..plumbing.printable import check_test_id
from .engine_payloads import PayloadDirective, is_timed_rejection, parse_payload_directives

REPLAYABLE = formats_where(lambda known: known.replayable)
REPLAYABLE_FORMATS = format_names(REPLAYABLE)

NOT_REPLAYABLE_FORMATS = format_names(formats_where(lambda known: not known.replayable))
"""Formats that are fixtures but carry no Engine API payloads a fresh client
can take (or need a snapshot balgen does not have): skipped with a note."""

FORMAT_CHOICES = {"auto": REPLAYABLE_FORMATS, **{known.short_name: (known.name,) for known in REPLAYABLE}}
"""`--format` values and the fixture formats each replays."""


@dataclass(frozen=True)
class CheckedPayloads:
    """A test's payload entries as discovery checked them, their params left out, and when its file was written."""

    mtime_ns: int
    """The file's modification time, taken before discovery read it."""
    directives: tuple[PayloadDirective, ...]
    """Every `engineNewPayloads` entry, checked, with empty `params` (the payloads stay in the file)."""


@dataclass(frozen=True)
class FixtureRef:
    """Where one test lives: its file, its key in that file and its format."""

    test_id: str
    path: Path
    format: str
    eest_test_id: str | None = None
    """The EEST-style id balgen records in `_info` (`model/test_ids.py`); an
    execution-spec-tests fixture's key is its id already."""
    checked: CheckedPayloads | None = field(default=None, compare=False, repr=False)
    """What discovery checked of the test's payloads; None for a ref not made by discovery."""


@dataclass(frozen=True)
class GenesisSource:
    """The genesis a group of tests starts from: its header, and where its state is read from."""

    network: str
    chain_id: int
    genesis_hash: str
    path: Path
    """The pre-alloc group file, or the engine fixture file holding the genesis."""
    test_id: str | None
    """For an engine fixture: its key in `path`; None for a pre-alloc group."""
    header: FixtureGenesisHeader = field(compare=False)
    """The genesis header (a pre-alloc group's: built from its environment, with the hash computed from it and `pre`)."""
    pre: StreamedPre = field(compare=False)
    """The pre-state, left in `path` (see `accounts`)."""
    listed_test_ids: frozenset[str] | None = field(default=None, compare=False)
    """The tests a pre-alloc group's `testIds` says it holds, where it says."""
    computed: bool = field(default=False, compare=False)
    """Whether `genesis_hash` is computed from a group file's environment and `pre`
    (execution-spec-tests' layout names none), rather than named by a header."""
    background: Mapping[str, Any] | None = field(default=None, compare=False)
    """For a group over a background state (`balgen fill --state`): its `<hash>.background` record (the
    recipe, `genesis-state-root`); the genesis is that state with `pre` put into it."""

    @property
    def where(self) -> str:
        """The file, and the test for an engine fixture, as messages name them."""
        return f"{self.path}" if self.test_id is None else f"{self.path}: test {self.test_id}"

    def accounts(self) -> Iterator[tuple[bytes, FixtureAccount]]:
        """
        The pre-state, read from `path` again one account at a time and
        checked (discovery checked it; a file changed since is still bad input).
        """
        return self.pre.accounts(self.where)


@dataclass(frozen=True)
class ReplayGroup:
    """Tests sharing one genesis, run one after another on one client."""

    genesis: GenesisSource
    tests: tuple[FixtureRef, ...]


@dataclass(frozen=True)
class Suite:
    """What a replay runs, and what discovery decided to leave out and why."""

    groups: tuple[ReplayGroup, ...]
    notes: tuple[str, ...]

    @property
    def test_count(self) -> int:
        """How many tests the replay runs."""
        return sum(len(group.tests) for group in self.groups)


@dataclass(frozen=True)
class ReplayTest:
    """One test, read and checked, ready to send."""

    ref: FixtureRef
    network: str
    payloads: tuple[PayloadDirective, ...]
    last_block_hash: str
    config: FixtureConfig | None
    """The fixture's `config` (None where an older fixture has none)."""
    info: Mapping[str, Any] = field(default_factory=dict)
    """The fixture's `_info` (empty if it has none): balgen's carries the workload model's numbers."""

    @property
    def workload(self) -> Mapping[str, Any] | None:
        """`_info["workload"]`: the parameters a balgen workload was built with."""
        workload = self.info.get("workload")
        return workload if isinstance(workload, Mapping) else None

    @property
    def speedup_bound(self) -> float | None:
        """`_info["dependency-graph"]["speedup-bound"]`: the ideal parallel speedup, if recorded."""
        graph = self.info.get("dependency-graph")
        bound = graph.get("speedup-bound") if isinstance(graph, Mapping) else None
        if isinstance(bound, bool) or not isinstance(bound, int | float) or not math.isfinite(bound) or bound < 1:
            return None
        return float(bound)

    @cached_property
    def bal_features(self) -> BalFeatures | None:
        """The benchmark block's features from its access list and transactions, if it carries a list."""
        payload = self.benchmark.params[0] if self.benchmark.params else None
        if not isinstance(payload, Mapping):
            return None
        try:
            return payload_features(payload)
        except (ValueError, KeyError, TypeError, rlp.DecodingError):
            return None  # a list or transaction balgen cannot read: the client judges the block, not balgen

    @property
    def benchmark(self) -> PayloadDirective:
        """The measured payload: the last one (benchmarkoor's rule; it is `testing`)."""
        return self.payloads[-1]

    @property
    def rejected(self) -> tuple[PayloadDirective, ...]:
        """The payloads the fixture expects rejected and labels `testing` (an `invalid_bal` block's
        lying twin, sent just before the benchmark block): timed like the benchmark payload."""
        return tuple(directive for directive in self.payloads[:-1] if is_timed_rejection(directive))

    @property
    def setup(self) -> tuple[PayloadDirective, ...]:
        """Every payload before the benchmark one but the timed rejections: each sent once."""
        return tuple(directive for directive in self.payloads[:-1] if not is_timed_rejection(directive))


# -- reading files ------------------------------------------------------------


@lru_cache(maxsize=1)
def _cached_fixture_file(path: Path, mtime_ns: int) -> dict[str, Any]:
    """The last fixture file read (its `pre` left in the file): consecutive tests usually share a file."""
    del mtime_ns  # part of the cache key only: a rewritten file is read again
    return read_fixture_document(path)


def _modification_time(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        raise BadInput(f"{path}: does not exist") from None


def _fixture_file(path: Path) -> dict[str, Any]:
    return _cached_fixture_file(path, _modification_time(path))


def _hash(value: Any, where: str, field_name: str) -> str:
    """A 32-byte hash field as lower-case 0x-hex; `BadInput` naming the field if absent or malformed."""
    if value is None:
        raise BadInput(f"{where}: no {field_name}")
    return "0x" + validated_value(Hash32, value, where, field_name).hex()


def _config(fixture: Mapping[str, Any], where: str) -> FixtureConfig | None:
    """The fixture's `config` through its model (network, chain id, blob schedule)."""
    config = fixture.get("config")
    return None if config is None else validated(FixtureConfig, config, where, "config")


def _checked_accounts(genesis: GenesisSource) -> None:
    """Every `pre` account read and checked as the client's genesis file will take it, one at a time."""
    for _ in genesis.accounts():
        pass


def _checked_directives(checked: CheckedPayloads, fixture: Mapping[str, Any]) -> tuple[PayloadDirective, ...] | None:
    """The directives discovery checked, each with its params from `fixture`; None if the entries do not line up."""
    entries = fixture.get("engineNewPayloads")
    if not isinstance(entries, list) or len(entries) != len(checked.directives):
        return None
    if not all(isinstance(entry, Mapping) and isinstance(entry.get("params"), list) for entry in entries):
        return None
    return tuple(replace(directive, params=list(entry["params"])) for directive, entry in zip(checked.directives, entries))


def parse_test(ref: FixtureRef, fixture: Any, checked: CheckedPayloads | None = None) -> ReplayTest:
    """
    Check one fixture of a replayable format and keep what the replay needs. With `checked` (the
    fixture's file is unchanged since discovery checked its payloads), the payloads are not checked
    again: checking the hex of a default suite's 400,000 payload values took 1 CPU-s of a replay.
    """
    where = f"{ref.path}: test {ref.test_id}"
    if not isinstance(fixture, Mapping):
        raise BadInput(f"{where}: not a JSON object")
    payloads = None if checked is None else _checked_directives(checked, fixture)
    if payloads is None:
        try:
            payloads = parse_payload_directives(fixture)
        except BadInput as error:
            raise BadInput(f"{where}: {error}") from None
    return ReplayTest(
        ref=ref,
        network=string_field(fixture, "network", where),
        payloads=payloads,
        last_block_hash=_hash(fixture.get("lastblockhash"), where, "lastblockhash"),
        config=_config(fixture, where),
        info=info if isinstance(info := fixture.get("_info"), Mapping) else {},
    )


def filled_with(ref: FixtureRef) -> str | None:
    """
    The t8n a test says it was filled with (`_info`), and the gas spec balgen
    measured from it, e.g. `evm version 1.17.5-stable (Amsterdam (go-ethereum
    v1.17.5))`: a client refuses fixtures of another spec's gas rules, so the
    replay shows both side by side. None when the fixture does not say.
    """
    info = _fixture_file(ref.path).get(ref.test_id, {}).get("_info")
    if not isinstance(info, Mapping) or not isinstance(info.get("filling-transition-tool"), str):
        return None
    rules = info.get("gas-rules")
    spec = rules.get("spec") if isinstance(rules, Mapping) else None
    return info["filling-transition-tool"] + (f" ({spec})" if isinstance(spec, str) else "")


def load_test(ref: FixtureRef) -> ReplayTest:
    """Read one test again, at the time it runs (see the module docstring); checked again if its file changed."""
    mtime_ns = _modification_time(ref.path)
    document = _cached_fixture_file(ref.path, mtime_ns)
    if ref.test_id not in document:
        raise BadInput(f"{ref.path}: test {ref.test_id}: no longer in the file")
    unchanged = ref.checked is not None and ref.checked.mtime_ns == mtime_ns
    return parse_test(ref, document[ref.test_id], ref.checked if unchanged else None)


# -- genesis of a test --------------------------------------------------------


def _streamed_pre(document: Mapping[str, Any], where: str) -> StreamedPre:
    pre = document.get("pre")
    if not isinstance(pre, StreamedPre):
        raise BadInput(f"{where}: no pre alloc")
    return pre


def _environment_genesis(
    document: Mapping[str, Any], network: str, pre: StreamedPre, where: str, found_by: str, state_root: bytes | None = None
) -> FixtureGenesisHeader:
    """
    The genesis header of a group file in execution-spec-tests' layout: its
    fields from the `environment`, its hash that of the block a client builds
    from them and the state root of `pre` (`client_genesis_header`). `pre` is
    read one account at a time, checked, into `balgen-state-root`
    (`alloc_state_root`). `found_by` names the test that found the file, for
    a network balgen has no chain config for: no genesis can be built for it.
    """
    if document.get("environment") is None:
        raise BadInput(f"{where}: no environment object (nor a genesis header)")
    environment = validated(FixtureEnvironment, document["environment"], where, "environment")
    try:
        fields = environment.genesis_header_fields()
    except ValueError as error:
        raise BadInput(f"{where}: environment: {error}") from None
    header = validated(FixtureGenesisHeader, fields, where, "environment")
    try:
        network_fork(network)
    except BadInput as error:
        raise BadInput(f"{found_by}: {error}") from None
    root = alloc_state_root(pre.accounts(where)) if state_root is None else state_root
    block = client_genesis_header(network, header, root)
    return header.model_copy(update={"hash": block.hash})


def read_pre_alloc_genesis(path: Path, found_by: str) -> GenesisSource:
    """
    Check a pre-alloc group file and keep its genesis facts.

    A group file in execution-spec-tests' layout (`environment`, `pre`,
    `network`, `testIds`) names no genesis hash: it is computed here from the
    environment and the state root of `pre` (`_environment_genesis`), and
    every test that points to the file must start from it (`GenesisResolver`),
    so a file holding another genesis is refused before any client starts
    rather than by the client's genesis hash at run time. The older layout's
    `genesis` header names its hash, compared with the client's when it
    starts, as an engine fixture's `genesisBlockHeader` is.

    Cost: one pass over `pre` into `balgen-state-root`, in place of the pass
    that only checked each account, once per file. Measured on 2 busy cores:
    the default suite at 1M gas (ten groups, 0.2 MB) discovers in 0.9 s
    instead of 0.3 s (ten starts of the tool); at 60M (ten groups, 7 MB)
    about 1 s more than 21 s; a 100 MB group 35 s instead of 14 s (Python
    writing the alloc about 6 s, go-ethereum's trie about 15 s), with a
    scratch alloc of about 60 % of the group's size on `TMPDIR` meanwhile.
    Without `balgen-state-root` a group is one line saying how to build it;
    a group with an empty `pre` (the empty trie's root, as hand-made test
    groups have) needs no tool, and engine fixtures need none.
    """
    document = read_fixture_document(path)
    where = f"{path}"
    network = string_field(document, "network", where)
    pre = _streamed_pre(document, where)
    computed = document.get("genesis") is None
    background = read_background(path)
    if computed:
        root = None if background is None else bytes.fromhex(str(background["genesis-state-root"])[2:])
        header = _environment_genesis(document, network, pre, where, found_by, root)
    else:
        header = validated(FixtureGenesisHeader, document["genesis"], where, "genesis")
    if header.hash is None:
        raise BadInput(f"{where}: genesis: no hash")
    chain_id = (
        CHAIN_ID if document.get("chainId") is None else validated_value(Uint64, document["chainId"], where, "chainId")
    )
    test_ids = document.get("testIds")
    listed = frozenset(str(test_id) for test_id in test_ids) if isinstance(test_ids, list) else None
    genesis = GenesisSource(
        network, chain_id, "0x" + header.hash.hex(), path, None, header, pre, listed, computed, background
    )
    if not computed:
        _checked_accounts(genesis)
    return genesis


def _engine_genesis(ref: FixtureRef, fixture: Mapping[str, Any], test: ReplayTest) -> GenesisSource:
    where = f"{ref.path}: test {ref.test_id}"
    if fixture.get("genesisBlockHeader") is None:
        raise BadInput(f"{where}: no genesisBlockHeader object")
    header = validated(FixtureGenesisHeader, fixture["genesisBlockHeader"], where, "genesisBlockHeader")
    if header.hash is None:
        raise BadInput(f"{where}: genesisBlockHeader: no hash")
    chain_id = CHAIN_ID if test.config is None else test.config.chain_id
    genesis = GenesisSource(
        test.network, chain_id, "0x" + header.hash.hex(), ref.path, ref.test_id, header, _streamed_pre(fixture, where)
    )
    _checked_accounts(genesis)
    return genesis


class GenesisResolver:
    """The genesis of each test; each pre-alloc file is read and checked once."""

    def __init__(self) -> None:
        self._pre_allocs: dict[Path, GenesisSource] = {}

    def genesis_of(self, ref: FixtureRef, fixture: Mapping[str, Any], test: ReplayTest) -> GenesisSource:
        if not _format(ref).pre_in_group:
            return _engine_genesis(ref, fixture, test)
        return self.group_genesis(ref.path, ref.test_id, fixture, test.network, test.payloads[0].parent_hash)

    def group_genesis(
        self, fixture_path: Path, test_id: str, fixture: Mapping[str, Any], network: str, parent_hash: str
    ) -> GenesisSource:
        """
        The genesis of the pre-alloc group an engine_x test's `preHash`
        names, which must list the test, be of its fork and be the parent of
        its first payload (`parent_hash`); `BadInput` naming the file otherwise.
        """
        where = f"{fixture_path}: test {test_id}"
        path = find_pre_alloc(fixture_path, pre_hash_of(fixture, where), where)
        parent = parent_hash.lower()
        if path not in self._pre_allocs:
            self._pre_allocs[path] = read_pre_alloc_genesis(path, where)
        genesis = self._pre_allocs[path]
        if genesis.listed_test_ids is not None and test_id not in genesis.listed_test_ids:
            raise BadInput(
                f"{where}: {path.name} lists {len(genesis.listed_test_ids)} other tests in testIds, not this one: "
                f"the file named by preHash holds another group"
            )
        if genesis.network != network:
            raise BadInput(f"{where}: network {network} differs from {path.name}'s {genesis.network}")
        if parent != genesis.genesis_hash and genesis.background is None and over_background_state(fixture):
            raise BadInput(
                f"{where}: its genesis is a background state (_info.background-state), and "
                f"{path.with_suffix('.background').name}, which says which, is not beside {path.name}"
            )
        if parent != genesis.genesis_hash:
            raise BadInput(
                f"{where}: {path}: environment and pre give genesis {genesis.genesis_hash}, but "
                f"engineNewPayloads[0].parentHash is {parent}: the file named by preHash holds another genesis"
                if genesis.computed
                else f"{where}: engineNewPayloads[0].parentHash {parent} is not the genesis of {path.name} "
                f"({genesis.genesis_hash})"
            )
        return genesis


# -- discovery ---------------------------------------------------------------


def _refs_of_file(path: Path) -> Iterable[tuple[FixtureRef | str, Any]]:
    """(ref, fixture) for each replayable fixture, or (format, None) for a skipped one."""
    document = read_fixture_document(path)
    for test_id, fixture in document.items():
        check_test_id(test_id, str(path))
        if not isinstance(fixture, Mapping):
            raise BadInput(f"{path}: test {test_id}: not a JSON object")
        found = fixture_format(fixture)
        if found in REPLAYABLE_FORMATS:
            yield FixtureRef(test_id, path, found, _recorded_test_id(fixture)), fixture
        elif found in NOT_REPLAYABLE_FORMATS:
            yield found, None
        else:
            described = f"format {found!r}" if found else "no fixture-format and no engineNewPayloads"
            raise BadInput(f"{path}: test {test_id}: unknown fixture format ({described})")


def _recorded_test_id(fixture: Mapping[str, Any]) -> str | None:
    """The EEST-style test id a fixture's `_info` records, if it records one."""
    info = fixture.get("_info")
    test_id = info.get(TEST_ID_KEY) if isinstance(info, Mapping) else None
    return test_id if isinstance(test_id, str) and test_id else None


def read_background(group_path: Path) -> Mapping[str, Any] | None:
    """The `<hash>.background` record beside a pre-alloc group file (`balgen fill --state`), if it has one."""
    record_path = group_path.with_suffix(".background")
    if not record_path.is_file():
        return None
    try:
        record = json.loads(record_path.read_text())
        bytes.fromhex(str(record["genesis-state-root"])[2:])
        parse_recipe(str(record["recipe"]))
    except (OSError, ValueError, KeyError, TypeError, BadInput) as error:
        raise BadInput(f"{record_path}: not a background-state record ({error})") from None
    return record


def over_background_state(fixture: Mapping[str, Any]) -> bool:
    """Whether a fixture's genesis is a background state with its group's accounts put into it."""
    info = fixture.get("_info")
    return isinstance(info, Mapping) and BACKGROUND_INFO_KEY in info


def _format(ref: FixtureRef) -> FixtureFormat:
    """The registered format of a ref (discovery makes refs of registered replayable formats only)."""
    return FORMATS[ref.format]


def _prefer_engine_x(refs: list[FixtureRef], notes: list[str]) -> list[FixtureRef]:
    """
    Drop `blockchain_test_engine` fixtures whose test also comes as
    `blockchain_test_engine_x` (generally: in a format whose pre-state is a
    shared pre-alloc group): a fill writes both, and replaying both would run
    every test twice. engine_x is kept because it shares one client per
    genesis group (and is what benchmarkoor replays).
    """
    grouped = {ref.test_id: ref.format for ref in refs if _format(ref).pre_in_group}
    kept = [ref for ref in refs if _format(ref).pre_in_group or ref.test_id not in grouped]
    dropped: dict[tuple[str, str], int] = {}
    for ref in refs:
        if not _format(ref).pre_in_group and ref.test_id in grouped:
            key = (ref.format, grouped[ref.test_id])
            dropped[key] = dropped.get(key, 0) + 1
    for (skipped, replayed), count in dropped.items():
        notes.append(f"{count} {skipped} fixtures skipped: the same tests are replayed as {replayed}")
    return kept


def _check_unique(refs: list[FixtureRef]) -> None:
    seen: dict[tuple[str, str], Path] = {}
    for ref in refs:
        key = (ref.format, ref.test_id)
        if key in seen:
            raise BadInput(f"test {ref.test_id}: in both {seen[key]} and {ref.path}")
        seen[key] = ref.path


def discover(path: Path, keyword: str | None = None, formats: str = "auto") -> Suite:
    """
    Every test under `path` that matches `keyword`, checked and grouped by genesis.

    `formats` is `auto` (both formats, engine_x preferred where a test comes
    in both), `engine` or `engine_x`.
    """
    expression = keyword_matcher(keyword)
    resolver = GenesisResolver()
    notes: list[str] = []
    skipped: dict[str, int] = {}
    selected: list[tuple[FixtureRef, GenesisSource]] = []
    candidates: list[FixtureRef] = []
    for file in fixture_files(path):
        mtime_ns = _modification_time(file)  # before reading: a file written meanwhile is checked again when it runs
        for ref, fixture in _refs_of_file(file):
            if not isinstance(ref, FixtureRef):
                skipped[ref] = skipped.get(ref, 0) + 1
                continue
            if not matches(expression, ref.test_id):
                continue
            if ref.format not in FORMAT_CHOICES[formats]:
                continue
            test = parse_test(ref, fixture)
            ref = replace(ref, checked=CheckedPayloads(mtime_ns, tuple(replace(d, params=[]) for d in test.payloads)))
            selected.append((ref, resolver.genesis_of(ref, fixture, test)))
            candidates.append(ref)
    for name, count in sorted(skipped.items()):
        notes.append(f"{count} {name} fixtures skipped: no Engine API payloads to replay")

    kept = set(_prefer_engine_x(candidates, notes) if formats == "auto" else candidates)
    _check_unique(list(kept))
    if not kept:
        if keyword is not None:
            raise BadInput(f"-k {keyword!r} matches no replayable fixture under {path}")
        raise BadInput(f"{path}: no {' or '.join(REPLAYABLE_FORMATS)} fixtures")
    groups = _grouped((ref, genesis) for ref, genesis in selected if ref in kept)
    return Suite(groups=groups, notes=tuple(notes))


def _grouped(selected: Iterable[tuple[FixtureRef, GenesisSource]]) -> tuple[ReplayGroup, ...]:
    """Tests by genesis (hash, network, chain id), in discovery order."""
    groups: dict[tuple[str, str, int], tuple[GenesisSource, list[FixtureRef]]] = {}
    for ref, genesis in selected:
        key = (genesis.genesis_hash, genesis.network, genesis.chain_id)
        groups.setdefault(key, (genesis, []))[1].append(ref)
    return tuple(ReplayGroup(genesis, tuple(refs)) for genesis, refs in groups.values())
