"""Helpers shared by the command-line modules."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from store.library import Library
from store.settings import default_library_dir
from store.types import MIN_PREFIX, checked_doc_id

EXIT_OK, EXIT_ERROR, EXIT_PARTIAL = 0, 1, 2


class CommandError(Exception):
    """A failure the user can act on: reported in one line (a JSON ``error`` with ``--json``)
    and exit status 1, never a traceback."""


def report_error(args: argparse.Namespace, message: str) -> int:
    """Print one failure the way the command's output is read, and return exit status 1."""
    if getattr(args, "json", False):
        print_json({"error": message})
    else:
        print(f"error: {message}", file=sys.stderr)
    return EXIT_ERROR


def library_of(args: argparse.Namespace) -> Library:
    return Library(
        Path(args.library).expanduser().resolve() if args.library else default_library_dir()
    )


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def resolve_doc(library: Library, doc_id: str) -> str:
    """The document an id or a unique prefix of at least ``MIN_PREFIX`` characters names;
    anything else is a ``CommandError`` saying what to type."""
    checked_doc_id(doc_id)
    if library.has(doc_id):
        return doc_id
    if len(doc_id) < MIN_PREFIX:
        raise CommandError(
            f"{doc_id!r} is too short to name a document: give its id or at least {MIN_PREFIX} "
            "of its first characters (see `vectree docs`)"
        )
    resolved = library.resolve(doc_id)
    if resolved is None:
        raise CommandError(
            f"no single document starts with {doc_id!r} in {library.root} (see `vectree docs`)"
        )
    return resolved


def positive_int(text: str) -> int:
    """argparse type for counts that must be at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value
