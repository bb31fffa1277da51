"""Pure, deterministic workload generators, one module per workload family."""
