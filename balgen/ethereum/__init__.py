"""Ethereum facts: forks, gas costs, hex types, keccak, chain constants, bytecode."""
