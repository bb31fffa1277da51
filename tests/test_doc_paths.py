"""
The map kept true: every path to a file of balgen quoted in docs/, the README and a docstring exists.

A quoted path (`fixtures/models.py`, `balgen/clients/client_presets.py`, `chain/t8n.Receipts`)
is taken relative to the checkout, to `balgen/` (a docstring names modules by their layer) or to
the quoting file's folder; a dotted name (`balgen.verify.ethereumjs`) must import; and a package's
docstring, which maps its modules, names each in parentheses (`(runner)`) as a module of the package.
The paths of other projects' repositories that the docs cite are listed here, with their repository.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from balgen.plumbing.layers import LAYERS

ROOT = Path(__file__).resolve().parent.parent
QUOTED = re.compile(r"`([^`\s]+)`")
PATH = re.compile(r"[\w.-]+(?:/[\w.-]+)+/?")
MODULE_IN_PARENTHESES = re.compile(r"\(`([a-z_][a-z0-9_]*)`")

FOREIGN = {
    "tests/init.go": "go-ethereum",
    "fixtures/blockchain.py": "execution-specs (packages/testing)",
    "fixtures/common.py": "execution-specs (packages/testing)",
    "fixtures/base.py": "execution-specs (packages/testing)",
    "fixtures/pre_alloc_groups.py": "execution-specs (packages/testing)",
    "clients/besu/": "hive",
    "clients/erigon/": "hive",
    "clients/nethermind/": "hive",
}
"""Paths in other projects' repositories that balgen's docs cite, and whose they are."""

FOREIGN_FOLDERS = ("tests/benchmark/", "tests/amsterdam/")
"""execution-specs' test folders (its fillers), which the workload docs cite."""

WRITTEN_ELSEWHERE = {"balgen/fillers/": "the installed package (`fillers/` of the checkout ships as `balgen.fillers`)"}
"""Paths that exist where balgen is installed rather than in the checkout."""


def docstrings(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every docstring of a module: the module's, its classes' and functions', and each
    string statement documenting an assignment."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            yield node.lineno, node.value.value


def quoted(text: str, first_line: int) -> Iterator[tuple[int, str]]:
    for offset, line in enumerate(text.splitlines()):
        for token in QUOTED.findall(line):
            yield first_line + offset, token


def quotations() -> Iterator[tuple[Path, int, str]]:
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for line, token in quoted(doc.read_text(), 1):
            yield doc, line, token
    for module in sorted((ROOT / "balgen").rglob("*.py")):
        for first, text in docstrings(module):
            for line, token in quoted(text, first):
                yield module, line, token


def ours(path: str) -> bool:
    """Whether a quoted path names a file of balgen's checkout: it starts at one of its top-level entries or layers."""
    first = path.split("/")[0]
    if first in {".", ".."}:
        return False  # a folder beside the checkout, or one a command is run in
    if first in git_ignored_entries():
        return False  # output a command writes (out/, results/, fixtures/): whether it exists says nothing of the docs
    return first == "balgen" or (ROOT / first).exists() or first in {layer.folder for layer in LAYERS}


@functools.cache
def git_ignored_entries() -> frozenset[str]:
    """The checkout's git-ignored top-level entries, from its own .gitignore (read once, not per quoted path)."""
    lines = (ROOT / ".gitignore").read_text().splitlines()
    return frozenset(line.strip().strip("/") for line in lines if line.startswith("/"))


def exists(path: str, quoting: Path) -> bool:
    """Whether `path` names a file or folder, from the checkout, `balgen/` or the quoting file's folder;
    `module.Name` is the module's file."""
    module, _, attribute = path.rpartition(".")
    forms = [path, f"{module}.py"] if attribute and "/" not in attribute and not path.endswith("/") else [path]
    return any((base / form).exists() for base in (ROOT, ROOT / "balgen", quoting.parent) for form in forms)


def imports(dotted: str) -> bool:
    """Whether `balgen.x.y` is a module, or an attribute of one."""
    module, attribute = dotted, None
    while module:
        try:
            found = importlib.import_module(module)
        except ModuleNotFoundError:
            module, _, attribute = module.rpartition(".")
            continue
        rest = dotted[len(module) + 1 :].split(".") if dotted != module else []
        for name in rest:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def stale_quotations() -> list[str]:
    stale = []
    for quoting, line, token in quotations():
        where = f"{quoting.relative_to(ROOT)}:{line}: {token}"
        if PATH.fullmatch(token) and ours(token):
            if token in FOREIGN or token.startswith(FOREIGN_FOLDERS) or token in WRITTEN_ELSEWHERE:
                continue
            if not exists(token, quoting):
                stale.append(where)
        elif re.fullmatch(r"balgen(\.[A-Za-z_]\w*)+", token) and not imports(token):
            stale.append(where)
    return stale


def test_every_quoted_path_and_module_exists() -> None:
    assert stale_quotations() == []


@pytest.mark.parametrize("package", sorted((ROOT / "balgen").glob("*/__init__.py")), ids=lambda path: path.parent.name)
def test_each_package_docstring_names_its_own_modules(package: Path) -> None:
    folder = package.parent
    modules = {path.stem for path in folder.glob("*.py")} | {path.name for path in folder.iterdir() if path.is_dir()}
    text = ast.get_docstring(ast.parse(package.read_text())) or ""
    assert {name for name in MODULE_IN_PARENTHESES.findall(text) if name not in modules} == set()


def test_the_check_finds_a_stale_path(tmp_path: Path) -> None:
    """A path that moved is found, whichever way it is quoted."""
    quoting = ROOT / "docs" / "design.md"
    assert exists("fixtures/models.py", quoting) and exists("balgen/fixtures/models.py", quoting)
    assert exists("chain/t8n.Receipts", quoting) and exists("docs/images/", quoting)
    assert not exists("fixtures/streamed_json.py", quoting) and not exists("balgen/replay/client_presets.py", quoting)
    assert imports("balgen.verify.ethereumjs") and imports("balgen.fixtures.models.Fixture")
    assert not imports("balgen.client_genesis") and not imports("balgen.fixtures.models.NoSuchModel")
