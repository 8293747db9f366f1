"""`vectree trace THREAD --html FILE` rendered by a real headless Chromium.

The timeline is meant to be opened in a browser, so the test asserts on the DOM Chromium builds
from the file (not on the string the renderer wrote: a markup error would reshape the DOM) and
keeps a screenshot under ``test-artifacts/`` for a human to look at.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import struct
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from graph.cli import main
from graph.cli.library import demo_corpus
from graph.trajectory.adherence import summary_line
from graph.trajectory.timeline import render_timeline
from ingest.summarise import clean_text
from store.catalog import close_catalogs

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_TIMEOUT_S = 120
QUESTION = "How many academic papers does the S2ORC corpus contain?"
THREAD = "t-timeline"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


# -- a minimal DOM from Chromium's serialisation (stdlib only) -------------------------------
@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list[Element | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self) -> Iterator[Element]:
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.iter()

    def select(self, tag: str, cls: str | None = None) -> list[Element]:
        return [e for e in self.iter() if e.tag == tag and (cls is None or cls in e.classes)]

    def by_id(self, element_id: str) -> Element | None:
        return next((e for e in self.iter() if e.attrs.get("id") == element_id), None)


class _DomBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse_dom(markup: str) -> Element:
    builder = _DomBuilder()
    builder.feed(markup)
    builder.close()
    return builder.root


# -- chromium -----------------------------------------------------------------------------------
def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium with no network, no profile reuse and a bounded run time."""
    if shutil.which(CHROMIUM) is None:
        pytest.fail(
            f"{CHROMIUM} not found: install Debian's chromium package "
            "(apt-get install -y chromium); this test needs a real browser"
        )
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ]
    result = subprocess.run(
        [CHROMIUM, *flags, *args],
        capture_output=True,
        text=True,
        timeout=CHROMIUM_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _normal(text: str) -> str:
    """Words only, after the cleaning quotes were made with (the page keeps its markdown)."""
    return " ".join(re.findall(r"\w+", clean_text(text).lower()))


# -- the run ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    """The recorded run: its trace record, the HTML file and what `trace --html` printed."""

    record: dict[str, Any]
    html: Path
    printed: str


def cli_stdout(*args: str) -> str:
    """Run the CLI in-process (module fixtures cannot use capsys); asserts exit code 0."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    assert code == 0, (args, out.getvalue())
    return out.getvalue()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """Ask the demo question offline, then write its timeline next to the screenshot."""
    library = str(tmp_path_factory.mktemp("timeline") / "library")
    cli_stdout("--library", library, "ingest", str(demo_corpus()), "--json")
    cli_stdout("--library", library, "ask", QUESTION, "--thread", THREAD, "--json")
    close_catalogs()
    ARTIFACTS.mkdir(exist_ok=True)
    html = ARTIFACTS / "trace-timeline.html"
    html.unlink(missing_ok=True)
    printed = cli_stdout("--library", library, "trace", THREAD, "--html", str(html))
    record = json.loads(cli_stdout("--library", library, "trace", THREAD, "--json"))
    yield Run(record, html, printed)
    close_catalogs()


@pytest.fixture(scope="module")
def dom(run: Run, tmp_path_factory: pytest.TempPathFactory) -> Element:
    """The DOM Chromium built from the file."""
    result = chromium(tmp_path_factory.mktemp("chromium"), "--dump-dom", run.html.as_uri())
    assert "<table" in result.stdout, result.stderr[-2000:]
    return parse_dom(result.stdout)


def test_trace_html_prints_the_path_and_is_self_contained(run: Run) -> None:
    assert run.printed.strip() == str(run.html.resolve())
    markup = run.html.read_text(encoding="utf-8")
    assert markup.startswith("<!DOCTYPE html>")
    assert not re.search(r"<script|<link|<img|<iframe|\bsrc=|url\(", markup, re.IGNORECASE)
    assert not re.search(r'href="(?!#)', markup), "only in-page links"


def test_rows_match_the_steps(run: Run, dom: Element) -> None:
    record = run.record
    table = dom.by_id("timeline")
    assert table is not None and table.tag == "table"
    rows = table.select("tr", "step")
    steps = record["steps"]
    assert len(rows) == len(steps) >= 3
    for row, step in zip(rows, steps, strict=True):
        (badge,) = row.select("span", "badge")
        assert f"layer-{step['layer']}" in badge.classes
        assert row.attrs["data-layer"] == str(step["layer"])
        (tool,) = row.select("td", "tool")
        assert tool.text().strip() == step["tool"]
        (args,) = row.select("td", "args")
        assert json.loads(args.text()) == step["args"]
    badges = {c for row in rows for b in row.select("span", "badge") for c in b.classes}
    assert {"layer-0", "layer-1", "layer-2"} <= badges
    tools = [row.select("td", "tool")[0].text().strip() for row in rows]
    assert tools[0] == "search_documents" and tools[-1] == "get_page_content"
    assert {"get_document_tree", "search_within_paper"} <= set(tools)


def test_header_shows_question_and_adherence(run: Run, dom: Element) -> None:
    record = run.record
    question, adherence = dom.by_id("question"), dom.by_id("adherence")
    assert question is not None and question.text() == QUESTION
    assert adherence is not None and adherence.text() == summary_line(record["adherence"])
    assert "followed" in adherence.classes
    summary = dom.by_id("summary")
    assert summary is not None and THREAD in summary.text()


def test_answer_and_citations_link_to_the_quoted_pages(run: Run, dom: Element) -> None:
    record = run.record
    answer = dom.by_id("answer")
    assert answer is not None
    (answer_text,) = answer.select("div", "answer-text")
    assert answer_text.text() == record["answer"]
    links = dom.select("a", "citation")
    assert len(links) == len(record["citations"]) >= 1
    for link, citation in zip(links, record["citations"], strict=True):
        anchor = f"page-{citation['doc_id']}-{citation['page']}"
        assert link.attrs["href"] == f"#{anchor}"
        section = dom.by_id(anchor)
        assert section is not None and section.tag == "section" and "page" in section.classes
        quote = _normal(citation["quote"].removesuffix("…"))
        marks = section.select("mark")
        assert marks, f"quote not highlighted on {anchor}"
        assert any(_normal(m.text()) == quote for m in marks), (anchor, quote)
    read = {(s["doc_id"], p) for s in record["steps"] if s["ok"] for p in s["pages"]}
    sections = dom.select("section", "page")
    assert {(s.attrs["data-doc"], int(s.attrs["data-page"])) for s in sections} == read
    for page_link in dom.select("a", "page-link"):
        assert dom.by_id(page_link.attrs["href"].removeprefix("#")) is not None


def test_screenshot_is_kept_as_an_artefact(run: Run, tmp_path: Path) -> None:
    screenshot = ARTIFACTS / "trace-timeline.png"
    screenshot.unlink(missing_ok=True)
    chromium(tmp_path, f"--screenshot={screenshot}", "--window-size=1280,2000", run.html.as_uri())
    assert screenshot.is_file()
    assert screenshot.stat().st_size > 20_000, "a blank page compresses to a few kB"
    assert png_size(screenshot) == (1280, 2000)


HOSTILE = '<script>alert("x")</script> & <b>bold</b> "quoted"'


def test_hostile_text_is_shown_not_run_and_failures_are_marked(tmp_path: Path) -> None:
    """Page texts and model output are untrusted: every string must reach the DOM as text."""
    doc = "0123456789abcdef"
    steps = [
        _step(1, 2, "get_page_content", {"doc_id": doc, "pages": [2], "q": HOSTILE}, True, doc),
        _step(2, 0, "search_documents", {"query": HOSTILE}, False, None),
    ]
    record = {
        "thread_id": "t-hostile",
        "question": HOSTILE,
        "answer": f"{HOSTILE} (Eve, 2024, {doc}, p.2) and (Eve, 2024, {doc}, p.3)",
        "citations": [
            {"doc_id": doc, "page": 2, "label": HOSTILE, "quote": "alert x bold"},
            {"doc_id": doc, "page": 3, "label": "Eve, 2024", "quote": "never read"},
        ],
        "status": "answered",
        "model_turns": 2,
        "steps": steps,
    }
    html = tmp_path / "hostile.html"
    html.write_text(render_timeline(record, {(doc, 2): f"Top.\n{HOSTILE}\nEnd."}), "utf-8")
    page = parse_dom(chromium(tmp_path, "--dump-dom", html.as_uri()).stdout)
    assert not page.select("script") and not page.select("b")
    question, adherence = page.by_id("question"), page.by_id("adherence")
    assert question is not None and question.text() == HOSTILE
    assert adherence is not None and "out-of-order" in adherence.classes
    rows = page.select("tr", "step")
    assert ["failed" in r.classes for r in rows] == [False, True]
    assert rows[1].select("td", "error")[0].text() == "search failed: " + HOSTILE
    read = page.by_id(f"page-{doc}-2")
    assert read is not None and HOSTILE in read.text()
    assert [m.text() for m in read.select("mark")] == ['alert("x")</script> & <b>bold']
    unread = page.by_id(f"page-{doc}-3")
    assert unread is not None and "not available" in unread.text()
    inline = page.select("a", "inline-citation")
    assert [a.attrs["href"] for a in inline] == [f"#page-{doc}-2", f"#page-{doc}-3"]


def _step(
    seq: int, layer: int, tool: str, args: dict[str, Any], ok: bool, doc_id: str | None
) -> dict[str, Any]:
    return {
        "seq": seq,
        "layer": layer,
        "tool": tool,
        "args": args,
        "ok": ok,
        "error": None if ok else "search failed: " + HOSTILE,
        "payload_tokens": 12 if ok else 0,
        "pages": [2] if ok else [],
        "doc_id": doc_id,
    }
