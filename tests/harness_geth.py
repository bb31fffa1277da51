"""
The geth that tests of how balgen drives a client start: geth-bal-switch, in its default mode.

Two kinds of test start a geth. Those that judge what the release accepts (fixtures imported VALID,
genesis hashes and engine verdicts of `balgen fill` output, the demo, background states, devnet chains)
run the pinned release, `tools/bin/geth`. Those that test balgen's own handling of a client (its
process, signals, faults, restarts, timeouts, config files, measurements and their statistics) run
this one: the same v1.17.10 source, which with no `--bal.executionmode` behaves as the release does
but for one thing, the KZG set-up the release runs in the background at every start, which it makes
on first use (scripts/geth_bal_switch/README.md). That set-up is about 3.3 CPU-s on one core of a
2-core machine, beside the first blocks a test sends and times; without it the tests of
test_replay_harness took 9.6 CPU-s instead of 27.0 (2026-11-29).
"""

from __future__ import annotations

from balgen.plumbing.toolchain import pinned_geth_bal_switch

HARNESS_GETH = pinned_geth_bal_switch()
