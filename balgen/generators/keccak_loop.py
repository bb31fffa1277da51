"""
The keccak loop that burns a transaction's gas, and its exact gas arithmetic.

Both chain families spend most of each transaction hashing: `mem[0] =
keccak(mem[0])` while `GAS > reserve`. Because every piece has a known static
cost, the number of iterations a transaction runs and the gas it leaves
unused follow from its gas limit alone. The generators use that to size
transactions so the block really uses its gas and the final storage access
never runs out of gas.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..ethereum.keccak import keccak

from ..ethereum.bytecode import GAS, GT, JUMPI, MSTORE, PUSH0, SHA3, Item, Label, PushLabel, push, push_fixed, static_gas

LOOP_LABEL = "keccak_loop"


@dataclass(frozen=True)
class KeccakLoop:
    """Gas facts of the loop for a given reserve and keccak word cost."""

    reserve: int
    keccak_word_gas: int

    @property
    def items(self) -> list[Item]:
        """The loop's code: JUMPDEST ... PUSH reserve GAS GT PUSH2 loop JUMPI."""
        return [
            Label(LOOP_LABEL),
            push(32),
            PUSH0,
            SHA3,
            PUSH0,
            MSTORE,
            push_fixed(self.reserve, 4),
            GAS,
            GT,
            PushLabel(LOOP_LABEL),
            JUMPI,
        ]

    @property
    def gas_to_read(self) -> int:
        """Gas from the loop head to (and including) the GAS opcode."""
        return static_gas(self.items[:8]) + self.keccak_word_gas

    @property
    def gas_after_read(self) -> int:
        """Gas from after the GAS opcode to the jump (GT, PUSH2, JUMPI)."""
        return static_gas(self.items[8:])

    @property
    def iteration_gas(self) -> int:
        """Gas of one full iteration."""
        return self.gas_to_read + self.gas_after_read

    def iterations(self, gas_at_start: int) -> int:
        """Iterations run when the loop is entered with `gas_at_start` (at least one)."""
        over = gas_at_start - self.gas_to_read - self.reserve
        if over <= 0:
            return 1
        return 1 + -(-over // self.iteration_gas)

    def gas_left(self, gas_at_start: int) -> int:
        """Gas remaining when the loop falls through to the code after it."""
        runs = self.iterations(gas_at_start)
        return gas_at_start - runs * self.iteration_gas

    def minimum_entry_gas(self, gas_after_loop: int) -> int:
        """Least gas at loop entry for one iteration and `gas_after_loop` after it."""
        return self.iteration_gas + gas_after_loop


def reserve_for(gas_after_loop: int, keccak_word_gas: int) -> int:
    """
    Reserve that guarantees `gas_after_loop` gas once the loop exits.

    The last GAS read is at most one iteration below the reserve, and the check
    after it still costs `gas_after_read`, so the reserve covers both.
    """
    probe = KeccakLoop(reserve=0, keccak_word_gas=keccak_word_gas)
    return gas_after_loop + probe.iteration_gas - 1 + probe.gas_after_read


HASH_CHECKPOINT_INTERVAL = 512
"""Iterations between kept hashes: a fill asks for many distinct iteration counts (an
interact block's calls each have their own gas), each hashing on from the checkpoint below it;
a billion-gas block's 15 million iterations keep 28,723 checkpoints, 2 MB."""
_hash_checkpoints: list[bytes] = [(1).to_bytes(32, "big")]
"""keccak^(k * interval)(1) for k = 0, 1, ...: what the loop leaves in memory."""


@lru_cache(maxsize=4096)
def hashed_word(iterations: int) -> int:
    """
    mem[0] after the loop runs `iterations` times from mem[0] = 1: keccak^n(1).

    Lets a generator predict the exact value a keccak-chain contract adds to
    its slot. Checkpoints keep repeated queries (every transaction of a fill
    level has one of two or three iteration counts) from rehashing from 1.
    """
    index, remainder = divmod(iterations, HASH_CHECKPOINT_INTERVAL)
    while len(_hash_checkpoints) <= index:
        word = _hash_checkpoints[-1]
        for _ in range(HASH_CHECKPOINT_INTERVAL):
            word = keccak(word)
        _hash_checkpoints.append(word)
    word = _hash_checkpoints[index]
    for _ in range(remainder):
        word = keccak(word)
    return int.from_bytes(word, "big")
