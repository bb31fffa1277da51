"""
JSON-RPC clients for the two endpoints of an execution client.

The Engine API (authenticated, `engine_*` methods) is how blocks get in; the
plain HTTP endpoint (`eth_*`, `debug_*`, `web3_*`) is how the harness checks
what the client made of them. Every call returns the client-side latency of
its HTTP round trip alongside the result, measured with `perf_counter_ns`
around the request only: encoding the request and decoding the reply are
the harness's own work and are kept out of the number, so that a large
payload's JSON encoding does not count as the client's execution time.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any, Generic, Self, TypeVar

import httpx
import orjson
from pydantic import TypeAdapter, ValidationError

from ..ethereum.chain_constants import ZERO_HASH
from ..ethereum.hextypes import data_hex
from ..plumbing.printable import escaped
from .jwt_auth import make_jwt_token

T = TypeVar("T")

UNKNOWN_BLOCK_HASH = data_hex(ZERO_HASH)
"""Safe and finalized block hash sent in forkchoice updates: the harness has
no consensus layer, so nothing is ever safe or final (as EEST's consume engine
and benchmarkoor send)."""

_JSON_HEADERS = {"Content-Type": "application/json"}

ENGINE_TIMEOUT = 600.0
"""Seconds to wait for an Engine API answer: a 1,000M-gas block's `engine_newPayload`
took geth 29 s under load here, and a slower client or machine may need minutes. A
client preset whose server cuts requests short is started with a longer server-side
limit (`presets.GETH_CONFIG`), so that this is the deadline that binds."""


@dataclass(frozen=True)
class Timed(Generic[T]):
    """A call's result and the client-side latency of its HTTP round trip."""

    result: T
    elapsed_ns: int


class RpcError(Exception):
    """The client answered a call with a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None, method: str = "") -> None:
        super().__init__(f"JSON-RPC error {code}: {message}")
        self.code = code
        self.message = message
        self.data = data
        self.method = method
        """The call that was answered with the error, for messages."""


class RpcTransportError(Exception):
    """The call got no JSON-RPC answer: connection failure, timeout, HTTP error."""


class RpcAnswerError(RpcTransportError):
    """The call was answered, but not with what the method returns; the message names the method and field."""


def _answer_problem(error: ValidationError) -> str:
    """The first thing wrong with an answer, at its field: `result.transactions.0.from: 'zz' is not …`."""
    first = error.errors()[0]
    where = ".".join(["result", *(str(part) for part in first["loc"])])
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] in ("missing", "model_type", "dict_type", "list_type", "none_required"):
        message = f"{message} (got {escaped(repr(first.get('input')))[:80]})"
    return f"{where}: {message}"


_HTTP_AUTH_REFUSED = (401, 403)
"""What a client answers a missing, stale or wrongly signed JWT with."""


def _transport_problem(error: httpx.HTTPError, timeout: float) -> str:
    """A short reason for a failed HTTP exchange: timeouts and refusals said plainly."""
    if isinstance(error, httpx.TimeoutException):
        return f"no answer within {timeout:g} s ({type(error).__name__})"
    if isinstance(error, httpx.ConnectError):
        return f"cannot connect ({error})"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


class DeadlinePassed(Exception):
    """A call's total deadline passed while its exchange was still going on."""


@contextlib.contextmanager
def call_deadline(seconds: float) -> Iterator[None]:
    """
    Raise `DeadlinePassed` in the block once `seconds` have passed, however
    the time is spent. httpx's timeouts bound each connect, write and read
    separately, so a server that trickles a byte every few seconds would hold
    a call for ever; a real-time timer (SIGALRM) bounds the whole call. Only
    the main thread receives signals; elsewhere httpx's own timeouts remain.
    """
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        del signum, frame
        raise DeadlinePassed()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def request_body(call_id: int, method: str, params: Sequence[Any]) -> bytes:
    """
    A JSON-RPC request as compact JSON. orjson, not `json`: a benchmark payload is megabytes of hex,
    sent 7-8 times per test (intake probes, siblings), and orjson encodes it ten times faster into the
    same bytes (Engine API values are ASCII strings; an integer beyond 64 bits is refused, not sent).
    """
    return orjson.dumps({"jsonrpc": "2.0", "id": call_id, "method": method, "params": list(params)})


class _JsonRpcEndpoint:
    """One HTTP JSON-RPC endpoint, with a kept-alive connection."""

    def __init__(self, url: str, timeout: float) -> None:
        self.url = url
        self.timeout = timeout
        # Keep-alive matters for latency: a new TCP connection per call
        # would add its handshake to every measured round trip.
        # A plain-http endpoint needs no TLS context; building one loads the CA
        # bundle (~15 ms), for each of the clients a `--cold` restart makes anew.
        self._http_verify = url.lower().startswith("https://")
        self._http = httpx.Client(timeout=timeout, headers=_JSON_HEADERS, verify=self._http_verify)
        self._ids = itertools.count(1)

    def close(self) -> None:
        """Close the kept-alive connection."""
        self._http.close()

    def request(
        self, method: str, params: Sequence[Any], headers: dict[str, str] | None = None
    ) -> Timed[Any]:
        """Send one call; return its result and round-trip time, or raise."""
        body = request_body(next(self._ids), method, params)
        try:
            with call_deadline(self.timeout):
                started = time.perf_counter_ns()
                with self._http.stream("POST", self.url, content=body, headers=headers) as response:
                    content = _bounded_body(method, response)
                elapsed_ns = time.perf_counter_ns() - started
        except httpx.HTTPError as error:
            raise RpcTransportError(
                f"{method} to {self.url}: {_transport_problem(error, self.timeout)}"
            ) from error
        except DeadlinePassed:
            self._reconnect()  # the cut-off exchange leaves its connection unusable
            raise RpcTransportError(
                f"{method} to {self.url}: no complete answer within {self.timeout:g} s (the total deadline of a call)"
            ) from None
        return Timed(result=_result_of(method, response, content), elapsed_ns=elapsed_ns)

    def _reconnect(self) -> None:
        self._http.close()
        self._http = httpx.Client(timeout=self.timeout, headers=_JSON_HEADERS, verify=self._http_verify)


MAX_REPLY_BYTES = 256 * 2**20
"""The largest answer read, decoded: ten times the hex of a 1,000M-gas block's full transactions
(at most 62.5 MB of calldata). A server's gzip answer of a few MB can expand to gigabytes."""


def _bounded_body(method: str, response: httpx.Response) -> bytes:
    """The decoded body of `response`, read up to MAX_REPLY_BYTES; a larger one is refused as it arrives."""
    chunks = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise RpcTransportError(
                f"{method}: reply larger than {MAX_REPLY_BYTES // 2**20} MiB once decoded (content-encoding "
                f"{response.headers.get('content-encoding', 'none')!r}): not an answer this call can have"
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _excerpt(response: httpx.Response, content: bytes) -> str:
    """
    The start of a reply that is no JSON-RPC answer, on one line: a web server's
    HTML error page would otherwise put its every line into the one-line message.
    """
    text = " ".join(content[:400].decode("utf-8", errors="replace").split())
    kind = response.headers.get("content-type", "").split(";")[0].strip()
    described = f"{kind} reply: " if kind and kind != "application/json" else ""
    return f"{described}{escaped(text[:200])}" + ("…" if len(text) > 200 else "")


def _result_of(method: str, response: httpx.Response, content: bytes) -> Any:
    """The `result` member of a JSON-RPC reply (`content`, its body), or the error it carries, raised."""
    if response.status_code in _HTTP_AUTH_REFUSED:
        raise RpcTransportError(
            f"{method}: HTTP {response.status_code}: the client refused the JWT ({_excerpt(response, content)})"
        )
    if response.status_code != 200:
        raise RpcTransportError(f"{method}: HTTP {response.status_code}: {_excerpt(response, content)}")
    try:
        reply = json.loads(content)
    except (ValueError, RecursionError) as decode_error:
        raise RpcTransportError(
            f"{method}: reply is not JSON: {_excerpt(response, content)}"
        ) from decode_error
    if not isinstance(reply, dict):
        raise RpcTransportError(f"{method}: reply is not a JSON-RPC object: {reply!r:.200}")
    error = reply.get("error")
    if error is not None:
        if not isinstance(error, dict):
            raise RpcError(0, f"{error!r:.200}", method=method)
        code = error.get("code")
        number = code if isinstance(code, int) and not isinstance(code, bool) else 0
        raise RpcError(number, str(error.get("message", "")), error.get("data"), method=method)
    if "result" not in reply:
        raise RpcTransportError(f"{method}: reply has neither result nor error")
    return reply["result"]


class _EndpointClient:
    """
    What both clients share: one kept-alive endpoint, usable as a context
    manager, and JWT authentication when a secret is given.

    A new token is signed for every request because clients reject tokens
    whose `iat` is more than a minute old, and one replay can run for longer.
    """

    def __init__(self, url: str, timeout: float, jwt_secret: bytes | None) -> None:
        self._endpoint = _JsonRpcEndpoint(url, timeout)
        self._jwt_secret = jwt_secret
        if jwt_secret is not None:
            make_jwt_token(jwt_secret)  # fail here, not on the first call, if the secret is bad

    @property
    def url(self) -> str:
        """Where the calls go."""
        return self._endpoint.url

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the kept-alive connection."""
        self._endpoint.close()

    def call(self, method: str, params: Sequence[Any] = ()) -> Timed[Any]:
        """Call `method`; raise `RpcError` if the client answers with an error."""
        if self._jwt_secret is None:
            return self._endpoint.request(method, params)
        authorization = {"Authorization": f"Bearer {make_jwt_token(self._jwt_secret)}"}
        return self._endpoint.request(method, params, headers=authorization)

    def call_as(self, kind: Any, method: str, params: Sequence[Any] = ()) -> Any:
        """
        `method`'s result checked to be `kind` (a pydantic model or annotated
        type, e.g. a block or a hex quantity): a chain's answer is input, and
        one that is not what the method returns (a number where hex is due,
        a null head, a transaction without fields) is `RpcAnswerError`
        naming the method and the field, never a traceback further on.
        """
        result = self.call(method, params).result
        adapter = _ADAPTERS.get(kind) or _ADAPTERS.setdefault(kind, TypeAdapter(kind))
        try:
            return adapter.validate_python(result)
        except ValidationError as error:
            raise RpcAnswerError(f"{method} to {self.url}: {_answer_problem(error)}") from None


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


class RpcClient(_EndpointClient):
    """
    The `eth_*`, `debug_*`, `web3_*` calls.

    Usually the client's plain HTTP endpoint; given `jwt_secret` it can also
    be the Engine API endpoint, which the Engine API specification requires
    to serve `eth_getBlockByHash` and `eth_getBlockByNumber` too.
    """

    def __init__(self, url: str, timeout: float = 30.0, jwt_secret: bytes | None = None) -> None:
        super().__init__(url, timeout, jwt_secret)

    def client_version(self) -> Timed[str]:
        """`web3_clientVersion`: the client's name and version string."""
        return self.call("web3_clientVersion")

    def get_block_by_number(
        self, block: int | str, *, full_transactions: bool = False
    ) -> Timed[dict[str, Any] | None]:
        """
        `eth_getBlockByNumber` for a number or a tag ("latest", "earliest").

        The result is None when the client has no such block.
        """
        tag = hex(block) if isinstance(block, int) else block
        return self.call("eth_getBlockByNumber", [tag, full_transactions])

    def get_block_by_hash(
        self, block_hash: str, *, full_transactions: bool = False
    ) -> Timed[dict[str, Any] | None]:
        """`eth_getBlockByHash`; the result is None when the block is unknown."""
        return self.call("eth_getBlockByHash", [block_hash, full_transactions])

    def set_head(self, number: int) -> Timed[None]:
        """`debug_setHead`: rewind the canonical chain (go-ethereum's debug API)."""
        return self.call("debug_setHead", [hex(number)])


class EngineClient(_EndpointClient):
    """The JWT-authenticated Engine API endpoint."""

    def __init__(self, engine_url: str, jwt_secret: bytes, timeout: float = ENGINE_TIMEOUT) -> None:
        super().__init__(engine_url, timeout, jwt_secret)

    def new_payload(self, version: int, params: Sequence[Any]) -> Timed[dict[str, Any]]:
        """
        `engine_newPayloadV{version}` with the fixture's params as given.

        The params (payload, versioned hashes, parent beacon root, execution
        requests, ...) differ in number by version, so they are passed
        through untouched rather than rebuilt here.
        """
        return self.call(f"engine_newPayloadV{version}", params)

    def forkchoice_updated(self, version: int, head_hash: str) -> Timed[dict[str, Any]]:
        """
        `engine_forkchoiceUpdatedV{version}` making `head_hash` the head.

        Safe and finalized stay the zero hash and no payload attributes are
        sent, because the harness imports blocks and never asks the client
        to build one.
        """
        state = {
            "headBlockHash": head_hash,
            "safeBlockHash": UNKNOWN_BLOCK_HASH,
            "finalizedBlockHash": UNKNOWN_BLOCK_HASH,
        }
        return self.call(f"engine_forkchoiceUpdatedV{version}", [state, None])
