"""
The registry of clients (`balgen/clients/kinds/`): each client's knowledge is
in its own module, the generic code decides nothing by a client's name, and
every client balgen knows can be named on the command line.
"""

from __future__ import annotations

import ast
import os
import stat
from pathlib import Path

import pytest

from balgen.clients.kind import UncheckedReasons
from balgen.clients.kinds import DEFAULT, KINDS, kind_named, kind_of_version
from balgen.commands.replay import checked_request
from balgen.plumbing.errors import BadInput
from balgen.replay.rejections import reason_unchecked, rejection_reason_problem

ROOT = Path(__file__).resolve().parent.parent
KINDS_FOLDER = ROOT / "balgen" / "clients" / "kinds"

ALLOWED: dict[str, str] = {
    "balgen/plumbing/toolchain.py": "the file names of the builds `make tools` makes, below the clients' layer",
    "balgen/verify/outcomes.py": "the verifier named after go-ethereum's evm, a verifier and not the client",
    "balgen/commands/verify.py": "the same verifier's name, in `--without`",
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
