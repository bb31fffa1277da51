"""
Datadirs a client's init command wrote, kept in this process's memory: a node of a genesis that another
node of the same process has initialised starts from the same files instead of running the init again.

`geth init` of a small genesis is about 0.4 CPU-s, and a run starts several nodes on one genesis: one per
mode of a `--modes` run, a fresh one after a client was lost. The files are kept in memory, not on disk,
so nothing is left behind however the process ends, and a fork of the process has them too.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

KEPT_BYTES = 32 * 1024 * 1024
"""The most one process keeps: an initialised datadir of a small genesis is about 100 KB; one past what is
left of this bound (a genesis of a large state) is initialised by every node, as before."""


@dataclass(frozen=True)
class DatadirFiles:
    """The folders (relative path, mode) and files (relative path, mode, content) of a datadir."""

    folders: tuple[tuple[str, int], ...]
    files: tuple[tuple[str, int, bytes], ...]

    @property
    def size(self) -> int:
        return sum(len(content) for _, _, content in self.files)


def read_datadir(datadir: Path, limit: int) -> DatadirFiles | None:
    """`datadir`'s folders and files, or None if their contents pass `limit` bytes or it holds anything else (a link)."""
    folders: list[tuple[str, int]] = []
    files: list[tuple[str, int, bytes]] = []
    total = 0
    for root, folder_names, file_names in os.walk(datadir):
        folder_names.sort()
        for name in folder_names:
            path = Path(root) / name
            if path.is_symlink():
                return None
            folders.append((str(path.relative_to(datadir)), path.stat().st_mode & 0o7777))
        for name in sorted(file_names):
            path = Path(root) / name
            if path.is_symlink() or not path.is_file():
                return None
            total += path.stat().st_size
            if total > limit:
                return None
            files.append((str(path.relative_to(datadir)), path.stat().st_mode & 0o7777, path.read_bytes()))
    return DatadirFiles(tuple(folders), tuple(files))


def write_datadir(files: DatadirFiles, datadir: Path) -> None:
    """The kept folders and files written into the (empty) folder `datadir`, with their modes."""
    for relative, mode in files.folders:
        (datadir / relative).mkdir()
        (datadir / relative).chmod(mode)
    for relative, mode, content in files.files:
        (datadir / relative).write_bytes(content)
        (datadir / relative).chmod(mode)


def init_key(init_command: str, binary: Path, genesis: Path) -> str:
    """
    What an init's output depends on: its command template, the binary (its resolved path, size, time and
    inode: a rebuilt binary is another) and the genesis file's bytes.
    """
    resolved = binary.resolve()
    stat = resolved.stat()
    digest = hashlib.sha256(f"{init_command}\0{resolved}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ino}\0".encode())
    digest.update(genesis.read_bytes())
    return digest.hexdigest()


class InitialisedDatadirs:
    """The datadirs this process's inits wrote, by `init_key`, within `limit` bytes in all."""

    def __init__(self, limit: int = KEPT_BYTES) -> None:
        self.limit = limit
        self._kept: dict[str, DatadirFiles] = {}
        self._lock = threading.Lock()

    def put_into(self, key: str, datadir: Path) -> bool:
        """Write the datadir kept for `key` into `datadir`; False if none is kept."""
        with self._lock:
            files = self._kept.get(key)
        if files is None:
            return False
        write_datadir(files, datadir)
        return True

    def keep(self, key: str, datadir: Path) -> None:
        """
        Keep what an init just wrote into `datadir` for `key`, if it fits in what is left of the bound. The
        files are read outside the lock, which is held only to look and to insert (a fork of the process
        while another thread reads would otherwise inherit it held).
        """
        with self._lock:
            if key in self._kept:
                return
            room = self.limit - self._kept_bytes()
        files = read_datadir(datadir, room)
        with self._lock:
            if files is not None and key not in self._kept and files.size <= self.limit - self._kept_bytes():
                self._kept[key] = files

    def _kept_bytes(self) -> int:
        return sum(files.size for files in self._kept.values())


INITIALISED = InitialisedDatadirs()
"""This process's kept datadirs, for every `ClientProcess` it starts."""
