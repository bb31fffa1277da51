"""
Replay of filled fixtures into a real execution client over the Engine API.

A fixture that only one implementation (the t8n that filled it) has ever
executed proves little; importing it into a separately started client, block
by block through `engine_newPayload`, checks that the chain is valid to
someone else too and measures how long the client takes per block. This
package holds the pieces of that harness: the JWT that guards the Engine
API, the JSON-RPC clients, the genesis a client needs, the client process
itself and the importer that ties them together.
"""
