"""Run-time configuration of the ingestion graph (its ``context_schema``, shown in Studio)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ingest.pdf.ocr import DEFAULT_LANGUAGE, OCR_MODES, OcrOptions, checked_language
from store.settings import ParserSettings, RunContext, served_context

STRUCTURE_MODES = ("auto", "outline", "toc", "headings", "llm")
AUTO_ORDER = "outline (when it verifies) → printed contents (when it verifies) → headings → LLM"


@dataclass(kw_only=True)
class IngestContext(RunContext):
    """How one document is ingested (an LLM, when set, does structure, summaries, metadata)."""

    structure: str = field(
        default="auto",
        metadata={
            "description": "Structure source: auto | outline | toc | headings | llm "
            f"(toc = the printed table of contents; auto = {AUTO_ORDER})."
        },
    )
    ignore_outline: bool = field(
        default=False,
        metadata={
            "description": "Behave as if the PDF had no bookmarks, so other structure sources "
            "can be measured against them."
        },
    )
    parser: str = field(
        default_factory=lambda: ParserSettings.from_env().parser,
        metadata={
            "description": "PDF parser: pymupdf4llm | pymupdf4llm-layout | marker "
            "(VECTREE_PARSER, default pymupdf4llm)."
        },
    )

    ocr: str = field(
        default="auto",
        metadata={
            "description": "OCR with Tesseract: auto (pages without a usable text layer) | "
            "always (every page) | never (refuse PDFs without one)."
        },
    )
    ocr_language: str = field(
        default=DEFAULT_LANGUAGE,
        metadata={
            "description": "Tesseract language(s) of scanned pages, such as eng or eng+deu; "
            "each needs its language data installed."
        },
    )
    ocr_jobs: int = field(
        default=1,
        metadata={
            "description": "Pages of one document read by OCR at once (a CLI batch gives each "
            "document the cores its other workers leave)."
        },
    )

    def __post_init__(self) -> None:
        if self.ocr not in OCR_MODES:
            raise ValueError(f"ocr must be one of {', '.join(OCR_MODES)}")
        checked_language(self.ocr_language)
        if self.ocr_jobs < 1:
            raise ValueError("ocr_jobs must be at least 1")
        if self.structure not in STRUCTURE_MODES:
            raise ValueError(f"structure must be one of {', '.join(STRUCTURE_MODES)}")
        if self.ignore_outline and self.structure == "outline":
            raise ValueError("--structure outline cannot be combined with --ignore-outline")

    def ocr_options(self) -> OcrOptions:
        """How this run reads pages without a text layer."""
        return OcrOptions(mode=self.ocr, language=self.ocr_language, jobs=self.ocr_jobs)


@dataclass(kw_only=True)
class ServedIngestContext(IngestContext):
    """The context of an ingestion on the server (the exported ``ingest`` graph): the library
    and the LLM endpoint are the server's own, the model one the operator allows
    (``store.settings.served_context``). OCR reads one page at a time: the server's requests
    share its cores, and no caller chooses how many processes it starts."""

    def __post_init__(self) -> None:
        super().__post_init__()
        served_context(self)
        self.ocr_jobs = 1
