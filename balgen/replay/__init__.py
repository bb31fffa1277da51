"""
Replay of fixtures into a real execution client over the Engine API.

A fixture that only one implementation (the t8n that filled it) has ever
executed proves little; replaying it into a separately run client, block by
block through `engine_newPayload`, checks that the chain is valid to someone
else too, and measures how long the client takes per block. The pieces:
fixture discovery (`fixtures`, `payloads`), the client (`targets`,
`geth_process`, `genesis`, `jwt_auth`, `engine_client`), the replay and its
checks (`runner`, `client_chain`), the figures (`measurements`,
`slow_block_log`), the files (`results`, `outputs`), what a person sees
(`progress`, `command`) and the comparison of runs (`comparison`, `report`).
"""
