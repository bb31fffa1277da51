"""
State roots of one large allocation with a few accounts replaced, from go-ethereum's trie.

An applied chain (`applied_chain`) needs, for each block, the root of the
shared group genesis (tens of thousands of accounts) with the accounts the
chain has changed so far replaced. t8n would load and hash the whole group
for every block, seconds each; `balgen-state-root` (scripts/state_root,
built by scripts/install-tools.sh from the pinned go-ethereum's source)
loads it once, keeps its trie, and rehashes only the replaced accounts' paths
for each question. One process answers one base allocation.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import IO

from ..plumbing.errors import TransitionToolError
from ..plumbing.toolchain import required_tool

STATE_ROOT_TOOL = "balgen-state-root"


def state_root_tool() -> Path:
    """The `balgen-state-root` binary on balgen's tool search path."""
    return required_tool(STATE_ROOT_TOOL, "build it with scripts/install-tools.sh")


class StateRoots:
    """A running `balgen-state-root` over the allocation in `base_alloc`."""

    def __init__(self, binary: Path, base_alloc: Path) -> None:
        self.binary = binary
        self.base_alloc = base_alloc
        try:
            self._process = subprocess.Popen(
                [str(binary), str(base_alloc)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        except OSError as error:
            raise TransitionToolError(f"cannot run {binary}: {error.strerror}") from None
        self.base_root = self._answer()
        """The state root of the base allocation itself."""

    def with_accounts(self, replacements: Path) -> bytes:
        """The state root of the base with the accounts of the allocation in `replacements` (null: absent) replaced."""
        stdin = self._pipe(self._process.stdin)
        try:
            stdin.write(f"{replacements}\n")
            stdin.flush()
        except BrokenPipeError:
            pass  # it has stopped: `_answer` says why
        return self._answer()

    def close(self) -> None:
        """Stop the tool (it ends when its input does)."""
        if self._process.poll() is None:
            self._pipe(self._process.stdin).close()
            self._process.wait()
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                stream.close()

    def _answer(self) -> bytes:
        """The next root the tool prints, or the error it stopped with."""
        line = self._pipe(self._process.stdout).readline().strip()
        if line.startswith("0x") and len(line) == 66:
            return bytes.fromhex(line[2:])
        self._process.wait()
        message = self._pipe(self._process.stderr).read().strip().removeprefix(f"{STATE_ROOT_TOOL}: ")
        message = message or f"exit code {self._process.returncode}"
        raise TransitionToolError(f"{self.binary} over {self.base_alloc}: {message}")

    @staticmethod
    def _pipe(stream: IO[str] | None) -> IO[str]:
        assert stream is not None, "the tool is started with all three pipes"
        return stream
