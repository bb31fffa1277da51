"""
Every `balgen` subcommand parses its options with the same `OneLineParser`:
a usage error is one line naming the command and the option, exit code 2.
Every `-k` selects test ids as pytest's own `-k` does, and a malformed one is
one line naming the word and column. SIGTERM, SIGHUP and SIGQUIT unwind every
command as Ctrl-C does and name themselves.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from _pytest.mark import deselect_by_keyword  # what pytest's own `-k` runs

from balgen.commands.main import COMMANDS, main
from balgen.plumbing.command_line import BAD_INPUT_EXIT_CODE, keyword_matcher, matches
from balgen.plumbing.errors import BadInput
from balgen.plumbing.stop_signals import stop_exit_code, stop_name, stop_signals_unwind

USAGE_ERRORS = {
    "fill": ["fill", "--output"],
    "inspect": ["inspect", "fixtures", "--plot"],
    "replay": ["replay", "--output"],
    "report": ["report", "--output"],
    "genesis": ["genesis", "--output"],
    "export": ["export", "spamoor", "--output"],
    "devnet-check": ["devnet-check", "--rpc-url"],
    "devnet-genesis": ["devnet-genesis", "--output"],
    "verify": ["verify", "--without"],
    "state": ["state", "build", "small", "--fork"],
}


def test_every_command_has_a_usage_error_case() -> None:
    assert sorted(USAGE_ERRORS) == sorted(COMMANDS)


@pytest.mark.parametrize("command", sorted(USAGE_ERRORS))
def test_usage_error_is_one_line_and_exit_2(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = USAGE_ERRORS[command]
    assert main(argv) == BAD_INPUT_EXIT_CODE
    captured = capsys.readouterr()
    prog = " ".join(argv[:2]) if command == "export" else argv[0]
    assert captured.err == f"balgen {prog}: argument {argv[-1]}: expected one argument\n"
    assert captured.out == ""


# -- `-k` selects as pytest's own `-k` does -----------------------------------

TEST_IDS = [
    "serial_chain-max-1M", "serial_chain-half-30M", "keccak_chain-max-1M", "extcodesize-greedy-64KB-1M", "and-x-1M",
]  # fmt: skip
KEYWORDS = [
    "serial_chain", "not serial", "MAX or (keccak and 1m)", "extcodesize-greedy", "not not half",
    "max and not 30m or extcode", "and-x", "(half)", "chain and (not max or 30M)",
]  # fmt: skip
MALFORMED_KEYWORDS = ["max and", "(max", "max half", "and", "max )", "not"]


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> list[pytest.Item]:
    """A test parametrized by TEST_IDS as pytest's own collection makes it, in a nested session."""
    folder = tmp_path_factory.mktemp("selection")
    module = folder / "test_selection.py"
    module.write_text(f"import pytest\n\n@pytest.mark.parametrize('name', {TEST_IDS!r}, ids={TEST_IDS!r})\ndef test_a(name):\n    pass\n")

    class Collected:
        items: list[pytest.Item] = []

        def pytest_collection_finish(self, session: pytest.Session) -> None:
            self.items = list(session.items)

    collected = Collected()
    arguments = [str(module), f"--rootdir={folder}", "-p", "no:cacheprovider", "--import-mode=importlib", "--collect-only", "-q"]
    # The venv's plugins (hypothesis, xdist, balgen's filler plugin) are no part of `-k`: loading each
    # in a nested session was most of its cost.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        assert pytest.main(arguments, plugins=[collected]) == pytest.ExitCode.OK
    assert len(collected.items) == len(TEST_IDS)
    return collected.items


def pytest_selection(items: list[pytest.Item], keyword: str) -> list[str] | None:
    """
    The ids pytest's own `-k` selects among TEST_IDS (its `deselect_by_keyword`, on the items of one
    nested collection: a nested session per keyword cost a third of a CPU-second); None if pytest
    rejects the expression.
    """
    selected = list(items)
    config = SimpleNamespace(option=SimpleNamespace(keyword=keyword), hook=SimpleNamespace(pytest_deselected=lambda items: None))
    try:
        deselect_by_keyword(selected, config)  # type: ignore[arg-type]
    except pytest.UsageError:
        return None
    return [item.name.partition("[")[2].rstrip("]") for item in selected]


@pytest.mark.parametrize("keyword", KEYWORDS)
def test_k_selects_as_pytest_does(collected: list[pytest.Item], keyword: str) -> None:
    expression = keyword_matcher(keyword)
    ours = [test_id for test_id in TEST_IDS if matches(expression, test_id)]
    assert ours == pytest_selection(collected, keyword)


@pytest.mark.parametrize("keyword", MALFORMED_KEYWORDS)
def test_malformed_k_is_rejected_as_pytest_rejects_it(collected: list[pytest.Item], keyword: str) -> None:
    with pytest.raises(BadInput, match=rf"^-k {re.escape(repr(keyword))}: unexpected .* at column \d+ \(") as raised:
        keyword_matcher(keyword)
    assert "\n" not in str(raised.value)
    assert pytest_selection(collected, keyword) is None


def test_malformed_k_names_the_word_and_column() -> None:
    with pytest.raises(BadInput) as raised:
        keyword_matcher("max half")
    assert str(raised.value) == "-k 'max half': unexpected 'half' at column 5 (words joined by and, or, not, parentheses)"


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT], ids=lambda stop: stop.name)
def test_every_stop_signal_unwinds_as_ctrl_c_does(stop: signal.Signals) -> None:
    """
    A cancelled CI job, a closed terminal and Ctrl-\\ raise a KeyboardInterrupt
    in every command (each runs inside `stop_signals_unwind`), so the code that
    unwinds Ctrl-C runs for them too; real replays and fills are stopped by
    SIGTERM in tests/test_reliability_faults.py and by each signal in
    tests/test_fill_faults.py. Outside the block the previous handler is back.
    """
    assert threading.current_thread() is threading.main_thread(), "a signal elsewhere would end this test process"
    before = signal.getsignal(stop)
    with pytest.raises(KeyboardInterrupt) as raised, stop_signals_unwind():
        assert signal.getsignal(stop) not in (signal.SIG_DFL, signal.SIG_IGN, None), "left to end the process on the spot"
        os.kill(os.getpid(), stop)
        time.sleep(5)  # the handler runs before this returns
    assert stop_exit_code(raised.value) == 128 + stop
    assert stop_name(raised.value) == f"terminated ({stop.name})"
    assert signal.getsignal(stop) is before


SELECTING_COMMANDS = {
    "fill": ("balgen.commands.fill", "fill_parser"),
    "inspect": ("balgen.commands.inspect", "inspect_parser"),
    "replay": ("balgen.commands.replay", "replay_parser"),
    "genesis": ("balgen.commands.genesis", "genesis_parser"),
    "verify": ("balgen.commands.verify", "verify_parser"),
    "export": ("balgen.commands.export", "spamoor_parser"),
}
"""The commands that select tests, and their parsers."""


@pytest.mark.parametrize("command", sorted(SELECTING_COMMANDS))
def test_every_selecting_command_takes_the_one_k_option(command: str) -> None:
    """One definition of `-k`: the same metavar, default and help in every command's `--help`."""
    import importlib

    from balgen.plumbing.command_line import KEYWORD_HELP

    module, function = SELECTING_COMMANDS[command]
    parser = getattr(importlib.import_module(module), function)()
    (option,) = [action for action in parser._actions if "-k" in action.option_strings]
    assert (option.dest, option.metavar, option.default, option.help) == ("keyword", "EXPR", None, KEYWORD_HELP)


def test_export_selects_workloads_with_the_same_k_grammar_as_fill() -> None:
    from balgen.ethereum.forks import AMSTERDAM
    from balgen.generators.catalog import all_planned_workloads
    from balgen.model.workload import Placement

    names = {p.name for p in all_planned_workloads(AMSTERDAM, [1_000_000, 60_000_000], Placement.BLOCKS, "serial_chain and not 60M")}
    assert names == {"serial_chain-max-1M", "serial_chain-half-1M", "serial_chain-greedy-1M"}
    with pytest.raises(BadInput, match=r"-k 'serial\*': unexpected '\*'"):
        all_planned_workloads(AMSTERDAM, [1_000_000], Placement.BLOCKS, "serial*")
