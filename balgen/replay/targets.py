"""
The client a replay sends its payloads to: one balgen starts, or one the
user runs.

`ManagedClient` starts a client from its preset (one of
`balgen.clients.kinds`, or a `--client-cmd` template) on 127.0.0.1 for each genesis group, with the genesis in the
client's format, a fresh datadir and a generated JWT secret; it is stopped
and its folder removed however the group ends (errors and Ctrl-C included,
see `ClientProcess`). Its rollback is the preset's: `debug_setHead`, or
restarting from a datadir copy taken at the block. A client with its own
block log (`ClientKind.block_log`) has its per-block timing read from it. `ExternalClient` talks to the
endpoints the user gave and to nothing else; it cannot be restarted, has no
slow-block log, and is rolled back with `debug_setHead`.
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

import httpx

from ..plumbing.errors import BadInput
from ..plumbing.memory_limit import resident_bytes
from ..clients.genesis_files import write_client_genesis
from ..clients.kind import ClientKind
from ..clients.chain_config import network_fork
from ..clients.kinds import geth, kind_of_preset, reth
from ..clients.presets import ClientPreset, Rollback, managed_flags, with_user_config
from ..clients.process import ClientProcess, UncleanStop
from ..clients.start_work import START_SETTLE_LIMIT
from ..clients.engine_client import ENGINE_TIMEOUT, EngineClient, RpcClient, RpcError, RpcTransportError
from ..clients.genesis_fields import derived_header_mismatches, fixture_config_mismatches
from ..clients.slow_block_log import SlowBlockLogReader
from .client_chain import ClientChain, RollbackFailed
from .cpu_placement import cpu_list, pinned_command
from .discovery import GenesisSource, ReplayTest


class ReplayClient(Protocol):
    """One running client, serving the tests of one genesis group."""

    rpc: RpcClient
    engine: EngineClient
    client_version: str | None
    slow_blocks: SlowBlockLogReader | None
    """The client's own block log when balgen started it and the client has one, else None."""
    rollback_method: Rollback
    kind: ClientKind | None
    """The client balgen started, whose log proves its modes; None for a `--client-cmd` or a user's client."""
    logs_insertion: bool
    """Whether the client logs its whole insertion of a block after its block entry (`BlockLog.logs_insertion`)."""

    @property
    def process_id(self) -> int | None:
        """The client's process id when balgen started it (for its read counters), else None."""

    def restart(self) -> int:
        """Restart the client on the same data (for `--cold`); the exit code of its stop (0: clean)."""

    def memory_restart_due(self) -> bool:
        """Whether the client's resident memory is past what its preset lets it keep between tests (`ClientPreset.resident_restart_bytes`)."""

    def remember(self, number: int, block_hash: str) -> None:
        """Keep what a later `rewind` to this block (the current head) needs."""

    def rewind(self, number: int, block_hash: str) -> bool:
        """Bring the head back to the block, verified; True if the client was restarted for it."""

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
        """`managed` (balgen starts the client) or `external` (the user's client)."""

    def open(self, genesis: GenesisSource) -> AbstractContextManager[ReplayClient]:
        """A running client for `genesis`, released when the block ends."""


RPC_TIMEOUT = 30.0
"""Seconds to wait for an `eth_*` / `debug_*` answer before the client counts as lost."""
PROBE_TIMEOUT = 10.0
"""Seconds the first calls to a client the user runs may take: a port held by
something that accepts connections but never answers is bad input, not a hang."""


def rewind_by_set_head(rpc: RpcClient, number: int, block_hash: str) -> bool:
    """`debug_setHead` to block `number`, verified (`ClientChain.roll_back_to`); never restarts."""
    ClientChain(rpc).roll_back_to(number, block_hash)
    return False


class _ManagedClient:
    """A client balgen started from a preset, with its connections and its slow-block log."""

    def __init__(self, process: ClientProcess, rpc_timeout: float, engine_timeout: float) -> None:
        self.process = process
        self.rpc_timeout = rpc_timeout
        self.engine_timeout = engine_timeout
        self.rollback_method = process.preset.rollback
        self.kind = kind_of_preset(process.preset)
        block_log = None if self.kind is None else self.kind.block_log
        self.logs_insertion = block_log is not None and block_log.logs_insertion
        self.slow_blocks = None if block_log is None else SlowBlockLogReader(process.log_path, block_log.timings)
        self._connect()

    def _connect(self) -> None:
        self.rpc = self.process.rpc_client(timeout=self.rpc_timeout)
        self.engine = self.process.engine_client(timeout=self.engine_timeout)
        self.client_version = self.process.client_version

    @property
    def process_id(self) -> int | None:
        return self.process.pid

    def close(self) -> None:
        """Close the connections (the process is `ClientProcess`'s to stop)."""
        self.rpc.close()
        self.engine.close()

    def restart(self) -> int:
        self.close()
        code = self.process.restart()
        self._connect()
        return code

    def memory_restart_due(self) -> bool:
        bound, pid = self.process.preset.resident_restart_bytes, self.process.pid
        return bound is not None and pid is not None and resident_bytes(pid) > bound

    def remember(self, number: int, block_hash: str) -> None:
        """
        With `restart_from_copy`, a datadir copy at the block (once per block).

        The reth build here now and then aborts (exit code -6) when asked to
        stop seconds after it started, and often again when stopped seconds
        after that restart (CI, 2026-11-29). After an unclean stop the node is
        restarted from its datadir and must show the block as its head: that
        proves the datadir holds it, so the second stop's datadir is copied
        whether or not that stop is clean (nothing was sent in between), and
        the node restarted from it must show the block again. Every restore of
        the copy checks its head too (`rewind`).
        """
        if self.rollback_method is not Rollback.RESTORE_COPY or self.process.has_copy(block_hash):
            return
        self.close()
        try:
            self.process.save_copy(block_hash)
        except UncleanStop as first:
            self._connect()
            ClientChain(self.rpc).expect_head(number, block_hash, f"restarting after an unclean stop ({first})")
            self.close()
            self.process.save_copy(block_hash, accept_unclean=True)
            self._connect()
            ClientChain(self.rpc).expect_head(number, block_hash, "restarting after copying the datadir")
            return
        self._connect()

    def rewind(self, number: int, block_hash: str) -> bool:
        if self.rollback_method is Rollback.SET_HEAD:
            return rewind_by_set_head(self.rpc, number, block_hash)
        if str(ClientChain(self.rpc).head()["hash"]).lower() == block_hash:
            return False
        if not self.process.has_copy(block_hash):
            raise RollbackFailed(f"no datadir copy at block {number} {block_hash} to restore")
        self.close()
        self.process.restore_copy(block_hash)
        self._connect()
        ClientChain(self.rpc).expect_head(number, block_hash, f"restoring the datadir copy of block {number}")
        return True

    def log_tail(self) -> str:
        exit_code = self.process.exit_code(wait=0.5)  # a node that just died may take a moment to end
        tail = self.process.log_tail(10)
        if exit_code is None:
            return tail
        return f"{self.process.preset.name} is not running (exit code {exit_code}); its log ends:\n{tail}"

    def config_problems(self, test: ReplayTest) -> list[str]:
        return [] if test.config is None else fixture_config_mismatches(test.network, test.config)

    def genesis_problems(self, genesis: GenesisSource, found: dict[str, object] | None) -> list[str]:
        header = genesis.header
        if header.state_root is None:
            return []  # built from a group's environment: only its hash is the fixture's to compare
        problems = []
        state_root = "0x" + header.state_root.hex()
        if found and str(found.get("stateRoot", "")).lower() != state_root:
            problems.append(f"state root {found.get('stateRoot')} is not the fixture's {state_root}")
        return problems + derived_header_mismatches(genesis.network, header)


@dataclass(frozen=True)
class ManagedClient:
    """A client balgen starts from a preset, one node per genesis group."""

    preset: ClientPreset
    binary: Path
    client_args: tuple[str, ...] = ()
    temp_parent: Path | None = None
    rpc_timeout: float = RPC_TIMEOUT
    engine_timeout: float = ENGINE_TIMEOUT
    cpus: tuple[int, ...] = ()
    """`--client-cpus`: the cores the client is started on (`taskset`); all of balgen's without."""
    settle_limit: float = START_SETTLE_LIMIT
    """`--settle-limit`: after each start and restart, seconds to wait at most for the node's own start-up
    work to end before anything is sent (`clients.start_work`); 0 for a run that times nothing."""
    kind: str = field(default="managed", init=False)

    @contextmanager
    def open(self, genesis: GenesisSource) -> Iterator[ReplayClient]:
        """Write the group's genesis in the preset's format, start the client on it, stop it afterwards."""
        with tempfile.TemporaryDirectory(prefix="balgen-genesis-", dir=self.temp_parent) as scratch:
            genesis_path = Path(scratch) / self.preset.genesis_format.file_name
            write_client_genesis(
                genesis_path, self.preset.genesis_format, genesis.network, genesis.header, genesis.accounts(),
                chain_id=genesis.chain_id,
            )  # fmt: skip
            preset = self.preset
            if self.cpus:
                preset = dataclasses.replace(preset, node_command=pinned_command(preset.node_command, self.cpus))
            prepared, linkable, start_args = None, (), ()
            if genesis.background is not None:
                prepared, linkable, start_args = self.background_datadir(genesis)
            with ClientProcess(
                preset, self.binary, genesis_path, extra_args=(*self.client_args, *start_args),
                temp_parent=self.temp_parent, prepared_datadir=prepared, linkable=linkable,
                settle_limit=self.settle_limit,
            ) as process:  # fmt: skip
                client = _ManagedClient(process, self.rpc_timeout, self.engine_timeout)
                try:
                    yield client
                finally:
                    client.close()


    def background_datadir(self, genesis: GenesisSource) -> tuple[Path, tuple[str, ...], tuple[str, ...]]:
        """
        The datadir a group over a background state starts from (the state
        with the group's `pre` put into it, built once by the client's own
        code and cached), the names of its files a node's copy may hard-link,
        and what the node's command line needs to start on it.
        """
        assert genesis.background is not None
        kind = kind_of_preset(self.preset)
        progress = lambda line: print(f"balgen: background state: {line}", file=sys.stderr)
        fork = network_fork(genesis.network)
        if kind is geth.KIND:
            datadir = geth.background_datadir(genesis.background, fork, genesis.accounts(), genesis.genesis_hash, progress=progress)
            return datadir, geth.DATADIR_LINKABLE, ()
        if kind is reth.KIND:
            datadir = reth.background_datadir(
                genesis.background, fork, genesis.accounts(), genesis.genesis_hash, self.binary, progress=progress
            )  # fmt: skip
            return datadir, reth.DATADIR_LINKABLE, reth.BACKGROUND_NODE_ARGS
        raise BadInput(
            f"{genesis.where}: its genesis is a background state, which balgen builds for geth and reth only; "
            f"replay it with --client geth or --client reth"
        )


class _UserClient:
    """A client the user runs: only the endpoints they gave."""

    slow_blocks: SlowBlockLogReader | None = None
    process_id: int | None = None
    rollback_method = Rollback.SET_HEAD
    kind: ClientKind | None = None
    logs_insertion = False

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

    def restart(self) -> int:
        raise RuntimeError("a client balgen did not start cannot be restarted")

    def memory_restart_due(self) -> bool:
        return False

    def remember(self, number: int, block_hash: str) -> None:
        del number, block_hash  # debug_setHead needs nothing kept

    def rewind(self, number: int, block_hash: str) -> bool:
        return rewind_by_set_head(self.rpc, number, block_hash)

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


def target_description(target: ManagedClient | ExternalClient) -> dict[str, object]:
    """What results.json records about where the payloads went."""
    if isinstance(target, ManagedClient):
        return {
            "kind": target.kind,
            "client": target.preset.name,
            "client_bin": str(target.binary),
            "client_args": list(target.client_args),
            "client_config": target.preset.config_file,
            "rollback": str(target.preset.rollback),
            "figures": target_figures(target.preset),
            **({"cpus": cpu_list(target.cpus)} if target.cpus else {}),
        }
    return {"kind": target.kind, "engine_url": target.engine_url, "rpc_url": target.rpc_url}


LATENCY_ONLY = "client-side latency only"


def target_figures(preset: ClientPreset) -> str:
    """What balgen measures of the client beyond latency: its own block log, if it has one."""
    kind = kind_of_preset(preset)
    return LATENCY_ONLY if kind is None or kind.block_log is None else kind.block_log.description


def preset_with_client_args(text: str | None, preset: ClientPreset) -> tuple[ClientPreset, tuple[str, ...]]:
    """
    `--client-args "..."` split as a shell would, and the preset to start with
    them: a config file they name merged into the preset's own
    (`with_user_config`), or `BadInput`. Any other flag the preset sets itself
    (`managed_flags`: the datadir, ports, JWT secret, listen addresses) is
    refused: balgen picks free loopback ports, a fresh datadir and a generated
    secret and talks to the client through them, so the same flag here would
    point the client somewhere balgen never looks.
    """
    if not text:
        return preset, ()
    try:
        arguments = tuple(shlex.split(text))
    except ValueError as error:
        raise BadInput(f"--client-args {text!r}: {error}") from None
    preset, arguments = with_user_config(preset, arguments)
    managed = managed_flags(preset)
    for argument in arguments:
        name = argument.lstrip("-").split("=", 1)[0]
        if argument.startswith("-") and name in managed:
            raise BadInput(
                f"--client-args: --{name} is set by balgen (free ports on 127.0.0.1, a fresh "
                "datadir and JWT secret per genesis); use --engine-url for a client you configure"
            )
    return preset, arguments

