"""Agent tools over the library (progressive disclosure layers 0–2)."""
