"""A tool binary's SHA-256 is read once per build of it, and never kept for other bytes than the file's."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from balgen.plumbing import file_digests
from balgen.plumbing.file_digests import file_sha256


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """balgen's cache in a folder of the test's own."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("BALGEN_CACHE", str(folder))
    return folder


def reads_counted(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Each path whose bytes `file_sha256` reads from now on."""
    reads: list[Path] = []
    read = file_digests._read_sha256

    def counted(path: Path) -> str:
        reads.append(path)
        return read(path)

    monkeypatch.setattr(file_digests, "_read_sha256", counted)
    return reads


def test_a_binary_is_read_once_and_its_digest_is_the_bytes_sha256(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = tmp_path / "evm"
    binary.write_bytes(os.urandom(3 << 20))
    reads = reads_counted(monkeypatch)
    digests = [file_sha256(binary) for _ in range(3)]
    assert digests == [hashlib.sha256(binary.read_bytes()).hexdigest()] * 3
    assert reads == [binary], "later asks, in this process or another, read the kept digest"


def test_bytes_written_under_the_same_size_and_modification_time_are_read_again(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = tmp_path / "evm"
    binary.write_bytes(b"a" * 4096)
    before = binary.stat()
    first = file_sha256(binary)
    with binary.open("r+b") as stream:  # the same inode, size and (set back) modification time
        stream.write(b"b")
    os.utime(binary, ns=(before.st_atime_ns, before.st_mtime_ns))
    reads = reads_counted(monkeypatch)
    assert file_sha256(binary) == hashlib.sha256(b"b" + b"a" * 4095).hexdigest() != first
    assert reads == [binary], "the change time told the kept digest was of other bytes"


def test_a_damaged_kept_digest_is_read_again_and_a_cache_that_takes_no_files_reads_every_time(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = tmp_path / "node"
    binary.write_bytes(b"node")
    expected = hashlib.sha256(b"node").hexdigest()
    assert file_sha256(binary) == expected
    (kept,) = (cache / "file-digests").iterdir()
    kept.write_text("not a digest")
    assert file_sha256(binary) == expected and kept.read_text() == expected
    cache.joinpath("file-digests").rename(tmp_path / "moved")
    cache.joinpath("file-digests").write_text("a file where the folder would be")
    reads = reads_counted(monkeypatch)
    assert [file_sha256(binary), file_sha256(binary)] == [expected] * 2 and reads == [binary, binary]
