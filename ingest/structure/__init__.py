"""From a PDF's lines to verified section entries with levels (design: ``ingest/README.md``)."""
