"""
The fixture reader (`balgen/fixtures/reading.py`): a `pre` is left in its
file and read one account at a time through `FixtureAccount`; the rest of a
document is built as `json` would; bad input is one line naming the field.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from balgen.plumbing.errors import BadInput
from balgen.plumbing import user_files
from balgen.plumbing.memory_limit import MemoryLimit
from balgen.fixtures import reading
from balgen.fixtures.reading import StreamedPre, read_fixture_document

ADDRESS = "0x" + "aa" * 20
ACCOUNT = {"nonce": "0x01", "balance": "0x0de0b6b3a7640000", "code": "0x6001", "storage": {"0x01": "0x02"}}


def _write(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document))
    return path


def test_a_tests_pre_and_a_groups_pre_stay_in_the_file(tmp_path: Path) -> None:
    fixture = _write(tmp_path / "f.json", {"t-1M": {"network": "Osaka", "pre": {ADDRESS: ACCOUNT}, "_info": {"n": [1, 2.5]}}})
    group = _write(tmp_path / "g.json", {"network": "Osaka", "pre": {ADDRESS: ACCOUNT}})
    document = read_fixture_document(fixture)
    assert document["t-1M"]["_info"] == {"n": [1, 2.5]} and document["t-1M"]["network"] == "Osaka"
    pre = document["t-1M"]["pre"]
    assert isinstance(pre, StreamedPre) and pre.keys == ("t-1M", "pre")
    ((address, account),) = pre.accounts("here")
    assert address == bytes.fromhex("aa" * 20)
    assert (account.nonce, account.balance, account.code, account.storage) == (1, 10**18, b"\x60\x01", {1: 2})
    assert list(read_fixture_document(group)["pre"].raw_accounts()) == [(ADDRESS, ACCOUNT)]


def test_a_bad_account_is_one_line_naming_the_field(tmp_path: Path) -> None:
    bad = {**ACCOUNT, "storage": {"0xzz": "0x01"}}
    pre = read_fixture_document(_write(tmp_path / "f.json", {"pre": {ADDRESS: bad}}))["pre"]
    with pytest.raises(BadInput, match=rf"^here: pre\[{ADDRESS}\]\.storage key: '0xzz' is not a number$"):
        list(pre.accounts("here"))


def test_an_address_given_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text(f'{{"pre": {{"{ADDRESS}": {{}}, "{ADDRESS}": {{}}}}}}')
    with pytest.raises(BadInput, match="appears twice in one object"):
        list(read_fixture_document(path)["pre"].raw_accounts())


def test_a_file_larger_than_memory_allows_is_still_read_streaming(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a whole read (to describe a JSON error by line and column) needs the file to fit in memory."""
    path = _write(tmp_path / "f.json", {"pre": {ADDRESS: ACCOUNT}})
    monkeypatch.setattr(user_files, "memory_limit", lambda: MemoryLimit(64, "a test's limit"))
    assert len(list(read_fixture_document(path)["pre"].accounts("here"))) == 1
    path.write_text(path.read_text()[:-3])
    with pytest.raises(BadInput, match=r"f\.json: malformed JSON: parse error: premature EOF$"):
        read_fixture_document(path)


def test_a_truncated_legacy_transaction_in_a_payload_names_its_field() -> None:
    """Found by the inspect fuzzing: a payload transaction that starts like a legacy list but is cut short."""
    from balgen.analysis.fixture_chain import decoded_transaction

    with pytest.raises(BadInput, match=r"^f\.json: test t: engineNewPayloads\[3\]\.params\[0\]\.transactions\[0\]: not a legacy"):
        decoded_transaction(b"\xd0", "f.json: test t", "engineNewPayloads[3].params[0].transactions[0]")
    assert decoded_transaction(b"\x02\xf8", "f", "x") == b"\x02\xf8"


def test_a_payload_of_megabyte_strings_reads_as_json_does_with_its_pre_after_them_streamed(tmp_path: Path) -> None:
    """An engine payload's access list is one hex string of megabytes; the reads that split it must not change it."""
    access_list = "0x" + "ab" * (3 << 20)
    payload = {"blockAccessList": access_list, "transactions": ["0x02" + "cd" * 70_000, "0x"], "gasUsed": "0x1c9c380"}
    document = {"t-60M": {"engineNewPayloads": [{"params": [payload], "n": [1, 2.5, None, True]}], "pre": {ADDRESS: ACCOUNT}}}
    read = read_fixture_document(_write(tmp_path / "f.json", document))
    pre = read["t-60M"].pop("pre")
    assert read == {"t-60M": {"engineNewPayloads": document["t-60M"]["engineNewPayloads"]}}
    assert list(pre.raw_accounts()) == [(ADDRESS, ACCOUNT)]


@pytest.mark.parametrize("extension", [64 << 20, 40])
def test_every_read_holds_a_quote_and_every_byte_comes_once(extension: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """
    ijson lexes a string that reads cut again with every read that extends it (quadratic in its
    length): a read inside a string goes on to its end, so a string spans at most three reads,
    unless the read grew by the bound first (a long run of numbers, which has no quote).
    """
    monkeypatch.setattr(reading._StringAlignedReads, "MAX_EXTENSION", extension)
    text = json.dumps({"a": "0x" + "ab" * 500, "b": [1] * 200, "c": ["x", "yy" * 30, ""], "d": 7}).encode()
    reads = reading._StringAlignedReads(io.BytesIO(text))
    assert reads.read(0) == b""
    chunks = list(iter(lambda: reads.read(16), b""))
    assert b"".join(chunks) == text
    spanning = [index for index, chunk in enumerate(chunks[:-1]) if b'"' not in chunk]  # the last may end without one
    if extension > len(text):
        assert spanning == [] and max(map(len, chunks)) > 900  # the 1 KB string went on to its end in one read
    else:
        assert spanning and max(map(len, chunks)) <= 16 + extension + 16  # the run of numbers is cut at the bound


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        ('{"t": {"a": 1, "a": 2}}', "malformed JSON: key 'a' appears twice in one object"),
        ('{"t": {"gasUsed": NaN}}', "malformed JSON: NaN is not a JSON value"),
        ('{"t": {"blocks": [}}', "malformed JSON: Expecting value (line 1 column 19)"),
        ("[1, 2]", "top level is not a JSON object"),
    ],
)
def test_the_whole_read_and_the_stream_refuse_the_same_files_in_the_same_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, refusal: str
) -> None:
    """`read_fixture_values` reads a file whole where ten times it fits in memory, else streams it: the user sees no difference."""
    path = tmp_path / "f.json"
    path.write_text(text)
    monkeypatch.setattr(reading, "fits_in_memory", lambda size: size < 1 << 30)
    with pytest.raises(BadInput) as whole:
        reading.read_fixture_values(path)
    monkeypatch.setattr(reading, "WHOLE_READ_GROWTH", 1 << 30)  # the file fits, ten times over it does not: streamed
    with pytest.raises(BadInput) as streamed:
        reading.read_fixture_values(path)
    assert str(whole.value) == str(streamed.value) == f"{path}: {refusal}"


def test_the_whole_read_builds_what_the_stream_builds_and_the_pre_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    document = {"t-1M": {"network": "Osaka", "pre": {ADDRESS: ACCOUNT}, "blocks": [{"rlp": "0x" + "ab" * 70_000}], "n": [1, 2.5, None]}}
    path = _write(tmp_path / "f.json", document)
    whole = reading.read_fixture_values(path)
    assert whole == document
    monkeypatch.setattr(reading, "fits_in_memory", lambda size: False)
    streamed = reading.read_fixture_values(path)
    assert isinstance(streamed["t-1M"]["pre"], StreamedPre)
    assert {key: value for key, value in streamed["t-1M"].items() if key != "pre"} == {
        key: value for key, value in document["t-1M"].items() if key != "pre"
    }
