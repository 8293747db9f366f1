"""Layer-order adherence of one recorded trajectory: did the agent search, then open a document's
tree, then read its pages?

The tree-navigation design assumes that order (layer 0 find → layer 1 tree → layer 2 read): the
tree is what lets the agent pick the few pages worth reading. The paper this project follows
could only report how many tools were called and how many tokens they returned, because it did
not record the order of the calls, so whether its agents actually navigated (rather than jumping
straight to pages or wandering back to search) was never measured. Every step here carries its
``seq`` and ``layer``, so the order can be checked per run, after the fact, from the checkpoint.

Only successful calls count for the order: a failed call disclosed nothing, so it neither opens a
tree nor reads a page, and a retried typo must not count as a jump. Failed calls are still
counted (``failed_calls``, ``calls_per_layer``) because they cost a turn of the budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import pairwise
from typing import Any

LAYERS = (0, 1, 2)
LAYER_NAMES = {0: "find", 1: "tree", 2: "read"}

StepLike = Mapping[str, Any]


@dataclass(frozen=True)
class Adherence:
    """How closely one trajectory followed the find → tree → read order.

    ``layers`` is the layer of every successful call, in call order (the sequence the order
    measures are computed on). ``calls_per_layer`` counts every call, failed ones included, keyed
    by the layer as a string so the dict is the same after a JSON round trip.
    """

    layers: list[int]
    backward_jumps: int
    pages_without_tree: int
    searched_first: bool
    followed_order: bool
    calls_per_layer: dict[str, int]
    failed_calls: int

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON values (lists, ints, bools, string keys), for `vectree trace --json`."""
        return asdict(self)

    def summary(self) -> str:
        """One line for humans: the verdict first, then what it rests on."""
        return summary_line(self.as_dict())


def layer_adherence(steps: Iterable[StepLike]) -> Adherence:
    """Adherence of a trajectory (``Step`` dicts as recorded, in any order; sorted by ``seq``)."""
    ordered = sorted(steps, key=lambda s: int(s.get("seq") or 0))
    succeeded = [s for s in ordered if s.get("ok")]
    layers = [int(s.get("layer") or 0) for s in succeeded]
    jumps = backward_jumps(layers)
    unopened = pages_without_tree(succeeded)
    first = bool(layers) and layers[0] == 0
    return Adherence(
        layers=layers,
        backward_jumps=jumps,
        pages_without_tree=unopened,
        searched_first=first,
        followed_order=first and jumps == 0 and unopened == 0,
        calls_per_layer=calls_per_layer(ordered),
        failed_calls=len(ordered) - len(succeeded),
    )


def backward_jumps(layers: Sequence[int]) -> int:
    """Consecutive pairs where the layer decreases (2 → 0, 2 → 1, 1 → 0): the agent went back."""
    return sum(1 for before, after in pairwise(layers) if after < before)


def pages_without_tree(succeeded: Iterable[StepLike]) -> int:
    """Successful reads of a document's pages before any successful structure call showed it.

    Such a read means the pages were chosen without the section tree (from search hits, a
    passage search or a guess), which is what the tree is there to prevent. Works for every
    strategy: a structure call is any layer-1 step (one about no single document, such as the
    trees of all documents or an induced sub-forest, shows them all), and a read is any step
    that disclosed pages, counted once per document it disclosed.
    """
    opened: set[str] = set()
    every_tree_shown = False
    count = 0
    for step in succeeded:
        doc_id = step_doc_id(step)
        if int(step.get("layer") or 0) == 1:
            if doc_id and doc_id != "*":
                opened.add(doc_id)
            else:
                every_tree_shown = True
            continue
        if not every_tree_shown:
            count += sum(1 for doc in documents_read(step) if doc not in opened)
    return count


def documents_read(step: StepLike) -> list[str]:
    """The documents whose pages a step disclosed."""
    spread = step.get("disclosed")
    if isinstance(spread, Mapping) and spread:
        return [str(doc) for doc, pages in spread.items() if pages]
    doc_id = step_doc_id(step)
    return [doc_id] if doc_id and step.get("pages") else []


def step_doc_id(step: StepLike) -> str | None:
    """The document a call was about: the resolved id the tool reported, else the argument."""
    doc_id = step.get("doc_id")
    if not doc_id:
        args = step.get("args")
        doc_id = args.get("doc_id") if isinstance(args, Mapping) else None
    return str(doc_id) if doc_id else None


def calls_per_layer(steps: Iterable[StepLike]) -> dict[str, int]:
    """Every call by layer, always with the three layers present so readers need no defaults."""
    counts = {str(layer): 0 for layer in LAYERS}
    for step in steps:
        key = str(int(step.get("layer") or 0))
        counts[key] = counts.get(key, 0) + 1
    return counts


def summary_line(adherence: Mapping[str, Any]) -> str:
    """One line from an adherence dict (as stored in a trace record, wherever it came from)."""
    verdict = "followed find → tree → read" if adherence["followed_order"] else "out of order"
    per_layer = ", ".join(
        f"{count} {LAYER_NAMES.get(int(layer), 'layer ' + layer)}"
        for layer, count in adherence["calls_per_layer"].items()
    )
    first = "searched first" if adherence["searched_first"] else "did not search first"
    return (
        f"adherence: {verdict} ({first}, {adherence['backward_jumps']} backward jump(s), "
        f"{adherence['pages_without_tree']} page read(s) without tree; calls {per_layer}; "
        f"{adherence['failed_calls']} failed)"
    )
