"""
`balgen verify`: every fixture checked by two independent EVMs and by a client's engine import.

`blockchain_test` fixtures go through go-ethereum's `evm blocktest` and revm's
`revme blockchaintest`; engine fixtures are imported into the pinned geth by the
replay's own machinery (genesis hash, every payload VALID, the head at
`lastblockhash`). See docs/formats.md for what each verifier compares.
"""
