"""
The client a replay sends its payloads to: a geth balgen starts, or one the
user runs.

`ManagedGeth` starts geth (the pinned build or `--geth-bin`) on 127.0.0.1
for each genesis group, with a fresh datadir, a generated JWT secret and
`--debug.logslowblock 0` so that geth's own per-block timing can be read;
it is stopped and its datadir removed however the group ends (errors and
Ctrl-C included, see `GethProcess`). `ExternalClient` talks to the
endpoints the user gave and to nothing else; it cannot be restarted and
has no slow-block log.
"""

from __future__ import annotations

import dataclasses
import shlex
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

import httpx

from ..clients.engine_client import EngineClient, RpcClient, RpcError, RpcTransportError
from ..clients.genesis import derived_header_mismatches, fixture_config_mismatches, write_geth_genesis
from ..clients.geth_process import GethProcess
from ..clients.slow_block_log import SLOW_BLOCK_FLAGS, SlowBlockLogReader
from ..errors import BadInput
from .fixtures import GenesisSource, ReplayTest


class ReplayClient(Protocol):
    """One running client, serving the tests of one genesis group."""

    rpc: RpcClient
    engine: EngineClient
    client_version: str | None
    slow_blocks: SlowBlockLogReader | None
    """geth's slow-block log when balgen started geth, else None."""
    can_restart: bool

    @property
    def process_id(self) -> int | None:
        """The client's process id when balgen started it (for its read counters), else None."""

    def restart(self) -> None:
        """Restart the client on the same data (for `--cold`)."""

    def log_tail(self) -> str:
        """The end of the client's log, for messages; empty if balgen has none."""

    def config_problems(self, test: ReplayTest) -> list[str]:
        """Where the test's chain config disagrees with the client's."""

    def genesis_problems(self, genesis: GenesisSource, found: dict[str, object] | None) -> list[str]:
        """Likely causes of a genesis hash mismatch, beyond the hashes themselves."""


class ReplayTarget(Protocol):
    """Where a replay's clients come from."""

    @property
    def kind(self) -> str:
        """`managed` (balgen starts geth) or `external` (the user's client)."""

    def open(self, genesis: GenesisSource) -> AbstractContextManager[ReplayClient]:
        """A running client for `genesis`, released when the block ends."""


RPC_TIMEOUT = 30.0
"""Seconds to wait for an `eth_*` / `debug_*` answer before the client counts as lost."""
ENGINE_TIMEOUT = 120.0
"""Seconds to wait for an Engine API answer: a large block may take long to execute."""
PROBE_TIMEOUT = 10.0
"""Seconds the first calls to a client the user runs may take: a port held by
something that accepts connections but never answers is bad input, not a hang."""


class _GethClient:
    """A geth balgen started, with its clients and its slow-block log."""

    can_restart = True

    def __init__(self, geth: GethProcess, rpc_timeout: float, engine_timeout: float) -> None:
        self.geth = geth
        self.rpc_timeout = rpc_timeout
        self.engine_timeout = engine_timeout
        self.slow_blocks: SlowBlockLogReader | None = SlowBlockLogReader(geth.log_path)
        self._connect()

    def _connect(self) -> None:
        self.rpc = self.geth.rpc_client(timeout=self.rpc_timeout)
        self.engine = self.geth.engine_client(timeout=self.engine_timeout)
        self.client_version = self.geth.client_version

    @property
    def process_id(self) -> int | None:
        return self.geth.pid

    def close(self) -> None:
        """Close the connections (the process is `GethProcess`'s to stop)."""
        self.rpc.close()
        self.engine.close()

    def restart(self) -> None:
        self.close()
        self.geth.restart()
        self._connect()

    def log_tail(self) -> str:
        exit_code = self.geth.exit_code(wait=0.5)  # a node that just died may take a moment to end
        tail = self.geth.log_tail(10)
        if exit_code is None:
            return tail
        return f"geth is not running (exit code {exit_code}); its log ends:\n{tail}"

    def config_problems(self, test: ReplayTest) -> list[str]:
        return fixture_config_mismatches(test.network, test.config)

    def genesis_problems(self, genesis: GenesisSource, found: dict[str, object] | None) -> list[str]:
        header, _ = genesis.load()
        if "stateRoot" not in header:
            return []  # built from a group's environment: only its hash is the fixture's to compare
        problems = []
        if found and str(found.get("stateRoot", "")).lower() != str(header.get("stateRoot", "")).lower():
            problems.append(
                f"state root {found.get('stateRoot')} is not the fixture's {header.get('stateRoot')}"
            )
        return problems + derived_header_mismatches(genesis.network, header)


@dataclass(frozen=True)
class ManagedGeth:
    """geth started by balgen, one node per genesis group."""

    geth_bin: Path
    client_args: tuple[str, ...] = ()
    temp_parent: Path | None = None
    rpc_timeout: float = RPC_TIMEOUT
    engine_timeout: float = ENGINE_TIMEOUT
    kind: str = field(default="managed", init=False)

    @contextmanager
    def open(self, genesis: GenesisSource) -> Iterator[ReplayClient]:
        """Write the group's genesis, start geth on it, stop it afterwards."""
        with tempfile.TemporaryDirectory(prefix="balgen-genesis-", dir=self.temp_parent) as scratch:
            genesis_path = Path(scratch) / "genesis.json"
            header, pre = genesis.load()
            write_geth_genesis(genesis_path, genesis.network, header, pre, chain_id=genesis.chain_id)
            del header, pre  # the alloc can be large; geth has it now
            extra_args = [*SLOW_BLOCK_FLAGS, *self.client_args]
            with GethProcess(
                self.geth_bin, genesis_path, extra_args=extra_args, temp_parent=self.temp_parent
            ) as geth:
                client = _GethClient(geth, self.rpc_timeout, self.engine_timeout)
                try:
                    yield client
                finally:
                    client.close()


class _UserClient:
    """A client the user runs: only the endpoints they gave."""

    can_restart = False
    slow_blocks: SlowBlockLogReader | None = None
    process_id: int | None = None

    def __init__(self, target: ExternalClient) -> None:
        self.engine = EngineClient(target.engine_url, target.jwt_secret, timeout=target.engine_timeout)
        self.rpc = (
            RpcClient(target.rpc_url, timeout=target.rpc_timeout)
            if target.rpc_url
            else RpcClient(target.engine_url, timeout=target.rpc_timeout, jwt_secret=target.jwt_secret)
        )
        self.client_version = target.client_version

    def close(self) -> None:
        self.rpc.close()
        self.engine.close()

    def restart(self) -> None:
        raise RuntimeError("a client balgen did not start cannot be restarted")

    def log_tail(self) -> str:
        return ""

    def config_problems(self, test: ReplayTest) -> list[str]:
        del test  # the user's client has its own config; the genesis hash check covers it
        return []

    def genesis_problems(self, genesis: GenesisSource, found: dict[str, object] | None) -> list[str]:
        del genesis, found
        return []


def check_http_url(url: str, option: str) -> str:
    """
    `url` if it is an http(s) URL with a host that httpx, which will send to
    it, accepts as well; else `BadInput` naming the option. Both parsers
    raise on malformed URLs (`http://[::1`, a port past 65535, a space in
    the host), which must be this one line rather than a traceback.
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
        httpx.Request("POST", url)
    except (ValueError, httpx.InvalidURL) as error:
        raise BadInput(f"{option} {url!r}: malformed URL ({error})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadInput(f"{option} {url!r}: not an http:// or https:// URL with a host")
    return url


@dataclass(frozen=True)
class ExternalClient:
    """A client the user runs, reached only at the URLs they gave."""

    engine_url: str
    jwt_secret: bytes
    rpc_url: str | None
    client_version: str | None = None
    rpc_timeout: float = RPC_TIMEOUT
    engine_timeout: float = ENGINE_TIMEOUT
    kind: str = field(default="external", init=False)

    def probe(self) -> ExternalClient:
        """
        One authenticated Engine API call and one `web3_clientVersion`, so an
        unreachable URL or a wrong secret is a bad-input line before any
        output exists. Returns the target with the client's version.
        """
        client = _UserClient(dataclasses.replace(self, rpc_timeout=PROBE_TIMEOUT, engine_timeout=PROBE_TIMEOUT))
        try:
            try:
                client.engine.call("engine_exchangeCapabilities", [[]])
            except (RpcTransportError, RpcError) as error:
                raise BadInput(f"--engine-url {self.engine_url}: {error}") from None
            try:
                version = str(client.rpc.client_version().result)
            except (RpcTransportError, RpcError) as error:
                raise BadInput(f"{'--rpc-url' if self.rpc_url else '--engine-url'} {client.rpc.url}: {error}") from None
        finally:
            client.close()
        return dataclasses.replace(self, client_version=version)

    @contextmanager
    def open(self, genesis: GenesisSource) -> Iterator[ReplayClient]:
        """Connect to the user's client; it keeps running afterwards."""
        del genesis  # the client has one genesis; the runner checks it matches
        client = _UserClient(self)
        try:
            yield client
        finally:
            client.close()


def target_description(target: ManagedGeth | ExternalClient) -> dict[str, object]:
    """What results.json records about where the payloads went."""
    if isinstance(target, ManagedGeth):
        return {
            "kind": target.kind,
            "geth_bin": str(target.geth_bin),
            "client_args": list(target.client_args),
        }
    return {"kind": target.kind, "engine_url": target.engine_url, "rpc_url": target.rpc_url}


MANAGED_FLAGS = frozenset(
    {"datadir", "port", "authrpc.addr", "authrpc.port", "authrpc.jwtsecret", "http.addr", "http.port", "ipcpath"}
)
"""geth flags balgen sets itself: it picks free loopback ports, a fresh
datadir and a generated secret, and talks to geth through them, so the same
flag in `--client-args` would point geth somewhere balgen never looks (and
a fixed port may already be in use)."""


def split_client_args(text: str | None) -> tuple[str, ...]:
    """`--client-args "..."` split as a shell would, or `BadInput`."""
    if not text:
        return ()
    try:
        arguments = tuple(shlex.split(text))
    except ValueError as error:
        raise BadInput(f"--client-args {text!r}: {error}") from None
    for argument in arguments:
        name = argument.lstrip("-").split("=", 1)[0]
        if argument.startswith("-") and name in MANAGED_FLAGS:
            raise BadInput(
                f"--client-args: --{name} is set by balgen (free ports on 127.0.0.1, a fresh "
                "datadir and JWT secret per genesis); use --engine-url for a geth you configure"
            )
    return arguments

