"""
Which transactions on a chain are a workload's, payload by payload, for every workload checked at once.

spamoor's wallets are derived from its root key, which balgen is not always
given, so the workload's transactions are found by what they carry. replay-eest sends a
payload's transactions in its order, each wallet's in nonce order, and the
deployer first; `$contract[N]` is `CREATE(deployer, first nonce + N - 1)`.
So a payload is found from its deployer's first transaction (the same
recipient, data, gas limit and value), which fixes the deployer and every
contract the payload names; each further transaction is the next nonce of
its wallet, or for a wallet's first one, the earliest unclaimed transaction
with exactly the expected fields. Every candidate for the first transaction
is tried, and every one the whole payload follows from is a run of it: a
workload sent twice in the range is checked twice. Each chain transaction
belongs to one payload only, across all workloads (`match_all`). Given each
workload's wallets (`spamoor_wallets`), only transactions its wallets sent
are its own: a run of another export sending the same payloads is not.
Without them, a payload whose wallets go on calling its contracts is the
start of a longer payload (another export's), not a run of it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..export.spamoor_payloads import DEPLOYER, GroupPayload, PayloadTx
from ..model.keys import create_address
from ..model.workload import Address, Origin
from .chain_reader import ChainTx

PLACEHOLDER = re.compile(r"\$contract\[(\d+)\]")

Fields = tuple[bytes | None, bytes, int, int]
"""(to, data, gas limit, value): what identifies a transaction whoever sends it."""
Wallets = frozenset[bytes] | None
"""The senders a workload's runs may come from (its spammer's wallets), or None when they are not known."""


class NotFound(Exception):
    """A payload transaction is not on the chain in the range searched; the message names it."""

    def __init__(self, message: str, first: ChainTx | None = None, absent: bool = False) -> None:
        super().__init__(message)
        self.first = first
        """The chain transaction the payload was followed from."""
        self.absent = absent
        """Nothing stands where the transaction should (not yet mined, or never sent), rather than another one."""


@dataclass
class FoundPayload:
    """A payload's transactions on the chain, and its wallets and contracts."""

    payload: GroupPayload
    txs: list[ChainTx] = field(default_factory=list)
    wallets: dict[str, bytes] = field(default_factory=dict)
    contracts: dict[int, Address] = field(default_factory=dict)

    def live_addresses(self) -> dict[Address, Address]:
        """Fixture address -> live address of every contract the payload deploys."""
        deployed = [
            address
            for tx in self.payload.txs
            for address, origin in tx.origin.access.origins.items()
            if origin is Origin.DEPLOYED
        ]
        return {fixture: self.contracts[number] for number, fixture in enumerate(deployed, start=1)}


def resolved(text: str, contracts: dict[int, Address]) -> str:
    """`text` with every `$contract[N]` replaced by its address, as hex without 0x."""
    return PLACEHOLDER.sub(lambda found: contracts[int(found[1])].hex(), text.removeprefix("0x"))


def expected_fields(tx: PayloadTx, contracts: dict[int, Address]) -> Fields:
    to = None if tx.to is None else bytes.fromhex(resolved(tx.to, contracts))
    return (to, bytes.fromhex(resolved(tx.data, contracts)), tx.gas, tx.value)


def fields_of(tx: ChainTx) -> Fields:
    return (tx.to, tx.data, tx.gas, tx.value)


class ChainIndex:
    """The chain's transactions by their fields and by (sender, nonce), minus those already claimed."""

    def __init__(self, txs: Sequence[ChainTx]) -> None:
        self.by_fields: dict[Fields, list[ChainTx]] = {}
        self.by_nonce: dict[tuple[bytes, int], ChainTx] = {}
        for tx in txs:
            self.by_fields.setdefault(fields_of(tx), []).append(tx)
            self.by_nonce[(tx.sender, tx.nonce)] = tx
        self.claimed: set[str] = set()

    def candidates(self, fields: Fields, senders: Wallets) -> list[ChainTx]:
        """Unclaimed transactions carrying `fields`, sent by one of `senders` (None: by anyone)."""
        return [
            tx for tx in self.by_fields.get(fields, [])
            if tx.hash not in self.claimed and (senders is None or tx.sender in senders)
        ]  # fmt: skip


def follow(payload: GroupPayload, first: ChainTx, index: ChainIndex, senders: Wallets) -> FoundPayload:
    """The whole payload, given the chain transaction its first one is; NotFound names the first gap."""
    found = FoundPayload(payload, [first], {payload.txs[0].sender: first.sender})
    nonces = {payload.txs[0].sender: first.nonce}
    found.contracts = {
        number: create_address(first.sender, first.nonce + number - 1)
        for number in range(1, 1 + sum(1 for tx in payload.txs if tx.sender == DEPLOYER and tx.to is None))
    }
    taken = {first.hash}
    for position, tx in enumerate(payload.txs[1:], start=1):
        fields = expected_fields(tx, found.contracts)
        wallet = found.wallets.get(tx.sender)
        if wallet is not None:
            live = index.by_nonce.get((wallet, nonces[tx.sender] + 1))
            if live is None or fields_of(live) != fields or live.hash in index.claimed:
                raise NotFound(
                    f"{payload.name} tx {position} ({tx.origin.label}), nonce {nonces[tx.sender] + 1} of its wallet",
                    first, absent=live is None,
                )  # fmt: skip
        else:
            others = set(found.wallets.values())
            live = next(
                (c for c in index.candidates(fields, senders) if c.sender not in others and c.hash not in taken), None
            )
            if live is None:
                raise NotFound(
                    f"{payload.name} tx {position} ({tx.origin.label}), the first of {tx.sender}", first, absent=True
                )
            found.wallets[tx.sender] = live.sender
        nonces[tx.sender] = live.nonce
        taken.add(live.hash)
        found.txs.append(live)
    _not_the_start_of_a_longer_payload(found, nonces, index)
    return found


def _not_the_start_of_a_longer_payload(found: FoundPayload, nonces: dict[str, int], index: ChainIndex) -> None:
    """
    A payload's wallets send nothing more to its contracts once it is done (a
    later run of the same spammer deploys new ones). A wallet whose next
    transaction calls one of them sends a longer payload that begins like this
    one, another export's: NotFound, and not a run cut short.
    """
    contracts = set(found.contracts.values())
    for label, wallet in found.wallets.items():
        after = index.by_nonce.get((wallet, nonces[label] + 1))
        if after is not None and after.to in contracts:
            raise NotFound(f"{found.payload.name}: {label} goes on calling its contracts at {after.where}", found.txs[0])


def occurrences(payload: GroupPayload, index: ChainIndex, senders: Wallets) -> tuple[list[FoundPayload], list[NotFound]]:
    """
    Every complete run of `payload` among the unclaimed transactions `senders`
    sent, in chain order, each claimed in `index`; and for each candidate
    first transaction that did not complete (and that no run claimed), where
    it stopped.
    """
    head = payload.txs[0]
    if PLACEHOLDER.search(head.data) or (head.to and PLACEHOLDER.search(head.to)):
        raise ValueError(f"{payload.name}: its first transaction names a contract of its own")
    found: list[FoundPayload] = []
    gaps: list[NotFound] = []
    for candidate in index.candidates(expected_fields(head, {}), senders):
        if candidate.hash in index.claimed:
            continue
        try:
            run = follow(payload, candidate, index, senders)
        except NotFound as gap:
            gaps.append(gap)
            continue
        index.claimed |= {tx.hash for tx in run.txs}
        found.append(run)
    return found, gaps


PayloadKey = tuple[int, int]
"""(workload, payload): a payload of one of the workloads checked together."""


@dataclass
class Matches:
    """What the chain holds of each payload: its complete runs, and where incomplete ones stopped."""

    runs: dict[PayloadKey, list[FoundPayload]] = field(default_factory=dict)
    gaps: dict[PayloadKey, list[NotFound]] = field(default_factory=dict)


Signature = tuple[tuple[str, str | None, str, int, int], ...]
"""What a payload sends: (sender label, recipient, data, gas, value) of each of its transactions."""


def signature(payload: GroupPayload) -> Signature:
    """What a payload sends, whoever sends it: two payloads with one signature are found in the same transactions."""
    return tuple((tx.sender, tx.to, tx.data, tx.gas, tx.value) for tx in payload.txs)


def match_all(
    workloads: Sequence[Sequence[GroupPayload]], index: ChainIndex, wallets: Sequence[Wallets] | None = None
) -> Matches:
    """
    The runs of every payload of every workload, with each chain transaction
    claimed by one payload only; with `wallets`, each workload's from its
    own wallets only (payloads then share runs only within a workload). Many payloads begin with the same deploy
    transaction, and a smaller group's payload can be the start of a larger
    one's, so payloads are matched longest first, all workloads at once: a
    larger payload's run is never taken for a smaller one's. A run cut short
    (its next transaction absent: not mined yet) is told of one payload
    (`_nearest`); payloads that send exactly the same transactions (in
    different workloads, or twice in one) share their runs out last
    (`_share_identical`).
    """
    payload_of = {(w, p): payload for w, payloads in enumerate(workloads) for p, payload in enumerate(payloads)}
    senders_of = list(wallets) if wallets is not None else [None] * len(workloads)
    by_signature: dict[tuple[Signature, Wallets], list[PayloadKey]] = {}
    for key, payload in payload_of.items():
        by_signature.setdefault((signature(payload), senders_of[key[0]]), []).append(key)
    matches = Matches()
    found: dict[tuple[Signature, Wallets], list[FoundPayload]] = {}
    stopped: dict[str, dict[PayloadKey, NotFound]] = {}
    """Per chain transaction a payload was followed from and stopped short of its end: where each stopped."""
    for sig, keys in sorted(by_signature.items(), key=lambda item: -len(item[0][0])):
        found[sig], gaps = occurrences(payload_of[keys[0]], index, sig[1])
        for gap in gaps:
            if gap.absent and gap.first is not None:
                for key in keys:
                    stopped.setdefault(gap.first.hash, {})[key] = _renamed(gap, payload_of[keys[0]], payload_of[key])
    matches.runs = {keys[0]: found[sig] for sig, keys in by_signature.items() if len(keys) == 1}
    targets = _targets(matches)
    supply = {key: len(found[sig]) / len(keys) for sig, keys in by_signature.items() for key in keys}
    for first, gaps_by_key in stopped.items():
        if first not in index.claimed:
            block = next(iter(gaps_by_key.values())).first.block  # type: ignore[union-attr]
            key = _nearest(list(gaps_by_key), block, matches, supply)
            matches.gaps.setdefault(key, []).append(gaps_by_key[key])
    for sig, keys in by_signature.items():
        if len(keys) > 1:
            _share_identical(keys, found[sig], payload_of, targets, matches)
    return matches


def _targets(matches: Matches) -> dict[int, int]:
    """How many times each workload ran, as far as its payloads that send what no other does tell."""
    targets: dict[int, int] = {}
    for (workload, _), runs in matches.runs.items():
        targets[workload] = max(targets.get(workload, 0), len(runs))
    return targets


def _renamed(gap: NotFound, matched: GroupPayload, payload: GroupPayload) -> NotFound:
    """`gap`, found for `matched`, said of `payload`, which sends the same transactions."""
    text = str(gap).replace(matched.name, payload.name, 1)
    return NotFound(text, gap.first, gap.absent)


def _nearest(keys: Sequence[PayloadKey], block: int, matches: Matches, supply: dict[PayloadKey, float]) -> PayloadKey:
    """
    The payload a run cut short at `block` most likely belongs to, among those
    it could be (they begin alike): one of the workload whose own runs are
    nearest in the chain, as spamoor sends a workload's payloads together;
    of that workload's, the one with the fewest complete runs per payload
    sending the same (`supply`): the one a run is missing of.
    """

    def distance(key: PayloadKey) -> int:
        blocks = [tx.block for (w, _), runs in matches.runs.items() if w == key[0] for run in runs for tx in run.txs]
        return min((abs(found - block) for found in blocks), default=2**63)

    return min(keys, key=lambda key: (distance(key), supply[key], keys.index(key)))


def _share_identical(
    keys: Sequence[PayloadKey], runs: Sequence[FoundPayload], payload_of: dict[PayloadKey, GroupPayload],
    targets: dict[int, int], matches: Matches,
) -> None:
    """
    Runs of payloads that send the same transactions, in chain order: first
    to each payload whose workload ran `targets` times (its payloads of its
    own tell), up to that many, then one at a time to the payload with the
    fewest so far (export order breaks ties), each under its own name. A
    workload left short of one is reported not complete; which of the
    workloads sending the same transactions is short, the chain cannot tell.
    """
    shared: dict[PayloadKey, list[FoundPayload]] = {key: [] for key in keys}

    def wanted(key: PayloadKey) -> tuple[int, int]:
        target = targets.get(key[0])
        if target is not None:
            target -= len(matches.gaps.get(key, []))  # a run of it cut short: one fewer complete
        return (0 if target is not None and len(shared[key]) < target else 1, len(shared[key]))

    for run in runs:
        key = min(keys, key=lambda key: (*wanted(key), keys.index(key)))
        shared[key].append(FoundPayload(payload_of[key], run.txs, run.wallets, run.contracts))
    matches.runs.update(shared)
