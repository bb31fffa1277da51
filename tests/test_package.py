"""
balgen as an installed package: what `pip install .` ships and how it finds
what it does not ship.

A user who installs the wheel has no checkout: the fillers and the package
data must be inside the package, the pytest plugin must come from the
`pytest11` entry point without disturbing any other pytest run of that
environment, and the binaries are found on a documented search path. What
pyproject.toml declares is exactly what the code imports.
"""

from __future__ import annotations

import ast
import filecmp
import importlib.metadata
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tomllib
from collections.abc import Mapping
from pathlib import Path

import pytest

from balgen.plumbing import toolchain
from balgen.plumbing.errors import BadInput
from balgen.plumbing.toolchain import located, required_tool, tools_bin

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SHIPPED_SOURCES = ("pyproject.toml", "README.md", "balgen", "fillers")
"""What the wheel is built from: the checkout's files that pyproject.toml names."""


def test_every_package_ships() -> None:
    """A package under balgen/ that pyproject.toml does not list would be missing from the wheel."""
    setuptools = PYPROJECT["tool"]["setuptools"]
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "balgen").rglob("__init__.py")
    } | {"balgen.fillers"}
    assert sorted(set(setuptools["packages"]) ^ on_disk) == [], "pyproject.toml's [tool.setuptools] packages"
    assert setuptools["package-dir"] == {"balgen.fillers": "fillers"}
    assert PYPROJECT["project"]["entry-points"]["pytest11"] == {"balgen.fill.plugin": "balgen.fill.plugin"}


# -- dependencies are declared exactly as imported ---------------------------------

RUNTIME_SOURCES = ("balgen", "fillers", "benchmarks", "scripts")
DEV_SOURCES = ("tests",)
USED_WITHOUT_IMPORT = {"pytest-xdist": "balgen fill -n", "setuptools": "test_the_wheel_fills_outside_the_checkout builds with it"}


def _distribution(requirement: str) -> str:
    """`rlp[rust-backend]>=4` -> `rlp`, normalized as PyPI compares names."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group()).lower()


def _imported_distributions(folders: tuple[str, ...], providers: Mapping[str, list[str]]) -> dict[str, str]:
    """Each third-party distribution the Python files under `folders` import, with one file importing it."""
    found: dict[str, str] = {}
    for folder in folders:
        local = {path.stem for path in (ROOT / folder).rglob("*.py")}
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for top in {name.split(".")[0] for name in names} - local - set(sys.stdlib_module_names) - {"balgen"}:
                    for distribution in providers.get(top, [f"<no installed distribution provides {top!r}>"]):
                        found.setdefault(_distribution(distribution), str(path.relative_to(ROOT)))
    return found


def test_dependencies_are_declared_as_imported() -> None:
    """What balgen and its tools import is a runtime dependency, what only the tests import a dev one, nothing more."""
    runtime = {_distribution(r) for r in PYPROJECT["project"]["dependencies"]}
    dev = {_distribution(r) for r in PYPROJECT["project"]["optional-dependencies"]["dev"]}
    providers = importlib.metadata.packages_distributions()
    imported_at_runtime = _imported_distributions(RUNTIME_SOURCES, providers)
    imported_by_tests = _imported_distributions(DEV_SOURCES, providers)
    undeclared = {d: f for d, f in imported_at_runtime.items() if d not in runtime}
    undeclared |= {d: f for d, f in imported_by_tests.items() if d not in runtime | dev}
    assert undeclared == {}, "imported (by the file shown) but not declared in pyproject.toml"
    unused = (runtime - set(imported_at_runtime) | dev - set(imported_by_tests)) - set(USED_WITHOUT_IMPORT)
    assert unused == set(), "declared in pyproject.toml but imported nowhere"


# -- the plugin acts in fills only ----------------------------------------------

OTHER_PROJECT_TESTS = '''
import json, os, signal
import pytest
from balgen.plumbing.errors import BadInput

def test_records_its_environment(request):
    seen = {
        "plugin": request.config.pluginmanager.has_plugin("balgen.fill.plugin"),
        "scratch": os.environ.get("BALGEN_FILL_SCRATCH"),
        "sigterm": repr(signal.getsignal(signal.SIGTERM)),
    }
    with open("seen.json", "w") as out:
        json.dump(seen, out)

def test_fails_with_bad_input():
    raise BadInput("a bug in the code under test")
'''


def test_plugin_leaves_other_test_runs_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """
    The entry point loads the plugin into every pytest run of the environment;
    outside a fill it installs no signal handlers, exports no scratch folder
    and keeps pytest's own failure report and exit code.
    """
    (tmp_path / "test_other.py").write_text(OTHER_PROJECT_TESTS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BALGEN_FILL_SCRATCH", raising=False)
    sigterm_before = signal.getsignal(signal.SIGTERM)
    code = pytest.main(
        [str(tmp_path), f"--rootdir={tmp_path}", "-p", "no:cacheprovider", "--import-mode=importlib", "-q", "-rf"]
    )
    assert code == pytest.ExitCode.TESTS_FAILED, "a failing test is exit code 1, not balgen's bad-input 2"
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["plugin"], "the pytest11 entry point did not load balgen.fill.plugin"
    assert seen["scratch"] is None and seen["sigterm"] == repr(sigterm_before), seen


# -- the tool search path -------------------------------------------------------


def _fake_tool(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    tool = folder / name
    tool.write_text("#!/bin/sh\necho fake\n")
    tool.chmod(0o755)
    return tool


def test_tools_are_searched_in_the_documented_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a checkout: the current directory's tools/bin, then PATH; BALGEN_TOOLS, when set, alone."""
    monkeypatch.setattr(toolchain, "checkout_root", lambda: None)
    monkeypatch.delenv("BALGEN_TOOLS", raising=False)
    monkeypatch.chdir(tmp_path)
    on_path = _fake_tool(tmp_path / "path-bin", "revme")
    monkeypatch.setenv("PATH", f"{on_path.parent}{os.pathsep}{os.environ['PATH']}")
    assert located("revme") == on_path
    in_cwd = _fake_tool(tmp_path / "tools" / "bin", "revme")
    assert located("revme") == in_cwd
    configured = tmp_path / "configured"
    configured.mkdir()
    monkeypatch.setenv("BALGEN_TOOLS", str(configured))
    assert located("revme") is None, "BALGEN_TOOLS is the only folder searched when set"
    assert _fake_tool(configured, "revme") == located("revme")


def test_a_missing_tool_says_where_balgen_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolchain, "checkout_root", lambda: None)
    monkeypatch.delenv("BALGEN_TOOLS", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(BadInput) as raised:
        required_tool("geth", "give --client-bin PATH")
    assert str(raised.value) == (
        f"geth: not found in {tmp_path / 'tools' / 'bin'}, PATH (run `make tools`, set BALGEN_TOOLS, or give --client-bin PATH)"
    )


# -- the wheel, installed into a fresh venv, fills ----------------------------------


def _run(*command: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    completed = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert completed.returncode == 0, f"{command}: {completed.stdout[-2000:]}{completed.stderr[-3000:]}"
    return completed.stdout


def built_wheel(tmp_path: Path) -> Path:
    """The wheel `pip wheel` builds from a copy of the checkout's sources (so no build/ lands in the checkout)."""
    source = tmp_path / "source"
    for name in SHIPPED_SOURCES:
        origin = ROOT / name
        if origin.is_dir():
            ignored = {"__pycache__", ".pytest_cache"}
            shutil.copytree(origin, source / name, ignore=lambda _, names: [n for n in names if n in ignored])
        else:
            source.mkdir(exist_ok=True)
            shutil.copyfile(origin, source / name)
    wheels = tmp_path / "wheels"
    _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--wheel-dir", wheels, source)  # fmt: skip
    (wheel,) = wheels.glob("balgen-*.whl")
    return wheel


def fresh_venv(tmp_path: Path, wheel: Path) -> Path:
    """
    A new venv holding the wheel and, for its dependencies only, a .pth line to
    this environment's site-packages. Python does not read the .pth files of a
    folder added that way, so this environment's editable hook for balgen stays
    inactive: balgen's code, data, fillers, entry points and `balgen` script come
    from the wheel alone (the test checks where they were imported from).
    """
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", "--no-index", wheel)
    return venv


@pytest.mark.integration
def test_the_wheel_fills_outside_the_checkout(tmp_path: Path, serial_chain_fill: Path) -> None:
    """
    `pip install` of the wheel into a fresh venv gives a `balgen fill` that
    writes, from a folder outside the checkout, the same bytes the checkout
    writes (the fixture's `_info` names `fillers/test_serial_chain.py` either way).
    """
    venv = fresh_venv(tmp_path, built_wheel(tmp_path))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {name: value for name, value in os.environ.items() if name not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env |= {"BALGEN_TOOLS": str(tools_bin()), "BALGEN_CACHE": str(tmp_path / "cache")}
    imported = "import balgen.fillers, balgen.ethereum, balgen.fill.plugin; print(balgen.fillers.__file__)"
    where = _run(venv / "bin" / "python", "-c", imported, cwd=outside, env=env).strip()
    assert Path(where).is_relative_to(venv), f"balgen imported from {where}, not from the wheel"
    _run(venv / "bin" / "balgen", "fill", "--gas-benchmark-values", "1", "-k", "serial_chain-max",
         "--output", "fixtures", cwd=outside, env=env)  # fmt: skip
    written = sorted(path.relative_to(outside / "fixtures") for path in (outside / "fixtures").rglob("*.json"))
    assert written == sorted(path.relative_to(serial_chain_fill) for path in serial_chain_fill.rglob("*.json"))
    assert len(written) == 4
    for relative in written:
        assert filecmp.cmp(outside / "fixtures" / relative, serial_chain_fill / relative, shallow=False), relative
