"""
Running go-ethereum's `evm t8n`, the reference state transition tool.

Allocations go to and from t8n as files and are never parsed here unless a
caller asks, so a large pre-state costs disk, not memory. Every call's wall
time is summed so fills can report how much of their time t8n takes.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BadInput, TransitionToolError
from ..forks import Fork


@dataclass(frozen=True)
class T8nResult:
    """What one `evm t8n` call returned."""

    result: dict[str, Any]
    alloc_path: Path
    """The post-state allocation file t8n wrote."""

    @property
    def state_root(self) -> bytes:
        return _bytes(self.result["stateRoot"])

    @property
    def gas_used(self) -> int:
        return int(self.result["gasUsed"], 16)

    @property
    def receipts(self) -> list[dict[str, Any]]:
        return self.result.get("receipts") or []

    @property
    def rejected(self) -> list[dict[str, Any]]:
        return self.result.get("rejected") or []

    @property
    def block_access_list(self) -> bytes | None:
        raw = self.result.get("blockAccessList")
        return _bytes(raw) if raw is not None else None

    @property
    def requests(self) -> list[bytes]:
        return [_bytes(r) for r in self.result.get("requests") or []]


def _bytes(value: str) -> bytes:
    return bytes.fromhex(value[2:] if value.startswith("0x") else value)


@dataclass
class TransitionTool:
    """A t8n binary, with the time spent inside it counted."""

    binary: Path
    busy_seconds: float = 0.0
    calls: int = 0
    _version: str | None = field(default=None, repr=False)

    def version(self) -> str:
        """The binary's `--version` line; also proves the binary runs at all."""
        if self._version is None:
            self._version = probe_version(self.binary)
        return self._version

    def transition(
        self,
        fork: Fork,
        alloc_path: Path,
        env: dict[str, Any],
        txs_rlp: bytes,
        workdir: Path,
        *,
        label: str,
    ) -> T8nResult:
        """Apply one block's transactions to the state in `alloc_path`."""
        return self.transition_raw(fork.name, alloc_path, env, txs_rlp, workdir, label=label)

    def transition_raw(
        self,
        fork_name: str,
        alloc_path: Path,
        env: dict[str, Any],
        txs_rlp: bytes,
        workdir: Path,
        *,
        label: str,
    ) -> T8nResult:
        """`transition` under any fork name t8n knows, balgen's forks or not."""
        workdir.mkdir(parents=True, exist_ok=True)
        env_path = workdir / "env.json"
        txs_path = workdir / "txs.rlp"
        env_path.write_text(json.dumps(env))
        txs_path.write_text(json.dumps("0x" + txs_rlp.hex()))
        command = [
            str(self.binary),
            "t8n",
            f"--state.fork={fork_name}",
            f"--input.alloc={alloc_path}",
            f"--input.env={env_path}",
            f"--input.txs={txs_path}",
            f"--output.basedir={workdir}",
            "--output.result=result.json",
            "--output.alloc=alloc.json",
            "--output.body=body.rlp",
        ]
        started = time.perf_counter()
        try:
            completed = subprocess.run(command, capture_output=True, text=True, check=False)
        except OSError as error:
            raise TransitionToolError(f"{label}: cannot run t8n {self.binary}: {error.strerror}") from None
        finally:
            self.busy_seconds += time.perf_counter() - started
            self.calls += 1
        if completed.returncode != 0:
            raise TransitionToolError(
                f"{label}: t8n {_exit_description(completed.returncode)}: {_last_line(completed.stderr)}"
            )
        try:
            result = json.loads((workdir / "result.json").read_text())
        except (OSError, ValueError) as error:
            raise TransitionToolError(f"{label}: t8n wrote no readable result.json: {error}") from None
        return T8nResult(result=result, alloc_path=workdir / "alloc.json")


def probe_version(binary: Path) -> str:
    """Run `binary --version`; a binary that is missing or fails it is bad input."""
    if not binary.exists():
        raise BadInput(f"--evm-bin: t8n binary not found: {binary}")
    if not os.access(binary, os.X_OK):
        raise BadInput(f"--evm-bin: t8n binary is not executable: {binary}")
    try:
        completed = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BadInput(f"--evm-bin: cannot run {binary}: {error}") from None
    if completed.returncode != 0 or not completed.stdout.strip():
        raise BadInput(
            f"--evm-bin: {binary} --version {_exit_description(completed.returncode)}: "
            f"{_last_line(completed.stderr or completed.stdout)}"
        )
    return completed.stdout.strip().splitlines()[0]


def _exit_description(code: int) -> str:
    return f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"
