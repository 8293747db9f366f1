"""Running text: how many pages repeat a line's text (digits aside: "2023 FORM 10-K 7") or set
text in its style. Running headers and footers repeat on most pages; a heading style recurs on
many pages, a heading's own text on few."""

from __future__ import annotations

from collections import defaultdict

from ingest.structure.features.context import Around, Body, Measure
from ingest.structure.headings import running_key
from ingest.structure.typography import Line


def measure(lines: list[Line], total_pages: int, body: Body) -> Measure:
    """The share of the document's pages that print each text, and each style."""
    texts: dict[str, set[int]] = defaultdict(set)
    styles: dict[tuple[float, bool], set[int]] = defaultdict(set)
    for line in lines:
        texts[running_key(line.text)].add(line.page)
        styles[(round(line.size, 1), line.bold)].add(line.page)
    pages = max(total_pages, 1)
    text_share = {key: len(found) / pages for key, found in texts.items()}
    style_share = {style: len(found) / pages for style, found in styles.items()}

    def row(line: Line, around: Around) -> dict[str, float]:
        return {
            "running_share": text_share.get(running_key(line.text), 0.0),
            "style_page_share": style_share.get((round(line.size, 1), line.bold), 0.0),
        }

    return row
