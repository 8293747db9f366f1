"""A recorded run as one self-contained HTML page: the tool calls in order, the answer, and the
pages it cites with the quoted sentence highlighted.

`vectree trace --json` holds everything, but judging a run means following it: which layer each
call was on, which pages each call disclosed, and whether the quote behind each citation really
is on the page. The page is a single file with inline CSS, no scripts and no external resources,
so it can be attached to a bug report or opened offline, and every text is escaped, because
page texts and model output are untrusted.

The renderer takes a trace record (the `vectree trace --json` shape) and the page texts, not a
checkpointer or a library, so records read from a server render the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from html import escape
from pathlib import Path
from typing import Any

from graph.citations import find_citations
from graph.state import status_text
from graph.trajectory.adherence import LAYER_NAMES, layer_adherence, summary_line
from store.library import Library
from store.text import UNICODE_WORD

PageKey = tuple[str, int]

# Between two quoted words the page may hold what ``clean_text`` removed when the quote was
# made: punctuation and markdown, footnote marks, HTML tags, the URL part of a markdown link.
# Possessive, so a failed match never backtracks through the ways of splitting a gap.
_GAP = r"(?:<sup>.*?</sup>|<[^>]{1,40}>|\]\([^)]*\)|[\W_])++"
# Inside a quoted word the page may break it with a line-end hyphen, with italics or a link's
# end around the break ("_Lan-_\n_guage_", "abstrac-](url)\n[tive") or blank lines after it
# (a column break), all of which clean_text joins.
_HYPHEN_BREAK = r"(?:-(?:\]\([^)]*\))?[*_]*\s+\[?[*_]*)?"

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 24px; color: #1f2328; background: #fff; }
h1 { font-size: 22px; margin: 0 0 8px; } h2 { font-size: 18px; margin: 28px 0 8px; }
#question { font-size: 17px; font-weight: 600; margin: 4px 0 12px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0; }
dl.meta dt { color: #57606a; } dl.meta dd { margin: 0; }
#adherence { margin: 12px 0; padding: 8px 12px; border-radius: 6px; }
#adherence.followed { background: #dafbe1; border: 1px solid #4ac26b; }
#adherence.out-of-order { background: #fff1e5; border: 1px solid #fb8f44; }
table#timeline { border-collapse: collapse; width: 100%; table-layout: fixed; }
#timeline th, #timeline td { border-bottom: 1px solid #d0d7de; padding: 5px 8px;
  text-align: left; vertical-align: top; }
#timeline th { background: #f6f8fa; font-size: 13px; }
#timeline col.seq { width: 44px; } #timeline col.layer { width: 92px; }
#timeline col.tool { width: 170px; } #timeline col.result { width: 190px; }
#timeline col.tokens { width: 70px; } #timeline col.pages { width: 200px; }
#timeline td.args code { word-break: break-all; font-size: 12.5px; }
tr.step.failed { background: #ffebe9; }
td.result.error { color: #cf222e; font-size: 13px; } td.result.ok { color: #1a7f37; }
#timeline td.tokens { text-align: right; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff;
  font-size: 12.5px; font-weight: 600; white-space: nowrap; }
.badge.layer-0 { background: #0969da; } .badge.layer-1 { background: #bf8700; }
.badge.layer-2 { background: #1a7f37; } .badge.layer-other { background: #6e7781; }
a { color: #0969da; } .page-link { display: block; white-space: nowrap; font-size: 13px; }
#answer .answer-text { white-space: pre-wrap; background: #f6f8fa; padding: 10px 12px;
  border-radius: 6px; }
ol.citations li { margin: 6px 0; } blockquote.quote { margin: 2px 0 0 0; color: #57606a;
  border-left: 3px solid #d0d7de; padding-left: 8px; }
section.page { border: 1px solid #d0d7de; border-radius: 6px; margin: 12px 0; padding: 0 12px; }
section.page pre.page-text { white-space: pre-wrap; word-wrap: break-word; font-size: 12.5px; }
section.page .missing { color: #cf222e; }
mark.quote { background: #fff3a3; }
"""


def render_timeline(
    record: Mapping[str, Any],
    page_texts: Mapping[PageKey, str],
    titles: Mapping[str, str] | None = None,
) -> str:
    """The whole HTML page for a trace record; ``page_texts`` maps (doc_id, page) to its text.

    ``titles`` (doc_id → title) is optional decoration for the page sections.
    """
    shown = pages_to_show(record)
    body = [
        _header(record),
        _timeline_table(record.get("steps") or [], set(shown)),
        _answer_section(record, set(shown)),
        _pages_section(record, shown, page_texts, titles or {}),
    ]
    title = escape(f"Trace {record.get('thread_id', '')}")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def write_timeline(path: Path, record: Mapping[str, Any], library: Library) -> Path:
    """Render a record with its page texts and titles from ``library``; returns the file path."""
    html = render_timeline(record, load_page_texts(library, record), load_titles(library, record))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path


# -- what to show -----------------------------------------------------------------------------
def pages_to_show(record: Mapping[str, Any]) -> list[PageKey]:
    """Pages disclosed by successful calls, in call order, then cited pages not among them.

    Cited pages are included even if no call disclosed them, so every citation link resolves
    (and an unread cited page is visible as such rather than a dead link).
    """
    keys: dict[PageKey, None] = {}
    for step in record.get("steps") or []:
        if step.get("ok") and step.get("doc_id"):
            for page in step.get("pages") or []:
                keys[(str(step["doc_id"]), int(page))] = None
    for citation in record.get("citations") or []:
        keys[(str(citation["doc_id"]), int(citation["page"]))] = None
    return list(keys)


def load_page_texts(library: Library, record: Mapping[str, Any]) -> dict[PageKey, str]:
    """Texts of the pages to show, as stored in the library (missing documents are skipped)."""
    texts: dict[PageKey, str] = {}
    cache: dict[str, list[str]] = {}
    for doc_id, page in pages_to_show(record):
        if doc_id not in cache:
            cache[doc_id] = library.pages(doc_id) if library.has(doc_id) else []
        if 1 <= page <= len(cache[doc_id]):
            texts[(doc_id, page)] = cache[doc_id][page - 1]
    return texts


def load_titles(library: Library, record: Mapping[str, Any]) -> dict[str, str]:
    """Document titles for the page sections."""
    doc_ids = {doc_id for doc_id, _ in pages_to_show(record)}
    return {d: library.record(d)["title"] for d in sorted(doc_ids) if library.has(d)}


def page_anchor(doc_id: str, page: int) -> str:
    """The element id of a page section (doc ids are hex; anything else is made id-safe)."""
    return f"page-{re.sub(r'[^A-Za-z0-9_-]', '-', doc_id)}-{page}"


# -- header and timeline ----------------------------------------------------------------------
def _header(record: Mapping[str, Any]) -> str:
    adherence = record.get("adherence") or layer_adherence(record.get("steps") or []).as_dict()
    verdict = "followed" if adherence["followed_order"] else "out-of-order"
    meta = [
        ("thread id", record.get("thread_id", "")),
        ("status", status_text(record.get("status", ""), record.get("status_detail", ""))),
        ("model turns", record.get("model_turns", 0)),
        ("tool calls", len(record.get("steps") or [])),
    ]
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in meta)
    return (
        '<header id="summary">\n<h1>Trajectory</h1>\n'
        f'<p id="question">{escape(str(record.get("question", "")))}</p>\n'
        f'<dl class="meta">{rows}</dl>\n'
        f'<p id="adherence" class="{verdict}">{escape(summary_line(adherence))}</p>\n'
        f'<p class="legend">{_legend()}</p>\n</header>'
    )


def _legend() -> str:
    return " ".join(_badge(layer) for layer in sorted(LAYER_NAMES))


def _badge(layer: Any) -> str:
    known = isinstance(layer, int) and layer in LAYER_NAMES
    css = f"layer-{layer}" if known else "layer-other"
    name = LAYER_NAMES[layer] if known else "?"
    return f'<span class="badge {css}">{escape(str(layer))} {escape(name)}</span>'


def _timeline_table(steps: Iterable[Mapping[str, Any]], shown: set[PageKey]) -> str:
    head = "".join(
        f"<th>{h}</th>"
        for h in ("#", "layer", "tool", "arguments", "result", "tokens", "pages disclosed")
    )
    cols = "".join(
        f'<col class="{c}">' for c in ("seq", "layer", "tool", "args", "result", "tokens", "pages")
    )
    rows = "\n".join(_step_row(step, shown) for step in steps)
    return (
        '<h2>Tool calls</h2>\n<table id="timeline">\n'
        f"<colgroup>{cols}</colgroup>\n<thead><tr>{head}</tr></thead>\n"
        f"<tbody>\n{rows}\n</tbody>\n</table>"
    )


def _step_row(step: Mapping[str, Any], shown: set[PageKey]) -> str:
    seq, layer, ok = step.get("seq"), step.get("layer"), bool(step.get("ok"))
    args = json.dumps(step.get("args") or {}, ensure_ascii=False, separators=(", ", ": "))
    result = (
        '<td class="result ok">ok</td>'
        if ok
        else f'<td class="result error">{escape(str(step.get("error") or "error"))}</td>'
    )
    return (
        f'<tr class="step{"" if ok else " failed"}" id="step-{escape(str(seq))}" '
        f'data-layer="{escape(str(layer))}">'
        f'<td class="seq">{escape(str(seq))}</td><td class="layer">{_badge(layer)}</td>'
        f'<td class="tool"><code>{escape(str(step.get("tool", "")))}</code></td>'
        f'<td class="args"><code>{escape(args)}</code></td>{result}'
        f'<td class="tokens">{escape(str(step.get("payload_tokens", 0)))}</td>'
        f'<td class="pages">{_page_links(step, shown)}</td></tr>'
    )


def _page_links(step: Mapping[str, Any], shown: set[PageKey]) -> str:
    doc_id = str(step.get("doc_id") or "")
    links = []
    for page in step.get("pages") or []:
        label = escape(f"{doc_id} p.{page}")
        if (doc_id, int(page)) in shown:
            links.append(
                f'<a class="page-link" href="#{page_anchor(doc_id, int(page))}">{label}</a>'
            )
        else:
            links.append(f'<span class="page-link">{label}</span>')
    return " ".join(links)


# -- answer and pages -------------------------------------------------------------------------
def _answer_section(record: Mapping[str, Any], shown: set[PageKey]) -> str:
    items = "\n".join(_citation_item(c) for c in record.get("citations") or [])
    return (
        '<section id="answer">\n<h2>Answer</h2>\n'
        f'<div class="answer-text">{_linked_answer(str(record.get("answer", "")), shown)}</div>\n'
        f'<h3>Citations</h3>\n<ol class="citations">\n{items}\n</ol>\n</section>'
    )


def _linked_answer(answer: str, shown: set[PageKey]) -> str:
    """The answer escaped, with each inline citation linked to its first page's section."""
    parts, position = [], 0
    for cited in find_citations(answer):
        parts.append(escape(answer[position : cited.start]))
        text = escape(answer[cited.start : cited.end])
        if (cited.doc_id, cited.pages[0]) in shown:
            href = page_anchor(cited.doc_id, cited.pages[0])
            text = f'<a class="inline-citation" href="#{href}">{text}</a>'
        parts.append(text)
        position = cited.end
    parts.append(escape(answer[position:]))
    return "".join(parts)


def _citation_item(citation: Mapping[str, Any]) -> str:
    doc_id, page = str(citation["doc_id"]), int(citation["page"])
    label = escape(f"{citation.get('label', '')}, {doc_id} p.{page}")
    quote = escape(str(citation.get("quote", "")))
    return (
        f'<li><a class="citation" href="#{page_anchor(doc_id, page)}">{label}</a>'
        f'<blockquote class="quote">{quote}</blockquote></li>'
    )


def _pages_section(
    record: Mapping[str, Any],
    shown: list[PageKey],
    page_texts: Mapping[PageKey, str],
    titles: Mapping[str, str],
) -> str:
    quotes: dict[PageKey, list[str]] = {}
    for c in record.get("citations") or []:
        quotes.setdefault((str(c["doc_id"]), int(c["page"])), []).append(str(c.get("quote", "")))
    readers = _readers(record.get("steps") or [])
    sections = "\n".join(
        _page_section(key, page_texts.get(key), quotes.get(key, []), titles, readers.get(key, []))
        for key in shown
    )
    return f'<section id="pages">\n<h2>Pages as read</h2>\n{sections}\n</section>'


def _readers(steps: Iterable[Mapping[str, Any]]) -> dict[PageKey, list[Any]]:
    """For each page, the seq numbers of the successful calls that disclosed it."""
    readers: dict[PageKey, list[Any]] = {}
    for step in steps:
        if step.get("ok") and step.get("doc_id"):
            for page in step.get("pages") or []:
                readers.setdefault((str(step["doc_id"]), int(page)), []).append(step.get("seq"))
    return readers


def _page_section(
    key: PageKey,
    text: str | None,
    quotes: list[str],
    titles: Mapping[str, str],
    readers: list[Any],
) -> str:
    doc_id, page = key
    title = titles.get(doc_id, "")
    heading = escape(f"{title} — {doc_id} p.{page}" if title else f"{doc_id} p.{page}")
    read_by = ", ".join(
        f'<a href="#step-{escape(str(seq))}">#{escape(str(seq))}</a>' for seq in readers
    )
    origin = f"read by call {read_by}" if readers else '<span class="missing">never read</span>'
    body = (
        f'<pre class="page-text">{highlight(text, quotes)}</pre>'
        if text is not None
        else '<p class="missing">page text not available in the library</p>'
    )
    return (
        f'<section class="page" id="{page_anchor(doc_id, page)}" '
        f'data-doc="{escape(doc_id)}" data-page="{page}">\n'
        f'<h3>{heading}</h3>\n<p class="origin">{origin}</p>\n{body}\n</section>'
    )


# -- quote highlighting -----------------------------------------------------------------------
def highlight(text: str, quotes: Iterable[str]) -> str:
    """``text`` escaped, with every quote that can be found in it wrapped in ``<mark>``."""
    spans = _merge(span for q in quotes if (span := quote_span(text, q)) is not None)
    parts, position = [], 0
    for start, end in spans:
        parts.append(escape(text[position:start]))
        parts.append(f'<mark class="quote">{escape(text[start:end])}</mark>')
        position = end
    parts.append(escape(text[position:]))
    return "".join(parts)


def quote_span(text: str, quote: str) -> tuple[int, int] | None:
    """Where a quote is on the raw page, or None.

    Quotes are made from the cleaned page (markdown removed, whitespace collapsed, line-break
    hyphens joined, cut at 40 words with " …"), so an exact search usually fails; the fallback
    matches the quote's words in order with anything ``clean_text`` may have removed between
    them.
    """
    quote = quote.strip().removesuffix("…").strip()
    if not quote:
        return None
    exact = text.find(quote)
    if exact >= 0:
        return exact, exact + len(quote)
    words = UNICODE_WORD.findall(quote)
    if not words:
        return None
    pattern = _GAP.join(_HYPHEN_BREAK.join(re.escape(ch) for ch in word) for word in words)
    match = re.search(pattern, text)
    return (match.start(), match.end()) if match else None


def _merge(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, non-overlapping spans (two citations of a page may quote overlapping text)."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
