"""
The error for a workload spamoor cannot run as the fixture runs it.

It is a `BadInput`: the command that asked for the workload ends with one
line naming the workload, the transaction and the reason, exit code 2, and
nothing written.
"""

from __future__ import annotations

from ..plumbing.errors import BadInput


class UnexportableWorkload(BadInput):
    """A workload whose transactions spamoor cannot send unchanged."""
