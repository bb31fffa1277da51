"""Plain plumbing every layer may use: errors, output files, printable text, signals, tools, streamed JSON."""
