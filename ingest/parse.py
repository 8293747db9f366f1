"""PDF → per-page markdown (1-based physical pages), page images, bookmarks and heading cues.

pymupdf4llm is the default backend (offline). ``pymupdf4llm-layout`` adds PyMuPDF's layout
analysis (slower, better reading order on complex pages). marker-pdf is optional and must fail
fast when its models cannot be had, instead of waiting minutes for a helper server.
"""

from __future__ import annotations

import importlib.util
import os
import re
import tempfile
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypedDict

import pymupdf

from ingest.errors import ParserUnavailableError
from ingest.pdf.checks import has_text_layer, no_text_layer, open_checked_pdf
from ingest.pdf.ocr import OcrOptions, read_pages, regular_lines
from ingest.pdf.upright import upright
from ingest.structure.labeller import heading_candidates
from ingest.structure.layout import PageLayout, page_layout
from ingest.structure.locate import normalize
from ingest.structure.typography import PageText
from store.settings import ParserSettings
from store.types import HeadingCandidate, PageImage, SectionEntry

PARSERS = ("pymupdf4llm", "pymupdf4llm-layout", "marker")
MIN_IMAGE_PIXELS = 48
MIN_IMAGE_AREA_SHARE = 0.002
# marker's paginated markdown separates pages with "{N}" followed by a dashed rule.
MARKER_PAGE = re.compile(r"\{(\d+)\}-{10,}\n(.*?)(?=\n\{\d+\}-{10,}|\Z)", re.DOTALL)


class ParsedPDF(TypedDict, total=False):
    """Everything later nodes need from the PDF, as JSON-native values. ``parse_pdf`` sets every
    key; none is required so that the ingestion state, which holds them only once the PDF is
    parsed, declares them by extending this class."""

    pages: list[str]
    images: list[PageImage]
    outline: list[SectionEntry]
    candidates: list[HeadingCandidate]
    layout: PageLayout
    pdf_metadata: dict[str, Any]
    ocr_pages: list[int]
    """1-based pages whose text Tesseract read (``ingest.pdf.ocr``)."""


NOTHING_READ = "OCR read no text on its pages either"
AUTO_OCR = OcrOptions()


def parse_pdf(path: Path, parser: str, image_dir: Path, ocr: OcrOptions = AUTO_OCR) -> ParsedPDF:
    """Parse ``path`` with the chosen backend, after OCR has given text to the pages ``ocr``
    chooses; images are written into ``image_dir``."""
    if parser not in PARSERS:
        raise ParserUnavailableError(
            f"unknown parser {parser!r}; choose one of {', '.join(PARSERS)}"
        )
    if parser == "marker":
        ensure_marker_available()
    with openable_path(path) as readable:
        return _parse_open(readable, parser, image_dir, ocr)


def _parse_open(path: Path, parser: str, image_dir: Path, ocr: OcrOptions) -> ParsedPDF:
    doc = open_checked_pdf(path, text_layer=ocr.mode == "never")
    try:
        ocr_pages = read_pages(doc, ocr, path.name)
        if not has_text_layer(doc):
            raise no_text_layer(NOTHING_READ)
        if parser == "marker":
            raw_pages = _marker_pages(path, doc.page_count)
        else:
            raw_pages = _markdown_pages(doc, parser.endswith("layout"), ocr_pages)
        pages = [normalize(text) for text in raw_pages]
        texts = [page_text(page, ocr_pages) for page in doc.pages()]
        return ParsedPDF(
            pages=pages,
            images=extract_images(doc, image_dir),
            outline=_outline(doc),
            candidates=heading_candidates(texts),
            layout=page_layout(texts, _page_labels(doc)),
            pdf_metadata={k: v for k, v in (doc.metadata or {}).items() if isinstance(v, str)},
            ocr_pages=ocr_pages,
        )
    finally:
        doc.close()


def page_text(page: pymupdf.Page, ocr_pages: Sequence[int] = ()) -> PageText:
    """The page's number, text dictionary and height as everything that reads its layout sees
    them: lines made regular where OCR read the page, boxes in the frame its text is read in
    (a page turned a quarter is read as if set upright)."""
    text: dict[str, Any] = page.get_text("dict")
    text = upright(regular_lines(text) if page.number + 1 in ocr_pages else text)
    return page.number + 1, text, float(text["height"])


def pdf_page_count(path: Path) -> int | None:
    """The number of pages, or None when the file does not open as a PDF (``parse_pdf``
    names why)."""
    try:
        with openable_path(path) as readable, pymupdf.open(readable) as doc:
            return int(doc.page_count)
    except (pymupdf.FileDataError, RuntimeError, ValueError, OSError):
        return None


@contextmanager
def openable_path(path: Path) -> Iterator[Path]:
    """``path``, or a UTF-8-named link to it while a file name is not valid UTF-8.

    Linux file names are bytes; Python carries undecodable bytes (``caf\\xe9.pdf`` in Latin-1)
    as surrogates, which PyMuPDF and marker cannot encode, so they would call a good file a
    corrupt PDF. A symbolic link with a plain name in a private folder opens the same file.
    """
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        with tempfile.TemporaryDirectory(prefix="vectree-open-") as folder:
            link = Path(folder) / "source.pdf"
            link.symlink_to(path.resolve())
            yield link
        return
    yield path


def _markdown_pages(
    doc: pymupdf.Document, layout: bool, ocr_pages: Collection[int] = ()
) -> list[str]:
    """One markdown string per physical page, in page order.

    Table detection is most of pymupdf4llm's time (it turns every character of the page into
    a record before it looks at a single ruling line), yet its ``lines_strict`` finder can only
    return a table on a page whose vector graphics draw a grid. Pages that cannot hold one are
    converted with table detection off, sharing the document's heading statistics with the
    others, so each page's text is what a single full conversion gives. Column detection and
    text extraction, the next largest parts, are made cheaper (``faster_pymupdf4llm``). Pages
    read by OCR are converted with code formatting off: Tesseract sets its text in a monospaced
    font, which would make every line of theirs a code block.
    """
    import pymupdf4llm
    from pymupdf4llm.helpers.pymupdf_rag import IdentifyHeaders

    faster_pymupdf4llm()
    pymupdf4llm.use_layout(layout)
    if layout:
        return _page_texts(doc, _to_markdown(doc))
    groups: dict[tuple[bool, bool], list[int]] = {}
    for page in doc.pages():
        key = (may_hold_table(page), page.number + 1 in ocr_pages)
        groups.setdefault(key, []).append(page.number)
    headers = IdentifyHeaders(doc)
    chunks = []
    for (ruled, read_by_ocr), numbers in groups.items():
        tables = {} if ruled else {"table_strategy": None}
        chunks += _to_markdown(
            doc, pages=numbers, hdr_info=headers, ignore_code=read_by_ocr, **tables
        )
    return _page_texts(doc, chunks)


def faster_pymupdf4llm() -> None:
    """Have pymupdf4llm find columns on plain floats (``ingest.pdf.columns``), extract each page's
    text once, not once per column box and table cell (``ingest.pdf.textlines``), and build the
    table finder's character records a page at a time (``ingest.pdf.tablechars``): the same page
    text in less time."""
    import pymupdf.table
    from pymupdf4llm.helpers import pymupdf_rag

    from ingest.pdf.columns import column_boxes
    from ingest.pdf.tablechars import make_chars
    from ingest.pdf.textlines import raw_lines, table_cell_text

    pymupdf_rag.column_boxes = column_boxes
    pymupdf_rag.get_raw_lines = raw_lines
    pymupdf.table.extract_cells = table_cell_text
    pymupdf.table.make_chars = make_chars


def _to_markdown(doc: pymupdf.Document, **options: Any) -> list[dict[str, Any]]:
    import pymupdf4llm

    chunks: list[dict[str, Any]] = pymupdf4llm.to_markdown(
        doc,
        page_chunks=True,
        show_progress=False,
        ignore_images=True,
        write_images=False,
        **options,
    )
    return chunks


def _page_texts(doc: pymupdf.Document, chunks: list[dict[str, Any]]) -> list[str]:
    texts = [""] * doc.page_count
    for chunk in chunks:
        number = int(chunk["metadata"].get("page_number", chunk["metadata"].get("page", 0)))
        if 1 <= number <= doc.page_count:
            texts[number - 1] = chunk["text"]
    return texts


TABLE_EDGES = 3
"""A table of two rows and two columns is bounded by at least three horizontal and three
vertical rules; pymupdf4llm drops any smaller table."""
AXIS_TOLERANCE = 1.0


def may_hold_table(page: pymupdf.Page) -> bool:
    """Whether the page's vector graphics could draw a ruled table (never a false "no").

    Every drawn rule is counted generously: a rectangle or quad as two horizontal and two
    vertical edges, a curve or a slanted line as both, so a page is only ruled out when it
    has too few rules of either direction for any grid.
    """
    if not any("path" in kind for kind, _ in page.get_bboxlog()):
        return False
    horizontal = vertical = 0
    for path in page.get_cdrawings():  # get_drawings' raw tuples, without its Python objects
        for item in path["items"]:
            if item[0] in ("re", "qu"):
                horizontal, vertical = horizontal + 2, vertical + 2
            elif item[0] == "l":
                (x0, y0), (x1, y1) = item[1], item[2]
                flat = abs(y1 - y0) <= AXIS_TOLERANCE
                upright = abs(x1 - x0) <= AXIS_TOLERANCE
                horizontal += flat or not upright
                vertical += upright or not flat
            else:
                horizontal, vertical = horizontal + 1, vertical + 1
            if horizontal >= TABLE_EDGES and vertical >= TABLE_EDGES:
                return True
    return False


def _page_labels(doc: pymupdf.Document) -> list[str | None]:
    """The page labels the PDF defines ("iv", "12", "A-3"), or None where it defines none."""
    if not doc.get_page_labels():
        return [None] * doc.page_count
    return [page.get_label() or None for page in doc.pages()]


def _outline(doc: pymupdf.Document) -> list[SectionEntry]:
    """The author's bookmarks (level, title, 1-based page), skipping links without a page."""
    return [
        SectionEntry(level=int(level), title=" ".join(str(title).split()), start_page=int(page))
        for level, title, page, *_ in doc.get_toc(simple=True)
        if 1 <= int(page) <= doc.page_count and str(title).strip()
    ]


def extract_images(doc: pymupdf.Document, image_dir: Path) -> list[PageImage]:
    """Save each sizeable image once per page, with its page number and bounding box."""
    image_dir.mkdir(parents=True, exist_ok=True)
    found: list[PageImage] = []
    for page in doc.pages():
        area = abs(page.rect) or 1.0
        seen: set[int] = set()
        for info in page.get_image_info(xrefs=True):
            xref = int(info.get("xref") or 0)
            bbox = pymupdf.Rect(info["bbox"])
            if xref <= 0 or xref in seen or abs(bbox) / area < MIN_IMAGE_AREA_SHARE:
                continue
            seen.add(xref)
            image = _save_image(doc, xref, page.number + 1, len(seen), image_dir, bbox)
            if image is not None:
                found.append(image)
    return found


def _save_image(
    doc: pymupdf.Document, xref: int, page: int, index: int, image_dir: Path, bbox: pymupdf.Rect
) -> PageImage | None:
    """Write one embedded image as a file; tiny icons and unreadable images are skipped."""
    try:
        data = doc.extract_image(xref)
    except Exception:  # a damaged image stream must not fail the whole document
        return None
    if not data or min(data.get("width", 0), data.get("height", 0)) < MIN_IMAGE_PIXELS:
        return None
    name = f"p{page:04d}-{index:02d}.{data.get('ext', 'png')}"
    (image_dir / name).write_bytes(data["image"])
    return PageImage(
        name=name,
        page=page,
        bbox=[round(v, 1) for v in (bbox.x0, bbox.y0, bbox.x1, bbox.y1)],
        width=int(data["width"]),
        height=int(data["height"]),
    )


def ensure_marker_available() -> None:
    """Fail in well under a second when marker or its model weights are not available here."""
    if importlib.util.find_spec("marker") is None:
        raise ParserUnavailableError(
            "parser 'marker' needs marker-pdf (pip install 'vectree-rag[marker]') and its model "
            "weights; use --parser pymupdf4llm offline"
        )
    cache = ParserSettings.from_env().marker_models
    if not cache.is_dir() or not any(cache.iterdir()):
        raise ParserUnavailableError(
            f"parser 'marker' has no model weights in {cache} and cannot download them offline; "
            "set MODEL_CACHE_DIR to a folder holding marker's models, or use --parser pymupdf4llm"
        )


def _marker_pages(path: Path, page_count: int) -> list[str]:
    """Per-page markdown from marker's paginated output (models must already be cached)."""
    # A write, not a setting: marker's model loading goes through huggingface_hub, which must
    # fail at once instead of waiting on a download (the weights were checked to be cached).
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from marker.converters.pdf import PdfConverter
    from marker.models import create_model_dict

    converter = PdfConverter(
        artifact_dict=create_model_dict(),
        config={"paginate_output": True, "disable_image_extraction": True},
    )
    markdown = converter(str(path)).markdown
    texts = [""] * page_count
    for match in MARKER_PAGE.finditer(markdown):
        number = int(match.group(1)) + 1
        if 1 <= number <= page_count:
            texts[number - 1] = match.group(2).strip()
    return texts
