"""
The registry of clients (`balgen/clients/kinds/`): each client's knowledge is
in its own module, the generic code decides nothing by a client's name, and
every client balgen knows can be named on the command line.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from balgen.clients.kind import UncheckedReasons
from balgen.clients.kinds import DEFAULT, KINDS, kind_named, kind_of_version
from balgen.commands.replay import checked_request
from balgen.clients.slow_block_log import SlowBlockLogReader
from balgen.plumbing.errors import BadInput
from balgen.replay.rejections import reason_unchecked, rejection_reason_problem

ROOT = Path(__file__).resolve().parent.parent
KINDS_FOLDER = ROOT / "balgen" / "clients" / "kinds"

ALLOWED: dict[str, str] = {
    "balgen/plumbing/toolchain.py": "the file names of the builds `make tools` makes, below the clients' layer",
    "balgen/verify/outcomes.py": "the verifier named after go-ethereum's evm, a verifier and not the client",
    "balgen/commands/verify.py": "the same verifier's name, in `--without`",
    "balgen/fixtures/models.py": "the verifiers that read each fixture format, by the names `balgen verify` gives them",
    "balgen/results/schema.py": "the field results.json's version 1 named after geth, read from old files",
}
"""Where a client's name may be a string literal outside its module, and why (none of them decides about a client)."""


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (of the module, a class, a function, an attribute)."""
    found = set()
    for node in ast.walk(tree):
        for statement in getattr(node, "body", []) if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) else []:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str):
                found.add(id(statement.value))
    return found


def client_literals(root: Path, names: set[str]) -> list[str]:
    """Every string literal of `root/balgen` outside `clients/kinds/` that is one of `names` (any case), as `path:line: value`."""
    found = []
    for path in sorted((root / "balgen").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if path.parent == root / "balgen" / "clients" / "kinds" or relative in ALLOWED:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                if node.value.lower() in names:
                    found.append(f"{relative}:{node.lineno}: {node.value!r}")
    return found


def client_words() -> set[str]:
    """Each client's name, the first word of its `web3_clientVersion` and the names of its builds, lower case."""
    words = set()
    for kind in KINDS.values():
        words |= {kind.name, kind.version_prefix.lower()} | {tool for tool in (kind.tool, kind.modes_tool) if tool}
    return words


def test_no_client_name_is_a_literal_outside_its_module() -> None:
    assert client_literals(ROOT, client_words()) == []


def test_the_literal_check_finds_a_client_named_in_generic_code(tmp_path: Path) -> None:
    (tmp_path / "balgen" / "replay").mkdir(parents=True)
    (tmp_path / "balgen" / "replay" / "chooser.py").write_text(
        '"""Picks a client by name (the docstring may say geth)."""\n\ndef pick(name):\n    return name == "Reth"\n'
    )
    assert client_literals(tmp_path, client_words()) == ["balgen/replay/chooser.py:4: 'Reth'"]


def test_every_module_of_the_folder_is_one_client_named_after_it() -> None:
    modules = sorted(path.stem for path in KINDS_FOLDER.glob("*.py") if path.stem != "__init__")
    assert sorted(KINDS) == modules
    assert DEFAULT.reference and sum(kind.reference for kind in KINDS.values()) == 1
    assert len({kind.version_prefix.lower() for kind in KINDS.values()}) == len(KINDS)


@pytest.mark.parametrize(
    ("client_version", "name"),
    [
        ("Geth/v1.17.8-stable-a1b2c3d4/linux-amd64/go1.24.4", "geth"),
        ("reth/v2.5.1-dev-7b3432d/x86_64-unknown-linux-gnu", "reth"),
        ("Nethermind/v1.36.0+1a2b3c4d/linux-x64/dotnet9.0.7", "nethermind"),
        ("besu/v25.11.0/linux-x86_64/openjdk-java-21", "besu"),
        ("erigon/3.3.0/linux-amd64/go1.24.4", "erigon"),
        ("ethrex/v7.0.0-main-1a2b3c4/x86_64-unknown-linux-gnu/rustc-v1.90.0", "ethrex"),
        ("Lighthouse/v7.0.0", None),
        (None, None),
    ],
)
def test_a_client_is_recognised_by_its_version(client_version: str | None, name: str | None) -> None:
    kind = kind_of_version(client_version)
    assert (kind.name if kind else None) == name


def test_an_unknown_client_names_the_known_ones() -> None:
    with pytest.raises(BadInput, match=r"--client 'gethh': unknown client \(known: geth, besu, erigon"):
        kind_named("gethh")


def test_a_client_whose_reasons_are_not_mapped_says_so_in_the_checks() -> None:
    """A rejection is then checked for INVALID alone, and the test's checks say that, naming why."""
    expected = "BlockException.INVALID_BLOCK_ACCESS_LIST"
    for kind in KINDS.values():
        version = f"{kind.version_prefix}/v1.0.0"
        note = reason_unchecked(version, expected)
        if isinstance(kind.rejection_reasons, UncheckedReasons):
            assert rejection_reason_problem(version, expected, "anything") is None
            assert note == f"rejection reason not checked: {kind.rejection_reasons.why}"
        else:
            assert note is None and rejection_reason_problem(version, expected, "anything") is not None
    assert reason_unchecked("Lighthouse/v7.0.0", expected) == (
        "rejection reason not checked: balgen does not know the client 'Lighthouse/v7.0.0'"
    )
    assert reason_unchecked("Geth/v1.17.8", "BlockException.GAS_USED_OVERFLOW") == (
        "rejection reason not checked: geth has no pattern for BlockException.GAS_USED_OVERFLOW"
    )


@pytest.mark.parametrize("name", sorted(KINDS))
def test_replay_client_name_starts_each_preset(name: str, serial_chain_fill: Path, tmp_path: Path) -> None:
    """`balgen replay --client NAME --client-bin PATH` is a checked request for every client (nothing started)."""
    binary = tmp_path / "client"
    binary.write_text("#!/bin/sh\necho client 1.0\n")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    fixtures = serial_chain_fill / "blockchain_tests_engine_x"
    request = checked_request([str(fixtures), "--client", name.upper(), "--client-bin", str(binary), "--output", str(tmp_path / "out")])
    assert request.target.preset == KINDS[name].preset and request.label == name  # type: ignore[union-attr]
    assert os.path.isdir(tmp_path / "out")


# -- the block logs of the clients balgen cannot run here, on lines from their own source ----------------

ETHREX_BLOCK = [
    # lambdaclass/ethrex tooling/sync/test_fullsync_metrics.py (commit 9e7da753): lines captured from ethrex runs
    "2026-07-23T17:38:20.225580Z  INFO [METRIC] BLOCK 500 0x5f6929cf8b4d0fccf50629ed23704c43819811c5ddbe3bfa0aca83f463afaf2e | 1.750 Ggas/s | 51.41 ms | 2569 txs | 90 Mgas (98%)",
    "2026-07-23T17:38:20.225584Z  INFO   |- validate:    3.50 ms  ( 7%)",
    "2026-07-23T17:38:20.225586Z  INFO   |- exec:       47.41 ms  (92%) << BOTTLENECK",
    "2026-07-23T17:38:20.225588Z  INFO   |- merkle:      0.07 ms  ( 0%)  [concurrent: 37.38 ms, drain: 0.07 ms, overlap: 100%, queue: 2, start_delay: 0.25 ms]",
    "2026-07-23T17:38:20.225591Z  INFO   |- store:       0.43 ms  ( 1%)",
    "2026-07-23T17:38:20.225593Z  INFO   `- warmer:     20.33 ms         [finished: 27.08 ms before exec]",
]


def test_ethrex_metric_block_lines_give_its_phases() -> None:
    (timing,) = KINDS["ethrex"].block_log.timings(["INFO Importing block", *ETHREX_BLOCK])  # type: ignore[union-attr]
    assert (timing.block_number, timing.block_hash) == (500, "0x5f6929cf8b4d0fccf50629ed23704c43819811c5ddbe3bfa0aca83f463afaf2e")
    assert (timing.total_ms, timing.execution_ms, timing.state_hash_ms, timing.commit_ms) == (51.41, 47.41, 0.07, 0.43)
    assert timing.gas_used == 90_000_000 and timing.mgas_per_sec == pytest.approx(1750.0)


def test_an_ethrex_header_without_a_hash_is_taken_for_the_block_just_sent(tmp_path: Path) -> None:
    """crates/blockchain/blockchain.rs, `print_add_block_pipeline_logs`: `[METRIC] BLOCK {} | {:.3} Ggas/s | {:.2} ms | ...`."""
    log = tmp_path / "ethrex.log"
    log.write_text("\n".join([
        "2026-11-28T12:00:00.000000Z  INFO [METRIC] BLOCK 2 | 0.054 Ggas/s | 18.51 ms | 1 txs | 1 Mgas (3%)",
        "2026-11-28T12:00:00.000001Z  INFO   |- validate:    0.20 ms  ( 1%)",
        "2026-11-28T12:00:00.000002Z  INFO   |- exec:       15.10 ms  (82%) << BOTTLENECK",
    ]) + "\n")  # fmt: skip
    timing = SlowBlockLogReader(log, KINDS["ethrex"].block_log.timings).timing_of("0x" + "ab" * 32)  # type: ignore[union-attr]
    assert timing is not None and (timing.block_number, timing.block_hash, timing.total_ms) == (2, "", 18.51)
    assert timing.execution_ms == 15.10 and timing.commit_ms == 0.0, "a phase not logged yet counts nothing"


ERIGON_SLOW_BLOCK = (
    # erigontech/erigon execution/blockmetrics/slowblock.go (commit bbfe425e): `Emit` logs the `slowBlockLog`
    # JSON as a WARN record, `[WARN] [time] {...}` on the console (the harness pattern of its slowblock_test.go);
    # the values are its test's `sampleRecord()` (counters not collected).
    '[WARN] [11-28|12:00:00.000] {"level":"warn","msg":"Slow block","block":{"number":1234,'
    '"hash":"0x0000000000000000000000000000000000000000000000000000000000000abc","gas_used":30000000,"tx_count":7},'
    '"timing":{"execution_ms":40,"state_read_ms":0,"state_hash_ms":50,"commit_ms":10,"total_ms":100},'
    '"throughput":{"mgas_per_sec":750}}'
)


def test_erigon_slow_block_lines_read_like_geths() -> None:
    (timing,) = KINDS["erigon"].block_log.timings(["[INFO] [11-28|12:00:00.000] head updated", ERIGON_SLOW_BLOCK])  # type: ignore[union-attr]
    assert (timing.block_number, timing.gas_used, timing.total_ms, timing.state_hash_ms) == (1234, 30_000_000, 100.0, 50.0)
    assert timing.block_hash.endswith("abc") and timing.counts is None
    assert "--debug.slow-block-threshold 0" in KINDS["erigon"].preset.node_command


# -- the map: adding a client is what docs/design.md's table says, and the suite's checks pass ------------

FAKE_CLIENT = "fakeclient"
FAKE_MODULE = '''"""
fakeclient: a client made up by tests/test_client_kinds.py to try docs/design.md's row for a new client.
"""

from __future__ import annotations

from ..kind import ClientKind, UncheckedReasons
from ..modes import standard_modes
from ..presets import ClientPreset, Rollback
from .geth import GENESIS

KIND = ClientKind(
    preset=ClientPreset(
        name="fakeclient",
        genesis_format=GENESIS,
        init_command=None,
        node_command="{bin} --genesis {genesis} --datadir {datadir} --engine-port {engine_port} --rpc-port {rpc_port} --jwt {jwt}",
        rollback=Rollback.RESTORE_COPY,
    ),
    version_prefix="FakeClient",
    rejection_reasons=UncheckedReasons("a made-up client"),
    modes=standard_modes(False, sequential="--serial", full="", nobatchio="--no-prefetch"),
)
'''
FAKE_TEST = '''"""The made-up client is found by name and version, and the replay and genesis commands offer it."""

from balgen.clients.kinds import KINDS, kind_of_version
from balgen.commands.genesis import genesis_parser
from balgen.commands.replay import replay_parser


def test_the_new_client_is_registered_and_offered() -> None:
    assert kind_of_version("FakeClient/v0.1.0") is KINDS["fakeclient"]
    assert "fakeclient" in replay_parser().format_help() and "fakeclient" in genesis_parser().format_help()
'''


def design_row(kind_of_change: str) -> str:
    """The row of docs/design.md's "where does my change go" table for `kind_of_change`."""
    rows = [line for line in (ROOT / "docs" / "design.md").read_text().splitlines() if line.startswith(f"| {kind_of_change} |")]
    assert len(rows) == 1, f"docs/design.md has {len(rows)} rows for {kind_of_change!r}"
    return rows[0]


def test_adding_a_client_is_the_module_and_test_the_design_table_names(tmp_path: Path) -> None:
    """
    A copy of the checkout, with exactly the files docs/design.md's client row names for a new client (its
    module and its test) and nothing else changed, passes the suite's checks of the client registry, the
    layers and the literal names, and its own test.
    """
    row = design_row("a client")
    named = [path.replace("<client>", FAKE_CLIENT) for path in re.findall(r"`([^`]*<client>[^`]*)`", row)]
    assert sorted(named) == [f"balgen/clients/kinds/{FAKE_CLIENT}.py", f"tests/test_client_{FAKE_CLIENT}.py"], row
    copy = tmp_path / "checkout"
    for folder in ("balgen", "tests", "docs"):  # with the bytecode: see tests/test_change_map.py's checkout_copy
        shutil.copytree(ROOT / folder, copy / folder)
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    (copy / named[0]).write_text(FAKE_MODULE)
    (copy / named[1]).write_text(FAKE_TEST)
    checks = ["tests/test_client_kinds.py", "tests/test_layers.py", "tests/test_every_module_imports.py", named[1]]
    # The venv's plugins (hypothesis, xdist, anyio, balgen's filler) are no part of these checks: loading
    # them, assertion-rewritten, was a third of this nested run.
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy), os.environ.get("PYTHONPATH", "")]), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", *checks, "-q", "-p", "no:cacheprovider",
         "-k", "not adding_a_client and not starts_each_preset"],
        cwd=copy, env=environment, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    assert " passed" in completed.stdout and "failed" not in completed.stdout
