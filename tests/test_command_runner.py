"""
Every `balgen` command ends the same way, through one runner
(`balgen/commands/runner.py`): bad input is one line and exit code 2, a stop
signal one line and 128 + the signal, for every subcommand in `COMMANDS`.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import signal

import pytest

from balgen.commands.main import COMMANDS, main
from balgen.commands.runner import run_command
from balgen.plumbing.errors import BadInput
from balgen.plumbing.stop_signals import Stopped


def test_bad_input_is_one_escaped_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    def body() -> int:
        raise BadInput("fixtures/x.json: field `network`: \x1b[31mAmsterdamm\x1b[0m is no fork")

    assert run_command("verify", body) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("balgen verify: fixtures/x.json: field `network`:")
    assert "\x1b" not in err


@pytest.mark.parametrize(("stop", "code", "said"), [
    (KeyboardInterrupt(), 130, "interrupted"),
    (Stopped(signal.SIGTERM), 143, "terminated (SIGTERM)"),
    (Stopped(signal.SIGHUP), 129, "terminated (SIGHUP)"),
])
def test_a_stop_is_one_line_and_128_plus_the_signal(
    stop: BaseException, code: int, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    def body() -> int:
        raise stop

    assert run_command("genesis", body, stopped="; nothing written") == code
    assert capsys.readouterr().err == f"balgen genesis: {said}; nothing written\n"


def test_a_signal_during_the_body_unwinds_it(capsys: pytest.CaptureFixture[str]) -> None:
    """SIGTERM arrives while the command works: its `finally` runs, and the exit code says SIGTERM."""
    cleaned: list[str] = []

    def body() -> int:
        try:
            signal.raise_signal(signal.SIGTERM)
            return 0
        finally:
            cleaned.append("scratch removed")

    assert run_command("devnet-check", body) == 143
    assert cleaned == ["scratch removed"]
    assert capsys.readouterr().err == "balgen devnet-check: terminated (SIGTERM)\n"


def test_a_command_listed_exceptions_are_bad_input_too(capsys: pytest.CaptureFixture[str]) -> None:
    class RpcError(Exception):
        pass

    def body() -> int:
        raise RpcError("http://127.0.0.1:8545: eth_blockNumber answered a JSON integer, not hex text")

    assert run_command("devnet-check", body, bad_input=(RpcError,)) == 2
    assert "eth_blockNumber answered a JSON integer" in capsys.readouterr().err


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_subcommand_ends_through_the_runner(name: str) -> None:
    """No command catches BadInput or KeyboardInterrupt itself: the runner is the one place."""
    module_name, function_name = COMMANDS[name]
    module = importlib.import_module(module_name)
    tree = ast.parse(inspect.getsource(module))
    calls = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert "run_command" in calls, f"{module_name} does not end through run_command"
    swallowed = {
        ast.unparse(handler.type)
        for node in ast.walk(tree) if isinstance(node, ast.Try)
        for handler in node.handlers
        if handler.type is not None and not any(isinstance(n, ast.Raise) for n in ast.walk(handler))
    }
    assert not {"BadInput", "KeyboardInterrupt"} & swallowed, f"{module_name} ends on {swallowed} itself"
    assert callable(getattr(module, function_name))


def test_an_unknown_subcommand_lists_them_all(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fil"]) == 2
    err = capsys.readouterr().err
    assert all(name in err for name in COMMANDS)
