"""The `balgen` command line: one module per subcommand."""
