"""Vector store, embedding and indexing helpers."""
