"""Ingestion: PDFs and structured sources become verified section trees, pages, index entries."""
