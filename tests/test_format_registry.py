"""
The fixture-format registry: every command that reads fixtures asks it what a format is.

A format's name is written once, in its declaration; replay's `--format` choices,
the formats inspect reads a chain from, the verifiers each format goes to and the
formats a fill writes all follow from the declarations, so a format declared with
a property is treated so everywhere (`tests/test_change_map.py` adds one).
"""

from __future__ import annotations

import pytest

from balgen.analysis.fixture_chain import FORMATS as CHAIN_FORMATS, chain_format
from balgen.commands.replay import replay_parser
from balgen.commands.verify import verifiers_of
from balgen.fixtures.files import fixture_format, fixture_model
from balgen.fixtures.formats import FORMATS, FixtureFormat, register
from balgen.fixtures.models import BlockchainEngineFixture, Fixture
from balgen.fixtures.render import RENDERERS
from balgen.plumbing.errors import BadInput
from balgen.replay.discovery import FORMAT_CHOICES, NOT_REPLAYABLE_FORMATS, REPLAYABLE_FORMATS
from balgen.verify.outcomes import Verifier


def test_a_fixture_without_info_is_told_by_its_declared_keys() -> None:
    for known in FORMATS.values():
        if known.recognised_by:
            assert fixture_format(dict.fromkeys(known.recognised_by, {})) == known.name
    assert fixture_format({"engineNewPayloads": [], "_info": {"fixture-format": "blockchain_test"}}) == "blockchain_test"
    assert fixture_format({"unrelated": 1}) is None


def test_replay_offers_every_replayable_format_and_skips_every_other_known_one() -> None:
    replayable = {known.name for known in FORMATS.values() if known.replayable}
    assert set(REPLAYABLE_FORMATS) == replayable and replayable
    assert set(NOT_REPLAYABLE_FORMATS) == set(FORMATS) - replayable
    offered = {action.dest: action.choices for action in replay_parser()._actions}["format"]
    assert set(offered) == {"auto"} | {FORMATS[name].short_name for name in replayable} == set(FORMAT_CHOICES)


def test_inspect_reads_the_chain_of_exactly_the_formats_declaring_one() -> None:
    assert set(CHAIN_FORMATS) == {known.name for known in FORMATS.values() if known.chain is not None}
    for known in FORMATS.values():
        fixture = {"_info": {"fixture-format": known.name}}
        if known.chain is None:
            with pytest.raises(BadInput, match=f"format '{known.name}' has no chain to inspect"):
                chain_format(fixture, "f.json: test t")
        else:
            assert chain_format(fixture, "f.json: test t") is known


def test_each_format_goes_to_the_verifiers_it_declares() -> None:
    for known in FORMATS.values():
        readers = verifiers_of({"_info": {"fixture-format": known.name}})
        assert {verifier.value for verifier in readers} == known.verifiers, known.name
    assert verifiers_of({"_info": {"fixture-format": "no_such_format"}}) == frozenset()
    assert {name for known in FORMATS.values() for name in known.verifiers} == {verifier.value for verifier in Verifier}


def test_a_fill_writes_every_format_balgen_models_each_in_its_own_folder() -> None:
    written = [model.fixture_format for model in RENDERERS]
    assert {known.name for known in written} == set(Fixture.models)
    assert len({known.folder for known in written}) == len(written)
    assert all(fixture_model(known.name) is model for model, known in zip(RENDERERS, written))


def test_a_format_declared_twice_is_refused() -> None:
    taken = BlockchainEngineFixture.fixture_format
    with pytest.raises(ValueError, match="registered twice"):
        register(FixtureFormat(taken.name, "another_short_name", frozenset()))
    with pytest.raises(ValueError, match="registered twice"):
        register(FixtureFormat("another_name", taken.short_name, frozenset()))
    assert FORMATS[taken.name] is taken
