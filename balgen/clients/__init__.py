"""
Execution clients, as balgen starts and talks to them.

The Engine API and JSON-RPC clients (`engine_client`) with their JWT
(`jwt_auth`), how each client is started (`client_presets`) and the process
balgen runs it in (`client_process`), the chain config and genesis fields of
a fixture's genesis (`genesis`) and the genesis file in each client's format
(`client_genesis`), and what geth and reth log per block: timings
(`slow_block_log`) and read/write counters (`block_counts`). Nothing here
knows about a replay run or its results: the replay (`balgen.replay`)
drives these pieces.
"""
