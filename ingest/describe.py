"""Document-level metadata: regular expressions first, an LLM to refine when configured.

The regex pass is deliberately conservative (a missing field is better than a wrong one); the
description is one sentence taken from the abstract or the opening section.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ingest.structure.numbering import clean_title
from ingest.summarise import WORD
from store.text import STOP_WORDS, clean_text, split_sentences
from store.types import DocumentMetadata, HeadingCandidate

DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>()\]]+[^\s\"<>()\].,;])")
YEAR = re.compile(r"\b(19[5-9]\d|20[0-4]\d)\b")
ARXIV_DATE = re.compile(r"arXiv:\S+\s+\[[^\]]+\]\s+\d{1,2}\s+\w{3}\s+(\d{4})")
COPYRIGHT_YEAR = re.compile(r"(?:©|\(c\)|copyright)\s*(?:\D{0,20})?((?:19|20)\d\d)", re.IGNORECASE)
VENUE = re.compile(
    r"(Proceedings of (?:the )?[^\n,.]{5,120}|Transactions on [^\n,.]{3,80}|"
    r"Journal of [^\n,.]{3,80}|Findings of [^\n,.]{3,80})",
)
ARXIV_STAMP = re.compile(r"arXiv:\d{4}\.\d{4,5}")
# Years in author-year citations, "(Tang et al., 2008)", say nothing about this document.
CITED_YEAR = re.compile(r"(?:et al\.|and \w+),?\s*\(?(?:19|20)\d\d")
VOLUME = re.compile(r"\bVol(?:ume)?\.?\s*(\d{1,4})\b", re.IGNORECASE)
PAGE_RANGE = re.compile(r"\bpages?\s+(\d{1,5}\s*[–-]\s*\d{1,5})\b", re.IGNORECASE)
KEYWORDS_LINE = re.compile(r"(?:KEYWORDS|Keywords|Key words|Index Terms)\s*[:.—-]?\s*([^.]+)")
ARXIV_ID_YEAR = re.compile(r"arXiv:(\d{2})(\d{2})\.\d{4,5}")
# PDF dates read "D:YYYYMMDDHHmmSS…": the year is glued to the digits after it, so no \b.
PDF_DATE_YEAR = re.compile(r"(?:D:)?(19[5-9]\d|20[0-4]\d)")
NAME = re.compile(r"^[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){1,3}$")
AFFILIATION = re.compile(
    r"(universit|institut|department|school|college|laborator|inc\.|corp|@|\d|"
    r"research|center|centre|google|microsoft|facebook|allen)",
    re.IGNORECASE,
)
BAD_PDF_TITLE = re.compile(r"(\.dvi$|\.docx?$|template|^proceedings|^untitled|^microsoft)", re.I)
NOT_A_TITLE = re.compile(
    r"^(?:form\s+[\w-]*\d[\w-]*|[\d\s./-]+|\S*_\S*|\S+\.(?:pdf|docx?|indd|tex))$", re.I
)
"""What a first line or a PDF's title field holds when it is not a title: a form's name
("FORM 10-K"), an identifier ("0000064803-19-000013") or a file name ("GENERALMILLS_2020_10K")."""
WEB_WORDS = frozenset({"https", "http", "www", "arxiv", "doi", "github", "html", "preprint"})
MAX_DESCRIPTION_WORDS = 45
KEYWORD_COUNT = 8


def regex_metadata(
    pages: list[str],
    candidates: list[HeadingCandidate],
    pdf_metadata: dict[str, Any],
    fallback_title: str,
) -> DocumentMetadata:
    """Every bibliographic field the first pages reveal by pattern, plus keywords."""
    head = "\n".join(pages[:2])
    title = _title(candidates, pdf_metadata) or fallback_title
    # Rotated margin stamps (arXiv) are missing from the markdown but present as candidates.
    stamps = " ".join(c["text"] for c in candidates if c["page"] == 1)
    return DocumentMetadata(
        title=title,
        authors=_authors(pages[0], title, pdf_metadata),
        year=_year(clean_text(head) + "\n" + stamps, pdf_metadata),
        doi=_first(DOI, head),
        venue=_venue(clean_text(head), stamps),
        volume=_first(VOLUME, head),
        pages=_first(PAGE_RANGE, head),
        description="",
        keywords=_keywords(pages),
    )


def _first(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return match.group(1) if match else None


def _title(candidates: list[HeadingCandidate], pdf_metadata: dict[str, Any]) -> str:
    """The largest type on page 1 (joined across wrapped lines), else a sane PDF title."""
    first = [c for c in candidates if c["page"] == 1 and not c["text"].lower().startswith("arxiv")]
    if first:
        top = max(c["size"] for c in first)
        lines = [c["text"] for c in first if abs(c["size"] - top) < 0.3]
        title = clean_title(" ".join(lines[:3]))
        if 3 <= len(title) <= 300 and len(lines) <= 3 and not NOT_A_TITLE.match(title):
            return title
    pdf_title = str(pdf_metadata.get("title") or "").strip()
    sane = pdf_title and not BAD_PDF_TITLE.search(pdf_title) and not NOT_A_TITLE.match(pdf_title)
    return pdf_title if sane else ""


def _authors(first_page: str, title: str, pdf_metadata: dict[str, Any]) -> list[str]:
    """Name-like lines between the title and the abstract; the PDF author field as fallback."""
    from_pdf = [a.strip() for a in re.split(r"[;,]| and ", str(pdf_metadata.get("author") or ""))]
    # Cut before the "A" of "Abstract" too, or it sticks to the last author ("Ann Lee A").
    cut = first_page.find("bstract")
    text = clean_text(first_page[: max(0, cut - 1)]) if cut >= 0 else ""
    if title and title.lower()[:30] in text.lower():
        text = text[text.lower().index(title.lower()[:30]) + len(title) :]
    names: list[str] = []
    for part in re.split(r",|\band\b|\s{2,}|†|‡|\*|⋄|□", text):
        part = re.sub(r"<[^>]+>|\^\S*", " ", part)
        part = " ".join(part.split()).strip(" .")
        if NAME.match(part) and not AFFILIATION.search(part) and part not in names:
            names.append(part)
    names = names[:12]
    return names or [a for a in from_pdf if NAME.match(a)]


def _year(first_page: str, pdf_metadata: dict[str, Any]) -> int | None:
    """arXiv stamp, the venue line, a copyright line, the PDF's creation date, and only then
    the most common year of the opening text (citation years excluded)."""
    for pattern in (ARXIV_DATE, COPYRIGHT_YEAR):
        found = _first(pattern, first_page)
        if found:
            return int(found)
    arxiv = ARXIV_ID_YEAR.search(first_page)
    if arxiv and 7 <= int(arxiv.group(1)) <= 40:
        return 2000 + int(arxiv.group(1))
    venue = VENUE.search(first_page)
    if venue:
        near = YEAR.search(first_page[venue.start() : venue.end() + 200])
        if near:
            return int(near.group(1))
    created = PDF_DATE_YEAR.match(str(pdf_metadata.get("creationDate") or "").strip())
    if created:
        return int(created.group(1))
    years = Counter(YEAR.findall(CITED_YEAR.sub(" ", first_page[:4000])))
    return int(years.most_common(1)[0][0]) if years else None


def _venue(text: str, stamps: str) -> str | None:
    """A proceedings/journal line, else arXiv when the margin stamp says so."""
    match = VENUE.search(text)
    if match:
        return " ".join(match.group(1).split())
    return "arXiv" if ARXIV_STAMP.search(stamps) else None


def _keywords(pages: list[str]) -> list[str]:
    """Author keywords when printed, otherwise the most frequent content words."""
    for page in pages[:2]:
        match = KEYWORDS_LINE.search(clean_text(page))
        if match:
            words = [w.strip(" .") for w in re.split(r"[;,·•]", match.group(1)[:300])]
            words = [w for w in words if len(w.split()) <= 5]
            found = [w for w in words if 2 < len(w) < 40][:KEYWORD_COUNT]
            if found:
                return found
    counts = Counter(
        w.lower()
        for page in pages
        for w in WORD.findall(page)
        if len(w) > 3 and w.lower() not in STOP_WORDS and w.lower() not in WEB_WORDS
    )
    return [w for w, _ in counts.most_common(KEYWORD_COUNT)]


def one_sentence(text: str) -> str:
    """The first full sentence of ``text`` (capped), used as the document description."""
    sentences = [s for s in split_sentences(text) if len(s.split()) >= 6]
    sentence = sentences[0] if sentences else clean_text(text)
    words = sentence.split()
    if len(words) > MAX_DESCRIPTION_WORDS:
        return " ".join(words[:MAX_DESCRIPTION_WORDS]) + " …"
    return sentence


def merge_llm_metadata(base: DocumentMetadata, refined: dict[str, Any]) -> DocumentMetadata:
    """Take the LLM's fields only where they have the right type and a sane value."""
    merged = dict(base)
    for key in ("title", "description", "venue", "doi", "volume", "pages"):
        value = refined.get(key)
        if isinstance(value, str) and value.strip():
            merged[key] = value.strip()
    for key in ("authors", "keywords"):
        value = refined.get(key)
        if isinstance(value, list) and all(isinstance(v, str) for v in value) and value:
            merged[key] = [v.strip() for v in value if v.strip()][:20]
    year = refined.get("year")
    if isinstance(year, int) and 1900 <= year <= 2100:
        merged["year"] = year
    return DocumentMetadata(**merged)  # type: ignore[typeddict-item]
