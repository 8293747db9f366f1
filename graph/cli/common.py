"""Helpers shared by the command-line modules."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from store.library import Library
from store.settings import default_library_dir

EXIT_OK, EXIT_ERROR, EXIT_PARTIAL = 0, 1, 2


def library_of(args: argparse.Namespace) -> Library:
    return Library(
        Path(args.library).expanduser().resolve() if args.library else default_library_dir()
    )


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def resolve_doc(library: Library, doc_id: str) -> str | None:
    if library.has(doc_id):
        return doc_id
    resolved = library.resolve(doc_id)
    if resolved is None:
        print(
            f"error: no document {doc_id!r} in {library.root} (see `vectree docs`)", file=sys.stderr
        )
    return resolved


def positive_int(text: str) -> int:
    """argparse type for counts that must be at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value
