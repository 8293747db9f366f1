"""The wording of a line: capitals, length, closing punctuation, digits, and whether it reads
like a title rather than a caption, a theorem head or a fragment."""

from __future__ import annotations

from ingest.structure.features.context import Around, Body, Measure
from ingest.structure.headings import reads_like_title
from ingest.structure.typography import Line


def measure(lines: list[Line], total_pages: int, body: Body) -> Measure:
    """The wording features of a line (nothing document-wide)."""

    def row(line: Line, around: Around) -> dict[str, float]:
        text = line.text
        letters = [ch for ch in text if ch.isalpha()]
        words = text.split()
        capitalised = sum(w[0].isupper() for w in words if w[0].isalpha())
        return {
            "upper_share": sum(ch.isupper() for ch in letters) / max(len(letters), 1),
            "capitalised_share": capitalised / max(len(words), 1),
            "words": float(len(words)),
            "chars": float(len(text)),
            "ends_period": float(text.endswith(".")),
            "ends_colon": float(text.endswith(":")),
            "ends_comma": float(text.endswith((",", ";"))),
            "digit_share": sum(ch.isdigit() for ch in text) / max(len(text), 1),
            "reads_like_title": float(reads_like_title(text)),
        }

    return row
