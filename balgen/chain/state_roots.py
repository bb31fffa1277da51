"""
State roots of one large allocation with a few accounts replaced, from go-ethereum's trie.

An applied chain (`applied_chain`) needs, for each block, the root of the
shared group genesis (tens of thousands of accounts) with the accounts the
chain has changed so far replaced. t8n would load and hash the whole group
for every block, seconds each; `balgen-state-root` (scripts/state_root,
built by scripts/install-tools.sh from the pinned go-ethereum's source)
loads it once, keeps its trie, and rehashes only the replaced accounts' paths
for each question; a chain's blocks are given to it one at a time (`kept`),
each with only the accounts it changed, which it keeps until the chain ends.
One process answers one base allocation.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..plumbing import processes
from ..plumbing.go_tools import go_tool_environment
from ..plumbing.errors import TransitionToolError
from ..plumbing.toolchain import located, required_tool

STATE_ROOT_TOOL = "balgen-state-root"

ANSWER_BASE_SECONDS = 60.0
ANSWER_SECONDS_PER_MB = 1.0
"""An answer's deadline grows with the allocation the tool reads for it (the base once, then each
replacement file): go-ethereum's trie loads and hashes tens of MB a second (the default suite's 19 MB
group takes well under a second), so only a tool that hangs meets it."""
ANSWER_SECONDS_PER_WORKLOAD_SLOT = 50e-6
"""A base answer over a background also builds every workload slot's storage (about 4.4 us a slot on
one quiet core, docs/state.md): ten times that, so a loaded machine is not taken for a hang."""


def state_root_tool() -> Path:
    """The `balgen-state-root` binary on balgen's tool search path."""
    return required_tool(STATE_ROOT_TOOL, "build it with scripts/install-tools.sh")


CODE_IN_ALLOCATION = re.compile(rb'"code"\s*:\s*"0x[0-9a-fA-F]')
"""An account with code in an allocation file: each gets the workload slots."""


def answer_deadline(read_bytes: int, workload_slots: int = 0) -> float:
    """Seconds the tool may take to answer a question whose allocation file holds `read_bytes` and which
    generates `workload_slots` slots."""
    return ANSWER_BASE_SECONDS + ANSWER_SECONDS_PER_MB * read_bytes / 1e6 + ANSWER_SECONDS_PER_WORKLOAD_SLOT * workload_slots


def workload_slots_generated(alloc: Path, background: Background | None) -> int:
    """How many workload slots the tool generates over `alloc`: the background's per account with code."""
    if background is None or not background.workload_slots:
        return 0
    try:
        return background.workload_slots * len(CODE_IN_ALLOCATION.findall(alloc.read_bytes()))
    except OSError:
        return 0  # the tool says why it cannot read it


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # the tool says why it cannot read it


DATABASE_LOCK = "LOCK"
"""The file go-ethereum's database (pebble) locks, even to read: each view has its own."""


def read_only_view(datadir: Path) -> Path:
    """
    A folder beside `datadir` holding hard links to every file of it but its
    database lock: go-ethereum opens it read-only as if it were `datadir`,
    while other processes do the same with theirs (nothing is written: it
    takes no space). Removed by the caller.
    """
    view = Path(tempfile.mkdtemp(prefix=".view-", dir=datadir.parent))
    for source in datadir.rglob("*"):
        target = view / source.relative_to(datadir)
        if source.is_dir():
            target.mkdir(exist_ok=True)
        elif source.name != DATABASE_LOCK:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(source, target)
    return view


def check_reported_root(reported: bytes, alloc_path: Path, what: str) -> None:
    """
    `TransitionToolError` naming `what` (a block and its field) when the
    state root t8n reported is not the root of the allocation `alloc_path`
    it stands for, as go-ethereum's trie in `balgen-state-root` computes it:
    a t8n that reports wrong roots would otherwise yield fixtures that every
    client refuses. Skipped where the tool is not installed (forks without
    access lists fill without it).
    """
    binary = located(STATE_ROOT_TOOL)
    if binary is None:
        return
    roots = StateRoots(binary, alloc_path)
    roots.close()
    if roots.base_root != reported:
        raise TransitionToolError(
            f"{what}: t8n reported 0x{reported.hex()}, but its allocation {alloc_path.name} has root "
            f"0x{roots.base_root.hex()} ({STATE_ROOT_TOOL}); this t8n's state roots cannot be trusted"
        )


@dataclass(frozen=True)
class Background:
    """
    The background state a `StateRoots` puts its base allocation into: the
    go-ethereum datadir it was built into (`background_state`), and how many
    workload slots, generated from the recipe's `seed`, each base account
    that has code gets beside its own (docs/state.md).
    """

    datadir: Path
    workload_slots: int = 0
    seed: int = 0


class StateRoots:
    """
    A running `balgen-state-root` over the allocation in `base_alloc`, in its
    own process group; with `background`, over that state with the
    allocation's accounts (and their workload slots) put into it.
    """

    def __init__(self, binary: Path, base_alloc: Path, background: Background | None = None) -> None:
        self.binary = binary
        self.base_alloc = base_alloc
        self._pending = b""
        self._view = None if background is None else read_only_view(background.datadir)
        """The background's database as this process's own hard-linked folder: go-ethereum's database
        locks its folder even when it only reads, and every fill worker reads the same state."""
        command = [str(binary), str(base_alloc)]
        if background is not None and self._view is not None:
            command[1:1] = ["--background", str(self._view)]
            if background.workload_slots:
                command[1:1] = ["--workload-slots", f"{background.workload_slots}:{background.seed}"]
        try:
            self._process = processes.start(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=go_tool_environment(),
            )
        except OSError as error:
            if self._view is not None:
                shutil.rmtree(self._view, ignore_errors=True)
            raise TransitionToolError(f"cannot run {binary}: {error.strerror}") from None
        try:
            generated = workload_slots_generated(base_alloc, background)
            self.base_root = self._answer(answer_deadline(_file_size(base_alloc), generated))
            """The state root of the base allocation itself."""
        except BaseException:
            self.close()
            raise

    def with_accounts(self, replacements: Path) -> bytes:
        """The state root of the base with the accounts of the allocation in `replacements` (null: absent) replaced."""
        self._request(str(replacements))
        return self._answer(answer_deadline(_file_size(replacements)))

    @contextlib.contextmanager
    def kept(self) -> Iterator[Callable[[Path], bytes]]:
        """
        A function that replaces the accounts of an allocation (null: absent)
        and keeps them, giving the root with every allocation it was given so
        far replaced: a chain's blocks are given one at a time, each with only
        the accounts it changed, so only their paths are hashed again, not
        every account the chain has changed so far. The base is put back after.
        """
        try:
            yield self._kept_root
        except Exception:
            with contextlib.suppress(TransitionToolError):
                self._reset()  # if it stopped, its next question says why
            raise
        self._reset()

    def _kept_root(self, replacements: Path) -> bytes:
        self._request(f"apply {replacements}")
        return self._answer(answer_deadline(_file_size(replacements)))

    def _reset(self) -> None:
        """Put back the base's accounts the kept allocations replaced, and check the tool's root is the base's again."""
        self._request("reset")
        root = self._answer(answer_deadline(0))
        if root != self.base_root:
            raise TransitionToolError(
                f"{self.binary} over {self.base_alloc}: after reset its root is 0x{root.hex()}, "
                f"the base's is 0x{self.base_root.hex()}"
            )

    def _request(self, line: str) -> None:
        """Send one request line (its answer is read by the caller)."""
        stdin = self._pipe(self._process.stdin)
        try:
            stdin.write(f"{line}\n".encode())
            stdin.flush()
        except BrokenPipeError:
            pass  # it has stopped: `_answer` says why

    def depths(self, addresses: Iterable[bytes], scratch: Path) -> list[int]:
        """How many trie nodes a read of each address walks from the base state's root (a file in `scratch` asks)."""
        return self._depths("depth", "".join(f"0x{address.hex()}\n" for address in addresses), scratch)

    def slot_depths(self, slots: Iterable[tuple[bytes, int]], scratch: Path) -> list[int]:
        """
        How many trie nodes a read of each slot (an address and a key) walks
        from the root of its account's storage trie in the base state (0 where
        the base account has no storage).
        """
        return self._depths("storage-depth", "".join(f"0x{address.hex()} {key:#066x}\n" for address, key in slots), scratch)

    def _depths(self, request: str, listed_text: str, scratch: Path) -> list[int]:
        """The tool's answer to a depth request over the lines `listed_text` (a file in `scratch` holds them)."""
        if not listed_text:
            return []
        listed = scratch / f"{request}-list.txt"
        listed.write_text(listed_text)
        self._request(f"{request} {listed}")
        line = self._read_line(answer_deadline(0))
        if line is None or not line.strip() or not all(part.isdigit() for part in line.decode().strip().split(",")):
            self._answer(0)  # says why it stopped
        return [int(part) for part in line.decode().strip().split(",")]  # type: ignore[union-attr]

    def close(self) -> None:
        """Stop the tool (it ends when its input does) and anything left of its process group."""
        try:
            if self._process.poll() is None:
                try:
                    self._pipe(self._process.stdin).close()
                except BrokenPipeError:
                    pass
        finally:
            processes.stop_group(self._process)
            for stream in (self._process.stdout, self._process.stderr):
                if stream is not None:
                    stream.close()
            if self._view is not None:
                shutil.rmtree(self._view, ignore_errors=True)

    def _read_line(self, seconds: float) -> bytes | None:
        """The tool's next output line (b"" at its end), or None if none came within `seconds`."""
        stdout = self._pipe(self._process.stdout)
        ends = time.monotonic() + seconds
        while b"\n" not in self._pending:
            remaining = ends - time.monotonic()
            if remaining <= 0 or not select.select([stdout], [], [], remaining)[0]:
                return None
            chunk = os.read(stdout.fileno(), 1 << 16)
            if not chunk:
                line, self._pending = self._pending, b""
                return line
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line + b"\n"

    def _answer(self, seconds: float) -> bytes:
        """The next root the tool prints, or the error it stopped with, within `seconds`."""
        line = self._read_line(seconds)
        if line is None:
            processes.stop_group(self._process)
            raise TransitionToolError(
                f"{self.binary} over {self.base_alloc}: no answer within {seconds:.0f} s "
                "(the deadline for the allocation it reads); stopped"
            )
        text = line.decode(errors="replace").strip()
        if text.startswith("0x") and len(text) == 66:
            return bytes.fromhex(text[2:])
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=processes.STOP_GRACE)  # it is ending: let it finish saying why
        processes.stop_group(self._process)
        stderr = self._pipe(self._process.stderr).read().decode(errors="replace").strip()
        message = processes.error_line(stderr).removeprefix(f"{STATE_ROOT_TOOL}: ") if stderr else ""
        message = message or f"exit code {self._process.returncode}"
        raise TransitionToolError(f"{self.binary} over {self.base_alloc}: {message}")

    @staticmethod
    def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
        assert stream is not None, "the tool is started with all three pipes"
        return stream
