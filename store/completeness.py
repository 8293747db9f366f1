"""Whether the index holds what the library says it should, known cheaply before a search.

An index that lost entries (segment files deleted or overwritten, a repair killed half way)
still opens and answers; without this check it answers "nothing matches" for the documents it
lost, which no user can tell from a true miss. So every change of the searchable documents
records, with the new index version, what the index then held (:class:`IndexCounts`: three count
queries), and every process compares that record, and the visible document folders, with what
the index holds now, once per index version, before its first search.

Two comparisons, each true by construction of the write order (``store.catalog``):

- *Documents.* Every visible document folder has a document entry in the index, committed or
  not: entries are written (hidden) before the folder becomes visible, and a removal hides the
  folder before it drops the entries. Holds while another process writes.
- *Entries.* The committed entries and committed document entries are at least what the last
  change recorded. A writer in progress drops or re-hides entries before it records the new
  counts, so this comparison waits for a library without a live writer.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from store.locks import Holder


@dataclass(frozen=True)
class IndexCounts:
    """What the index held, or holds: committed entries, committed document entries, and
    document entries in any state."""

    entries: int
    documents: int
    document_entries: int

    def as_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> IndexCounts | None:
        """The recorded counts, or None for a record this version cannot read (a library
        written before counts were recorded has none)."""
        try:
            value: Any = json.loads(text)
            return cls(
                int(value["entries"]), int(value["documents"]), int(value["document_entries"])
            )
        except (ValueError, TypeError, KeyError):
            return None


def shortfall(
    held: IndexCounts, folders: int, recorded: IndexCounts | None, writer: Holder | None
) -> str | None:
    """What the index lacks, in words, or None when it holds what it should. ``folders``: the
    visible document folders; ``recorded``: the counts the last change recorded (None when
    unknown); ``writer``: a live process changing the library (the recorded counts are then
    not compared: its change is half made)."""
    if held.document_entries < folders:
        return (
            f"holds entries for {held.document_entries} of the {folders} documents in the library"
        )
    if recorded is None or writer is not None:
        return None
    written = "it was last written with"
    if held.entries < recorded.entries:
        return f"holds {held.entries} of the {recorded.entries} entries {written}"
    if held.documents < recorded.documents:
        return f"holds {held.documents} of the {recorded.documents} searchable documents {written}"
    return None
