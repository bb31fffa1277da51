"""
keccak-256, Ethereum's hash: addresses, transaction and block hashes, and the
words a keccak-loop generator predicts.

eth-hash's pysha3 backend (safe-pysha3's C keccak), called directly. eth-hash's
automatic choice takes pycryptodome when both are installed (eth-account brings
it in), which costs about six times as much per call; and its `Keccak256`
wrapper, which only checks the argument's type before calling the backend, adds
about a quarter to each call, while building a fill's workloads hashes hundreds of
thousands of words.
"""

from eth_hash.backends.pysha3 import keccak256 as keccak

__all__ = ["keccak"]
