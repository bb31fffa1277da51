"""The workload model: workloads, keys, transactions, footprints and test ids, as plain data."""
