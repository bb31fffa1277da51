"""
Replay of fixtures into a real execution client over the Engine API.

A fixture that only one implementation (the t8n that filled it) has ever
executed proves little; replaying it into a separately run client, block by
block through `engine_newPayload`, checks that the chain is valid to someone
else too, and measures how long the client takes per block. This package
reads and runs the tests: fixture discovery (`discovery`, `engine_payloads`),
the client a group of tests runs on (`targets`), the suite and its groups
(`runner`), one test's steps on one client (`steps`) with its concerns
(`rounds`, `agreement`, `intake`, `positioning`, `payload_io`,
`expected_counts`, `rejections`, `page_cache`), the results (`fixture_results`,
`run_header`) and the run's observers (`progress` on the terminal, `outputs`
on disk). The clients themselves are in `balgen.clients`;
the results schema, measurements, statistics and the comparison of runs are
in `balgen.results`.
"""
