"""Reading pages that have no usable text layer with Tesseract, so a scanned PDF goes through
the same parse path as any other.

Each page to read is rendered in grey at ``OCR_DPI``; the ``tesseract`` command turns the image
into a one-page PDF that holds only an invisible text layer (``textonly_pdf``), and that layer is
laid over the page in the open document. The page then has text with positions, fonts and sizes
like any PDF page, so pymupdf4llm's markdown (which reads invisible text on pages whose only
text is invisible, as OCR layers are), the heading candidates and the page layout all read it,
and the section tree is built as usual; ``regular_lines`` evens out the two ways Tesseract's
lines differ from printed ones. The page keeps its scanned image. Text the page had before is
removed first, so OCR never doubles it.

Why the ``tesseract`` command, not PyMuPDF's own OCR or OCRmyPDF (4 pages of a paper scanned at
150 dpi, one process at a time): PyMuPDF's ``pdfocr_tobytes`` runs the Tesseract built into
MuPDF, about 4 s of CPU a page at the same word recall, against 1.4 to 1.9 s for Debian's
``tesseract``, which uses the processor's vector instructions (made to use its generic code, it
takes 3.5 times as long). OCRmyPDF runs that same binary, but writes a whole new PDF through
Ghostscript and pikepdf (2.3 s a page, a second output file, one more dependency). Tesseract
processes also run side by side without holding Python's lock, so one document's pages are read
in parallel (``OcrOptions.jobs``).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import pymupdf
from tqdm import tqdm

from ingest.errors import BadInputError, OcrUnavailableError
from ingest.pdf.checks import MIN_TEXT_CHARS

LOG = logging.getLogger(__name__)

DEFAULT_LANGUAGE = "eng"
OCR_MODES = ("auto", "always", "never")
"""``auto``: only pages without a usable text layer that show an image; ``always``: every page
(its own text layer is replaced); ``never``: a PDF without a text layer is refused."""
OCR_DPI = 200
"""Rendering resolution for Tesseract. On scans of 19 papers at 150 dpi (4 pages each), 200 dpi
found 91 % of their words against 90 % at 150 dpi, for 16 % more CPU time a page; the small
print of papers is what the extra pixels help."""
PAGE_TIMEOUT_S = 120
"""Longest Tesseract may take over one page (a few seconds is usual) before the document fails."""
QUEUED_PER_JOB = 2
"""Rendered pages waiting per Tesseract process: enough to keep each busy, few enough that a
long scan is never held in memory whole (a page is about 4 MB at ``OCR_DPI``)."""
TESSERACT = "tesseract"
INSTALL = (
    "install it (Debian/Ubuntu: apt-get install tesseract-ocr tesseract-ocr-eng; "
    "macOS: brew install tesseract)"
)
LANGUAGE = re.compile(r"[A-Za-z0-9_/]+(\+[A-Za-z0-9_/]+)*")
"""Tesseract's language argument: names joined by "+" ("eng", "eng+deu", "script/Latin")."""
SINGLE_THREAD = {"OMP_THREAD_LIMIT": "1"}
"""Tesseract's OpenMP threads fight each other and every other process on a busy machine (a
page that takes 2 s with one thread took 11 s with its default threads on two shared cores);
pages run in parallel instead."""


@dataclass(frozen=True)
class OcrOptions:
    """How a document's pages are read by OCR."""

    mode: str = "auto"
    language: str = DEFAULT_LANGUAGE
    jobs: int = 1
    """Tesseract processes at once for this document."""


def checked_language(language: str) -> str:
    """``language`` when it is Tesseract's language syntax, else ValueError (a caller's value
    must never reach the command as an option)."""
    if not LANGUAGE.fullmatch(language):
        raise ValueError(
            f"OCR language {language!r} is not a Tesseract language: use names such as eng, "
            "deu or eng+deu"
        )
    return language


def read_pages(doc: pymupdf.Document, options: OcrOptions, name: str) -> list[int]:
    """Lay OCR text over the pages ``options.mode`` chooses; their 1-based numbers.

    Tesseract is looked for only when a page needs it, so text PDFs never do.
    """
    chosen = pages_to_read(doc, options.mode)
    if not chosen:
        return []
    require_tesseract(options.language)
    started = time.perf_counter()
    bar = tqdm(
        total=len(chosen), unit="page", desc=f"OCR {name[:30]}", leave=False, file=sys.stderr
    )
    with bar, ThreadPoolExecutor(max_workers=options.jobs) as pool:
        for number, layer in _recognised(doc, chosen, options, pool):
            lay_text_over(doc[number], layer)
            bar.update(1)
    LOG.info(
        "OCR read %d of %d pages of %s in %.1f s",
        len(chosen),
        doc.page_count,
        name,
        time.perf_counter() - started,
    )
    return [number + 1 for number in chosen]


def pages_to_read(doc: pymupdf.Document, mode: str) -> list[int]:
    """0-based numbers of the pages to OCR under ``mode``."""
    if mode == "never":
        return []
    if mode == "always":
        return list(range(doc.page_count))
    return [page.number for page in doc.pages() if needs_ocr(page)]


def needs_ocr(page: pymupdf.Page) -> bool:
    """A page with almost no text that shows an image: a scan. A page with neither (blank, or
    only drawings) has nothing OCR could read."""
    return len(page.get_text("text").strip()) < MIN_TEXT_CHARS and bool(page.get_images())


def require_tesseract(language: str) -> None:
    """Raise OcrUnavailableError, naming what to install, unless the ``tesseract`` command and
    the data of every language in ``language`` are there."""
    if shutil.which(TESSERACT) is None:
        raise OcrUnavailableError(
            f"OCR needs Tesseract, which is not installed: {INSTALL}; or ingest with --ocr never"
        )
    folder, installed = installed_languages()
    missing = [part for part in checked_language(language).split("+") if part not in installed]
    if missing:
        packages = " ".join(f"tesseract-ocr-{part.lower().replace('_', '-')}" for part in missing)
        raise OcrUnavailableError(
            f"Tesseract has no language data for {'+'.join(missing)} in {folder}: install it "
            f"(Debian/Ubuntu: apt-get install {packages}) or set TESSDATA_PREFIX to the folder "
            f"holding {missing[0]}.traineddata"
        )


def installed_languages() -> tuple[str, set[str]]:
    """Where Tesseract looks for language data, and the languages it finds there."""
    try:
        listed = subprocess.run(
            [TESSERACT, "--list-langs"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OcrUnavailableError(f"Tesseract cannot run ({exc}): {INSTALL}") from None
    lines = (listed.stdout or listed.stderr).splitlines()
    folder = re.search(r'"(.*)"', lines[0]) if lines else None
    return (folder.group(1) if folder else "its data folder"), {line.strip() for line in lines[1:]}


def _recognised(
    doc: pymupdf.Document, numbers: list[int], options: OcrOptions, pool: ThreadPoolExecutor
) -> Iterator[tuple[int, bytes]]:
    """(page number, text layer) as Tesseract finishes pages, in any order. Pages are rendered
    here, in the caller's thread (a PyMuPDF document is not thread-safe), at most
    ``QUEUED_PER_JOB`` per process ahead of the text layers taken back."""
    pending: dict[Future[bytes], int] = {}
    for number in numbers:
        image = page_image(doc[number])
        pending[pool.submit(recognise, image, options.language, number + 1)] = number
        if len(pending) >= QUEUED_PER_JOB * options.jobs:
            yield from _finished(pending, everything=False)
    yield from _finished(pending, everything=True)


def _finished(pending: dict[Future[bytes], int], everything: bool) -> Iterator[tuple[int, bytes]]:
    """Take back the finished pages (at least one), or all of them with ``everything``."""
    done, _ = wait(list(pending), return_when=ALL_COMPLETED if everything else FIRST_COMPLETED)
    for future in done:
        yield pending.pop(future), future.result()


def page_image(page: pymupdf.Page) -> bytes:
    """The page as a grey image for Tesseract (PNM: no compression to spend time on). The page
    is set upright first, so the image and the text laid over it share coordinates."""
    page.remove_rotation()
    pixmap = page.get_pixmap(dpi=OCR_DPI, colorspace=pymupdf.csGRAY, alpha=False)
    return bytes(pixmap.tobytes("pnm"))


def recognise(image: bytes, language: str, page: int) -> bytes:
    """Tesseract's invisible text layer of one page image, as a one-page PDF."""
    command = [TESSERACT, "-", "-", "--dpi", str(OCR_DPI), "-l", language]
    command += ["-c", "textonly_pdf=1", "pdf"]
    try:
        done = subprocess.run(
            command,
            input=image,
            capture_output=True,
            timeout=PAGE_TIMEOUT_S,
            env={**os.environ, **SINGLE_THREAD},
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BadInputError(f"OCR of page {page} took over {PAGE_TIMEOUT_S} s") from None
    if done.returncode != 0 or not done.stdout.startswith(b"%PDF"):
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BadInputError(f"OCR of page {page} failed: {said[-1] if said else 'no output'}")
    return done.stdout


def lay_text_over(page: pymupdf.Page, layer: bytes) -> None:
    """Replace the page's text (if any) by the OCR text layer; images and drawings stay."""
    if page.get_text("text").strip():
        page.add_redact_annot(page.rect)
        page.apply_redactions(
            images=pymupdf.mupdf.PDF_REDACT_IMAGE_NONE,
            graphics=pymupdf.mupdf.PDF_REDACT_LINE_ART_NONE,
            text=pymupdf.mupdf.PDF_REDACT_TEXT_REMOVE,
        )
    with pymupdf.open("pdf", layer) as text_only:
        page.show_pdf_page(page.rect, text_only, 0)


def regular_lines(text: dict[str, Any]) -> dict[str, Any]:
    """A page's text dictionary (``get_text("dict")``) of OCR text, its lines made like those
    of a printed text layer, for typography to compare.

    Tesseract writes every word on its own, and PyMuPDF starts a new line at a wide gap, so a
    heading's number and its title ("2", "Target MRL's") came out as two lines: the lines of
    a block that share a baseline are joined (a block stays within a column). Tesseract also
    sizes every word by its own glyph box (one title line read 6.6 pt for "a", 12.7 pt for
    "Semantic"), where print sets a line in one size: each line's words get its largest, the
    word with capitals or ascenders, nearest the size the line was printed in.
    """
    for block in text["blocks"]:
        if block.get("lines"):
            block["lines"] = [_one_size(line) for line in _joined(block["lines"])]
    return text


def _joined(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    joined: list[dict[str, Any]] = []
    for line in lines:
        last = joined[-1] if joined else None
        if last is not None and _same_baseline(last["bbox"], line["bbox"]):
            last["spans"] = [*last["spans"], *line["spans"]]
            last["bbox"] = tuple(pymupdf.Rect(last["bbox"]) | line["bbox"])
        else:
            joined.append(dict(line))
    return joined


def _same_baseline(left: Any, right: Any) -> bool:
    """``right`` continues ``left`` on its baseline: bottoms within half a line's height."""
    height = min(left[3] - left[1], right[3] - right[1])
    return right[0] >= left[0] and abs(right[3] - left[3]) <= height / 2


def _one_size(line: dict[str, Any]) -> dict[str, Any]:
    size = max((span["size"] for span in line["spans"]), default=0.0)
    for span in line["spans"]:
        span["size"] = size
    return line
