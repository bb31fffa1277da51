"""
The two EVMs' blockchain-test runners, run on one fixture file, read back per test.

`evm blocktest FILE` prints a JSON list of `{name, pass, error}`. `revme
blockchaintest FILE` prints `Running: NAME` before each test and stops the file
at the first failing one, naming it in its error (`Test execution failed for
NAME in FILE: ...`); a file it cannot decode fails as a whole with serde's
`at line L column C`, which is translated here into the field on that line.
Both run side by side on the machine's two cores, each in its own process
group (`plumbing.processes`), within a deadline that grows with the file.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from ..plumbing import processes
from ..plumbing.go_tools import go_tool_environment
from .outcomes import Outcome, Verifier, last_line

_REVME_TEST_FAILED = re.compile(r"Test execution failed for (?P<name>.+?) in .+?: (?P<error>.*)$", re.S)
_SERDE_LOCATION = re.compile(r"at line (?P<line>\d+) column (?P<column>\d+)")
_JSON_KEY = re.compile(r'"(?P<key>[^"]+)"\s*:')


VERIFIER_BASE_SECONDS = 120.0
VERIFIER_SECONDS_PER_MB = 2.0
"""A file's deadline grows with its size, which grows with its blocks' gas and transactions: both
runners go through a 1M fixture in well under a second, so only a runner that hangs meets it."""


def verifier_deadline(file_bytes: int) -> float:
    """Seconds both runners together may take over a fixture file of `file_bytes`."""
    return VERIFIER_BASE_SECONDS + VERIFIER_SECONDS_PER_MB * file_bytes / 1e6


class RunningVerifiers:
    """
    geth's and revm's runs of one file, started together (each in its own
    process group) and read back when both are done or their deadline has
    passed; use as a context manager, which stops whatever still runs.
    """

    def __init__(self, evm: Path | None, revme: Path | None, path: Path, selected: Sequence[str]) -> None:
        self.path = path
        self.selected = list(selected)
        self.deadline = verifier_deadline(path.stat().st_size)
        self._ends = time.monotonic() + self.deadline
        run = "^(" + "|".join(re.escape(name) for name in selected) + ")$"
        self._geth: subprocess.Popen[str] | None = None
        self._revm: subprocess.Popen[str] | None = None
        try:
            self._geth = (
                None if evm is None else _start([str(evm), "blocktest", "--run", run, str(path)], go_tool_environment())
            )
            self._revm = None if revme is None else _start([str(revme), "blockchaintest", str(path)])
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> RunningVerifiers:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop both runners' process groups (nothing is left of a runner that has finished)."""
        for process in (self._geth, self._revm):
            if process is not None:
                processes.stop_group(process)
                for stream in (process.stdout, process.stderr):
                    if stream is not None:
                        stream.close()

    def outcomes(self) -> list[Outcome]:
        """One outcome per selected test per verifier that ran."""
        outcomes = []
        if self._geth is not None:
            out, err, code = self._finish(self._geth, "evm blocktest")
            outcomes += geth_outcomes(self.path, self.selected, out, err, code)
        if self._revm is not None:
            out, err, code = self._finish(self._revm, "revme blockchaintest")
            outcomes += revm_outcomes(self.path, self.selected, out, err, code)
        return outcomes

    def _finish(self, process: subprocess.Popen[str], name: str) -> tuple[str, str, int]:
        """A runner's output and exit code; past the deadline it is stopped and its error says so."""
        try:
            out, err = process.communicate(timeout=max(0.0, self._ends - time.monotonic()))
        except subprocess.TimeoutExpired:
            processes.stop_group(process)
            message = f"{name} did not finish within {self.deadline:.0f} s (the deadline for a file of this size); stopped"
            return "", message, DEADLINE_EXIT_CODE
        return out, err, process.returncode


DEADLINE_EXIT_CODE = -int(signal.SIGKILL)
"""The exit code a runner stopped at its deadline is reported with."""


def _start(command: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return processes.start(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def geth_outcomes(path: Path, selected: Sequence[str], stdout: str, stderr: str, code: int) -> list[Outcome]:
    """`evm blocktest`'s verdict on each selected test of `path`."""
    try:
        reports = {entry["name"]: entry for entry in json.loads(stdout)} if code == 0 else {}
    except (json.JSONDecodeError, TypeError, KeyError):
        reports = {}
    whole_file = None if reports else f"evm blocktest failed on the file (exit {code}): {last_line(stderr or stdout)}"
    outcomes = []
    for name in selected:
        report = reports.get(name)
        if report is None:
            difference = whole_file or "evm blocktest did not report this test"
        else:
            difference = None if report.get("pass") else str(report.get("error") or "failed without a reason")
        outcomes.append(Outcome(Verifier.GETH, name, path, difference))
    return outcomes


def revm_outcomes(path: Path, selected: Sequence[str], stdout: str, stderr: str, code: int) -> list[Outcome]:
    """`revme blockchaintest`'s verdict on each selected test of `path`."""
    started = [line.split("Running:", 1)[1].strip() for line in stdout.splitlines() if "Running:" in line]
    error = _revme_error(stderr or stdout) if code != 0 else None
    failed_test, failure = None, None
    if error is not None:
        match = _REVME_TEST_FAILED.search(error)
        if match:
            failed_test, failure = match["name"], match["error"].strip()
        else:
            failure = field_of_decode_error(path, error)
    outcomes = []
    for name in selected:
        if error is None and name in started:
            difference = None
        elif failed_test is None:
            difference = failure or f"revme did not run this test (exit {code})"
        elif name == failed_test:
            difference = failure
        elif name in started and started.index(name) < started.index(failed_test):
            difference = None
        else:
            difference = f"not run: revme stops a file at its first failing test ({failed_test})"
        outcomes.append(Outcome(Verifier.REVM, name, path, difference))
    return outcomes


def _revme_error(text: str) -> str:
    """The error of a failed file: its `✗ (i/n) FILE - ERROR` line, or the output's last line."""
    for line in text.splitlines():
        if line.startswith("✗") and " - " in line:
            return line.split(" - ", 1)[1].strip()
    return last_line(text)


def field_of_decode_error(path: Path, error: str) -> str:
    """serde's decode error with the JSON field on its line named (`invalid string length`
    at line 2420 says little; `field "to"` does)."""
    match = _SERDE_LOCATION.search(error)
    if not match:
        return error
    line_number = int(match["line"])
    with path.open(encoding="utf-8", errors="replace") as stream:
        line = next((text for number, text in enumerate(stream, 1) if number == line_number), "")
    key = _JSON_KEY.search(line)
    if key is None:
        return error
    return f'field "{key["key"]}" ({line.strip()[:80]}): {error}'
