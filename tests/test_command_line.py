"""
Every `balgen` subcommand parses its options with the same `OneLineParser`:
a usage error is one line naming the command and the option, exit code 2.
"""

from __future__ import annotations

import pytest

from balgen.cli import COMMANDS, main
from balgen.command_line import BAD_INPUT_EXIT_CODE

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
