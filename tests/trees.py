"""Hand-made section trees for tests: nodes in the library's tree.json shape."""

from __future__ import annotations

from typing import Any


def node(node_id: str, title: str, start: int, end: int, summary: str, *children: Any) -> Any:
    """One tree node with inclusive 1-based page range and its children."""
    return {
        "node_id": node_id,
        "title": title,
        "start_page": start,
        "end_page": end,
        "summary": summary,
        "nodes": list(children),
    }
