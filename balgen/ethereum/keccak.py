"""
keccak-256, Ethereum's hash: addresses, transaction and block hashes, and the
words a keccak-loop generator predicts.

eth-hash with its pysha3 backend (safe-pysha3's C keccak). eth-hash's automatic
choice takes pycryptodome when both are installed (eth-account brings it in),
which costs about six times as much per call, and building a fill's workloads
hashes hundreds of thousands of words.
"""

from eth_hash.backends.pysha3 import PySha3Backend
from eth_hash.main import Keccak256

keccak = Keccak256(PySha3Backend())
