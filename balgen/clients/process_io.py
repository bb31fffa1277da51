"""
How many bytes a client process read while it executed a block, from the
kernel's per-process I/O accounting (`/proc/<pid>/io`, Linux).

geth v1.17.8 counts no reads of a block it executes in parallel from its
access list (`expected_counts`), so for such blocks its slow-block log
cannot say how much code it read. The kernel can: `rchar` counts every byte
the process got from `read`/`pread` (its database files, whether the page
cache had them or not), `read_bytes` the bytes that had to come from the
storage device, i.e. that missed the page cache. Sampled right before and
after a `newPayload`, the difference is the block's reads, plus whatever
else the client read in that moment (little: nothing else is sent to it).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict


class ProcessReads(BaseModel):
    """Bytes a process read in some interval."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    read_bytes_total: int
    """`rchar`: bytes returned by read system calls, page cache hits included."""
    storage_bytes: int
    """`read_bytes`: bytes fetched from the storage device (page cache misses)."""

    def __sub__(self, earlier: ProcessReads) -> ProcessReads:
        return ProcessReads(
            read_bytes_total=self.read_bytes_total - earlier.read_bytes_total,
            storage_bytes=self.storage_bytes - earlier.storage_bytes,
        )


def process_reads(pid: int, proc: Path = Path("/proc")) -> ProcessReads | None:
    """The process's read counters so far; None where the kernel does not provide them."""
    try:
        text = (proc / str(pid) / "io").read_text(encoding="ascii")
    except OSError:
        return None
    fields = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    try:
        return ProcessReads(read_bytes_total=int(fields["rchar"]), storage_bytes=int(fields["read_bytes"]))
    except (KeyError, ValueError):
        return None
