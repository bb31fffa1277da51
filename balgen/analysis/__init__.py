"""
Dependency analysis of a block: per-transaction access sets, the conflict
graph they induce, and the parallel speedup it allows.

`access` defines the sets, `model` derives them from a workload's design,
`tracer` observes them by tracing t8n, `graph` builds the conflict graph,
`fixture_chain` and `retrace` rebuild them for any blockchain fixture, and
`plot` draws graphs.
"""

from .access import AccessSetsDiffer, StateKey, TxAccessSet, compared_with_model, first_difference
from .graph import DependencyGraph
from .model import model_access_sets
from .retrace import TracedBlock, trace_block, traced_block, traced_sets, tx_gas
from .tracer import ACCESS_TRACER, traced_access_sets

INFO_KEY = "dependency-graph"
"""The key of the graph in a fixture's `_info`."""

__all__ = [
    "ACCESS_TRACER",
    "AccessSetsDiffer",
    "INFO_KEY",
    "DependencyGraph",
    "StateKey",
    "TracedBlock",
    "TxAccessSet",
    "compared_with_model",
    "first_difference",
    "model_access_sets",
    "trace_block",
    "traced_block",
    "traced_sets",
    "tx_gas",
    "traced_access_sets",
]
