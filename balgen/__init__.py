"""balgen: stateful EIP-7928 block-level access list workloads, filled, replayed and exported."""

__version__ = "0.1.0"
