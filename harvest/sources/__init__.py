"""Source modules: one per external source, each a parser (and later a client)."""
