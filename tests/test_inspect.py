"""
`balgen inspect` on real fixtures: a small suite filled by `balgen fill`.

`--retrace` runs every fixture (all three formats) through the pinned t8n
and traces its benchmark block, so the reading of each format, the t8n
environment built from headers and payloads, and the tracer are exercised
on what the fill wrote; the chain families must come out as one chain. A
graph recorded in `_info` is used as is, `--plot` writes a PNG, and every
kind of bad input is one line on stderr with exit code 2.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from balgen.analysis import INFO_KEY
from balgen.commands.inspect import FROM_INFO, FROM_TRACE, inspect_fixtures, inspect_parser, run_inspect

from fill_runs import copied_from_suite_fill
from in_process import balgen_in_process

NAMES = sorted(f"{family}-{fill}-1M" for family in ("serial_chain", "keccak_chain") for fill in ("max", "half", "greedy"))
FORMATS = {"blockchain_test", "blockchain_test_engine", "blockchain_test_engine_x"}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """serial_chain and keccak_chain at 1M gas, as `balgen fill` wrote them in the session's suite fill (copied)."""
    return copied_from_suite_fill(tmp_path_factory, NAMES)


def inspected(*argv: str | Path, scratch: Path):
    return inspect_fixtures(inspect_parser().parse_args([str(arg) for arg in argv]), scratch)


def fixture_file(suite: Path, folder: str, name: str) -> Path:
    return next((suite / folder).glob(f"for_*/*/{name}.json"))


@pytest.mark.integration
def test_retraced_chain_families_are_one_chain_in_every_format(suite: Path, tmp_path: Path) -> None:
    results = inspected(suite, "--retrace", scratch=tmp_path)
    assert sorted((r.name, r.format.name) for r in results) == sorted((n, f) for n in NAMES for f in FORMATS)
    for result in results:
        graph = result.graph
        assert result.source == FROM_TRACE
        assert graph.edges == tuple((i, i + 1) for i in range(graph.transactions - 1)), result
        assert graph.critical_path == tuple(range(graph.transactions))
        assert graph.speedup_bound == 1.0
        assert 0.95 * 1_000_000 <= graph.block_gas <= 1_000_000
    by_name = {r.name: r.graph for r in results}
    assert by_name["serial_chain-max-1M"].transactions > by_name["serial_chain-half-1M"].transactions > 1
    assert by_name["keccak_chain-greedy-1M"].transactions == 1


@pytest.mark.integration
def test_the_graph_recorded_in_info_is_used_unless_retraced(suite: Path, tmp_path: Path) -> None:
    source = fixture_file(suite, "blockchain_tests_engine", "serial_chain-half-1M")
    (traced,) = inspected(source, "--retrace", scratch=tmp_path)
    document = json.loads(source.read_text())
    document["serial_chain-half-1M"]["_info"][INFO_KEY] = traced.graph.info()
    recorded = tmp_path / "recorded.json"
    recorded.write_text(json.dumps(document))
    (from_info,) = inspected(recorded, scratch=tmp_path)
    assert (from_info.source, from_info.graph) == (FROM_INFO, traced.graph)
    # a record that differs from the block is trusted as such, and --retrace recomputes it
    document["serial_chain-half-1M"]["_info"][INFO_KEY] = {**traced.graph.info(), "edges": [], "components": 18,
                                                            "component-sizes": {"1": 18}, "largest-component": 1,
                                                            "critical-path": [0], "critical-path-gas": traced.graph.tx_gas[0],
                                                            "speedup-bound": round(traced.graph.block_gas / traced.graph.tx_gas[0], 2)}
    recorded.write_text(json.dumps(document))
    assert inspected(recorded, scratch=tmp_path)[0].graph.edges == ()
    assert inspected(recorded, "--retrace", scratch=tmp_path)[0].graph == traced.graph


@pytest.mark.integration
def test_table_and_plot(suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plot = tmp_path / "graphs.png"
    assert run_inspect([str(suite / "blockchain_tests"), "-k", "max or half", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    for name in NAMES:
        assert (name in out) == ("greedy" not in name)
    assert "plotted 4 graphs" in out
    assert plot.read_bytes().startswith(PNG_MAGIC) and plot.stat().st_size > 10_000


@pytest.mark.integration
def test_many_fixtures_plot_the_first_twelve_and_say_so(tmp_path: Path, capsys: pytest.CaptureFixture[str], suite: Path) -> None:
    (traced,) = inspected(fixture_file(suite, "blockchain_tests", "serial_chain-max-1M"), scratch=tmp_path)
    template = json.loads(fixture_file(suite, "blockchain_tests", "serial_chain-max-1M").read_text())["serial_chain-max-1M"]
    template["_info"][INFO_KEY] = traced.graph.info()
    for index in range(14):
        (tmp_path / "many" / f"f{index:02}.json").parent.mkdir(exist_ok=True)
        (tmp_path / "many" / f"f{index:02}.json").write_text(json.dumps({f"copy-{index:02}": template}))
    assert run_inspect([str(tmp_path / "many"), "--plot", str(tmp_path / "many.png")]) == 0
    assert "plotted 12 graphs" in capsys.readouterr().out
    assert (tmp_path / "many.png").read_bytes().startswith(PNG_MAGIC)


# -- bad input ------------------------------------------------------------------


def engine_x_without_pre_alloc(suite: Path, tmp: Path) -> Path:
    copy = tmp / "x" / "blockchain_tests_engine_x" / "for_amsterdam_at_0001M" / "serial_chain"
    copy.mkdir(parents=True)
    return Path(shutil.copy(fixture_file(suite, "blockchain_tests_engine_x", "serial_chain-max-1M"), copy))


def written(tmp: Path, name: str, text: str) -> Path:
    (tmp / name).write_text(text)
    return tmp / name


def edited(folder: str, change):
    """A maker of a copy of serial_chain-half-1M in `folder`'s format, changed by `change`."""

    def make(suite: Path, tmp: Path) -> Path:
        document = json.loads(fixture_file(suite, folder, "serial_chain-half-1M").read_text())
        change(document["serial_chain-half-1M"])
        return written(tmp, f"edited-{folder}.json", json.dumps(document))

    return make


def drop_payload_timestamp(fixture: dict[str, Any]) -> None:
    del fixture["engineNewPayloads"][1]["params"][0]["timestamp"]


def drop_block_rlp(fixture: dict[str, Any]) -> None:
    del fixture["blocks"][0]["rlp"]


def corrupt_block_rlp(fixture: dict[str, Any]) -> None:
    fixture["blocks"][1]["rlp"] = "0xff00"


def pre_account_in_a_list(fixture: dict[str, Any]) -> None:
    """An account of `pre` wrapped in a list, and no recorded graph: the retrace reads `pre` (the fuzzer's find)."""
    address = next(address for address, account in fixture["pre"].items() if account["code"] == "0x")
    fixture["pre"][address] = [fixture["pre"][address]]
    del fixture["_info"][INFO_KEY]


def bad_graph(fixture: dict[str, Any]) -> None:
    fixture["_info"][INFO_KEY] = {"transactions": 2}


BAD_INPUTS = {
    "missing path": (lambda suite, tmp: tmp / "nowhere", [], "nowhere: does not exist"),
    "malformed JSON": (lambda suite, tmp: written(tmp, "bad.json", "{"), [], "bad.json: malformed JSON"),
    "unknown format": (lambda suite, tmp: written(tmp, "odd.json", '{"t1": {"genesis": {}}}'), [], "test t1: unknown fixture format"),
    "format without a chain": (
        lambda suite, tmp: written(tmp, "state.json", '{"t1": {"env": {}, "transaction": {}, "post": {}}}'),
        [],
        "test t1: format 'state_test' has no chain to inspect",
    ),
    "missing pre_alloc": (engine_x_without_pre_alloc, ["--retrace"], "test serial_chain-max-1M: preHash 0x"),
    "malformed block RLP": (
        edited("blockchain_tests", corrupt_block_rlp),
        ["--retrace"],
        "test serial_chain-half-1M: blocks[1].rlp: not a block's RLP",
    ),
    "missing payload field": (
        edited("blockchain_tests_engine", drop_payload_timestamp),
        ["--retrace"],
        "test serial_chain-half-1M: engineNewPayloads[1].params[0].timestamp: Field required",
    ),
    "missing block field": (
        edited("blockchain_tests", drop_block_rlp),
        ["--retrace"],
        "test serial_chain-half-1M: blocks[0]: missing field 'rlp'",
    ),
    "pre account not an object": (
        edited("blockchain_tests", pre_account_in_a_list),
        [],
        "test serial_chain-half-1M: pre[0x",
    ),
    "malformed recorded graph": (
        edited("blockchain_tests", bad_graph),
        [],
        "test serial_chain-half-1M: _info.dependency-graph: tx-gas-used: Field required",
    ),
    "-k matching nothing": (lambda suite, tmp: suite, ["-k", "no_such_family"], "-k 'no_such_family' matches no fixture"),
    "missing t8n": (lambda suite, tmp: suite, ["-k", "greedy", "--retrace", "--evm-bin", "/nonexistent/evm"], "t8n binary not found"),
    "unwritable plot": (lambda suite, tmp: suite, ["-k", "greedy", "--plot", "/nonexistent/dir/g.png"], "--plot /nonexistent/dir/g.png: folder /nonexistent/dir does not exist"),
}


@pytest.mark.integration
@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_is_one_line_and_exit_2(suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    make, options, message = BAD_INPUTS[case]
    path = make(suite, tmp_path)
    assert run_inspect([str(path), *options]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("balgen inspect: ") and message in err, err


def test_the_command_is_dispatched_by_balgen(tmp_path: Path) -> None:
    """`balgen inspect` reaches the command (`balgen` started as a process of its own is tests/test_fill_faults.py's)."""
    completed = balgen_in_process("inspect", tmp_path / "missing")
    assert completed.returncode == 2
    assert completed.stderr == f"balgen inspect: {tmp_path / 'missing'}: does not exist\n"
