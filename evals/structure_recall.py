"""How well the structure sources recover the authors' own outlines (bookmarks).

Every development PDF with bookmarks (``evals.outlined``: the earlier reference outlines and the
20 long documents of ``outlined/``) is parsed and given a section tree by the same steps as
ingestion (structure, verification, tree, splitting; offline), and every bookmark is looked up
among the tree's nodes by title. With ``--ignore-outline`` the bookmarks are hidden from the
structure sources, so the printed contents, the line labeller and the LLM are measured against
bookmarks they cannot see.

Reported per document: its kind and pages, bookmarks, title recall (share found), exact start
page (share found at the bookmark's page), nesting (share of found bookmarks whose parent node
is the node of their parent bookmark, top-level ones at the top), the method used, seconds.
Summaries: micro (over bookmarks), macro (mean over documents), per kind, and the lowest recall
among documents of 60 pages or more.

Precision beside recall: nodes per bookmark, and on documents whose bookmarks go three levels or
deeper (where the authors bookmarked nearly every heading) the share of tree nodes that match a
bookmark; the unmatched node titles are listed by what they look like (captions, acronyms,
labels, figures, sentences, other names).

``--folds family`` measures generalisation to families nobody trained on: the families
(``evals.outlined``) are spread over five folds, and each document is also scored with a line
labeller trained, its threshold chosen, on the other folds' families only
(``evals.train_labeller``), beside the shipped labeller trained on all of them. ``--folds
document`` holds out one document at a time, which leaks its family's templates and fonts into
training. The family figure is the one that carries over to documents nobody trained on. The
fold labellers are kept (``--fold-cache``) under the hash of their training data and training
code: the first run fits them (hours), a run after a change to how trees are built from the
labels only parses and scores.

    python -m evals.structure_recall --data ../shared/data --ignore-outline [--folds family]
        [--fold-cache DIR] [--structure auto|outline|toc|headings|llm] [--only NAME ...] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tqdm import tqdm

from evals.outlined import OutlinedDocument, outlined_documents
from evals.train_labeller import page_texts
from ingest.context import STRUCTURE_MODES
from ingest.parse import ParsedPDF, parse_pdf
from ingest.split import headings_within, split_oversized
from ingest.structure.labeller import (
    LineLabeller,
    candidates_from_scores,
    rule_candidates,
    scorable,
    scores_of,
)
from ingest.structure.locate import mask_spans
from ingest.structure.numbering import clean_title, numbering_prefix
from ingest.structure.route import extract_structure
from ingest.structure.typography import Line, document_lines
from ingest.structure.verify import insert_abstract, verify_entries
from ingest.tree import build_tree, to_tree_nodes
from store.settings import model_cache_dir
from store.text import UNICODE_WORD
from store.types import HeadingCandidate, TreeNode

# A dotted number opening a bookmark the numbering schemes would not read as one, because the
# words after it are not set as a title ("2.3.1 computed GOTO"): compared without it all the same.
LEADING_NUMBER = re.compile(r"^\d{1,3}(?:\.\d{1,3})*\.?\s+(?=\S)")
# A bookmark's title counts as printed when it spans at most this many consecutive lines.
MAX_PRINTED_LINES = 5
# Documents this long must each reach the per-document floor.
LONG_DOCUMENT_PAGES = 60
# Node precision is measured on documents whose bookmarks go at least this deep.
DEEP_LEVELS = 3
# Nodes the tree builder adds itself, never a heading of the document.
BUILT_NODES = ("Front matter", "Abstract")
FOLD_KINDS = ("family", "document")
CAPTION = re.compile(
    r"^(table|figure|fig\.|exhibit|chart|graph|schedule)\s+[a-z]?[\d.-]*\d", re.IGNORECASE
)


def title_key(title: str) -> str:
    """Lower-case words of a title without its numbering prefix ("2.1", "Item 7.", "NOTE 3 –")."""
    text = clean_title(title)
    leading = LEADING_NUMBER.match(text)
    prefix = numbering_prefix(text) or (leading.group(0) if leading else "")
    if prefix and len(prefix) < len(text):
        text = text[len(prefix) :]
    return " ".join(UNICODE_WORD.findall(text.lower()))


def _indexed(tree: list[TreeNode]) -> list[tuple[TreeNode, TreeNode | None]]:
    """Every node with its parent (None at the top), depth-first."""
    out: list[tuple[TreeNode, TreeNode | None]] = []

    def visit(nodes: list[TreeNode], parent: TreeNode | None) -> None:
        for node in nodes:
            out.append((node, parent))
            visit(node["nodes"], node)

    visit(tree, None)
    return out


def printed_titles(reference: list[dict[str, Any]], lines: list[Line]) -> list[bool]:
    """Whether each bookmark's title is printed, word for word, on its page or a page either
    side (on one line or over up to :data:`MAX_PRINTED_LINES` consecutive lines).

    A bookmark its authors reworded ("DCG Overview - Option 1", "Blank (DO NOT REMOVE)") can
    be found by no reader of the pages: the printed share bounds the title recall of any
    structure read from the text, and recall over printed bookmarks shows what is left.
    """
    by_page: dict[int, list[str]] = defaultdict(list)
    for line in lines:
        by_page[line.page].append(line.text)
    keys: dict[int, set[str]] = {}
    for page, texts in by_page.items():
        keys[page] = {
            title_key(" ".join(texts[start : start + count]))
            for start in range(len(texts))
            for count in range(1, MAX_PRINTED_LINES + 1)
        }
    printed: list[bool] = []
    for entry in reference:
        key = title_key(entry["title"])  # a bookmark without words is printed nowhere
        near = (entry["start_page"] - 1, entry["start_page"], entry["start_page"] + 1)
        printed.append(bool(key) and any(key in keys.get(page, set()) for page in near))
    return printed


def compare(
    reference: list[dict[str, Any]], tree: list[TreeNode], printed: list[bool] | None = None
) -> dict[str, Any]:
    """Title recall, exact start pages and nesting of ``tree`` against reference entries;
    with ``printed`` (:func:`printed_titles`), also how many bookmarks are printed and found."""
    indexed = _indexed(tree)
    references = {title_key(entry["title"]) for entry in reference}
    headed = [node for node, _ in indexed if node["title"] not in BUILT_NODES]
    unmatched = [node["title"] for node in headed if title_key(node["title"]) not in references]
    by_key: dict[str, list[tuple[TreeNode, TreeNode | None]]] = defaultdict(list)
    for node, parent in indexed:
        by_key[title_key(node["title"])].append((node, parent))
    found = exact = nested = 0
    misses: list[str] = []
    matched: list[tuple[TreeNode, TreeNode | None] | None] = []
    parents: list[int | None] = []
    stack: list[int] = []
    for index, entry in enumerate(reference):
        while stack and reference[stack[-1]]["level"] >= entry["level"]:
            stack.pop()
        parents.append(stack[-1] if stack else None)
        stack.append(index)
        hits = by_key.get(title_key(entry["title"]), [])
        best = next((h for h in hits if h[0]["start_page"] == entry["start_page"]), None)
        best = best or (hits[0] if hits else None)
        matched.append(best)
        if best is None:
            misses.append(entry["title"])
            continue
        found += 1
        exact += int(best[0]["start_page"] == entry["start_page"])
    for index, hit in enumerate(matched):
        if hit is None:
            continue
        parent_index = parents[index]
        parent_hit = matched[parent_index] if parent_index is not None else None
        if parent_index is None:
            nested += int(hit[1] is None)
        elif parent_hit is not None and hit[1] is not None:
            nested += int(hit[1]["node_id"] == parent_hit[0]["node_id"])
    total = len(reference) or 1
    printed = printed if printed is not None else [True] * len(reference)
    printed_found = sum(
        hit is not None and shown for hit, shown in zip(matched, printed, strict=True)
    )
    printed_exact = sum(
        hit is not None and shown and hit[0]["start_page"] == entry["start_page"]
        for hit, shown, entry in zip(matched, printed, reference, strict=True)
    )
    return {
        "reference_entries": len(reference),
        "printed": sum(printed),
        "printed_found": printed_found,
        "printed_exact": printed_exact,
        "printed_recall": round(printed_found / sum(printed), 3) if any(printed) else None,
        "found": found,
        "exact_start_pages": exact,
        "nested": nested,
        "title_recall": round(found / total, 3),
        "exact_start_page_accuracy": round(exact / total, 3),
        "nesting": round(nested / found, 3) if found else None,
        "nodes": len(headed),
        "matched_nodes": len(headed) - len(unmatched),
        "deep": max((int(entry["level"]) for entry in reference), default=0) >= DEEP_LEVELS,
        "missed": misses,
        "unmatched": unmatched,
    }


def unmatched_kind(title: str) -> str:
    """What a node title that matches no bookmark looks like: a caption ("Table 4"), an acronym
    ("NIST", "CMS"), a label ("Performance Indicators:", "Note"), figures ("2022 2021"), a
    sentence, or another name (place names, people, short phrases)."""
    words = title.split()
    letters = [ch for ch in title if ch.isalpha()]
    if CAPTION.match(title):
        return "caption"
    if len(words) <= 2 and letters and all(w.isupper() for w in words if w[:1].isalpha()):
        return "acronym"
    if title.rstrip().endswith(":") or len(words) == 1:
        return "label"
    if len(letters) < sum(ch.isdigit() for ch in title):
        return "figures"
    if len(words) > 12 or title.rstrip().endswith("."):
        return "sentence"
    return "other"


def overall(documents: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Micro averages over every reference entry, macro means over documents, the lowest recall
    (of all documents, and of those of 60 pages or more).

    Each document result needs ``reference_entries``, ``found``, ``exact_start_pages`` and
    ``title_recall`` (as :func:`compare` returns them); ``nested``, ``pages``, ``nodes``,
    ``matched_nodes``, ``deep``, ``printed`` and ``seconds`` are used when present.
    """
    entries = sum(int(r["reference_entries"]) for r in documents.values())
    found = sum(int(r["found"]) for r in documents.values())
    exact = sum(int(r["exact_start_pages"]) for r in documents.values())
    nested = sum(int(r.get("nested", 0)) for r in documents.values())
    printed = sum(int(r.get("printed", r["reference_entries"])) for r in documents.values())
    printed_found = sum(int(r.get("printed_found", r["found"])) for r in documents.values())
    printed_exact = sum(
        int(r.get("printed_exact", r["exact_start_pages"])) for r in documents.values()
    )
    printed_recalls = [
        float(r["printed_recall"])
        for r in documents.values()
        if r.get("printed_recall") is not None
    ]
    long_printed = [
        float(r["printed_recall"])
        for r in documents.values()
        if int(r.get("pages", 0)) >= LONG_DOCUMENT_PAGES and r.get("printed_recall") is not None
    ]
    nodes = sum(int(r.get("nodes", 0)) for r in documents.values())
    deep = [r for r in documents.values() if r.get("deep")]
    deep_nodes = sum(int(r.get("nodes", 0)) for r in deep)
    deep_matched = sum(int(r.get("matched_nodes", 0)) for r in deep)
    recalls = [float(r["title_recall"]) for r in documents.values()]
    exacts = [float(r["exact_start_page_accuracy"]) for r in documents.values()]
    long_recalls = [
        float(r["title_recall"])
        for r in documents.values()
        if int(r.get("pages", 0)) >= LONG_DOCUMENT_PAGES
    ]
    return {
        "documents": len(documents),
        "reference_entries": entries,
        "found": found,
        "exact_start_pages": exact,
        "title_recall": round(found / entries, 3) if entries else None,
        "exact_start_page_accuracy": round(exact / entries, 3) if entries else None,
        "nesting": round(nested / found, 3) if found else None,
        "printed_share": round(printed / entries, 3) if entries else None,
        "printed_recall": round(printed_found / printed, 3) if printed else None,
        "printed_exact_start_page_accuracy": round(printed_exact / printed, 3) if printed else None,
        "macro_printed_recall": (
            round(sum(printed_recalls) / len(printed_recalls), 3) if printed_recalls else None
        ),
        "min_printed_recall_long": min(long_printed) if long_printed else None,
        "macro_title_recall": round(sum(recalls) / len(recalls), 3) if recalls else None,
        "macro_exact_start_page_accuracy": round(sum(exacts) / len(exacts), 3) if exacts else None,
        "min_title_recall": min(recalls) if recalls else None,
        "min_title_recall_long": min(long_recalls) if long_recalls else None,
        "nodes_per_bookmark": round(nodes / entries, 3) if entries else None,
        "deep_documents": len(deep),
        "deep_node_precision": round(deep_matched / deep_nodes, 3) if deep_nodes else None,
        "seconds": round(sum(float(r.get("seconds", 0.0)) for r in documents.values()), 1),
    }


def by_field(documents: Mapping[str, Mapping[str, Any]], field: str) -> dict[str, dict[str, Any]]:
    """:func:`overall` over the documents of each value of ``field`` (kind, family)."""
    groups: dict[str, dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for name, result in documents.items():
        groups[str(result.get(field, "?"))][name] = result
    return {value: overall(results) for value, results in sorted(groups.items())}


def unmatched_by_kind(documents: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """The unmatched node titles of the deep documents, by :func:`unmatched_kind`."""
    kinds: dict[str, list[str]] = defaultdict(list)
    for result in documents.values():
        if result.get("deep"):
            for title in result.get("unmatched", []):
                kinds[unmatched_kind(title)].append(title)
    return dict(sorted(kinds.items()))


def summaries(documents: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Per document, overall, per kind and per family, and the unmatched titles by kind."""
    return {
        "documents": dict(documents),
        "overall": overall(documents),
        "kinds": by_field(documents, "kind"),
        "families": by_field(documents, "family"),
        "unmatched": unmatched_by_kind(documents),
    }


def document_tree(
    parsed: ParsedPDF, structure: str, ignore_outline: bool
) -> tuple[list[TreeNode], str]:
    """The section tree ingestion builds from a parsed PDF (offline: no LLM), and its method.

    The same steps, in the same order, as the ``structure``, ``verify``, ``tree`` and ``split``
    nodes of the ingest graph (``tests/integration`` checks that both give the same tree).
    """
    pages, candidates = parsed["pages"], parsed["candidates"]
    outline = [] if ignore_outline else parsed["outline"]
    found = extract_structure(structure, pages, outline, candidates, None, parsed["layout"])
    body = mask_spans(pages, found.listing_spans)
    entries, _ = verify_entries(found.entries, body, found.method)
    entries = insert_abstract(entries, pages)
    roots = build_tree(entries, len(pages))
    split_oversized(roots, pages, headings_within(candidates))
    return to_tree_nodes(roots), found.method


def _scored(
    document: OutlinedDocument,
    parsed: ParsedPDF,
    structure: str,
    ignore_outline: bool,
    candidates: list[HeadingCandidate],
    printed: list[bool],
) -> dict[str, Any]:
    started = time.perf_counter()
    tree, method = document_tree({**parsed, "candidates": candidates}, structure, ignore_outline)
    result = compare(document.entries, tree, printed)
    seconds = round(time.perf_counter() - started, 2)
    return {
        **result,
        "kind": document.kind,
        "family": document.family,
        "pages": len(parsed["pages"]),
        "method": method,
        "seconds": seconds,
    }


# Heading candidates of a held-out document from a model trained without it.
FoldCandidates = Callable[[str], list[HeadingCandidate]]


def evaluate(
    data_dir: Path,
    structure: str = "auto",
    ignore_outline: bool = False,
    folds: str | None = None,
    only: list[str] | None = None,
    progress: bool = True,
    without_model: bool = False,
    fold_cache: Path | None = None,
) -> dict[str, Any]:
    """Score every outlined document; with ``folds`` (:data:`FOLD_KINDS`) also held out, by
    labellers kept in ``fold_cache`` between runs (``evals.train_labeller.fit_with_threshold``).

    ``without_model`` scores the typographic rule's candidates alone (the ablation of the
    heading model).

    Returns :func:`summaries` and, with folds, the same under ``"left_out"``. A document
    that cannot be parsed counts with nothing found
    and carries its ``error``.
    """
    documents = outlined_documents(data_dir)
    if only:
        documents = [d for d in documents if d.name in only or Path(d.name).stem in only]
    fold_candidates = _fold_candidates(data_dir, folds, progress, fold_cache) if folds else None
    fitted: dict[str, dict[str, Any]] = {}
    left_out: dict[str, dict[str, Any]] = {}
    bar = tqdm(documents, unit="doc", desc="structure", disable=not progress, file=sys.stderr)
    with tempfile.TemporaryDirectory() as scratch:
        for document in bar:
            bar.set_postfix_str(document.name)
            try:
                parsed = parse_pdf(document.pdf, "pymupdf4llm", Path(scratch) / "images")
            except Exception as exc:  # one unreadable PDF is reported, the others are scored
                failed = {
                    **compare(document.entries, []),
                    "kind": document.kind,
                    "family": document.family,
                    "pages": document.pages,
                    "method": None,
                    "error": str(exc),
                }
                fitted[document.name] = left_out[document.name] = failed
                continue
            lines = document_lines(page_texts(document.pdf))
            printed = printed_titles(document.entries, lines)
            candidates = rule_candidates(lines) if without_model else parsed["candidates"]
            fitted[document.name] = _scored(
                document, parsed, structure, ignore_outline, candidates, printed
            )
            if fold_candidates is not None:
                left_out[document.name] = _scored(
                    document,
                    parsed,
                    structure,
                    ignore_outline,
                    fold_candidates(document.name),
                    printed,
                )
    bar.close()
    results = summaries(fitted)
    if folds:
        results["left_out"] = {"folds": folds, **summaries(left_out)}
    return results


def _fold_candidates(
    data_dir: Path, folds: str, progress: bool, cache: Path | None
) -> FoldCandidates:
    """Per document, the candidates of a model trained without it: without its family's
    documents (``folds="family"``), or without the document alone (``"document"``); each
    fold's model chooses its threshold on its own training families."""
    from evals.train_labeller import family_folds, fit_with_threshold, load_training

    training = load_training(data_dir, progress)
    held_outs = family_folds(training) if folds == "family" else [{d.name} for d in training]
    fold_of = {
        d.name: index
        for index, held_out in enumerate(held_outs)
        for d in training
        if (d.family if folds == "family" else d.name) in held_out
    }
    models: dict[int, LineLabeller] = {}

    def candidates(name: str) -> list[HeadingCandidate]:
        held_out = next(d for d in training if d.name == name)
        fold = fold_of[name]
        if fold not in models:
            models[fold] = fit_with_threshold(
                [d for d in training if fold_of[d.name] != fold], cache
            )
        scores = scores_of(models[fold], held_out.features, scorable(held_out.lines))
        return candidates_from_scores(held_out.lines, scores)

    return candidates


def format_table(results: Mapping[str, Any]) -> str:
    """One row per document (left-out columns with ``--folds``), misses, then the summaries."""
    left = results.get("left_out")
    header = (
        f"{'document':40} {'kind':10} {'pages':>5} {'entries':>7} {'recall':>7} "
        f"{'exact':>6} {'nest':>5} {'method':>8} {'printed':>7}"
    )
    if left:
        header += f" {'out rec':>7} {'out ex':>6} {'out nst':>7} {'out prn':>7} {'nodes':>5}"
    lines = [header]
    for name, r in results["documents"].items():
        row = (
            f"{name[:40]:40} {r.get('kind', '?'):10} {r.get('pages', 0):>5} "
            f"{r['reference_entries']:>7} {r['title_recall']:>7.3f} "
            f"{r['exact_start_page_accuracy']:>6.3f} {_rate(r.get('nesting')):>5} "
            f"{r['method'] or 'failed':>8} "
            f"{r.get('printed', 0) / max(r['reference_entries'], 1):>7.3f}"
        )
        if left:
            o = left["documents"][name]
            row += (
                f" {o['title_recall']:>7.3f} {o['exact_start_page_accuracy']:>6.3f} "
                f"{_rate(o.get('nesting')):>7} {_rate(o.get('printed_recall')):>7} "
                f"{o.get('nodes', 0):>5}"
            )
        lines.append(row)
        if r.get("error"):
            lines.append(f"    error: {r['error']}")
        misses = (left["documents"][name] if left else r)["missed"]
        lines.extend(f"    missed: {miss}" for miss in misses)
    lines.extend(_summary("fitted", results))
    if left:
        lines.extend(_summary("left out", left))
    return "\n".join(lines)


def _summary(label: str, results: Mapping[str, Any]) -> list[str]:
    total = results["overall"]
    lines = [
        f"{label.upper()}: micro recall {_rate(total['title_recall'])}, exact start "
        f"{_rate(total['exact_start_page_accuracy'])}, nesting {_rate(total['nesting'])}; "
        f"macro recall {_rate(total['macro_title_recall'])}, exact start "
        f"{_rate(total['macro_exact_start_page_accuracy'])}; lowest recall "
        f"{_rate(total['min_title_recall'])} (of documents >= {LONG_DOCUMENT_PAGES} pages: "
        f"{_rate(total['min_title_recall_long'])}); {total['reference_entries']} bookmarks in "
        f"{total['documents']} documents, {total['seconds']:.1f} s; printed word for word "
        f"{_rate(total['printed_share'])} of the bookmarks",
        f"  PRINTED bookmarks: micro recall {_rate(total['printed_recall'])}, exact start "
        f"{_rate(total['printed_exact_start_page_accuracy'])}, macro recall "
        f"{_rate(total['macro_printed_recall'])}, lowest of documents >= {LONG_DOCUMENT_PAGES} "
        f"pages {_rate(total['min_printed_recall_long'])}",
        f"  PRECISION: {_rate(total['nodes_per_bookmark'])} nodes per bookmark; on the "
        f"{total['deep_documents']} documents bookmarked {DEEP_LEVELS}+ levels deep, "
        f"{_rate(total['deep_node_precision'])} of the nodes match a bookmark",
    ]
    for group in ("kinds", "families"):
        for value, summary in results.get(group, {}).items():
            lines.append(
                f"  {value[:40]:40} recall {_rate(summary['title_recall'])} printed "
                f"{_rate(summary['printed_recall'])} exact "
                f"{_rate(summary['exact_start_page_accuracy'])} nesting "
                f"{_rate(summary['nesting'])} nodes/bookmark "
                f"{_rate(summary['nodes_per_bookmark'])} ({summary['documents']} documents, "
                f"{summary['reference_entries']} bookmarks)"
            )
    for kind, titles in results.get("unmatched", {}).items():
        lines.append(f"  unmatched {kind} ({len(titles)}): " + "; ".join(titles[:12]))
    return lines


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data", help="development data folder")
    parser.add_argument(
        "--structure",
        default="auto",
        choices=STRUCTURE_MODES,
        help="structure source to use (default auto; llm needs a configured model)",
    )
    parser.add_argument(
        "--ignore-outline",
        action="store_true",
        help="ignore PDF bookmarks (measure the other structure sources against them)",
    )
    parser.add_argument(
        "--folds",
        choices=FOLD_KINDS,
        help="also score each document with a labeller trained without its family "
        "(five folds of families) or without the document alone (needs scikit-learn: "
        "pip install -e '.[dev]')",
    )
    parser.add_argument(
        "--fold-cache",
        type=Path,
        default=model_cache_dir() / "fold-labellers",
        help="folder that keeps each fold's labeller between runs, named by its training data "
        "and code, so that a run after a change to how trees are built fits nothing "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--without-model",
        action="store_true",
        help="score the typographic rule's heading candidates alone (the model's ablation)",
    )
    parser.add_argument("--only", nargs="+", help="score only these documents (file names)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.folds and args.without_model:
        parser.error("--without-model scores no model, so it has no folds: use one or the other")
    try:
        results = evaluate(
            Path(args.data),
            args.structure,
            args.ignore_outline,
            args.folds,
            args.only,
            without_model=args.without_model,
            fold_cache=args.fold_cache,
        )
    except (ValueError, FileNotFoundError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
    else:
        print(format_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
