"""PageIndex-style tree search: a model walks a document's section tree the way a reader skims a
table of contents, opening sections, reading the promising ones and following the
cross-references they make, then answers from what it read.

The model first sees a depth-limited outline (the top level always, and the sections on the
path to its cursor expanded, like folders), and acts with one tool per step: ``pageindex_open``
(show a section's subsections), ``pageindex_read`` (that section's pages, at most ``page_cap``),
``pageindex_back`` (up one level) or ``pageindex_jump`` (to the section a cross-reference names,
e.g. "Appendix B"); every result ends with the updated outline, what it has read, the
cross-references found in that text with the sections they resolve to, and its remaining budget.
It answers by replying without a tool call. Every call goes through the tool engine (existing,
visible or referenced node, reads left); a bad one costs a step and the model is told exactly
what was wrong. It runs as the checkpointed tool loop (``graph.strategies.tool_loop``), the
search rebuilt at every step by replaying the calls recorded since its outline; after
MAX_STEPS calls (at most MAX_READS reads) and the loop's extra turns, one answer call over the
pages read ends it.

Single document (the run is restricted to one): the model's own answer is the answer. Corpus
(several documents in scope): the documents are chosen first by DocScore over the top passages
of the ``dense`` chunk store ranked by cosine (see :func:`doc_scores`), the best TOP_DOCUMENTS
are searched concurrently, each with its own log merged into the trajectory in rank order, and
one answer call over everything the searches read writes a single cited answer.

Offline policy (no model): a deterministic walker opens, level by level, the child whose title
and summary best match the question (the navigator's lexical + dense relevance), reads the best
leaf, follows one cross-reference of the read text whose target shares content words with the
question, and answers with the extractive reader.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from graph.recorder import Recorder
from graph.state import Step
from graph.strategies.base import StrategyOutcome, StrategyRequest, answer_from_passages
from graph.strategies.tool_loop import ToolLoop, fresh_request, run_tool_loop
from graph.tool_engine import ToolEngine
from store.text import SKIP_SECTIONS, content_words
from store.types import TreeNode
from tools.formatting import CITATION_FORMAT, format_citation, node_page_label
from tools.relevance import relevance
from tools.results import Passage, Tool, ToolResult, failure
from tools.schemas import ToolArgs

MAX_STEPS = 12
MAX_READS = 4
TOP_DOCUMENTS = 3
CHUNK_HITS = 30  # top passages DocScore is computed over
DOC_SCHEME = "dense"
SUMMARY_WORDS = 18
OFFLINE_FOLLOWS = 1  # cross-references the offline walker follows after its first read

ACTIONS = ("open", "read", "back", "jump", "answer")

LOOP_PROMPT = (
    """You answer a question from one document by moving through its table of contents
with the tools. Every tool result ends with the outline (top-level sections always, the
sections on your path expanded), what you have read, the cross-references found in it, and the
budget left. pageindex_open shows a section's subsections, pageindex_read reads a section's
pages (any section shown, or referenced), pageindex_back goes up one level, pageindex_jump goes
to the section a cross-reference names. Titles and summaries only point the way: read before
answering. When what you read answers the question, reply with the answer and no tool call,
citing after each claim the page it comes from as the page header shows it: """
    + CITATION_FORMAT
    + "."
)


MERGED_NOTE = (
    "Other documents are searched as well and one answer over everything read is written "
    "afterwards: once this document has given what it can, reply without a tool call."
)


class InvalidAction(ValueError):
    """A reply the search cannot carry out; the message tells the model what to do instead."""


# -- the document ------------------------------------------------------------------------------
@dataclass(frozen=True)
class DocumentTree:
    """One document's section tree indexed by node id, with its pages and citation label."""

    doc_id: str
    title: str
    label: str
    roots: list[TreeNode]
    pages: list[str]
    nodes: dict[str, TreeNode] = field(default_factory=dict)  # depth-first order
    parents: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def build(
        cls, doc_id: str, title: str, label: str, roots: list[TreeNode], pages: list[str]
    ) -> DocumentTree:
        tree = cls(doc_id, title, label, roots, pages)
        tree._index(roots, None)
        return tree

    @classmethod
    def load(cls, request: StrategyRequest, doc_id: str) -> DocumentTree:
        library = request.catalog.library
        return cls.build(
            doc_id,
            library.record(doc_id)["title"],
            request.label(doc_id),
            library.tree(doc_id),
            library.pages(doc_id),
        )

    def _index(self, children: list[TreeNode], parent: str | None) -> None:
        for node in children:
            self.nodes[node["node_id"]] = node
            self.parents[node["node_id"]] = parent
            self._index(node["nodes"], node["node_id"])

    def children(self, node_id: str | None) -> list[TreeNode]:
        return self.roots if node_id is None else self.nodes[node_id]["nodes"]

    def path(self, node_id: str | None) -> list[str]:
        """The node and its ancestors, top level first (empty at the document root)."""
        chain: list[str] = []
        while node_id is not None:
            chain.append(node_id)
            node_id = self.parents[node_id]
        return chain[::-1]

    def find(self, raw: object) -> str | None:
        """The node a model means by ``raw``: the id as written, bracketed, or unpadded."""
        text = str(raw).strip().strip("[]").strip()
        if text in self.nodes:
            return text
        if text.isdigit() and self.nodes:
            padded = text.zfill(len(next(iter(self.nodes))))
            return padded if padded in self.nodes else None
        return None

    def node_pages(self, node_id: str) -> list[int]:
        """The node's pages that exist in the document."""
        node = self.nodes[node_id]
        return list(range(max(1, node["start_page"]), min(node["end_page"], len(self.pages)) + 1))

    def node_words(self, node_id: str) -> set[str]:
        """The content words of a node's title and summary."""
        node = self.nodes[node_id]
        return set(content_words(f"{node['title']} {node['summary']}"))

    def passage(self, pages: Iterable[int]) -> Passage:
        """The text of the given pages, page by page."""
        return Passage(self.doc_id, tuple((p, self.pages[p - 1]) for p in pages))

    def caption_node(self, kind: str, label: str) -> str | None:
        """The deepest node holding the page where the table or figure's caption is printed."""
        words = "Table|Tab\\." if kind == "Table" else "Figure|Fig\\."
        caption = re.compile(rf"^\W*(?:{words})\s*{re.escape(label)}\s*[:.|]", re.MULTILINE)
        page = next((n for n, text in enumerate(self.pages, 1) if caption.search(text)), None)
        if page is None:
            return None
        holding = [i for i, n in self.nodes.items() if n["start_page"] <= page <= n["end_page"]]
        return max(
            holding, key=lambda i: (len(self.path(i)), self.nodes[i]["start_page"]), default=None
        )


def node_line(node: TreeNode, summary_words: int = SUMMARY_WORDS) -> str:
    """One outline line: id, title, page range, number of subsections, the summary's start."""
    subsections = len(node["nodes"])
    extra = f", {subsections} subsections" if subsections else ""
    words = node["summary"].split()
    summary = " ".join(words[:summary_words]) + (" …" if len(words) > summary_words else "")
    head = f"[{node['node_id']}] {node['title']} ({node_page_label(node)}"
    return f"{head}{extra})" + (f": {summary}" if summary else "")


# -- cross-references --------------------------------------------------------------------------
LABEL = r"(?:[A-Z]|[IVX]+|\d+)(?:\.\d+)*"
SECTION_REF = re.compile(
    rf"(?<!\w)(?P<kind>[Aa]ppendi(?:x|ces)|[Ss]ections?|[Ss]ecs?\.|[Cc]hapters?|§)\s*"
    rf"(?P<label>{LABEL})\b"
)
FLOAT_REF = re.compile(r"(?<!\w)(?P<kind>Tables?|Tab\.|Figures?|Figs?\.)\s*(?P<label>[A-Z]?\d+)\b")
TITLE_LABEL = re.compile(
    rf"^\W*(?:(?i:appendix|section|chapter)\s+)?(?P<label>{LABEL})\.?(?=[\s:.)–—-]|$)"
)
REF_KINDS = {"appendi": "Appendix", "sec": "Section", "§": "Section", "chapter": "Chapter"}


def find_references(text: str) -> list[str]:
    """Cross-references in ``text`` as "Kind label" ("Appendix G", "Section 3.2", "Table 4"),
    in order of appearance, each once."""
    found: list[tuple[int, str]] = []
    for match in SECTION_REF.finditer(text):
        kind = next(v for k, v in REF_KINDS.items() if match["kind"].lower().startswith(k))
        found.append((match.start(), f"{kind} {match['label']}"))
    for match in FLOAT_REF.finditer(text):
        kind = "Table" if match["kind"].startswith("Tab") else "Figure"
        found.append((match.start(), f"{kind} {match['label']}"))
    return list(dict.fromkeys(ref for _, ref in sorted(found)))


def title_label(title: str) -> str | None:
    """The numbering a section title starts with ("3.2", "B.1", "G"), if any."""
    match = TITLE_LABEL.match(title)
    return match["label"] if match else None


def resolve_reference(tree: DocumentTree, ref: str) -> str | None:
    """The node a cross-reference points at.

    Sections and appendices match the numbering their titles start with; a number the tree
    lacks falls back to its nearest numbered ancestor ("3.2.1" → "3.2" → "3"). An appendix
    prefers a title that says "Appendix", else the last such label (appendices come last,
    while a leading "A" may just be an article). Tables and figures resolve to the section
    holding the page of their caption.
    """
    kind, _, label = ref.partition(" ")
    if kind in ("Table", "Figure"):
        return tree.caption_node(kind, label)
    parts = label.split(".")
    for cut in range(len(parts), 0, -1):
        wanted = ".".join(parts[:cut])
        matches = [i for i, n in tree.nodes.items() if title_label(n["title"]) == wanted]
        if not matches:
            continue
        if kind != "Appendix":
            return matches[0]
        explicit = [i for i in matches if tree.nodes[i]["title"].lower().startswith("appendix")]
        return (explicit or matches)[-1]
    return None


def offered_references(tree: DocumentTree, text: str, read_pages: set[int]) -> dict[str, str]:
    """Cross-references of ``text`` that lead to a section with pages not read yet."""
    offered: dict[str, str] = {}
    for ref in find_references(text):
        node_id = resolve_reference(tree, ref)
        if node_id is not None and not set(tree.node_pages(node_id)) <= read_pages:
            offered[ref] = node_id
    return offered


# -- the actions as tools --------------------------------------------------------------------------
class pageindex_outline(ToolArgs):
    """The outline the search starts from (layer 1)."""

    layer = 1

    doc_id: str = Field(description="The document searched.")


class pageindex_open(ToolArgs):
    """Show a section's subsections (layer 1)."""

    layer = 1

    node_id: str = Field(description="A section the outline or a cross-reference shows.")


class pageindex_read(ToolArgs):
    """Read a section's pages, at most the run's page cap (layer 2)."""

    layer = 2

    node_id: str = Field(description="A section the outline or a cross-reference shows.")


class pageindex_back(ToolArgs):
    """Go up one level (layer 1)."""

    layer = 1


class pageindex_jump(ToolArgs):
    """Go to the section a cross-reference names, e.g. "Appendix B" (layer 1)."""

    layer = 1

    ref: str = Field(min_length=1, description="The cross-reference as written.")


class pageindex_answer(ToolArgs):
    """Answer from what was read (layer 1)."""

    layer = 1

    answer: str = Field(default="", description="The answer, with citations.")


# -- one document's search -----------------------------------------------------------------------
MODEL_ACTIONS = ("pageindex_open", "pageindex_read", "pageindex_back", "pageindex_jump")
"""The actions a model takes as tool calls (it answers by replying without one)."""


@dataclass
class TreeSearch:
    """The state of one document's search: cursor, what was read, the references found in it,
    and the log its actions are recorded in (merged into the run's trajectory afterwards).

    Every action is a tool call through the tool engine, so it is budgeted, refused with an
    instructive error when it cannot be carried out, and recorded: the offline walker calls
    them on the search's own engine (the opening outline one more than MAX_STEPS); a model calls
    them in the checkpointed tool loop (:meth:`loop`), where the search is rebuilt at every step
    by replaying the actions recorded since its outline (:meth:`replay`).
    """

    tree: DocumentTree
    question: str
    page_cap: int
    recorder: Recorder = field(default_factory=Recorder)
    cursor: str | None = None
    passages: list[Passage] = field(default_factory=list)
    read_ids: list[str] = field(default_factory=list)
    referenced: dict[str, str] = field(default_factory=dict)
    merged: bool = False  # one of several searches whose reading is answered together
    answer: str | None = None
    done: bool = False

    def __post_init__(self) -> None:
        self.runs: dict[str, Callable[..., ToolResult]] = {
            "pageindex_outline": self._outline,
            "pageindex_open": self._open,
            "pageindex_read": self._read,
            "pageindex_back": self._back,
            "pageindex_jump": self._jump,
            "pageindex_answer": self._answer,
        }
        tools = [self._tool(schema) for schema in ACTION_SCHEMAS]
        self.engine = ToolEngine(tools, MAX_STEPS + 1, self.recorder, layer=1)
        self.pending = 0  # an action being carried out in the loop, not yet recorded

    @property
    def steps(self) -> int:
        """Actions taken since the outline, valid or not (the outline is not one)."""
        return len(self._since_outline()) + self.pending

    @property
    def reads_left(self) -> int:
        return MAX_READS - len(self.read_ids)

    @property
    def over(self) -> bool:
        """No further step: answered, or a budget is spent."""
        return self.done or self.steps >= MAX_STEPS or self.reads_left <= 0

    @property
    def read_pages(self) -> set[int]:
        return {page for passage in self.passages for page in passage.pages}

    # -- what the model sees ---------------------------------------------------------------------
    def start(self) -> str:
        """The first view, through the search's opening ``pageindex_outline`` call."""
        return self.engine.call("pageindex_outline", {"doc_id": self.tree.doc_id}).text

    def outline(self) -> str:
        """The top level always, and every section on the path to the cursor expanded like an
        open folder, so the prompt stays small however large the tree is."""
        path = set(self.tree.path(self.cursor))
        lines: list[str] = []

        def add(nodes: list[TreeNode], depth: int) -> None:
            for node in nodes:
                marks = " (read)" if node["node_id"] in self.read_ids else ""
                marks += " ◀ you are here" if node["node_id"] == self.cursor else ""
                lines.append("  " * depth + node_line(node) + marks)
                if node["node_id"] in path:
                    add(node["nodes"], depth + 1)

        add(self.tree.roots, 0)
        return "\n".join(lines)

    def view(self) -> str:
        """What the model sees after every action: outline, reads, cross-references, budget."""
        tree = self.tree
        here = "the top level" if self.cursor is None else self._name(self.cursor)
        read = "; ".join(self._name(i) for i in self.read_ids) or "nothing yet"
        refs = "; ".join(f"{ref} → {self._name(i)}" for ref, i in self.referenced.items())
        parts = [
            f"Question: {self.question}",
            f"Outline of {tree.title!r} ({tree.doc_id}); you are at {here}:\n{self.outline()}",
            f"Read so far: {read}",
            *([f"Cross-references in what you read: {refs}"] if refs else []),
            *([MERGED_NOTE] if self.merged else []),
            f"Budget: {MAX_STEPS - self.steps} of {MAX_STEPS} steps and {self.reads_left} of "
            f"{MAX_READS} reads left. Call one tool, or answer.",
        ]
        return "\n\n".join(parts)

    def _name(self, node_id: str) -> str:
        node = self.tree.nodes[node_id]
        return f"[{node_id}] {node['title']} ({node_page_label(node)})"

    # -- the loop a model drives ------------------------------------------------------------------
    def loop(self) -> ToolLoop:
        """The model's tools (open, read, back, jump; each result ends with the view), the step
        budget and the prompt, for the checkpointed tool loop; the search's outline call opens
        it the first time."""
        if self.recorder.since("pageindex_outline") is None:
            self.start()
        tools = [self._tool(schema, for_model=True) for schema in ACTION_SCHEMAS[1:5]]
        return ToolLoop(tools, MAX_STEPS, LOOP_PROMPT, first_message=self.view())

    def replay(self) -> None:
        """Rebuild cursor, reads and references from the actions recorded since the outline."""
        for step in self._since_outline():
            if step["ok"] and step["tool"] in MODEL_ACTIONS:
                self.runs[step["tool"]](**step["args"])

    def _since_outline(self) -> list[Step]:
        """The search's action steps after its latest outline."""
        return [s for s in self.recorder.since("pageindex_outline") or [] if s["tool"] in self.runs]

    # -- actions ---------------------------------------------------------------------------------
    def act(self, action: dict[str, Any]) -> str:
        """One action of the offline walker through the engine; the text it got back."""
        kind = str(action.get("action", "")).strip().lower()
        args = {k: str(action[k]) for k in ("node_id", "ref", "answer") if k in action}
        return self.engine.call(f"pageindex_{kind}", args).text

    def _tool(self, schema: type[ToolArgs], for_model: bool = False) -> Tool:
        """An action as the engine runs it: an action that cannot be carried out is the
        instructive error the caller gets back; a model also gets the view after each."""
        run = self.runs[schema.__name__]

        def carried_out(**args: Any) -> ToolResult:
            try:
                result = run(**args)
            except InvalidAction as exc:
                return failure(str(exc))
            if for_model:
                self.pending = 1
                result.content = f"{result.text}\n\n{self.view()}".strip()
                self.pending = 0
            return result

        return Tool(schema, carried_out, limit=MAX_READS if schema is pageindex_read else None)

    def _outline(self, doc_id: str) -> ToolResult:
        return ToolResult(self.view(), doc_id=doc_id)

    def _target(self, node_id: str, kind: str) -> str:
        found = self.tree.find(node_id)
        if found is None:
            raise InvalidAction(f"there is no node {node_id!r} in this document")
        if not self._reachable(found):
            parent = self.tree.parents[found]
            raise InvalidAction(
                f"node {found} is not shown from here; open its parent {parent} first, "
                "or pick a node the outline or the cross-references show"
            )
        return found

    def _reachable(self, node_id: str) -> bool:
        """Shown in the outline (its parent is on the expanded path) or cross-referenced."""
        parent = self.tree.parents[node_id]
        expanded = parent is None or parent in self.tree.path(self.cursor)
        return expanded or node_id in self.referenced.values()

    def _open(self, node_id: str) -> ToolResult:
        target = self._target(node_id, "open")
        if not self.tree.nodes[target]["nodes"]:
            raise InvalidAction(f"node {target} has no subsections; read it instead")
        if target == self.cursor:
            raise InvalidAction(f"node {target} is already open")
        return self._move(target, f"Opened {self._name(target)}.")

    def _back(self) -> ToolResult:
        if self.cursor is None:
            raise InvalidAction("you are at the top level already")
        parent = self.tree.parents[self.cursor]
        where = "the top level" if parent is None else self._name(parent)
        return self._move(parent, f"Back at {where}.")

    def _jump(self, ref: str) -> ToolResult:
        wanted = ref.strip()
        node_id = next((i for r, i in self.referenced.items() if r.lower() == wanted.lower()), None)
        named = find_references(wanted)
        if node_id is None and named:
            node_id = resolve_reference(self.tree, named[0])
        if node_id is None:
            known = ", ".join(self.referenced) or "none yet"
            raise InvalidAction(
                f"no section of this document matches {wanted!r} (references found so far: {known})"
            )
        return self._move(node_id, f"Jumped to {self._name(node_id)} ({wanted}).")

    def _move(self, node_id: str | None, note: str) -> ToolResult:
        """The cursor moved: the caller is told where it is."""
        self.cursor = node_id
        return ToolResult(note, doc_id=self.tree.doc_id, details={"node_id": node_id})

    def _read(self, node_id: str) -> ToolResult:
        target = self._target(node_id, "read")
        if target in self.read_ids:
            raise InvalidAction(f"node {target} was read already; its text is above")
        if self.reads_left <= 0:
            raise InvalidAction("no reads left; answer from what you read")
        available = self.tree.node_pages(target)
        passage = self.tree.passage(available[: self.page_cap])
        self.passages.append(passage)
        self.read_ids.append(target)
        new = offered_references(self.tree, passage.text, self.read_pages)
        self.referenced.update({r: i for r, i in new.items() if r not in self.referenced})
        return ToolResult(
            self._read_text(target, passage, len(available), new),
            doc_id=self.tree.doc_id,
            pages=list(passage.pages),
            passages=(passage,),
        )

    def _read_text(
        self, node_id: str, passage: Passage, available: int, refs: dict[str, str]
    ) -> str:
        cut = (
            f" (cut to its first {len(passage.pages)} of {available} pages)"
            if available > len(passage.pages)
            else ""
        )
        pages = "\n\n".join(
            f"--- {format_citation(self.tree.label, self.tree.doc_id, page)} ---\n{text.strip()}"
            for page, text in passage.segments
        )
        found = "".join(f"\nReferenced: {r} → {self._name(i)}" for r, i in refs.items())
        return f"Read {self._name(node_id)}{cut}:\n\n{pages or '(no pages)'}{found}"

    def _answer(self, answer: str = "") -> ToolResult:
        if not self.read_ids:
            raise InvalidAction("read at least one section before answering")
        self.answer = answer or None
        self.done = True
        return ToolResult("", doc_id=self.tree.doc_id)


ACTION_SCHEMAS: tuple[type[ToolArgs], ...] = (
    pageindex_outline,
    pageindex_open,
    pageindex_read,
    pageindex_back,
    pageindex_jump,
    pageindex_answer,
)


# -- who chooses the actions ---------------------------------------------------------------------
def search_offline(search: TreeSearch) -> None:
    """The deterministic walker of the module docstring chooses each action."""
    search.start()
    scores = subtree_scores(search.tree, search.question)
    while not search.over:
        action = offline_action(search, scores)
        if action is None:
            return
        search.act(action)


def subtree_scores(tree: DocumentTree, question: str) -> dict[str, float]:
    """Each node's match to the question: the best relevance of its own title and summary or
    of any section inside it, so a well-named subsection pulls its parent open. References and
    acknowledgements score nothing of their own."""
    ids = list(tree.nodes)
    texts = [f"{tree.nodes[i]['title']}. {tree.nodes[i]['summary']}" for i in ids]
    own = dict(zip(ids, relevance(question, texts).tolist(), strict=True)) if ids else {}
    for node_id in ids:
        if SKIP_SECTIONS.match(tree.nodes[node_id]["title"]):
            own[node_id] = 0.0
    best = dict(own)
    for node_id in reversed(ids):  # children come after their parent in depth-first order
        parent = tree.parents[node_id]
        if parent is not None:
            best[parent] = max(best[parent], best[node_id])
    return best


def offline_action(search: TreeSearch, scores: dict[str, float]) -> dict[str, Any] | None:
    """Follow a matching cross-reference after the first read, else descend towards the best
    section and read it; ``None`` when there is nothing to read at all."""
    if search.read_ids:
        follow = followable_reference(search)
        if follow is None or len(search.read_ids) > OFFLINE_FOLLOWS:
            return {"action": "answer"}
        ref, node_id = follow
        if search.cursor != node_id:
            return {"action": "jump", "ref": ref}
        return {"action": "read", "node_id": node_id}
    children = search.tree.children(search.cursor)
    if not children:
        return None if search.cursor is None else {"action": "read", "node_id": search.cursor}
    best = max(children, key=lambda n: scores[n["node_id"]])  # first of equals
    return {"action": "open" if best["nodes"] else "read", "node_id": best["node_id"]}


def followable_reference(search: TreeSearch) -> tuple[str, str] | None:
    """The unread referenced section whose title and summary share the most question words
    (the first of equals), if any shares one."""
    wanted = set(content_words(search.question))
    best: tuple[int, str, str] | None = None
    for ref, node_id in search.referenced.items():
        if node_id in search.read_ids:
            continue
        shared = len(wanted & search.tree.node_words(node_id))
        if shared and (best is None or shared > best[0]):
            best = (shared, ref, node_id)
    return None if best is None else (best[1], best[2])


# -- choosing documents (corpus mode) --------------------------------------------------------------
def doc_scores(hits: Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    """DocScore per document over ranked chunk hits: Σ chunk scores / √(n + 1), n being the
    document's number of hits. The square root rewards a document many hits agree on without
    letting sheer count win; best first, ties in order of first hit."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for doc_id, score in hits:
        sums[doc_id] = sums.get(doc_id, 0.0) + score
        counts[doc_id] = counts.get(doc_id, 0) + 1
    scored = [(doc_id, total / math.sqrt(counts[doc_id] + 1)) for doc_id, total in sums.items()]
    return sorted(scored, key=lambda item: -item[1])


class docscore_select(ToolArgs):
    """The documents whose top passages for a query score best by DocScore (layer 0)."""

    layer = 0

    query: str = Field(min_length=1, description="What the documents should answer.")


def select_documents(request: StrategyRequest, doc_ids: list[str]) -> list[str]:
    """The TOP_DOCUMENTS best documents by DocScore, chosen through one ``docscore_select``
    call.

    The passages come from the flat ``dense`` store ranked by cosine: DocScore adds chunk scores,
    which needs scores on an absolute scale (a fused rank score would turn the sum into a hit
    count), and flat passages keep the choice of documents independent of the trees searched.
    """
    from tools.passages import PassageSearch

    chosen: list[str] = []

    def select(query: str) -> ToolResult:
        hits = PassageSearch(request.catalog, DOC_SCHEME).search(
            query, doc_ids, CHUNK_HITS, method="dense"
        )
        ranked = doc_scores((hit.chunk.doc_id, hit.score) for hit in hits)
        chosen.extend(doc_id for doc_id, _ in ranked[:TOP_DOCUMENTS])
        return ToolResult(
            "\n".join(f"{doc_id} DocScore {score:.4f}" for doc_id, score in ranked),
            details={
                "scheme": DOC_SCHEME,
                "chunks": len(hits),
                "selected": {d: round(score, 4) for d, score in ranked[:TOP_DOCUMENTS]},
            },
        )

    engine = request.engine([Tool(docscore_select, select)], max_calls=1)
    engine.call("docscore_select", {"query": request.question})
    return chosen


# -- the run -------------------------------------------------------------------------------------
def declared_loop(request: StrategyRequest) -> ToolLoop:
    """The tool loop of a single-document search driven by a model (the graph's ``tool_loop``
    node): the search is rebuilt from the trajectory at every step."""
    (doc_id,) = request.scoped_doc_ids()[:1] or [""]
    return document_search(request, doc_id).loop()


def document_search(request: StrategyRequest, doc_id: str, merged: bool = False) -> TreeSearch:
    """A document's search over the request's recorder, replayed to where it stands."""
    tree = DocumentTree.load(request, doc_id)
    search = TreeSearch(
        tree, request.question, request.context.page_cap, request.recorder, merged=merged
    )
    search.replay()
    return search


def run(request: StrategyRequest) -> StrategyOutcome:
    """Tree search in the one document in scope, or in the best few of several."""
    doc_ids = request.scoped_doc_ids()
    if not doc_ids:
        return StrategyOutcome("", status="failed", detail="no document is in scope")
    single = len(doc_ids) == 1
    chosen = doc_ids if single else select_documents(request, doc_ids)
    if not chosen:
        return StrategyOutcome(
            "", status="failed", detail="no passage of the documents in scope matched"
        )
    if request.model is None:
        return conclude(request, search_offline_documents(request, chosen), single)
    if single:
        return run_tool_loop(request, lambda step: document_search(step, chosen[0]).loop())
    return search_with_model(request, chosen)


def search_offline_documents(request: StrategyRequest, doc_ids: list[str]) -> list[TreeSearch]:
    """The offline walker in each document, merged into the trajectory in the given order."""
    searches = [
        TreeSearch(
            DocumentTree.load(request, doc_id),
            request.question,
            request.context.page_cap,
            merged=len(doc_ids) > 1,
        )
        for doc_id in doc_ids
    ]
    with ThreadPoolExecutor(max_workers=len(searches)) as pool:
        list(pool.map(search_offline, searches))
    for search in searches:
        request.recorder.absorb(search.recorder)
    return searches


def search_with_model(request: StrategyRequest, doc_ids: list[str]) -> StrategyOutcome:
    """One model-driven tool loop per document, concurrently, each with a log of its own,
    merged into the trajectory in the given order; then one answer over everything read."""

    def search(doc_id: str) -> tuple[StrategyRequest, StrategyOutcome]:
        own = fresh_request(request)
        loop = run_tool_loop(own, lambda step: document_search(step, doc_id, merged=True).loop())
        return own, loop

    with ThreadPoolExecutor(max_workers=len(doc_ids)) as pool:
        done = list(pool.map(search, doc_ids))
    searches = []
    for doc_id, (own, _) in zip(doc_ids, done, strict=True):
        searches.append(document_search(own, doc_id, merged=True))
        request.recorder.absorb(own.recorder)
    failed = next((loop.detail for _, loop in done if loop.status == "failed"), None)
    return conclude(request, searches, single=False, failure=failed)


def conclude(
    request: StrategyRequest,
    searches: list[TreeSearch],
    single: bool,
    failure: str | None = None,
) -> StrategyOutcome:
    """The walker's own answer (one document), else one answer call over every page read."""
    if single and searches[0].answer:
        return StrategyOutcome(searches[0].answer)
    passages = [passage for search in searches for passage in search.passages]
    if passages:
        return answer_from_passages(request, passages)
    why = failure or f"the tree search read no section within {MAX_STEPS} steps"
    return StrategyOutcome("", status="failed", detail=why)
