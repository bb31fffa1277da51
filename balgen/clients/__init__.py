"""
Execution clients, as balgen starts and talks to them.

Each client balgen knows has its own module in `kinds/` declaring its
`ClientKind` (`kind`): its preset (`presets`), its modes (`modes`) and their
proof (`mode_evidence`), its own block log (read by `slow_block_log`, with the
read/write counters of `block_counts`), its rejection reasons, its genesis
format (written by `genesis_files`, from `chain_config` and
`genesis_fields`). The Engine API and JSON-RPC clients (`engine_client`) with
their JWT (`jwt_auth`) and the process balgen runs a client in (`process`)
serve every client. Nothing here knows about a replay run or its results:
the replay (`balgen.replay`) drives these pieces.
"""
