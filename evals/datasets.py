"""Benchmark questions in one shape, whatever file they came from.

Every loader returns the questions it can evaluate, the documents that must be in the library
for them (``sources``) and the questions it had to leave out with the reason, so a report can
say exactly what was measured. Gold evidence is always a set of ``(doc_key, 1-based page)``
pairs per annotator, which is what the evidence metrics compare read pages against.

Document keys are the dataset's own names: the arXiv id (QASPER), the DOI (LitQA2), the
``doc_name`` (FinanceBench) and the document name (MOSAIC).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ingest import qasper as qasper_source
from ingest.errors import BadInputError

Evidence = frozenset[tuple[str, int]]

FLOAT_MARK = "FLOAT SELECTED"
_FLOAT_PREFIX = re.compile(rf"^\s*{FLOAT_MARK}\s*:?\s*")
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)


@dataclass(frozen=True)
class EvalQuestion:
    """One question with everything needed to score an answer to it.

    ``answers`` (QASPER) holds one dict per annotator in the official evaluator's terms:
    ``type`` (extractive, abstractive, boolean or none), ``text`` and the raw ``evidence``
    strings. ``text_evidence_sets`` are the QASPER gold pages without figure and table
    captions (the official text-only Evidence-F1). ``evidence_texts`` keeps gold evidence that
    is text rather than pages (the LitQA2 key passage, FinanceBench evidence excerpts).
    """

    qid: str
    dataset: str
    question: str
    doc_keys: tuple[str, ...] = ()
    evidence_sets: tuple[Evidence, ...] = ()
    answers: tuple[dict[str, Any], ...] = ()
    reference: str = ""
    options: tuple[str, ...] = ()
    correct_option: int | None = None
    reasoning: str = ""
    qtype: str = ""
    unmapped_evidence: int = 0
    text_evidence_sets: tuple[Evidence, ...] = ()
    evidence_texts: tuple[str, ...] = ()


@dataclass
class LoadedDataset:
    """Questions to run, documents they need, and questions left out.

    ``sources`` maps a document key to a PDF ``Path`` to ingest, or to a ``str`` the caller
    resolves itself: the arXiv id of a paper inside the QASPER file, or a MOSAIC document name
    expected in the library already when no PDF folder was given. ``excluded`` items are
    ``{"qid", "reason"}``.
    """

    questions: list[EvalQuestion] = field(default_factory=list)
    sources: dict[str, Path | str] = field(default_factory=dict)
    excluded: list[dict[str, str]] = field(default_factory=list)

    def exclude(self, qid: str, reason: str) -> None:
        self.excluded.append({"qid": qid, "reason": reason})

    def add(self, question: EvalQuestion, found: Mapping[str, Path | str | None]) -> None:
        """Keep a question and the sources found for its documents."""
        self.questions.append(question)
        self.sources.update({key: src for key, src in found.items() if src is not None})


def collapse(text: str) -> str:
    """Whitespace collapsed to single spaces, as QASPER pages are stored."""
    return " ".join(text.split())


# -- QASPER -----------------------------------------------------------------------------------


def load_qasper(path: Path) -> LoadedDataset:
    """Every question of a QASPER JSON file, gold evidence mapped onto the synthetic pages.

    Pages are those ``ingest.qasper.qasper_document`` builds (abstract, one page per paragraph,
    then captions). A paragraph maps to the first page with the same text after whitespace
    collapse; "FLOAT SELECTED: <caption>" maps to its caption page. Evidence that matches no
    page (annotators sometimes selected a section heading) is counted in
    ``unmapped_evidence`` and left out of the page sets.
    """
    loaded = LoadedDataset()
    for arxiv_id, paper in qasper_source.load_qasper(path).items():
        locator = _PageLocator(qasper_source.qasper_document(arxiv_id, paper))
        for qa in paper.get("qas") or []:
            question = _qasper_question(arxiv_id, qa, locator)
            if question is None:
                loaded.exclude(str(qa.get("question_id")), "no annotator gave an answer")
                continue
            loaded.questions.append(question)
            loaded.sources[arxiv_id] = arxiv_id
    return loaded


class _PageLocator:
    """Finds the page of a QASPER evidence string within one paper's synthetic pages."""

    def __init__(self, document: qasper_source.SuppliedDocument) -> None:
        pages = document["pages"]
        self.by_text: dict[str, int] = {}
        for number, text in enumerate(pages, start=1):
            self.by_text.setdefault(collapse(text), number)
        first_caption = next(
            (
                e["start_page"]
                for e in reversed(document["entries"])
                if e["level"] == 1 and e["title"] == qasper_source.FLOATS_TITLE
            ),
            len(pages) + 1,
        )
        self.captions = [
            (number, collapse(pages[number - 1])) for number in range(first_caption, len(pages) + 1)
        ]

    def page(self, evidence: str) -> int | None:
        if FLOAT_MARK in evidence:
            return self.caption_page(collapse(_FLOAT_PREFIX.sub("", evidence)))
        return self.by_text.get(collapse(evidence))

    def caption_page(self, caption: str) -> int | None:
        """Exact caption first; else the one caption that is a prefix of it or it of them."""
        if not caption:
            return None
        exact = [n for n, text in self.captions if text == caption]
        if exact:
            return exact[0]
        near = [
            n for n, text in self.captions if text.startswith(caption) or caption.startswith(text)
        ]
        return near[0] if len(near) == 1 else None


def _qasper_question(
    arxiv_id: str, qa: Mapping[str, Any], locator: _PageLocator
) -> EvalQuestion | None:
    annotations = [a for a in map(qasper_answer, qa.get("answers") or []) if a is not None]
    if not annotations:
        return None
    evidence = [a["evidence"] for a in annotations]
    unmapped = {e for strings in evidence for e in strings if locator.page(e) is None}
    return EvalQuestion(
        qid=str(qa["question_id"]),
        dataset="qasper",
        question=str(qa.get("question", "")),
        doc_keys=(arxiv_id,),
        evidence_sets=tuple(_pages(arxiv_id, strings, locator) for strings in evidence),
        answers=tuple(annotations),
        reference=annotations[0]["text"],
        qtype=annotations[0]["type"],
        unmapped_evidence=len(unmapped),
        text_evidence_sets=tuple(
            _pages(arxiv_id, [e for e in strings if FLOAT_MARK not in e], locator)
            for strings in evidence
        ),
    )


def qasper_answer(annotation: Mapping[str, Any]) -> dict[str, Any] | None:
    """One annotator's answer as the official evaluator reads it; None if it gave none.

    Extractive spans are joined by ", ", yes/no become "Yes"/"No", unanswerable becomes
    "Unanswerable" with no evidence.
    """
    answer = annotation.get("answer", annotation)
    if answer.get("unanswerable"):
        return {"type": "none", "text": "Unanswerable", "evidence": []}
    spans = [str(s) for s in answer.get("extractive_spans") or []]
    if spans:
        kind, text = "extractive", ", ".join(spans)
    elif answer.get("free_form_answer"):
        kind, text = "abstractive", str(answer["free_form_answer"])
    elif answer.get("yes_no") is not None:
        kind, text = "boolean", "Yes" if answer["yes_no"] else "No"
    else:
        return None
    return {"type": kind, "text": text, "evidence": [str(e) for e in answer.get("evidence") or []]}


def _pages(arxiv_id: str, strings: Sequence[str], locator: _PageLocator) -> Evidence:
    return frozenset((arxiv_id, page) for page in map(locator.page, strings) if page is not None)


# -- LitQA2 -----------------------------------------------------------------------------------


def normalize_doi(value: str) -> str:
    """A bare DOI ("10.x/y") from either a bare DOI or a doi.org URL."""
    return _DOI_PREFIX.sub("", value.strip())


def doi_file_name(doi: str) -> str:
    """The PDF name of a paper: its URL-encoded DOI ("/" → "%2F", "(" → "%28") plus ".pdf"."""
    return quote(normalize_doi(doi), safe="") + ".pdf"


def load_litqa2(path: Path, pdf_dir: Path, seed: int = 0) -> LoadedDataset:
    """LitQA2 multiple-choice questions whose source papers are all in ``pdf_dir``.

    Options are the ideal answer plus the distractors in an order shuffled by
    ``random.Random(f"{seed}:{qid}")``, so each seed gives a fixed order per question;
    ``correct_option`` is where the ideal answer landed. There is no page evidence: the key
    passage is kept in ``evidence_texts``.
    """
    loaded = LoadedDataset()
    pdfs = _PdfFolder(pdf_dir)
    for row in read_jsonl(path):
        qid = str(row["id"])
        dois = list(dict.fromkeys(normalize_doi(str(s)) for s in _as_list(row.get("sources"))))
        found = {doi: pdfs.find(doi_file_name(doi)) for doi in dois}
        missing = [doi for doi, pdf in found.items() if pdf is None]
        if not dois or missing:
            loaded.exclude(qid, _missing_reason(missing, doi_file_name) or "no source DOI")
            continue
        options, correct = shuffled_options(row, f"{seed}:{qid}")
        passage = str(row.get("key-passage") or row.get("key_passage") or "")
        loaded.add(
            EvalQuestion(
                qid=qid,
                dataset="litqa2",
                question=str(row["question"]),
                doc_keys=tuple(dois),
                reference=str(row["ideal"]),
                options=options,
                correct_option=correct,
                qtype="mcq",
                evidence_texts=(passage,) if passage else (),
            ),
            found,
        )
    return loaded


def shuffled_options(row: Mapping[str, Any], key: str) -> tuple[tuple[str, ...], int]:
    """Ideal answer and distractors in a seeded order, and the ideal answer's new index."""
    choices = [str(row["ideal"]), *(str(d) for d in _as_list(row.get("distractors")))]
    order = list(range(len(choices)))
    random.Random(key).shuffle(order)
    return tuple(choices[i] for i in order), order.index(0)


def passage_pages(passage: str, pages: Sequence[str]) -> frozenset[int]:
    """1-based pages containing a key passage, compared case-insensitively after whitespace
    collapse; a passage cut by a page break maps to both pages. Empty when not found.

    PDF text is not the publisher's text (hyphenation, ligatures), so a miss is common: use
    the result as a diagnostic only.
    """
    needle = collapse(passage).lower()
    texts = [collapse(p).lower() for p in pages]
    if not needle:
        return frozenset()
    single = {n for n, text in enumerate(texts, start=1) if needle in text}
    if single:
        return frozenset(single)
    return frozenset(
        page
        for n in range(1, len(texts))
        if needle in f"{texts[n - 1]} {texts[n]}"
        for page in (n, n + 1)
    )


# -- FinanceBench -----------------------------------------------------------------------------


def load_financebench(path: Path, pdf_dir: Path) -> LoadedDataset:
    """FinanceBench questions whose filings (``<doc_name>.pdf``) are all in ``pdf_dir``.

    Evidence pages are 0-indexed in the source and stored here 1-based. Evidence without a
    usable page number is counted in ``unmapped_evidence``.
    """
    loaded = LoadedDataset()
    pdfs = _PdfFolder(pdf_dir)
    for row in read_jsonl(path):
        qid = str(row["financebench_id"])
        main_doc = str(row["doc_name"])
        evidence = [e for e in _as_list(row.get("evidence")) if isinstance(e, Mapping)]
        docs = list(
            dict.fromkeys([main_doc, *(str(e.get("doc_name") or main_doc) for e in evidence)])
        )
        found = {doc: pdfs.find(f"{doc}.pdf") for doc in docs}
        missing = [doc for doc, pdf in found.items() if pdf is None]
        if missing:
            loaded.exclude(qid, _missing_reason(missing, lambda d: f"{d}.pdf"))
            continue
        pages = [_financebench_page(e, main_doc) for e in evidence]
        loaded.add(
            EvalQuestion(
                qid=qid,
                dataset="financebench",
                question=str(row["question"]),
                doc_keys=tuple(docs),
                evidence_sets=(frozenset(p for p in pages if p is not None),),
                reference=str(row.get("answer") or ""),
                reasoning=str(row.get("justification") or ""),
                qtype=str(row.get("question_type") or ""),
                unmapped_evidence=pages.count(None),
                evidence_texts=tuple(str(e.get("evidence_text") or "") for e in evidence),
            ),
            found,
        )
    return loaded


def _financebench_page(evidence: Mapping[str, Any], main_doc: str) -> tuple[str, int] | None:
    page = _as_int(evidence.get("evidence_page_num"))
    if page is None or page < 0:
        return None
    return str(evidence.get("doc_name") or main_doc), page + 1


# -- MOSAIC -----------------------------------------------------------------------------------


def load_mosaic(path: Path, pdf_dir: Path | None = None) -> LoadedDataset:
    """MOSAIC-format questions: reference answer, reasoning chain, gold (document, page) pairs.

    Pages are already 1-based. With ``pdf_dir``, every document must be there as
    ``<document>.pdf`` or the question is excluded; without it, documents are expected in the
    library under their names (``sources`` maps a name to itself).
    """
    loaded = LoadedDataset()
    pdfs = _PdfFolder(pdf_dir) if pdf_dir is not None else None
    for row in read_jsonl(path):
        qid = str(row["id"])
        evidence = [e for e in _as_list(row.get("evidence")) if isinstance(e, Mapping)]
        docs = list(dict.fromkeys(str(e["document"]) for e in evidence if e.get("document")))
        found: dict[str, Path | str | None] = {
            doc: pdfs.find(f"{doc}.pdf") if pdfs is not None else doc for doc in docs
        }
        missing = [doc for doc, source in found.items() if source is None]
        if missing:
            loaded.exclude(qid, _missing_reason(missing, lambda d: f"{d}.pdf"))
            continue
        pages = [_mosaic_page(e) for e in evidence]
        loaded.add(
            EvalQuestion(
                qid=qid,
                dataset="mosaic",
                question=str(row["question"]),
                doc_keys=tuple(docs),
                evidence_sets=(frozenset(p for p in pages if p is not None),),
                reference=str(row.get("answer") or ""),
                reasoning=_chain_text(row.get("reasoning_chain")),
                qtype=str(row.get("type") or ""),
                unmapped_evidence=pages.count(None),
            ),
            found,
        )
    return loaded


def _mosaic_page(evidence: Mapping[str, Any]) -> tuple[str, int] | None:
    page = _as_int(evidence.get("page"))
    document = evidence.get("document")
    return (str(document), page) if document and page is not None and page >= 1 else None


def _chain_text(chain: Any) -> str:
    """A reasoning chain given as a list of steps becomes one step per line."""
    if isinstance(chain, list):
        return "\n".join(str(step) for step in chain)
    return str(chain or "")


# -- shared -----------------------------------------------------------------------------------


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file, blank lines skipped; a bad line names its number."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"cannot read {path}: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadInputError(f"{path}:{number}: not JSON ({exc})") from exc
        if not isinstance(row, dict):
            raise BadInputError(f"{path}:{number}: expected a JSON object")
        yield row


class _PdfFolder:
    """PDF lookup by exact file name, falling back to a case-insensitive match.

    The fallback matters for DOIs, which are case-insensitive and whose percent escapes may
    have been written in either case ("%2F" or "%2f").
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        files = sorted(folder.iterdir()) if folder.is_dir() else []
        self.by_lower = {p.name.lower(): p for p in files if p.suffix.lower() == ".pdf"}

    def find(self, name: str) -> Path | None:
        exact = self.folder / name
        return exact if exact.is_file() else self.by_lower.get(name.lower())


def _missing_reason(missing: Sequence[str], file_name: Callable[[str], str]) -> str:
    if not missing:
        return ""
    return "missing PDF: " + ", ".join(f"{key} ({file_name(key)})" for key in missing)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def _as_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
