"""End to end: an LLM reads a printed table of contents through a real HTTP endpoint.

A small PDF is built in the test: a cover, a "Table of Contents" page, and six body pages
whose printed page numbers (footers 1–6) are two behind their physical pages (3–8). With
``--structure toc`` and an LLM configured, the contents page goes to the model (a scripted
OpenAI-compatible server, tests/llm_stub.py, reached by the real ``ChatOpenAI`` client). The
stub reads the list from the text it was sent and answers with JSON entries carrying printed
page numbers; ingestion must map them to physical pages, verify them and build the tree.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from ingest import prompts
from ingest.context import IngestContext
from ingest.graph import build_ingest_graph
from store.library import Library
from store.types import walk
from tests.llm_stub import LLMStub, RecordedRequest, message_text

pytestmark = pytest.mark.integration

MODEL = "stub-model"
CONTENTS_PAGE = 2
CONTENTS_TITLE = "Table of Contents"
# Printed page 1 is physical page 3 (a cover and the contents page come first).
OFFSET = 2
SECTIONS = [  # (level, title, printed page)
    (1, "1 Introduction", "1"),
    (1, "2 Harbour Survey Methods", "3"),
    (2, "2.1 Tide Gauge Records", "4"),
    (1, "3 Results and Discussion", "5"),
    (1, "4 Conclusions", "6"),
]
BODY_PAGES = 6
FILLER = (
    "The survey team recorded water levels, sediment samples and vessel traffic at each "
    "station along the northern quay over several seasons. "
)
SUMMARY_MARKER = "STUB-SUMMARY"
STUB_METADATA = {
    "title": "Coastal Harbour Report",
    "authors": ["Harbour Authority"],
    "year": 2021,
    "doi": None,
    "venue": None,
    "volume": None,
    "pages": None,
    "description": "STUB-DESCRIPTION: a survey of the northern quay.",
    "keywords": ["harbour", "tide gauges"],
}

PAGE_TAG = re.compile(r"<page (\d+)>\n(.*?)\n</page \1>", re.DOTALL)
# A contents line as pymupdf4llm prints it: "2.1 Tide Gauge Records 4".
CONTENTS_LINE = re.compile(r"^(\d+(?:\.\d+)*) (.+?) (\d+)$", re.MULTILINE)
REPAIR_LINE = re.compile(r'^- "(.+)" \(claimed page (\d+)\)$', re.MULTILINE)


def build_pdf(path: Path) -> None:
    """Cover, contents page (titles left, printed pages right), six body pages with footers."""
    doc = pymupdf.open()
    cover = doc.new_page()
    cover.insert_text((72, 200), "Coastal Harbour Report", fontsize=24, fontname="hebo")
    cover.insert_text((72, 240), "Prepared by the Harbour Authority, 2021", fontsize=12)
    contents = doc.new_page()
    contents.insert_text((72, 90), CONTENTS_TITLE, fontsize=18, fontname="hebo")
    y = 130
    for level, title, printed in SECTIONS:
        contents.insert_text((72 + 18 * (level - 1), y), title, fontsize=11)
        contents.insert_text((500, y), printed, fontsize=11)
        y += 22
    starts = {int(printed): title for _, title, printed in SECTIONS}
    for folio in range(1, BODY_PAGES + 1):
        page = doc.new_page()
        y = 90
        if folio in starts:
            page.insert_text((72, y), starts[folio], fontsize=16, fontname="hebo")
            y += 36
        page.insert_textbox(pymupdf.Rect(72, y, 540, 700), FILLER * 8, fontsize=10)
        page.insert_text((300, 760), str(folio), fontsize=10)
    doc.save(path)
    doc.close()


def stage_of(request: RecordedRequest) -> str:
    """Which ingestion stage sent a request, by its system prompt."""
    return {
        prompts.CONTENTS_SYSTEM: "contents",
        prompts.STRUCTURE_SYSTEM: "structure",
        prompts.REPAIR_SYSTEM: "repair",
        prompts.SUMMARY_SYSTEM: "summary",
        prompts.METADATA_SYSTEM: "metadata",
    }.get(request.system, "unknown")


class ScriptedModel:
    """The responder: reads the contents lines it is sent, plays the other stages plainly."""

    def __init__(self) -> None:
        self.contents_entries: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        system = message_text(messages[0]) if messages else ""
        user = next(message_text(m) for m in messages if m.get("role") == "user")
        if system == prompts.CONTENTS_SYSTEM:
            return self.contents(user)
        if system == prompts.SUMMARY_SYSTEM:
            return f"{SUMMARY_MARKER}: the stub read {len(user.split())} words."
        if system == prompts.METADATA_SYSTEM:
            return json.dumps(STUB_METADATA)
        if system == prompts.REPAIR_SYSTEM:  # cannot find anything: leave entries unchanged
            return json.dumps(
                [{"title": title, "start_page": 0} for title, _ in REPAIR_LINE.findall(user)]
            )
        if system == prompts.STRUCTURE_SYSTEM:
            return "[]"
        raise AssertionError(f"unexpected system prompt: {system[:80]!r}")

    def contents(self, user: str) -> str:
        """Entries for every contents line on the tagged pages, with its printed page."""
        entries = [
            {
                "level": index.count(".") + 1,
                "title": f"{index} {title}",
                "printed_page": printed,
                "contents_page": int(number),
            }
            for number, text in PAGE_TAG.findall(user)
            for index, title, printed in CONTENTS_LINE.findall(text)
        ]
        with self._lock:
            self.contents_entries.extend(entries)
        return "```json\n" + json.dumps(entries, indent=1) + "\n```"


@pytest.fixture
def scripted() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch, stub: LLMStub) -> None:
    """The LLM is configured the way a user does it: through the environment."""
    monkeypatch.setenv("VECTREE_MODEL", MODEL)
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("VECTREE_API_KEY", raising=False)


@pytest.mark.usefixtures("llm_env")
def test_llm_reads_printed_contents_with_offset_page_numbers(
    tmp_path: Path, library_dir: Path, stub: LLMStub, scripted: ScriptedModel
) -> None:
    pdf = tmp_path / "harbour-report.pdf"
    build_pdf(pdf)
    context = IngestContext(library=str(library_dir), structure="toc", parser="pymupdf4llm")
    assert context.model == MODEL and context.base_url == stub.base_url

    result = dict(build_ingest_graph().invoke({"source": str(pdf)}, context=context))
    assert result["status"] == "ingested", result.get("error")
    library = Library(library_dir)
    doc_id = result["doc_id"]

    # The contents page went to the model once, tagged with its physical page number, through
    # the real client; the stub read every listed line from that text.
    contents = [r for r in stub.requests if stage_of(r) == "contents"]
    assert len(contents) == 1
    sent = message_text(contents[0].messages[-1])
    assert [int(n) for n, _ in PAGE_TAG.findall(sent)] == [CONTENTS_PAGE]
    assert CONTENTS_TITLE in sent
    for _, title, printed in SECTIONS:
        assert re.search(rf"^{re.escape(title)} {printed}$", sent, re.MULTILINE), (title, sent)
    assert [(e["title"], e["printed_page"]) for e in scripted.contents_entries] == [
        (title, printed) for _, title, printed in SECTIONS
    ]
    assert all(r.model == MODEL for r in stub.requests)
    assert all(r.headers.get("authorization") == "Bearer test" for r in stub.requests)
    assert "unknown" not in {stage_of(r) for r in stub.requests}

    # Printed pages were mapped to physical ones (printed 1 = physical 3) and all verified.
    report = library.verification(doc_id)
    assert report["method"] == "toc"
    assert report["initial_verification_rate"] == report["verification_rate"] == 1.0
    assert report["repaired"] == report["dropped"] == []
    assert library.record(doc_id)["structure"] == "toc"

    nodes = walk(library.tree(doc_id))
    pages_of = {node["title"]: node["start_page"] for node in nodes}
    for _, title, printed in SECTIONS:
        assert pages_of.get(title) == int(printed) + OFFSET, (title, pages_of)
    assert pages_of.get(CONTENTS_TITLE) == CONTENTS_PAGE

    # Levels from the model's reply: 2.1 sits under 2, the rest at the top.
    roots = {node["title"]: node for node in library.tree(doc_id)}
    assert {title for level, title, _ in SECTIONS if level == 1} <= set(roots)
    children = [child["title"] for child in roots["2 Harbour Survey Methods"]["nodes"]]
    assert children == ["2.1 Tide Gauge Records"]
    assert roots["4 Conclusions"]["end_page"] == BODY_PAGES + OFFSET


@pytest.mark.usefixtures("llm_env")
def test_unusable_contents_reply_fails_the_document_cleanly(
    tmp_path: Path, library_dir: Path, stub: LLMStub, scripted: ScriptedModel
) -> None:
    """A reply that is valid JSON but not a list of entries ends the run with a clear reason."""
    pdf = tmp_path / "harbour-report.pdf"
    build_pdf(pdf)
    stub.responder = lambda messages: (
        '{"note": "no contents here"}'
        if message_text(messages[0]) == prompts.CONTENTS_SYSTEM
        else scripted(messages)
    )
    context = IngestContext(library=str(library_dir), structure="toc", parser="pymupdf4llm")

    result = dict(build_ingest_graph().invoke({"source": str(pdf)}, context=context))
    assert result["status"] == "failed"
    assert result["error"] == "contents reply was not a JSON list of entries"
    assert {stage_of(r) for r in stub.requests} == {"contents"}
    assert Library(library_dir).documents() == []
