"""The application layer: the command line (and, as the product grows, the query graph)."""
