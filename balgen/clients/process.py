"""
A throwaway execution client, started from a preset, to replay fixtures into.

Each node gets its own temporary folder (the client's datadir, the JWT
secret, the logs, datadir copies), generated secret and free loopback
ports: runs never share state and never reach beyond 127.0.0.1 (every
preset turns discovery, NAT probing and peers off). The node runs in its
own session and process group (`plumbing.processes`), so the terminal's
Ctrl-C reaches only balgen, which then stops the whole group in order:
SIGINT (re-sent until acknowledged for clients that ignore an early one,
see `ClientPreset.ignores_early_sigint`), SIGKILL after `stop_timeout`; a
`--client-bin` that is a wrapper script stops with the binary it runs. On
Linux the kernel also SIGKILLs the node's first process if balgen dies
without cleaning up. The folder is removed however the `with` block ends.

`save_copy` / `restore_copy` are the universal rollback: stop the node, copy
its datadir (or put a copy back), start it again on the same ports. Every
client's chain is then exactly what it was when the copy was taken,
whatever its RPC offers; the replay verifies the head after each restore.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import httpx

from ..plumbing import processes
from ..plumbing.errors import BadInput
from .presets import CONFIG_FILE_NAME, CONFIG_PLACEHOLDER, ClientPreset, render_command
from .engine_client import ENGINE_TIMEOUT, EngineClient, RpcClient, RpcError, RpcTransportError
from .initialised_datadirs import INITIALISED, init_key
from .jwt_auth import generate_jwt_secret_file
from .start_work import Settled, wait_until_idle

LOOPBACK = "127.0.0.1"

_BIND_CONFLICT = "address already in use"
"""What geth and reth log (in some capitalisation) when a port picked as free was taken first."""
_READY_POLL_INTERVAL = 0.05
_PROBE_TIMEOUT = 2.0
_STOP_SIGNAL_INTERVAL = 0.5


def free_loopback_ports(count: int) -> list[int]:
    """
    `count` distinct TCP ports that are free on 127.0.0.1 right now.

    All sockets stay bound until every port is known, so the kernel cannot
    hand out the same port twice; another process may still take one before
    the client binds it, which `ClientProcess` detects and retries.
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


def copy_sparse_file(source: Path, target: Path) -> None:
    """
    Copy a file's data regions only, leaving its holes as holes: a client's
    database is often a large sparse file (reth's MDBX file is 4 GiB of
    mostly holes), which a plain copy would read and write in full.
    """
    with open(source, "rb") as reader, open(target, "wb") as writer:
        size = os.fstat(reader.fileno()).st_size
        offset = 0
        while offset < size:
            try:
                start = os.lseek(reader.fileno(), offset, os.SEEK_DATA)
            except OSError:  # ENXIO: only a hole is left
                break
            end = os.lseek(reader.fileno(), start, os.SEEK_HOLE)
            reader.seek(start)
            writer.seek(start)
            remaining = end - start
            while remaining:
                chunk = reader.read(min(remaining, 1 << 20))
                writer.write(chunk)
                remaining -= len(chunk)
            offset = end
        writer.truncate(size)
    shutil.copystat(source, target)


def copy_datadir(source: Path, target: Path, linkable: Sequence[str] = ()) -> None:
    """
    A datadir copied file by file with `copy_sparse_file`, but a file whose
    name matches one of `linkable` (files the client writes once and never
    changes, such as pebble's `*.sst`) hard-linked where the file system
    allows: a built background state of gigabytes is shared by every copy.
    """

    def copy(from_path: str, to_path: str) -> None:
        if any(fnmatch.fnmatch(Path(from_path).name, pattern) for pattern in linkable):
            try:
                os.link(from_path, to_path)
                return
            except OSError:
                pass  # another file system: copied
        copy_sparse_file(Path(from_path), Path(to_path))

    shutil.copytree(source, target, symlinks=True, copy_function=copy)


class UncleanStop(Exception):
    """The node exited with an error or was killed when asked to stop (`ClientProcess.returncode`)."""


class ClientError(BadInput):
    """The client could not be initialised, started or reached; the message has its log tail."""


def check_executable(binary: Path, what: str = "client binary") -> Path:
    """`binary` as a path, or `BadInput` if it is not a runnable file."""
    path = Path(binary)
    if not path.is_file():
        raise BadInput(f"{what} {path}: does not exist")
    if not os.access(path, os.X_OK):
        raise BadInput(f"{what} {path}: is not executable")
    return path


class ClientProcess:
    """
    A fresh datadir for `genesis_path`, initialised if the preset says how,
    then a running node. Use as a context manager; inside the block
    `rpc_url`, `engine_url` and `jwt_secret` are valid.
    """

    def __init__(
        self,
        preset: ClientPreset,
        binary: Path,
        genesis_path: Path,
        *,
        extra_args: Sequence[str] = (),
        startup_timeout: float = 120.0,
        init_timeout: float = 600.0,
        stop_timeout: float = 60.0,
        bind_attempts: int = 3,
        temp_parent: Path | None = None,
        prepared_datadir: Path | None = None,
        linkable: Sequence[str] = (),
        settle_limit: float = 0.0,
    ) -> None:
        self.preset = preset
        self.binary = Path(binary)
        self.genesis_path = Path(genesis_path)
        self.extra_args = list(extra_args)
        self.startup_timeout = startup_timeout
        self.init_timeout = init_timeout
        self.stop_timeout = stop_timeout
        """Long, because a killed node loses what it keeps in memory, which a datadir copy needs: an
        unoptimised reth on a loaded 2-core machine was seen to take over 20 s to stop."""
        self.bind_attempts = bind_attempts
        self.temp_parent = temp_parent
        self.prepared_datadir = prepared_datadir
        """A datadir already holding the genesis (a built background state): copied, its `linkable`
        files hard-linked, instead of running the preset's init."""
        self.linkable = tuple(linkable)
        self.settle_limit = settle_limit
        """Seconds to wait at most, after each start and restart, for the node's own start-up work to end
        (`start_work`); 0 does not wait."""
        self.settled: list[Settled] = []
        """How each start's wait ended, in order."""
        self.client_version: str | None = None
        self.returncode: int | None = None
        self._root: Path | None = None
        self._jwt_secret: bytes | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._ports: tuple[int, int, int] | None = None
        self._log_offset = 0
        self._copies: dict[str, Path] = {}

    # -- context manager -------------------------------------------------

    def __enter__(self) -> ClientProcess:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    # -- where things are ------------------------------------------------

    @property
    def root(self) -> Path:
        """The node's temporary folder."""
        if self._root is None:
            raise RuntimeError("the client is not started")
        return self._root

    @property
    def datadir(self) -> Path:
        """The client's own data directory, inside `root`."""
        return self.root / "data"

    @property
    def jwt_secret_path(self) -> Path:
        return self.root / "jwtsecret.hex"

    @property
    def config_path(self) -> Path:
        """The preset's config file (`ClientPreset.config_file`), inside `root`."""
        return self.root / CONFIG_FILE_NAME

    @property
    def log_path(self) -> Path:
        """The node's stdout and stderr, across restarts."""
        return self.root / f"{self.preset.name}.log"

    @property
    def jwt_secret(self) -> bytes:
        if self._jwt_secret is None:
            raise RuntimeError("the client is not started")
        return self._jwt_secret

    def _bound_ports(self) -> tuple[int, int, int]:
        if self._ports is None:
            raise RuntimeError("the client is not started")
        return self._ports

    @property
    def engine_url(self) -> str:
        return f"http://{LOOPBACK}:{self._bound_ports()[0]}"

    @property
    def rpc_url(self) -> str:
        return f"http://{LOOPBACK}:{self._bound_ports()[1]}"

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def exit_code(self, wait: float = 0.0) -> int | None:
        """The node's exit code once it has ended, else None; waits up to `wait` s."""
        process = self._process
        if process is None:
            return self.returncode
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=wait)
        return process.poll()

    def log_tail(self, lines: int = 30) -> str:
        return tail_of_file(self.log_path, lines)

    def rpc_client(self, timeout: float = 30.0) -> RpcClient:
        return RpcClient(self.rpc_url, timeout=timeout)

    def engine_client(self, timeout: float = ENGINE_TIMEOUT) -> EngineClient:
        return EngineClient(self.engine_url, self.jwt_secret, timeout=timeout)

    def _placeholders(self) -> dict[str, str]:
        engine_port, rpc_port, p2p_port = self._ports or (0, 0, 0)
        values = {
            "bin": str(self.binary),
            "genesis": str(self.genesis_path),
            "datadir": str(self.datadir),
            "engine_port": str(engine_port),
            "rpc_port": str(rpc_port),
            "p2p_port": str(p2p_port),
            "jwt": str(self.jwt_secret_path),
        }
        if self.preset.config_file is not None:
            values[CONFIG_PLACEHOLDER] = str(self.config_path)
        return values

    def node_command(self) -> list[str]:
        """The node's command line for the current ports."""
        return render_command(self.preset.node_command, self._placeholders()) + self.extra_args

    def _environment(self) -> dict[str, str]:
        """The caller's environment without the variables the client reads its flags from."""
        prefix = self.preset.env_prefix
        return {key: value for key, value in os.environ.items() if not (prefix and key.startswith(prefix))}

    # -- lifecycle -------------------------------------------------------

    def _start(self) -> None:
        check_executable(self.binary, f"{self.preset.name} binary")
        if not self.genesis_path.is_file():
            raise BadInput(f"genesis file {self.genesis_path}: does not exist")
        self._root = Path(tempfile.mkdtemp(prefix=f"balgen-{self.preset.name}-", dir=self.temp_parent))
        if self.prepared_datadir is None:
            self.datadir.mkdir()
        else:
            copy_datadir(self.prepared_datadir, self.datadir, self.linkable)
        self._jwt_secret = generate_jwt_secret_file(self.jwt_secret_path)
        if self.preset.config_file is not None:
            self.config_path.write_text(self.preset.config_file)
        if self.prepared_datadir is None:
            self._init_datadir()
        self._run_node()

    def _init_datadir(self) -> None:
        """
        The preset's init command (e.g. `geth init`), if it has one; for a preset whose init output does
        not depend on where it is written (`ClientPreset.init_relocatable`), the files of this process's
        earlier init of the same binary and genesis instead, if it has run one (`initialised_datadirs`).
        """
        if self.preset.init_command is None:
            return
        key = init_key(self.preset.init_command, self.binary, self.genesis_path) if self.preset.init_relocatable else None
        if key is not None and INITIALISED.put_into(key, self.datadir):
            return
        self._run_init(self.preset.init_command)
        if key is not None:
            INITIALISED.keep(key, self.datadir)

    def _run_init(self, init_command: str) -> None:
        """The init command run on the fresh datadir; `ClientError` with its log's end if it fails."""
        command = render_command(init_command, self._placeholders())
        init_log = self.root / f"{self.preset.name}-init.log"
        with open(init_log, "wb") as log:
            try:
                completed = processes.run(
                    command, stdout=log, stderr=subprocess.STDOUT, env=self._environment(), deadline=self.init_timeout
                )
            except processes.DeadlineExceeded:
                raise ClientError(
                    f"{self.preset.name} init did not finish within {self.init_timeout:.0f} s:\n{tail_of_file(init_log)}"
                ) from None
            except OSError as error:
                raise ClientError(f"{self.preset.name} binary {self.binary}: cannot be run ({error.strerror or error})") from None
        if completed.returncode != 0:
            raise ClientError(
                f"{self.preset.name} init of {self.genesis_path} failed with exit code "
                f"{completed.returncode}:\n{tail_of_file(init_log)}"
            )

    def _run_node(self, *, keep_ports: bool = False) -> None:
        """Start the node, on new free ports unless `keep_ports`; retry if a port was taken."""
        for attempt in range(1, self.bind_attempts + 1):
            if not keep_ports or self._ports is None:
                self._ports = tuple(free_loopback_ports(3))  # type: ignore[assignment]
            self._spawn_node()
            if self._wait_until_ready(final_attempt=attempt == self.bind_attempts):
                self._wait_until_idle()
                return
            self._stop_node()
            keep_ports = False

    def _spawn_node(self) -> None:
        with open(self.log_path, "ab") as log:
            self._log_offset = log.tell()
            try:
                self._process = processes.start(
                    self.node_command(),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=self._environment(),
                    ignore_sigint=self.preset.ignores_early_sigint,
                )
            except OSError as error:
                raise ClientError(f"{self.preset.name} binary {self.binary}: cannot be run ({error.strerror or error})") from None

    def _wait_until_ready(self, *, final_attempt: bool) -> bool:
        """
        Poll `web3_clientVersion` until the node answers; False if it died
        because a port was taken (the caller retries), `ClientError` with
        the log tail on any other death, on timeout, or a refused secret.
        """
        deadline = time.monotonic() + self.startup_timeout
        name = self.preset.name
        with RpcClient(self.rpc_url, timeout=_PROBE_TIMEOUT) as rpc:
            while True:
                if not self.is_running():
                    if _BIND_CONFLICT in self.log_tail(200).lower() and not final_attempt:
                        return False
                    raise ClientError(
                        f"{name} exited with code {self.exit_code()} before answering on {self.rpc_url}:\n{self.log_tail()}"
                    )
                try:
                    self.client_version = str(rpc.client_version().result)
                    break
                except (RpcTransportError, RpcError):
                    pass
                if time.monotonic() >= deadline:
                    raise ClientError(
                        f"{name} did not answer web3_clientVersion on {self.rpc_url} within "
                        f"{self.startup_timeout:.0f} s:\n{self.log_tail()}"
                    )
                time.sleep(_READY_POLL_INTERVAL)
        self._wait_for_engine_api(deadline)
        return True

    def _wait_until_idle(self) -> None:
        """Let the node finish its start-up work (`start_work`) before anything is sent and timed."""
        if self.settle_limit <= 0 or self.pid is None:
            return
        settled = wait_until_idle(self.pid, self.settle_limit)
        self.settled.append(settled)
        if not settled.idle:
            print(
                f"balgen: {self.preset.name} still used {settled.last_share:.0%} of a core {settled.seconds:.0f} s "
                "after it started (--settle-limit); timing it anyway",
                file=sys.stderr,
            )

    def _wait_for_engine_api(self, deadline: float) -> None:
        """
        One authenticated call, so a JWT or port problem shows up now; it is
        retried while the port refuses connections (reth opens its Engine API
        after its HTTP server).
        """
        with EngineClient(self.engine_url, self.jwt_secret, timeout=_PROBE_TIMEOUT) as engine:
            while True:
                try:
                    engine.call("engine_exchangeCapabilities", [[]])
                    return
                except RpcTransportError as error:
                    refused = isinstance(error.__cause__, httpx.ConnectError)
                    if not refused or time.monotonic() >= deadline or not self.is_running():
                        problem = error
                        break
                except RpcError as error:
                    problem = error
                    break
                time.sleep(_READY_POLL_INTERVAL)
        raise ClientError(f"{self.preset.name}'s Engine API at {self.engine_url} is not usable: {problem}\n{self.log_tail()}")

    def _stop_node(self) -> None:
        """
        SIGINT to the node's process group (until acknowledged where the
        preset needs it), wait, then SIGKILL; what the group holds once the
        node has exited (a wrapper script's other children) is stopped too.
        Always reaps.
        """
        process = self._process
        if process is None:
            return
        try:
            if process.poll() is None:
                self._ask_to_stop(process)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=self.stop_timeout)
        finally:
            # Past its stop timeout the node is killed; after it exited, what its group holds is asked first.
            leftover_signal = signal.SIGKILL if process.poll() is None else signal.SIGTERM
            self.returncode = processes.stop_group(process, signum=leftover_signal)
            self._process = None

    def _ask_to_stop(self, process: subprocess.Popen[bytes]) -> None:
        """
        SIGINT; for a client started with SIGINT ignored, re-sent every
        half second until it exits or logs that it is stopping (under load
        geth installs its handler seconds after it answers RPC), for at most
        `stop_timeout`. One SIGINT after the handled one is at most sent.
        """
        deadline = time.monotonic() + self.stop_timeout
        while True:
            processes.signal_group(process, signal.SIGINT)  # the whole group: a wrapper script's binary too
            processes.signal_group(process, signal.SIGCONT)  # a stopped node acts on the signal only once continued
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=_STOP_SIGNAL_INTERVAL)
                return
            acknowledged = self.preset.stop_acknowledged
            if acknowledged is None or acknowledged in self._log_since_spawn() or time.monotonic() >= deadline:
                return

    def _log_since_spawn(self) -> bytes:
        with open(self.log_path, "rb") as log:
            log.seek(self._log_offset)
            return log.read()

    def restart(self) -> int:
        """
        Stop the node and start it again on the same datadir and ports, so
        that its in-process caches are empty while its chain stays (the
        replay verifies the head afterwards); the node's exit code. A node
        that did not stop cleanly is refused (`ClientError`), unless its
        preset says an unclean stop shows in its head
        (`ClientPreset.unclean_stop_checked_by_head`): it is started again
        and the caller's head check decides.
        """
        self._stop_node()
        code = self.returncode if self.returncode is not None else 0
        if not self.preset.unclean_stop_checked_by_head:
            self._check_clean_stop()
        self._run_node(keep_ports=True)
        return code

    def _check_clean_stop(self) -> None:
        """A node killed instead of stopped may have lost what it kept in memory (geth's state layers)."""
        if self.returncode != 0:
            raise ClientError(
                f"{self.preset.name} did not shut down cleanly (exit code {self.returncode}), so its "
                f"in-memory state is lost:\n{self.log_tail()}"
            )

    def save_copy(self, name: str, accept_unclean: bool = False) -> None:
        """
        Stop the node, copy its datadir as `name`, start it again. A node that
        does not stop cleanly is started again and `UncleanStop` raised: its
        datadir may not hold what it had in memory, so nothing is copied;
        unless `accept_unclean`, for a caller that has just seen the node come
        back from that datadir at the head it copies it for.
        """
        self._stop_node()
        if self.returncode != 0 and not accept_unclean:
            code = self.returncode
            self._run_node(keep_ports=True)
            raise UncleanStop(f"{self.preset.name} exited with code {code} when asked to stop:\n{self.log_tail()}")
        copy = self.root / "copies" / name
        shutil.rmtree(copy, ignore_errors=True)
        try:
            copy_datadir(self.datadir, copy)
        except OSError as error:
            self._run_node(keep_ports=True)
            raise ClientError(f"copying the {self.preset.name} datadir failed: {error}") from None
        self._copies[name] = copy
        self._run_node(keep_ports=True)

    def has_copy(self, name: str) -> bool:
        return name in self._copies

    def restore_copy(self, name: str) -> None:
        """Stop the node, put the datadir copy `name` back in place, start it again."""
        self._stop_node()
        shutil.rmtree(self.datadir)
        copy_datadir(self._copies[name], self.datadir)
        self._run_node(keep_ports=True)

    def close(self) -> None:
        """Stop the node if it runs and remove its folder."""
        try:
            self._stop_node()
        finally:
            if self._root is not None:
                shutil.rmtree(self._root, ignore_errors=True)
