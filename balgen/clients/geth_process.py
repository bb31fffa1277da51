"""
A throwaway go-ethereum node to import fixtures into.

Each run gets its own temporary datadir, JWT secret and loopback ports, so
runs never share state and never reach beyond 127.0.0.1: discovery, NAT
traversal (geth's default `--nat any` probes the LAN gateway) and peers are
all off, and the p2p listener, which geth always opens on every interface,
accepts only loopback addresses. The node is stopped (`STOP_SIGNAL`, then
SIGKILL) and its datadir removed however the `with` block ends, Ctrl-C included:
geth runs in its own session, so the terminal's SIGINT reaches only Python,
which then stops geth in order. A stopped (SIGSTOP) node is continued so
that it can act on the signal. On Linux geth also gets SIGKILL from the
kernel if balgen dies without cleaning up (SIGKILL, a crash): no node
outlives the run that started it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, TypeVar

from ..errors import BadInput
from .engine_client import EngineClient, RpcClient, RpcError, RpcTransportError
from .jwt_auth import generate_jwt_secret_file

LOOPBACK = "127.0.0.1"

STATE_SCHEME = "path"
"""go-ethereum's default for new databases since v1.14, passed explicitly so
that `init` and the node agree even if the default changes."""

_BIND_CONFLICT_MARKER = "address already in use"
"""What geth logs when a port picked as free was taken before it bound it."""

_READY_POLL_INTERVAL = 0.05
_PROBE_TIMEOUT = 2.0

STOP_SIGNAL = signal.SIGINT
"""How balgen asks geth to stop. geth answers RPC before it installs its
SIGINT/SIGTERM handler (`utils.StartNode` does it after starting the
services), and a signal in between kills it on the spot without journaling
its state, so a `--cold` restart came back at genesis. geth is therefore
started with SIGINT ignored (Go keeps an inherited SIG_IGN for SIGINT until
the handler is installed): an early SIGINT does nothing, and balgen sends it
again until geth logs that it is shutting down."""
_STOP_ACKNOWLEDGED = b"Got interrupt, shutting down"
_STOP_SIGNAL_SENDS = 8
"""At most this many SIGINTs: after the first it handles, geth panics on the tenth more."""
_STOP_SIGNAL_INTERVAL = 0.5


_PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal the kernel sends a process when its parent dies."""


def _child_setup() -> Callable[[], None] | None:
    """
    A `preexec_fn` that makes the kernel SIGKILL the child when balgen dies
    and starts it with SIGINT ignored (see `STOP_SIGNAL`), on Linux; None
    elsewhere. libc's functions are looked up here, before the fork, so the
    child only makes the two system calls.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl, set_handler = libc.prctl, libc.signal
    except (OSError, AttributeError):
        return None
    set_handler.argtypes = [ctypes.c_int, ctypes.c_void_p]
    set_handler.restype = ctypes.c_void_p
    ignore = ctypes.c_void_p(int(signal.SIG_IGN))

    def set_up() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        set_handler(STOP_SIGNAL, ignore)

    return set_up


_PREEXEC = _child_setup()


class GethError(BadInput):
    """geth could not be initialised, started or reached; the message has its log tail."""


def free_loopback_ports(count: int) -> list[int]:
    """
    `count` distinct TCP ports that are free on 127.0.0.1 right now.

    All sockets stay bound until every port is known, so the kernel cannot
    hand out the same port twice; another process may still take one before
    geth binds it, which `GethProcess` detects and retries.
    """
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((LOOPBACK, 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def geth_environment() -> dict[str, str]:
    """
    The caller's environment without `GETH_*` variables.

    geth reads every flag from `GETH_<FLAG>` too, so a stray `GETH_DATADIR`
    or `GETH_SYNCMODE` in the user's shell would silently change the node.
    """
    return {key: value for key, value in os.environ.items() if not key.startswith("GETH_")}


def tail_of_file(path: Path, lines: int = 30) -> str:
    """The last `lines` lines of a log file, or a note that there is none."""
    try:
        with open(path, "rb") as stream:
            stream.seek(0, os.SEEK_END)
            size = stream.tell()
            stream.seek(max(0, size - 64 * 1024))
            text = stream.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return f"(no log at {path})"
    return "\n".join(text.splitlines()[-lines:])


def check_executable(geth_bin: Path) -> Path:
    """`geth_bin` as a path, or `BadInput` if it is not a runnable file."""
    path = Path(geth_bin)
    if not path.is_file():
        raise BadInput(f"geth binary {path}: does not exist")
    if not os.access(path, os.X_OK):
        raise BadInput(f"geth binary {path}: is not executable")
    return path


_T = TypeVar("_T")


def _started(value: _T | None) -> _T:
    """`value`, which only a started node has."""
    if value is None:
        raise RuntimeError("GethProcess is not started")
    return value


class GethProcess:
    """
    `geth init` of a genesis into a fresh datadir, then a running node.

    Use as a context manager; inside the block `rpc_url`, `engine_url` and
    `jwt_secret` are valid and `rpc_client()` / `engine_client()` give
    connected clients.
    """

    def __init__(
        self,
        geth_bin: Path,
        genesis_path: Path,
        *,
        extra_args: Sequence[str] = (),
        startup_timeout: float = 60.0,
        init_timeout: float = 600.0,
        stop_timeout: float = 10.0,
        bind_attempts: int = 3,
        temp_parent: Path | None = None,
        keep_datadir: bool = False,
    ) -> None:
        self.geth_bin = Path(geth_bin)
        self.genesis_path = Path(genesis_path)
        self.extra_args = list(extra_args)
        self.startup_timeout = startup_timeout
        self.init_timeout = init_timeout
        self.stop_timeout = stop_timeout
        self.bind_attempts = bind_attempts
        self.temp_parent = temp_parent
        self.keep_datadir = keep_datadir
        self._datadir: Path | None = None
        self._jwt_secret: bytes | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._ports: tuple[int, int] | None = None
        self.client_version: str | None = None
        self.returncode: int | None = None
        self._log_offset = 0

    # -- context manager -------------------------------------------------

    def __enter__(self) -> GethProcess:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- where things are ------------------------------------------------

    @property
    def datadir(self) -> Path:
        """The node's temporary datadir (also holds the secret and the logs)."""
        return _started(self._datadir)

    @property
    def jwt_secret_path(self) -> Path:
        """The secret file handed to `--authrpc.jwtsecret`."""
        return self.datadir / "jwtsecret.hex"

    @property
    def log_path(self) -> Path:
        """Where the running node's stdout and stderr go."""
        return self.datadir / "geth.log"

    @property
    def init_log_path(self) -> Path:
        """Where `geth init`'s output goes."""
        return self.datadir / "geth-init.log"

    @property
    def jwt_secret(self) -> bytes:
        """The Engine API secret generated for this node."""
        return _started(self._jwt_secret)

    @property
    def engine_url(self) -> str:
        """The authenticated Engine API endpoint."""
        return f"http://{LOOPBACK}:{self._bound_ports()[0]}"

    @property
    def rpc_url(self) -> str:
        """The plain HTTP JSON-RPC endpoint."""
        return f"http://{LOOPBACK}:{self._bound_ports()[1]}"

    @property
    def pid(self) -> int | None:
        """The node's process id while it runs."""
        return None if self._process is None else self._process.pid

    def is_running(self) -> bool:
        """Whether the node process is alive."""
        return self._process is not None and self._process.poll() is None

    def exit_code(self, wait: float = 0.0) -> int | None:
        """
        The node's exit code once it has ended (negative: the signal), else
        None; waits up to `wait` seconds for it to end (a killed node is
        reaped only once all its threads are gone).
        """
        process = self._process
        if process is None:
            return self.returncode
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=wait)
        return process.poll()

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of the node's log, for error messages."""
        return tail_of_file(self.log_path, lines)

    def rpc_client(self, timeout: float = 30.0) -> RpcClient:
        """A client for the HTTP endpoint; the caller closes it."""
        return RpcClient(self.rpc_url, timeout=timeout)

    def engine_client(self, timeout: float = 120.0) -> EngineClient:
        """A client for the Engine API with this node's secret; the caller closes it."""
        return EngineClient(self.engine_url, self.jwt_secret, timeout=timeout)

    def node_command(self) -> list[str]:
        """The command line of the node for the current ports."""
        engine_port, http_port = self._bound_ports()
        return [
            str(self.geth_bin),
            "--datadir", str(self.datadir),
            "--state.scheme", STATE_SCHEME,
            "--syncmode", "full",
            "--nodiscover",
            "--nat", "none",
            "--netrestrict", "127.0.0.0/8",
            "--maxpeers", "0",
            "--port", "0",
            "--authrpc.addr", LOOPBACK,
            "--authrpc.port", str(engine_port),
            "--authrpc.jwtsecret", str(self.jwt_secret_path),
            "--http",
            "--http.addr", LOOPBACK,
            "--http.port", str(http_port),
            "--http.api", "eth,debug,web3,net",
            "--ipcdisable",
            *self.extra_args,
        ]  # fmt: skip

    # -- lifecycle -------------------------------------------------------

    def _bound_ports(self) -> tuple[int, int]:
        if self._ports is None:
            raise RuntimeError("GethProcess is not started")
        return self._ports

    def _start(self) -> None:
        """Make the datadir and secret, run `geth init`, then start the node."""
        check_executable(self.geth_bin)
        if not self.genesis_path.is_file():
            raise BadInput(f"genesis file {self.genesis_path}: does not exist")
        self._datadir = Path(tempfile.mkdtemp(prefix="balgen-geth-", dir=self.temp_parent))
        self._jwt_secret = generate_jwt_secret_file(self.jwt_secret_path)
        self._init_datadir()
        self._run_node()

    def _run_node(self) -> None:
        """Start the node on free ports, retrying with new ones if a port was taken."""
        for attempt in range(1, self.bind_attempts + 1):
            self._ports = tuple(free_loopback_ports(2))  # type: ignore[assignment]
            self._spawn_node()
            if self._wait_until_ready(final_attempt=attempt == self.bind_attempts):
                return
            self._stop_node()

    def restart(self) -> None:
        """
        Stop the node and start it again on the same datadir.

        This empties every in-process cache (state, trie, code) while the
        chain stays: geth journals its in-memory state layers on a clean
        shutdown. The ports may change, so clients must be made anew.
        """
        self._stop_node()
        if self.returncode != 0:
            raise GethError(
                f"geth did not shut down cleanly (exit code {self.returncode}), so its "
                f"in-memory state is lost and it cannot be restarted on it:\n{self.log_tail()}"
            )
        self._run_node()

    def _init_datadir(self) -> None:
        """`geth init`: write the genesis block and state into the datadir."""
        command = [
            str(self.geth_bin),
            "init",
            "--datadir", str(self.datadir),
            "--state.scheme", STATE_SCHEME,
            str(self.genesis_path),
        ]  # fmt: skip
        with open(self.init_log_path, "wb") as log:
            try:
                completed = subprocess.run(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=geth_environment(),
                    timeout=self.init_timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise GethError(
                    f"geth init did not finish within {self.init_timeout:.0f} s:\n"
                    + tail_of_file(self.init_log_path)
                ) from None
            except OSError as error:  # executable bits on something that is no program
                raise GethError(f"geth binary {self.geth_bin}: cannot be run ({error.strerror or error})") from None
        if completed.returncode != 0:
            raise GethError(
                f"geth init of {self.genesis_path} failed with exit code "
                f"{completed.returncode}:\n" + tail_of_file(self.init_log_path)
            )

    def _spawn_node(self) -> None:
        """Start the node in its own session, its output appended to the log."""
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - open while geth runs
        self._log_offset = self._log.tell()
        try:
            self._process = subprocess.Popen(
                self.node_command(),
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                env=geth_environment(),
                start_new_session=True,
                preexec_fn=_PREEXEC,  # noqa: PLW1509 - one prctl call, resolved before the fork
            )
        except OSError as error:
            self._log.close()
            self._log = None
            raise GethError(f"geth binary {self.geth_bin}: cannot be run ({error.strerror or error})") from None

    def _wait_until_ready(self, *, final_attempt: bool) -> bool:
        """
        Poll `web3_clientVersion` until the node answers.

        Returns False if the node died because a port was taken (the caller
        retries with new ports); raises `GethError` with the log tail on any
        other death, on timeout, or if the Engine API rejects the secret.
        """
        deadline = time.monotonic() + self.startup_timeout
        with RpcClient(self.rpc_url, timeout=_PROBE_TIMEOUT) as rpc:
            while True:
                if not self.is_running():
                    if _BIND_CONFLICT_MARKER in self.log_tail(200) and not final_attempt:
                        return False
                    raise GethError(
                        f"geth exited with code {self._process_returncode()} before "
                        f"answering on {self.rpc_url}:\n{self.log_tail()}"
                    )
                try:
                    self.client_version = rpc.client_version().result
                    break
                except (RpcTransportError, RpcError):
                    pass
                if time.monotonic() >= deadline:
                    raise GethError(
                        f"geth did not answer web3_clientVersion on {self.rpc_url} within "
                        f"{self.startup_timeout:.0f} s:\n{self.log_tail()}"
                    )
                time.sleep(_READY_POLL_INTERVAL)
        self._check_engine_endpoint()
        return True

    def _check_engine_endpoint(self) -> None:
        """One authenticated call, so a JWT or port problem shows up now, not mid-import."""
        with EngineClient(self.engine_url, self.jwt_secret, timeout=_PROBE_TIMEOUT) as engine:
            try:
                engine.call("engine_exchangeCapabilities", [[]])
            except (RpcTransportError, RpcError) as error:
                raise GethError(
                    f"geth's Engine API at {self.engine_url} is not usable: {error}\n"
                    + self.log_tail()
                ) from error

    def _process_returncode(self) -> int | None:
        return None if self._process is None else self._process.poll()

    def _stop_node(self) -> None:
        """`STOP_SIGNAL` until acknowledged, wait up to `stop_timeout`, then SIGKILL; always reaps the process."""
        process = self._process
        if process is None:
            return
        try:
            if process.poll() is None:
                self._ask_to_stop(process)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=self.stop_timeout)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            self.returncode = process.returncode
            self._process = None
            if self._log is not None:
                self._log.close()
                self._log = None

    def _ask_to_stop(self, process: subprocess.Popen[bytes]) -> None:
        """Send `STOP_SIGNAL` until geth exits or logs that it is shutting down (it ignores it before)."""
        for _ in range(_STOP_SIGNAL_SENDS):
            process.send_signal(STOP_SIGNAL)
            process.send_signal(signal.SIGCONT)  # a stopped node acts on the signal only once continued
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=_STOP_SIGNAL_INTERVAL)
                return
            if _STOP_ACKNOWLEDGED in self._log_since_spawn():
                return

    def _log_since_spawn(self) -> bytes:
        """What the running node has logged (the log file is shared by its restarts)."""
        with open(self.log_path, "rb") as log:
            log.seek(self._log_offset)
            return log.read()

    def close(self) -> None:
        """Stop the node if it runs and remove the datadir (unless kept)."""
        try:
            self._stop_node()
        finally:
            if self._datadir is not None and not self.keep_datadir:
                shutil.rmtree(self._datadir, ignore_errors=True)
