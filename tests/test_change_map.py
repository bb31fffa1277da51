"""
The map kept true: rows of docs/design.md's "where does my change go", tried.

Each test makes one kind of change in a temporary copy of the checkout exactly as its row says,
touching only the files the row names, and runs the suite's own checks on the copy (the
layers, the registry's or the families' tests); with the pinned tools, it also fills the new
thing and reads it back with the commands. A row that stops being true (a place keyed on
names that the row does not mention) fails here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TABLE = (ROOT / "docs" / "design.md").read_text().split("### Where does my change go", 1)[1].split("\n\n", 2)[1]
"""The table's text."""


def row(kind: str) -> str:
    """The table's row for `kind` of change."""
    (found,) = [line for line in TABLE.splitlines() if line.startswith(f"| {kind} |")]
    return found


def checkout_copy(tmp_path: Path) -> Path:
    """
    The checkout's sources copied into `tmp_path`, and `balgen.fillers` mapped to its fillers as the
    editable install maps the checkout's. The bytecode comes along: a copied source keeps its size and
    modification time, which is what its cached bytecode is checked against, so the copy's processes
    compile only the files a test changes (recompiling the whole tree was a CPU-second per test).
    """
    copy = tmp_path / "checkout"
    for folder in ("balgen", "fillers", "tests", "docs", "scripts"):
        shutil.copytree(ROOT / folder, copy / folder)
    for name in ("pyproject.toml", "README.md", "Makefile", ".gitignore"):
        shutil.copy(ROOT / name, copy / name)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(FILLERS_FINDER.format(fillers=copy / "fillers"))
    return copy


FILLERS_FINDER = """
import importlib.util
import sys


class CopiedFillers:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "balgen.fillers":
            return None
        return importlib.util.spec_from_file_location(
            name, "{fillers}/__init__.py", submodule_search_locations=["{fillers}"]
        )


sys.meta_path.insert(0, CopiedFillers)
"""
"""`balgen.fillers` found in the copy's `fillers/`, as the editable install finds the checkout's."""


def in_copy(
    copy: Path, *argv: str, tools: bool = False, autoload: bool = True, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """
    `python argv` run on the copy's sources (they come first on the import path). The copy's bytecode
    is written in the copy (whatever PYTHONDONTWRITEBYTECODE says: the copy is this test's), so that
    only a test's first process compiles the copy's modules, not each of them.
    """
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = f"{copy.parent / 'site'}{os.pathsep}{copy}"
    if tools:  # the copy has no tools/bin: the checkout's, unless BALGEN_TOOLS names others
        env.setdefault("BALGEN_TOOLS", str(ROOT / "tools" / "bin"))
    if not autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run(
        [sys.executable, *argv], cwd=copy, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def suite_checks(copy: Path, probe: str, *tests: str) -> str:
    """
    The suite's tests `tests` (tools-free ones), run on the copy, pass; returns what `probe` (Python
    run first, in the same interpreter, so that the copy's modules are imported once for both) printed.
    The venv's plugins (hypothesis, xdist, anyio, balgen's filler) are no part of these checks; loading
    them was a third of the run.
    """
    pytest_argv = [*tests, "-q", "-p", "no:cacheprovider", "-m", "not integration"]
    script = f"{probe}\nprint({PROBE_END!r}, flush=True)\nimport sys, pytest\nsys.exit(pytest.main({pytest_argv!r}))"
    ran = in_copy(copy, "-c", script, autoload=False)
    probed, separator, checks = ran.stdout.partition(PROBE_END)
    assert separator, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert ran.returncode == 0, checks[-3000:] + ran.stderr[-2000:]
    return probed


PROBE_END = "-- end of the probe --"
"""Printed between the probe's output and the suite checks' in `suite_checks`."""


def commands_in_copy(copy: Path, *commands: list[str]) -> list[tuple[int, str, str]]:
    """
    Each `balgen` command of `commands` (a list of arguments each) run on the copy's sources, one after
    the other in one interpreter as `tests/in_process.py` runs them in the test process: the exit code,
    what it printed and what it complained of, for each. A command after one that failed does not run.
    """
    script = f"""
import contextlib, io, json, sys
from balgen.commands.main import main
outcomes = []
for argv in {[list(command) for command in commands]!r}:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    outcomes.append([code, out.getvalue(), err.getvalue()])
    if code != 0:
        break
print({PROBE_END!r} + json.dumps(outcomes))
"""
    ran = in_copy(copy, "-c", script, tools=True)
    assert ran.returncode == 0 and PROBE_END in ran.stdout, ran.stdout[-3000:] + ran.stderr[-3000:]
    return [tuple(outcome) for outcome in json.loads(ran.stdout.rsplit(PROBE_END, 1)[1])]


def appended(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


# -- a fixture format -----------------------------------------------------------

FORMAT_MODEL = '''

class BlockchainEngineTwinFixture(BlockchainEngineFixture):
    """Engine payloads under a format name of their own (added by tests/test_change_map.py)."""

    fixture_format = FixtureFormat(
        "blockchain_test_engine_twin",
        "engine_twin",
        recognised_by=frozenset({"engineNewPayloads", "twinOf"}),
        chain="payloads",
        replayable=True,
        verifiers=frozenset({"engine"}),
        holds_rejections=True,
    )
'''

FORMAT_RENDERER = '''

from .models import BlockchainEngineTwinFixture  # noqa: E402


@renders(BlockchainEngineTwinFixture)
def engine_twin_fixture(filled: FilledChains) -> dict[str, Any]:
    """`blockchain_test_engine_twin`: the engine fixture's document."""
    return engine_fixture(filled)
'''


@pytest.fixture(scope="module")
def format_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy with a new fixture format, added as the table's row says: a model and its renderer (both tests read it)."""
    assert "`balgen/fixtures/models.py`" in row("a fixture format") and "`fixtures/render.py`" in row("a fixture format")
    copy = checkout_copy(tmp_path_factory.mktemp("new-format"))
    appended(copy / "balgen" / "fixtures" / "models.py", FORMAT_MODEL)
    appended(copy / "balgen" / "fixtures" / "render.py", FORMAT_RENDERER)
    return copy


def test_a_new_fixture_format_is_a_model_and_a_renderer(format_copy: Path) -> None:
    seen = suite_checks(
        format_copy,
        "from balgen.replay.discovery import FORMAT_CHOICES; from balgen.analysis.fixture_chain import FORMATS; "
        "from balgen.fixtures.render import RENDERERS; "
        "print(sorted(FORMAT_CHOICES), 'blockchain_test_engine_twin' in FORMATS, [m.__name__ for m in RENDERERS])",
        "tests/test_format_registry.py", "tests/test_layers.py",
    )  # fmt: skip
    assert "'engine_twin'" in seen and "True" in seen and "BlockchainEngineTwinFixture" in seen


@pytest.mark.integration
def test_a_new_fixture_format_is_filled_inspected_and_verified(format_copy: Path, tmp_path: Path) -> None:
    output = tmp_path / "fixtures"
    twin = output / "blockchain_tests_engine_twin"
    (filled, inspected, verified) = commands_in_copy(
        format_copy,
        ["fill", "--gas-benchmark-values", "1", "-k", "serial_chain-max", "--output", str(output)],
        ["inspect", str(twin)],
        ["verify", str(twin), "--without", "geth,revm,ethereumjs"],
    )  # fmt: skip
    assert filled[0] == 0, filled[2]
    assert [path.name for path in twin.rglob("*.json")] == ["serial_chain-max-1M.json"]
    assert inspected[0] == 0 and "engine_twin" in inspected[1], inspected[2]
    assert verified[0] == 0, verified[1][-2000:] + verified[2]
    assert "engine 1/1" in verified[1]


# -- a workload family ------------------------------------------------------------

FAMILY_MODULE = '''"""
`echo_chain`: serial_chain's block under a family name of its own (added by tests/test_change_map.py).
"""

from __future__ import annotations

from ..model.family import Family
from ..model.invalid_access_list import Corruption
from ..model.workload import Workload, WorkloadParams
from .chains import chain_workload
from .serial_chain import serial_chain_contract


def echo_chain(params: WorkloadParams) -> Workload:
    """The echo chain at `params`' fork, gas value and fill level."""
    return chain_workload(params, "echo_chain", serial_chain_contract(params))


FAMILY = Family(
    "echo_chain",
    echo_chain,
    predicted_counts=(("writes.storage_slots", "tx_count"),),
    lies_it_cannot_tell=frozenset({Corruption.MISSING_READ}),
)
'''

FAMILY_FILLER = '''"""Fillers for `echo_chain`."""

import pytest

from balgen.generators import echo_chain


@pytest.mark.workload(family=echo_chain.FAMILY)
def test_echo_chain(workload, fill):
    """serial_chain's block under a family name of its own."""
    fill(workload)
'''


@pytest.fixture(scope="module")
def family_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy with a new family, added as the table's row says: a generator module listed in the catalog, a
    filler and a section of docs/workloads.md (both tests read it)."""
    family_row = row("a workload family")
    assert all(place in family_row for place in ("`balgen/generators/`", "`generators/catalog.py`", "`fillers/test_<family>.py`"))
    copy = checkout_copy(tmp_path_factory.mktemp("new-family"))
    (copy / "balgen" / "generators" / "echo_chain.py").write_text(FAMILY_MODULE)
    catalog = copy / "balgen" / "generators" / "catalog.py"
    text = catalog.read_text().replace("bal_bound, coinbase_serialization,", "bal_bound, coinbase_serialization, echo_chain,", 1)
    catalog.write_text(text.replace("        bal_bound.FAMILY,\n", "        bal_bound.FAMILY,\n        echo_chain.FAMILY,\n", 1))
    (copy / "fillers" / "test_echo_chain.py").write_text(FAMILY_FILLER)
    appended(copy / "docs" / "workloads.md", "\n## `echo_chain`\n\nserial_chain's block under a family name of its own.\n")
    return copy


def test_a_new_family_is_a_generator_module_a_filler_and_a_section(family_copy: Path) -> None:
    seen = suite_checks(
        family_copy,
        "from balgen.generators.catalog import families; from balgen.replay.expected_counts import expected_counts; "
        "print([f.name for f in families() if 'echo_chain' in f.name]); "
        "print(expected_counts({'family': 'echo_chain', 'tx_count': 7}, parallel_execution=True))",
        "tests/test_families.py::test_no_combination_is_skipped",
        "tests/test_invalid_bal.py::test_the_invalid_families_are_opt_in_and_selected_by_name",
        "tests/test_layers.py", "tests/test_doc_paths.py",
    )  # fmt: skip
    assert "['echo_chain', 'invalid_bal_echo_chain']" in seen
    assert "Expectation(counter='writes.storage_slots', least=7" in seen


@pytest.mark.integration
def test_a_new_family_is_filled_with_its_invalid_twin(family_copy: Path, tmp_path: Path) -> None:
    output = tmp_path / "fixtures"
    filled = in_copy(
        family_copy, "-m", "balgen.commands.main", "fill", "--gas-benchmark-values", "1",
        "-k", "echo_chain-max-1M or invalid_bal_echo_chain-max-missing_account_rehashed", "--output", str(output), tools=True,
    )  # fmt: skip
    assert filled.returncode == 0, filled.stderr
    names = sorted(path.name for path in (output / "blockchain_tests_engine_x").rglob("*.json") if "pre_alloc" not in path.parts)
    assert names == ["echo_chain-max-1M.json", "invalid_bal_echo_chain-max-missing_account_rehashed-1M.json"]
