"""
How much time balgen's replay adds to what geth itself spends on a block.

Replays the 60M fixtures against balgen's geth (`balgen replay`, one warm-up
and five measured executions of each benchmark payload) and prints, per
fixture and overall: the median client-side `newPayload` latency, geth's own
total block time from its slow-block log (`total_ms`: ProcessBlock, i.e.
execution, validation, state root, commit) for the same executions, and the
difference. The difference is everything outside ProcessBlock: the HTTP
round trip on 127.0.0.1 and balgen's request writing and response reading,
but also geth's own Engine API work before the block is processed (JSON
decoding of the payload, transaction and BAL decoding, block hashing, the
known-block and parent lookups). To tell balgen's share apart, the same
payloads are also sent, through balgen's own client, to a do-nothing HTTP
server on 127.0.0.1 that reads the body and answers VALID: that round trip
is everything balgen itself adds. Target: balgen adds at most 1 ms or 3% of
geth's total, whichever is larger, per payload.

    .venv/bin/python benchmarks/replay_overhead.py [FIXTURES] [-k EXPR]

FIXTURES is a `balgen fill` output folder (its engine_x fixtures are used);
without it the 60M suite is filled into a temporary folder first.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from balgen.commands.main import run_fill
from balgen.clients.engine_client import RpcClient
from balgen.commands.replay import run_replay
from balgen.replay.discovery import FixtureRef, load_test
from balgen.results.measurements import Role
from balgen.results.schema import RunResult

TARGET_MS = 1.0
TARGET_FRACTION = 0.03


def allowed_overhead_ms(own_total_ms: float) -> float:
    """The target for one payload: 1 ms or 3% of geth's own time, the larger."""
    return max(TARGET_MS, TARGET_FRACTION * own_total_ms)


class _DoNothingEngine(BaseHTTPRequestHandler):
    """Reads a request whole and answers VALID at once, as fast as Python can."""

    protocol_version = "HTTP/1.1"
    reply = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"status": "VALID"}}).encode()

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.reply)))
        self.end_headers()
        self.wfile.write(self.reply)

    def log_message(self, *_args: object) -> None:
        pass


def balgen_share_ms(run: RunResult, repeats: int = 10) -> dict[str, float]:
    """Per test, the median round trip of its benchmark payload to a do-nothing server."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _DoNothingEngine)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    shares = {}
    try:
        with RpcClient(f"http://127.0.0.1:{server.server_port}") as client:
            for test in run.tests:
                benchmark = load_test(FixtureRef(test.test_id, Path(test.path), test.format)).benchmark
                method = f"engine_newPayloadV{benchmark.new_payload_version}"
                times = [client.call(method, benchmark.params).elapsed_ns / 1e6 for _ in range(repeats)]
                shares[test.test_id] = statistics.median(times)
    finally:
        server.shutdown()
    return shares


def replayed(fixtures: Path, output: Path, keyword: str | None) -> RunResult:
    argv = [str(fixtures / "blockchain_tests_engine_x"), "--warmup", "1", "--repeat", "5", "--label", "overhead", "--output", str(output)]
    if keyword:
        argv += ["-k", keyword]
    code = run_replay(argv)
    if code not in (0, 1):
        sys.exit(code)
    return RunResult.model_validate_json((output / "results.json").read_text())


def print_overhead(run: RunResult, shares: dict[str, float]) -> bool:
    """The table and the verdict; True if balgen's share meets the target for every fixture."""
    print(f"\n{'fixture':<44} {'newPayload ms':>14} {'geth total ms':>14} {'difference ms':>14} {'balgen ms':>10} {'allowed ms':>11}")
    client_all: list[float] = []
    geth_all: list[float] = []
    met = True
    for test in run.tests:
        pairs = [
            (e.new_payload_ns / 1e6, e.own_timing.total_ms)
            for e in test.executions
            if e.role is Role.MEASURED and e.own_timing is not None
        ]
        if not test.passed or not pairs:
            print(f"{test.test_id:<44} {'(failed: ' + str(test.failure) + ')'}")
            met = False
            continue
        client = statistics.median(p[0] for p in pairs)
        geth = statistics.median(p[1] for p in pairs)
        difference = statistics.median(p[0] - p[1] for p in pairs)
        allowed = allowed_overhead_ms(geth)
        met &= shares[test.test_id] <= allowed
        client_all += [p[0] for p in pairs]
        geth_all += [p[1] for p in pairs]
        print(f"{test.test_id:<44} {client:>14.2f} {geth:>14.2f} {difference:>14.2f} {shares[test.test_id]:>10.2f} {allowed:>11.2f}")
    if client_all:
        client, geth = statistics.median(client_all), statistics.median(geth_all)
        share = statistics.median(shares.values())
        print(f"{'all (median over every measured execution)':<44} {client:>14.2f} {geth:>14.2f} {client - geth:>14.2f} {share:>10.2f} {allowed_overhead_ms(geth):>11.2f}")
    print("\ndifference = client-side newPayload - geth's total_ms (geth's Engine API work + HTTP + balgen);")
    print("balgen = the same payload's round trip to a do-nothing server on 127.0.0.1 (balgen's own share)")
    print(f"target (balgen <= max(1 ms, 3% of geth total) for every fixture): {'met' if met else 'NOT met'}")
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fixtures", type=Path, nargs="?", help="a balgen fill output folder (default: fill 60M now)")
    parser.add_argument("-k", dest="keyword", default=None, help="only fixtures matching EXPR")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="balgen-overhead-") as scratch:
        fixtures = args.fixtures
        if fixtures is None:
            fixtures = Path(scratch) / "fixtures"
            if run_fill(["--gas-benchmark-values", "60", "--output", str(fixtures), "-n", "2"]) != 0:
                return 1
        run = replayed(fixtures, Path(scratch) / "run", args.keyword)
        return 0 if print_overhead(run, balgen_share_ms(run)) else 1


if __name__ == "__main__":
    sys.exit(main())
