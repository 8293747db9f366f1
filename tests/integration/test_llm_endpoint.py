"""End to end through a real HTTP endpoint: the LLM stages of ingestion with langchain-openai.

A scripted OpenAI-compatible server (tests/llm_stub.py) stands in for the model. The real
``ChatOpenAI`` client talks to it over 127.0.0.1, so request building, response parsing, JSON
retries, the repair loop, concurrent summaries and metadata merging are all exercised for real.

The structure reply is deliberately imperfect: every heading the stub can read on the pages is
returned correctly except one, claimed four pages away from where it is printed, and one extra
heading that the document does not contain. Verification must catch both, the LLM repair must
move the first and the second must be dropped.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from ingest import prompts
from ingest.context import IngestContext
from ingest.graph import build_ingest_graph
from ingest.sections import node_bodies
from ingest.summarise import extractive_summary, needs_summary
from ingest.tree import from_tree_nodes, iter_drafts
from store.chat import JSON_REPAIRS
from store.library import Library
from store.types import walk
from tests.conftest import PDF_DIR, require_shared_data
from tests.llm_stub import LLMStub, RecordedRequest, message_text

pytestmark = pytest.mark.integration

PDF = "bohnet09.pdf"  # 6 pages, no outline; headings printed as "**1** **Introduction**"
MODEL = "stub-model"
SUMMARY_MARKER = "STUB-SUMMARY"
BOGUS_TITLE = "10 Quantum Treebank Teleportation"
STUB_METADATA = {
    "title": "Stub Title: Efficient Parsing of Syntactic and Semantic Dependency Structures",
    "authors": ["Stub Author One", "Stub Author Two"],
    "year": 2011,
    "doi": None,
    "venue": "Stub Venue on Parsing",
    "volume": None,
    "pages": None,
    "description": "STUB-DESCRIPTION: a fast dependency parser with semantic role labeling.",
    "keywords": ["stub-keyword", "dependency parsing"],
}

PAGE_TAG = re.compile(r"<page (\d+)>\n(.*?)\n</page \1>", re.DOTALL)
BOLD_HEADING = re.compile(
    r"^\*\*(?:(\d+(?:\.\d+)*)\*\*\s+\*\*([^*\n]+?)|(Acknowledg\w*|References))\*\*\s*$",
    re.MULTILINE,
)
REPAIR_LINE = re.compile(r'^- "(.+)" \(claimed page (\d+)\)$', re.MULTILINE)
SECTION_LINE = re.compile(r"^Section: (.+)$", re.MULTILINE)
MISPLACE_BY = 4


def stage_of(request: RecordedRequest) -> str:
    """Which ingestion stage sent a request, by its system prompt."""
    return {
        prompts.STRUCTURE_SYSTEM: "structure",
        prompts.REPAIR_SYSTEM: "repair",
        prompts.SUMMARY_SYSTEM: "summary",
        prompts.METADATA_SYSTEM: "metadata",
    }.get(request.system, "unknown")


def printed_headings(user: str) -> list[dict[str, Any]]:
    """The headings printed on the tagged pages (numbered ones and back matter), in order."""
    found = []
    for number, text in PAGE_TAG.findall(user):
        for index, title, back_matter in BOLD_HEADING.findall(text):
            full = f"{index} {title.strip()}" if index else back_matter
            found.append({"index": index or "1", "title": full, "page": int(number)})
    return found


class ScriptedModel:
    """The responder: plays each stage, with one misplaced and one invented heading."""

    def __init__(self, structure_replies: list[str] | None = None) -> None:
        # Replies used, in order, for structure requests before the scripted good answer.
        self.structure_replies = list(structure_replies or [])
        self.always_malformed = False
        self.real_pages: dict[str, int] = {}
        self.misplaced: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        system = message_text(messages[0]) if messages else ""
        user = next(message_text(m) for m in messages if m.get("role") == "user")
        if system == prompts.STRUCTURE_SYSTEM:
            return self.structure(user)
        if system == prompts.REPAIR_SYSTEM:
            return self.repair(user)
        if system == prompts.SUMMARY_SYSTEM:
            title = SECTION_LINE.search(user)
            name = title.group(1) if title else "?"
            return f"{SUMMARY_MARKER} for {name}: the stub read {len(user.split())} words."
        if system == prompts.METADATA_SYSTEM:
            return "```json\n" + json.dumps(STUB_METADATA) + "\n```"
        raise AssertionError(f"unexpected system prompt: {system[:80]!r}")

    def structure(self, user: str) -> str:
        with self._lock:
            if self.always_malformed:
                return "Sure! The headings are: Introduction, Parsing Algorithm, ..."
            if self.structure_replies:
                return self.structure_replies.pop(0)
        headings = printed_headings(user)
        pages = [int(n) for n, _ in PAGE_TAG.findall(user)]
        reply = []
        with self._lock:
            for heading in headings:
                self.real_pages[heading["title"]] = heading["page"]
            # The last numbered heading is claimed MISPLACE_BY pages before its printed page.
            wrong = [h for h in headings if h["title"][0].isdigit()][-1]
            claimed = max(min(pages), wrong["page"] - MISPLACE_BY)
            self.misplaced = {**wrong, "claimed": claimed}
        for heading in headings:
            page = claimed if heading is wrong else heading["page"]
            reply.append({"index": heading["index"], "title": heading["title"], "start_page": page})
        reply.insert(len(reply) // 2, {"index": "10", "title": BOGUS_TITLE, "start_page": 2})
        return json.dumps(reply)

    def repair(self, user: str) -> str:
        """Propose the printed page for headings it knows; page 0 for ones it cannot find."""
        with self._lock:
            proposals = [
                {"title": title, "start_page": self.real_pages.get(title, 0)}
                for title, _claimed in REPAIR_LINE.findall(user)
            ]
        return json.dumps(proposals)


@pytest.fixture
def pdf() -> Path:
    require_shared_data()
    path = PDF_DIR / PDF
    if not path.is_file():
        pytest.fail(f"missing test PDF {path}")
    return path


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("VECTREE_API_KEY", raising=False)


@pytest.fixture
def scripted() -> ScriptedModel:
    return ScriptedModel()


def ingest(pdf: Path, library_dir: Path, stub: LLMStub) -> dict[str, Any]:
    context = IngestContext(
        library=str(library_dir),
        structure="llm",
        parser="pymupdf4llm",
        model=MODEL,
        base_url=stub.base_url,
    )
    return dict(build_ingest_graph().invoke({"source": str(pdf)}, context=context))


def staging_left(library_dir: Path) -> list[Path]:
    staging = Library(library_dir).staging_dir
    return list(staging.iterdir()) if staging.is_dir() else []


# -------------------------------------------------------------------------------- tests
@pytest.mark.usefixtures("api_key")
def test_llm_stages_through_real_client(
    pdf: Path, library_dir: Path, stub: LLMStub, scripted: ScriptedModel
) -> None:
    result = ingest(pdf, library_dir, stub)
    assert result["status"] == "ingested", result.get("error")
    library = Library(library_dir)
    doc_id = result["doc_id"]
    assert [r["doc_id"] for r in library.documents()] == [doc_id]
    assert staging_left(library_dir) == []

    # Every request came through the real client, to the configured model, with the key.
    stages = [stage_of(r) for r in stub.requests]
    assert set(stages) == {"structure", "repair", "summary", "metadata"}, stages
    assert all(r.model == MODEL for r in stub.requests)
    assert all(r.path == "/v1/chat/completions" for r in stub.requests)
    assert all(r.headers.get("authorization") == "Bearer test" for r in stub.requests)

    # Verification: the stub's two mistakes were caught; the misplaced heading was repaired
    # by the LLM's proposal, the invented one dropped.
    misplaced = scripted.misplaced
    assert misplaced is not None and misplaced["page"] - misplaced["claimed"] == MISPLACE_BY
    assert len(scripted.real_pages) >= 5, scripted.real_pages
    report = library.verification(doc_id)
    assert report["method"] == "llm"
    assert report["entries"] == len(scripted.real_pages) + 1
    assert report["initial_verification_rate"] is not None
    assert report["verification_rate"] is not None
    assert report["initial_verification_rate"] < 1
    assert report["verification_rate"] > report["initial_verification_rate"]
    assert report["verification_rate"] < 1  # the invented heading still counts as a failure
    assert report["dropped"] == [BOGUS_TITLE]
    assert misplaced["title"] in report["repaired"]
    assert BOGUS_TITLE not in report["repaired"]

    # The repair loop asked the model: first about both failures, then (the misplaced one
    # being fixed in round one, out of reach of the ±3-page search) only about the bogus one.
    repairs = [
        REPAIR_LINE.findall(message_text(r.messages[-1]))
        for r in stub.requests
        if stage_of(r) == "repair"
    ]
    assert len(repairs) == report["repair_rounds"] >= 2
    assert {title for title, _ in repairs[0]} == {misplaced["title"], BOGUS_TITLE}
    assert (misplaced["title"], str(misplaced["claimed"])) in repairs[0]
    assert all([title for title, _ in later] == [BOGUS_TITLE] for later in repairs[1:])

    # The tree: every printed heading present at its printed page, the bogus one nowhere.
    nodes = walk(library.tree(doc_id))
    pages_of = {n["title"]: n["start_page"] for n in nodes}
    for title, page in scripted.real_pages.items():
        assert pages_of.get(title) == page, (title, pages_of)
    assert BOGUS_TITLE not in pages_of

    # Summaries: sections of 200 tokens or more were written by the model; shorter ones keep
    # their own text.
    pages = library.pages(doc_id)
    drafts = iter_drafts(from_tree_nodes(library.tree(doc_id)))
    bodies = node_bodies(from_tree_nodes(library.tree(doc_id)), pages)
    long_nodes = short_nodes = 0
    for node, draft, body in zip(nodes, drafts, bodies, strict=True):
        if needs_summary(body):
            long_nodes += 1
            assert node["summary"].startswith(f"{SUMMARY_MARKER} for {node['title']}:"), node
        else:
            short_nodes += 1
            assert SUMMARY_MARKER not in node["summary"], node
            assert node["summary"] == extractive_summary(draft, body), node
    assert long_nodes >= 3 and short_nodes >= 1, (long_nodes, short_nodes)
    summarised = [r for r in stub.requests if stage_of(r) == "summary"]
    assert len(summarised) == long_nodes

    # Metadata: the model's fields, merged over the regex pass (fenced JSON was accepted).
    meta = library.metadata(doc_id)
    assert meta["description"] == STUB_METADATA["description"]
    assert meta["year"] == STUB_METADATA["year"]
    assert meta["title"] == STUB_METADATA["title"]
    assert meta["authors"] == STUB_METADATA["authors"]
    assert meta["venue"] == STUB_METADATA["venue"]
    assert library.record(doc_id)["title"] == STUB_METADATA["title"]
    assert library.record(doc_id)["structure"] == "llm"


@pytest.mark.usefixtures("api_key")
def test_malformed_structure_reply_is_retried(
    pdf: Path, library_dir: Path, stub: LLMStub, scripted: ScriptedModel
) -> None:
    scripted.structure_replies = ["Here you go: [{'title': 'Introduction', page 1}"]
    result = ingest(pdf, library_dir, stub)
    assert result["status"] == "ingested", result.get("error")

    structure = [r for r in stub.requests if stage_of(r) == "structure"]
    assert len(structure) >= 2
    # The retry carries the bad answer and says what was wrong with it.
    retry = structure[1].messages
    assert [m["role"] for m in retry[-2:]] == ["assistant", "user"]
    assert message_text(retry[-2]).startswith("Here you go:")
    assert "holds no JSON object or list" in message_text(retry[-1])
    assert Library(library_dir).verification(result["doc_id"])["dropped"] == [BOGUS_TITLE]


@pytest.mark.usefixtures("api_key")
def test_always_malformed_structure_falls_back_to_the_offline_tree(
    pdf: Path, library_dir: Path, stub: LLMStub, scripted: ScriptedModel
) -> None:
    """A model that never answers in JSON costs the document nothing but its model-made tree:
    the headings found offline give the tree, and the PDF is ingested."""
    scripted.always_malformed = True
    result = ingest(pdf, library_dir, stub)

    assert result["status"] == "ingested", result.get("error")
    structure = [r for r in stub.requests if stage_of(r) == "structure"]
    assert len(structure) == JSON_REPAIRS + 1
    library = Library(library_dir)
    assert library.record(result["doc_id"])["structure"] == "headings"
    assert len(library.tree(result["doc_id"])) >= 2
    assert staging_left(library_dir) == []
