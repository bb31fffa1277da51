"""
Fuzzing the replay's inputs and its client, with hypothesis.

Each example mutates a suite `balgen fill` really wrote (one fixture in the
three formats and its pre-alloc group): fields deleted, replaced by junk of
another type or shape, strings and lists cut short, or the file's bytes
truncated or garbled. The mutated suite then goes to

- the fixture loader (`discover`, then each test and genesis read again as
  a replay reads them at run time, and the genesis written as balgen's geth
  takes it: discovery must have rejected anything but an unknown fork);
- `balgen replay` end to end against a fake Engine API client on 127.0.0.1
  that keeps a block tree and accepts every well-formed block (a real geth
  per example would take seconds);
- `balgen inspect`, and the reader `--retrace` feeds to t8n.

A fourth test keeps the fixtures intact and makes the fake client misbehave
once, at a random call, with a random kind of bad answer.

Whatever the input, each must end in a result or in `BadInput` (exit code 2
with one line on stderr), never in another exception. Every test counts its
examples and outcomes and prints them (`pytest -rP` shows them); the figures
go into docs/reliability.md.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rich.console import Console

from balgen.analysis.fixture_chain import fixture_chain
from balgen.plumbing.errors import BadInput
from balgen.commands.inspect import run_inspect
from balgen.commands.replay import run_replay
from balgen.fixtures.files import fixture_files
from balgen.fixtures.reading import read_fixture_document
from balgen.replay.discovery import discover, load_test
from balgen.clients.genesis_files import write_client_genesis
from balgen.clients.kinds.geth import GENESIS as GETH_GENESIS
from balgen.replay.outputs import RESULTS_JSON
from balgen.results.schema import RunResult

from fake_client import BAD_ANSWERS, FakeClient, served

pytestmark = pytest.mark.integration
"""Every test here runs the pinned binaries."""

EXAMPLES = {"loader": 80, "replay": 40, "client": 60, "inspect": 80}
"""
Examples per fuzz test, together about 11 s of CPU. The crashes the replay fuzzing was written
for showed within its first examples (docs/reliability.md), hypothesis replays a failing example
it saved before new ones, and each test checks that every outcome was reached. The rarest outcome
(the `--retrace` reader's bad input: 2 to 12 in 80 examples from run to run) is also reached by an
explicit example, a file cut short; the client's outcomes vary as much and keep their 60.
"""


def fuzz_settings(name: str) -> settings:
    """`EXAMPLES[name]` examples, no deadline (a replay takes a while), no too-slow complaint."""
    return settings(max_examples=EXAMPLES[name], deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def filled(serial_chain_fill: Path) -> Path:
    return serial_chain_fill


# -- mutations ------------------------------------------------------------------------

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**300),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.from_regex(r"0x[0-9a-fA-Fg-z]{0,70}", fullmatch=True),
    st.sampled_from(["", "0x", "0x0", "0x" + "00" * 32, "Amsterdam", "Prague", "Cancun", "blockchain_test_engine_x"]),
    st.lists(st.integers(min_value=0, max_value=3), max_size=3),
    st.dictionaries(st.sampled_from(["hash", "number", "pre", "network", "params"]), st.integers(), max_size=2),
)
"""Values of every JSON type, hex-looking ones (some not hex) and names the readers look for."""


def json_paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into a JSON value; of a list only its first two and its last items."""
    if prefix:
        yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from json_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index in sorted({0, 1, len(value) - 1} & set(range(len(value)))):
            yield from json_paths(value[index], (*prefix, index))


@dataclass(frozen=True)
class Suite:
    """The filled files, as bytes and as parsed JSON, and the paths into each."""

    files: dict[str, bytes]
    documents: dict[str, Any]
    paths: dict[str, list[tuple[Any, ...]]]


@pytest.fixture(scope="module")
def suite(filled: Path) -> Suite:
    files = {p.relative_to(filled).as_posix(): p.read_bytes() for p in sorted(filled.rglob("*.json"))}
    documents = {name: json.loads(data) for name, data in files.items()}
    return Suite(files, documents, {name: list(json_paths(document)) for name, document in documents.items()})


def _apply(document: Any, path: tuple[Any, ...], operation: str, junk: Any, cut: float) -> None:
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    if operation == "delete":
        del parent[key]
    elif operation == "replace":
        parent[key] = junk
    elif operation == "cut" and isinstance(parent[key], (str, list)):
        parent[key] = parent[key][: int(len(parent[key]) * cut)]
    elif operation == "wrap":
        parent[key] = [parent[key]]
    else:
        parent[key] = junk


@st.composite
def mutated_suites(draw: st.DrawFn, suite: Suite) -> tuple[dict[str, bytes], str]:
    """The suite's files with one of them mutated, and a description of what was done."""
    files = dict(suite.files)
    name = draw(st.sampled_from(sorted(files)))
    if draw(st.integers(0, 9)) == 0:  # one in ten: damage the bytes themselves
        data = files[name]
        at = draw(st.integers(0, len(data) - 1))
        if draw(st.booleans()):
            files[name] = data[:at]
            return files, f"{name}: cut at byte {at}"
        garbage = draw(st.binary(min_size=1, max_size=8))
        files[name] = data[:at] + garbage + data[at + len(garbage) :]
        return files, f"{name}: bytes {at}.. replaced by {garbage!r}"
    document = json.loads(suite.files[name])  # a fresh copy, parsed in C faster than deepcopy copies
    done = []
    for mutation in range(draw(st.integers(1, 3))):
        paths = suite.paths[name] if mutation == 0 else list(json_paths(document))
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        operation = draw(st.sampled_from(["delete", "replace", "replace", "cut", "wrap"]))
        junk = draw(JUNK)
        _apply(document, path, operation, junk, draw(st.floats(0, 1)))
        done.append(f"{operation} {'.'.join(map(str, path))}" + (f" = {junk!r:.40}" if operation == "replace" else ""))
    files[name] = json.dumps(document).encode()
    return files, f"{name}: " + "; ".join(done)


class Workspace:
    """
    The suite's files written once, in a folder the examples share: an example
    writes only the file its mutation changed, and puts it back afterwards.
    Writing the whole tree afresh for each of some 300 examples was most of
    the module's system time (and its wall time, deleting folders).
    """

    def __init__(self, folder: Path, files: dict[str, bytes]) -> None:
        self.files = files
        self.root = folder / "fixtures"
        for name, data in files.items():
            (self.root / name).parent.mkdir(parents=True, exist_ok=True)
            (self.root / name).write_bytes(data)
        self.tree = self.contents()

    def contents(self) -> set[Path]:
        """Every path in the folder (the suite's files and folders, and whatever a command added)."""
        return set(self.root.parent.rglob("*"))

    @contextlib.contextmanager
    def holding(self, files: dict[str, bytes]) -> Iterator[Path]:
        """The fixtures folder holding `files`; afterwards the suite again, and nothing a command wrote."""
        changed = [name for name, data in files.items() if data != self.files[name]]
        for name in changed:
            (self.root / name).write_bytes(files[name])
        try:
            yield self.root
        finally:
            for name in changed:
                (self.root / name).write_bytes(self.files[name])
            for path in sorted(self.contents() - self.tree, reverse=True):  # a folder after what it holds
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def workspace(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("fuzz"), suite.files)


def single_line(err: str, command: str) -> None:
    assert "Traceback" not in err, err
    assert err.count("\n") == 1 and err.startswith(f"balgen {command}: "), repr(err)


def report(name: str, outcomes: Counter[str]) -> None:
    total = sum(outcomes.values())
    print(f"fuzz {name}: {total} examples: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    assert total >= EXAMPLES[name], "hypothesis ran fewer examples than asked"


# -- the fixture loader ------------------------------------------------------------


def test_fuzz_fixture_loader(suite: Suite, workspace: Workspace) -> None:
    outcomes: Counter[str] = Counter()

    @fuzz_settings("loader")
    @given(mutated_suites(suite))
    def load(mutation: tuple[dict[str, bytes], str]) -> None:
        files, _ = mutation
        with workspace.holding(files) as root:
            try:
                found = discover(root)
                for ref in (ref for group in found.groups for ref in group.tests):
                    load_test(ref)
            except BadInput as error:
                assert str(error) and "\n" not in str(error), str(error)
                outcomes["bad input"] += 1
                return
            outcomes["loaded"] += 1
            for group in found.groups:  # what balgen's geth is given; discovery checked it all but the fork
                try:
                    write_client_genesis(root / "genesis.json", GETH_GENESIS, group.genesis.network, group.genesis.header, group.genesis.accounts(), chain_id=group.genesis.chain_id)
                except BadInput as error:
                    assert str(error).startswith(f"network {group.genesis.network!r}: no geth chain config"), str(error)

    load()
    report("loader", outcomes)
    assert outcomes["bad input"] and outcomes["loaded"], "the mutations reach both outcomes"


# -- balgen replay against a fake client ----------------------------------------------


@pytest.fixture(scope="module")
def fake_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeClient, list[str]]]:
    """The fake client on 127.0.0.1 and the `balgen replay` options that reach it."""
    fake = FakeClient()
    server = served(fake)
    secret = tmp_path_factory.mktemp("fake") / "jwt.hex"
    secret.write_text("11" * 32)
    try:
        yield fake, ["--engine-url", f"http://127.0.0.1:{server.server_port}", "--jwt-secret", str(secret)]
    finally:
        server.shutdown()
        server.server_close()


def genesis_hash(suite: Suite) -> str:
    """The group's genesis: the parent of every engine_x fixture's first payload."""
    (parent,) = {
        fixture["engineNewPayloads"][0]["params"][0]["parentHash"]
        for name, document in suite.documents.items()
        if name.startswith("blockchain_tests_engine_x/for_")
        for fixture in document.values()
    }
    return parent


def replay_outcome(root: Path, client_options: list[str]) -> str:
    """`balgen replay` on `root`: its outcome, after checking it is one a user may get."""
    output = root.parent / "run"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = run_replay(
            [str(root), *client_options, "--warmup", "0", "--repeat", "2", "--output", str(output)],
            console=Console(file=io.StringIO(), width=200),
        )
    assert code in (0, 1, 2), code
    if code == 2:
        single_line(err.getvalue(), "replay")
        assert not output.exists(), "a rejected command writes nothing"
        return "bad input"
    assert "Traceback" not in err.getvalue(), err.getvalue()
    run = RunResult.model_validate_json((output / RESULTS_JSON).read_text())
    assert run.state.value == "complete" and run.tests
    assert (code == 0) == all(test.passed for test in run.tests)
    return "passed" if code == 0 else "failed"


def test_fuzz_replay_of_mutated_fixtures(suite: Suite, workspace: Workspace, fake_client: tuple[FakeClient, list[str]]) -> None:
    fake, client_options = fake_client
    outcomes: Counter[str] = Counter()

    @fuzz_settings("replay")
    @given(mutated_suites(suite))
    def replay(mutation: tuple[dict[str, bytes], str]) -> None:
        files, _ = mutation
        fake.reset(genesis_hash(suite))
        with workspace.holding(files) as root:
            outcomes[replay_outcome(root, client_options)] += 1

    replay()
    report("replay", outcomes)
    assert outcomes["bad input"] and outcomes["passed"], "the mutations reach both outcomes"


def test_fuzz_replay_against_a_misbehaving_client(
    suite: Suite, workspace: Workspace, fake_client: tuple[FakeClient, list[str]]
) -> None:
    fake, client_options = fake_client
    outcomes: Counter[str] = Counter()

    @fuzz_settings("client")
    @given(st.integers(1, 40), st.sampled_from(BAD_ANSWERS), JUNK)
    def replay(call: int, kind: str, junk: Any) -> None:
        fake.reset(genesis_hash(suite), misbehave=(call, kind, junk))
        with workspace.holding(suite.files) as root:
            outcomes[replay_outcome(root, client_options)] += 1

    replay()
    report("client", outcomes)
    assert outcomes["bad input"] and outcomes["failed"] and outcomes["passed"], outcomes


# -- balgen inspect ---------------------------------------------------------------


def test_fuzz_inspect_of_mutated_fixtures(suite: Suite, workspace: Workspace) -> None:
    outcomes: Counter[str] = Counter()
    reader: Counter[str] = Counter()

    (first, *_) = sorted(suite.files)
    cut_short = ({**suite.files, first: suite.files[first][:10]}, f"{first}: cut at byte 10")

    @fuzz_settings("inspect")
    @given(mutated_suites(suite))
    @example(cut_short)
    def inspect(mutation: tuple[dict[str, bytes], str]) -> None:
        files, _ = mutation
        with workspace.holding(files) as root:
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = run_inspect([str(root)])
            assert code in (0, 2), code
            if code == 2:
                single_line(err.getvalue(), "inspect")
            outcomes["shown" if code == 0 else "bad input"] += 1
            reader[_read_for_retrace(root)] += 1

    inspect()
    report("inspect", outcomes)
    print("fuzz inspect --retrace reader: " + ", ".join(f"{k} {v}" for k, v in sorted(reader.items())))
    assert outcomes["shown"] and outcomes["bad input"], outcomes
    assert reader["read"] and reader["bad input"], reader


def _read_for_retrace(root: Path) -> str:
    """Every fixture through the reader `--retrace` feeds to t8n: `read` or `bad input`."""
    try:
        for path in fixture_files(root):
            for name, fixture in read_fixture_document(path).items():
                fixture_chain(path, name, fixture)
    except BadInput as error:
        assert str(error) and "\n" not in str(error), str(error)
        return "bad input"
    return "read"


def test_the_unmutated_suite_passes_against_the_fake_client(
    suite: Suite, workspace: Workspace, fake_client: tuple[FakeClient, list[str]]
) -> None:
    """The baseline the fuzzing departs from: without a mutation the replay passes, so a failure is the mutation's."""
    fake, client_options = fake_client
    fake.reset(genesis_hash(suite))
    with workspace.holding(suite.files) as root:
        assert replay_outcome(root, client_options) == "passed"
        assert _read_for_retrace(root) == "read"
    assert fake.calls > 10, "the replay went through the fake client"
