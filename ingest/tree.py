"""Fold verified flat entries into a section tree with inclusive page ranges and stable ids.

A node runs from its start page to the page before the next heading in document order, or to
that same page when the next heading starts mid-page; a parent then widens to cover its
subtree. Node ids are zero-padded and assigned depth-first after any splitting.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from store.types import SectionEntry, TreeNode

FRONT_MATTER = "Front matter"
WINDOW_PAGES = 10


@dataclass
class Draft:
    """A node under construction (mutable, unlike the JSON TreeNode it becomes)."""

    title: str
    level: int
    start_page: int
    end_page: int
    summary: str = ""
    children: list[Draft] = field(default_factory=list)


def build_tree(entries: list[SectionEntry], total_pages: int) -> list[Draft]:
    """Entries in document order → top-level drafts covering pages 1..total_pages."""
    if not entries:
        return page_windows(1, total_pages, level=1)
    entries = _monotonic(entries)
    if entries[0]["start_page"] > 1:
        front = SectionEntry(
            level=min(e["level"] for e in entries),
            title=FRONT_MATTER,
            start_page=1,
            begins_page=True,
        )
        entries = [front, *entries]
    return fold_entries(entries, total_pages)


def fold_entries(entries: list[SectionEntry], last_page: int) -> list[Draft]:
    """Nest entries by level and give each its inclusive page range ending by ``last_page``."""
    drafts = [
        Draft(entry["title"], entry["level"], entry["start_page"], _end_page(entries, i, last_page))
        for i, entry in enumerate(entries)
    ]
    roots = _fold(drafts)
    for root in roots:
        widen_to_subtree(root)
    return roots


def _monotonic(entries: list[SectionEntry]) -> list[SectionEntry]:
    """Start pages never decrease in document order; a stray earlier page is raised."""
    out: list[SectionEntry] = []
    for entry in entries:
        floor = out[-1]["start_page"] if out else 1
        out.append(SectionEntry(**{**entry, "start_page": max(entry["start_page"], floor)}))
    return out


def _end_page(entries: list[SectionEntry], index: int, total_pages: int) -> int:
    """Page before the next heading, or the next heading's page when it starts mid-page."""
    start = entries[index]["start_page"]
    if index + 1 == len(entries):
        return total_pages
    following = entries[index + 1]
    end = following["start_page"] - 1 if following.get("begins_page") else following["start_page"]
    return max(start, end)


def _fold(drafts: list[Draft]) -> list[Draft]:
    """Nest drafts by level: each hangs under the closest earlier draft of a lower level."""
    roots: list[Draft] = []
    stack: list[Draft] = []
    for draft in drafts:
        while stack and stack[-1].level >= draft.level:
            stack.pop()
        (stack[-1].children if stack else roots).append(draft)
        stack.append(draft)
    return roots


def widen_to_subtree(draft: Draft) -> None:
    """A parent's range covers every page of its descendants."""
    for child in draft.children:
        widen_to_subtree(child)
        draft.end_page = max(draft.end_page, child.end_page)


def page_windows(first: int, last: int, level: int) -> list[Draft]:
    """Fallback structure: consecutive windows of WINDOW_PAGES pages."""
    return [
        Draft(
            f"Pages {start}–{min(start + WINDOW_PAGES - 1, last)}",
            level,
            start,
            min(start + WINDOW_PAGES - 1, last),
        )
        for start in range(first, last + 1, WINDOW_PAGES)
    ]


def iter_drafts(roots: list[Draft]) -> list[Draft]:
    """All drafts depth-first, i.e. in document order."""
    out: list[Draft] = []
    for root in roots:
        out.append(root)
        out.extend(iter_drafts(root.children))
    return out


def to_tree_nodes(roots: list[Draft]) -> list[TreeNode]:
    """Freeze drafts into JSON TreeNodes with depth-first zero-padded ids."""
    counter = iter(range(10**6))

    def freeze(draft: Draft) -> TreeNode:
        node_id = f"{next(counter):04d}"
        return TreeNode(
            node_id=node_id,
            title=draft.title,
            start_page=draft.start_page,
            end_page=draft.end_page,
            summary=draft.summary,
            nodes=[freeze(child) for child in draft.children],
        )

    return [freeze(root) for root in roots]


def from_tree_nodes(nodes: list[TreeNode], level: int = 1) -> list[Draft]:
    """Thaw stored TreeNodes back into drafts (for re-summarising or re-splitting)."""
    return [
        Draft(
            n["title"],
            level,
            n["start_page"],
            n["end_page"],
            n["summary"],
            from_tree_nodes(n["nodes"], level + 1),
        )
        for n in nodes
    ]


def flag_ocr(nodes: list[TreeNode], ocr_pages: set[int]) -> list[TreeNode]:
    """The tree with ``ocr`` set on every node whose page range holds a page read by OCR, so a
    reader of the tree knows which sections' text may hold recognition errors."""
    flagged: list[TreeNode] = []
    for node in nodes:
        copy = TreeNode(**node)  # type: ignore[typeddict-item]
        copy["nodes"] = flag_ocr(node["nodes"], ocr_pages)
        if any(node["start_page"] <= page <= node["end_page"] for page in ocr_pages):
            copy["ocr"] = True
        flagged.append(copy)
    return flagged
