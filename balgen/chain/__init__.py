"""Building chains of blocks with the transition tool: genesis, headers, access lists."""
