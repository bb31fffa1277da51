"""
Execution clients, as balgen starts and talks to them.

The Engine API and JSON-RPC clients (`engine_client`) with their JWT
(`jwt_auth`), the geth process balgen manages (`geth_process`), the
`genesis.json` it is initialised from (`genesis`), every other client's
genesis file (`client_genesis`) and how each client is started
(`client_presets`), and what geth logs per block: timings
(`slow_block_log`) and read/write counters (`block_counts`). Nothing here
knows about a replay run or its results: the replay (`balgen.replay`)
drives these pieces.
"""
