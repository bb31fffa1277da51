"""
`balgen devnet-check`: did an exported workload run on a live chain as its model says?

spamoor's summary counts only submission errors, so a run whose every
transaction reverted still looks clean. This package reads the chain back:
whether it fits the export's fork at all (`chain_fit`), which of its
transactions are the workload's (`matching`), and whether they succeeded and
left the storage, code and access pattern the model designs (`workload_check`,
`traces`), from the chain's JSON-RPC (`chain_reader`) and the export read back (`exported`).
"""
