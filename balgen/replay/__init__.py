"""
Replay of fixtures into a real execution client over the Engine API.

A fixture that only one implementation (the t8n that filled it) has ever
executed proves little; replaying it into a separately run client, block by
block through `engine_newPayload`, checks that the chain is valid to someone
else too, and measures how long the client takes per block. This package
reads and runs the tests: fixture discovery (`fixtures`, `payloads`), the
client a group of tests runs on (`targets`), the replay and its checks
(`runner`, `client_chain`, `expected_counts`), the page cache between
executions (`page_cache`), the run's observers (`progress` on the terminal,
`outputs` on disk) and the commands (`command`, and `genesis_command` for
clients started by hand). The clients themselves are in `balgen.clients`;
the results schema, measurements, statistics and the comparison of runs are
in `balgen.results`.
"""
