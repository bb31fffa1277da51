"""`balgen` commands run in the test process, for tests that judge only a command's exit code and output."""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from balgen.commands.main import main as balgen_main


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    """`os.environ` replaced by `env` (when given) for the duration, as a subprocess's `env=` would."""
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _working_directory(cwd: Path | None) -> Iterator[None]:
    """The process's working directory moved to `cwd` (when given) for the duration."""
    if cwd is None:
        yield
        return
    saved = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved)


@contextlib.contextmanager
def _captured(stdout: io.StringIO, stderr: io.StringIO) -> Iterator[tuple[tempfile._TemporaryFileWrapper[bytes], ...]]:
    """
    What the command prints, Python's streams and file descriptors 1 and 2
    both: a tool the command starts writes to the descriptors, and a test of
    "one line on stderr" must see those lines as it would from a subprocess.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        saved = os.dup(1), os.dup(2)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                yield out, err
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def balgen_in_process(
    *argv: str | Path, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """
    `balgen ARGV` run by this process, its exit code and what it printed, as
    `subprocess.run(..., capture_output=True, text=True)` would give them: a
    subprocess spends about a CPU-second importing what this process has
    imported. Not for tests of signals, process groups or what a process
    inherits (those need their own process); `env` replaces the environment
    and `cwd` the working directory while the command runs.
    """
    arguments = [str(argument) for argument in argv]
    stdout, stderr = io.StringIO(), io.StringIO()
    with _environment(env), _working_directory(cwd), _captured(stdout, stderr) as (out, err):
        code = balgen_main(arguments)
        sys.stdout.flush()
        sys.stderr.flush()
        out.seek(0)
        err.seek(0)
        printed = stdout.getvalue() + out.read().decode(errors="replace")
        complained = stderr.getvalue() + err.read().decode(errors="replace")
    return subprocess.CompletedProcess(["balgen", *arguments], code, printed, complained)


def balgen_forked(
    *argv: str | Path, env: Mapping[str, str] | None = None, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """
    `balgen ARGV` run by a fork of this process, as `balgen_in_process` runs
    it: a process of its own, so an input that would hang or exhaust the
    process that reads it (a FIFO, /dev/zero) stalls only the fork, which is
    killed at `timeout` (the test then fails, as `subprocess.run`'s timeout
    would fail it), without the second of imports a new interpreter pays.
    Not for tests of signals or of what a new process inherits; what balgen
    inherits here is this process's imports, environment (or `env`) and
    working directory (or `cwd`), and the temporary folder TMPDIR names.
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the fork: run the command, send the outcome, exit without the test process's clean-up
        status = 70
        try:
            gc.freeze()  # the test process's heap is read here, never freed: the collector need not walk (and copy) it
            os.close(read_end)
            tempfile.tempdir = None  # found again from TMPDIR (in `env`), as a new process finds it
            completed = balgen_in_process(*argv, env=env, cwd=cwd)
            with os.fdopen(write_end, "w", encoding="utf-8", errors="surrogateescape") as pipe:
                json.dump([completed.returncode, completed.stdout, completed.stderr], pipe)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    outcome: str | None = None
    try:
        with os.fdopen(read_end, encoding="utf-8", errors="surrogateescape") as pipe:
            readable, _, _ = select.select([pipe], [], [], timeout)
            outcome = pipe.read() if readable else None
        if outcome is None:
            raise subprocess.TimeoutExpired(["balgen", *map(str, argv)], timeout)
    finally:
        if outcome is None:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert outcome, f"the fork running balgen {' '.join(map(str, argv))} ended without an outcome"
    code, printed, complained = json.loads(outcome)
    return subprocess.CompletedProcess(["balgen", *map(str, argv)], code, printed, complained)
