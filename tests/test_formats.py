"""
What balgen writes is execution-spec-tests' formats, field for field (docs/formats.md).

Every fixture file reads back through balgen's typed models and dumps to the
same JSON (so no key is written that the model does not declare, in a shape it
does not declare), and the rules where balgen once differed from
execution-spec-tests hold: a creation's `to` is `""`, access-list entries are
zero-padded hex, `_info` holds only strings and objects, the pre-alloc
group file has exactly the keys execution-spec-tests' group model allows, and
each fixture's EEST-style test id parses as EEST's do.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from balgen.fixtures.files import fixture_model
from balgen.fixtures.models import FixtureEnvironment, PreAllocGroup

pytestmark = pytest.mark.integration
"""Every test here runs the pinned binaries."""

ZERO_PADDED = re.compile(r"0x([0-9a-f]{2})+")


def fixture_files(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("for_*/**/*.json"))


def test_every_fixture_reads_back_through_its_model_unchanged(serial_chain_fill: Path) -> None:
    files = fixture_files(serial_chain_fill)
    assert len(files) == 3, files
    for path in files:
        ((name, fixture),) = json.loads(path.read_text()).items()
        info = fixture.pop("_info")
        model = fixture_model(info["fixture-format"])
        assert model is not None, info["fixture-format"]
        assert model.model_validate(fixture).json_dict() == fixture, f"{path}: {name}"


def test_info_values_are_strings_or_objects(serial_chain_fill: Path) -> None:
    """execution-spec-tests' `BaseFixture.info` is `Dict[str, Dict | str]`: a number or a list there fails its model."""
    for path in fixture_files(serial_chain_fill):
        ((_, fixture),) = json.loads(path.read_text()).items()
        odd = {key: value for key, value in fixture["_info"].items() if not isinstance(value, (str, dict))}
        assert not odd, f"{path}: {odd}"


def test_contract_creation_to_is_the_empty_string(serial_chain_fill: Path) -> None:
    """`"0x"` makes revm's runner refuse the whole file; execution-spec-tests and ethereum/tests write `""`."""
    (path,) = (serial_chain_fill / "blockchain_tests").rglob("for_*/**/*.json")
    ((_, fixture),) = json.loads(path.read_text()).items()
    targets = [tx["to"] for block in fixture["blocks"] for tx in block["transactions"]]
    assert "" in targets, "serial_chain deploys its contract in a setup block"
    assert all(to == "" or re.fullmatch(r"0x[0-9a-f]{40}", to) for to in targets), targets


def _access_list_numbers(entry: dict[str, Any]) -> list[str]:
    numbers = list(entry["storageReads"])
    for key, value_key in (("nonceChanges", "postNonce"), ("balanceChanges", "postBalance"), ("codeChanges", None)):
        for change in entry[key]:
            numbers.append(change["blockAccessIndex"])
            if value_key:
                numbers.append(change[value_key])
    for slot in entry["storageChanges"]:
        numbers.append(slot["slot"])
        numbers.extend(n for change in slot["slotChanges"] for n in (change["blockAccessIndex"], change["postValue"]))
    return numbers


def test_block_access_list_numbers_are_zero_padded(serial_chain_fill: Path) -> None:
    (path,) = (serial_chain_fill / "blockchain_tests").rglob("for_*/**/*.json")
    ((_, fixture),) = json.loads(path.read_text()).items()
    numbers = [n for block in fixture["blocks"] for entry in block["blockAccessList"] for n in _access_list_numbers(entry)]
    assert numbers and all(ZERO_PADDED.fullmatch(n) for n in numbers), [n for n in numbers if not ZERO_PADDED.fullmatch(n)]


def test_pre_alloc_group_is_execution_spec_tests_group_file(serial_chain_fill: Path) -> None:
    (path,) = (serial_chain_fill / "blockchain_tests_engine_x" / "pre_alloc").glob("*.json")
    group = json.loads(path.read_text())
    assert list(group) == ["testIds", "environment", "network", "chainId", "pre"]
    assert group["chainId"] == 1 and group["testIds"] == ["serial_chain-max-1M"]
    assert PreAllocGroup.model_validate(group).json_dict() == group
    environment = FixtureEnvironment.model_validate(group["environment"])
    assert (environment.number, environment.withdrawals) == (0, [])
    ((_, fixture),) = json.loads(next((path.parent.parent).rglob("for_*/**/*.json")).read_text()).items()
    assert fixture["preHash"] == path.stem


def test_eest_test_ids_parse_with_benchmarkoor_fetch(serial_chain_fill: Path) -> None:
    """The `_info` test id joins with EEST-sourced data; the short name, which the files keep as key, does not parse."""
    import pandas as pd  # here, not at collection: pandas is half a CPU-second of every pytest worker's start
    from benchmarkoor_fetch.parse.titles import parse_test_titles

    ids = {}
    for path in fixture_files(serial_chain_fill):
        ((name, fixture),) = json.loads(path.read_text()).items()
        ids[fixture["_info"]["fixture-format"]] = fixture["_info"]["test-id"]
    assert name == "serial_chain-max-1M"
    parsed, unparsed = parse_test_titles(pd.DataFrame({"test_title": [*ids.values(), name]}))
    assert unparsed == [name]
    for (fixture_format, test_id), row in zip(ids.items(), parsed.itertuples()):
        assert (row.test_file, row.test_name, row.block_limit_million) == ("test_serial_chain.py", "test_serial_chain", 1)
        assert row.test_params == f"fork_Amsterdam-{fixture_format}-benchmark-gas-value_1M-max", test_id
        assert row.fixture_name == "test_serial_chain.py__test_serial_chain[" + row.test_params + "]"
