"""Helpers shared by the command-line modules."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from graph.console import EXIT_ERROR, print_json
from store.faults import LibraryPathError
from store.library import Library
from store.settings import default_library_dir
from store.types import MIN_PREFIX, checked_doc_id


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


CREATE_LIBRARY = frozenset({"ingest", "serve", "demo"})
"""Commands that create the library folder when it does not exist; the others only read or
change a library that is there, so a mistyped ``--library`` is refused rather than created."""


def checked_library(args: argparse.Namespace) -> None:
    """Refuse, in one line, a ``--library`` that is a file, or (for a command that does not
    create libraries) a folder that is not a library. The others create it once their own
    options are known to be right (``create_library``)."""
    root = library_of(args).root
    if root.exists() and not root.is_dir():
        raise LibraryPathError(f"--library {root} is a file, not a library folder")
    if args.command in CREATE_LIBRARY:
        return
    if not Library(root).docs_dir.is_dir():
        what = "is not a library (it has no docs/ folder)" if root.exists() else "does not exist"
        raise LibraryPathError(
            f"{root} {what}: give the library with --library or VECTREE_HOME, or create one "
            "with `vectree ingest PATH`"
        )


def create_library(library: Library) -> None:
    """Create the library folder if it does not exist yet, saying so on stderr."""
    if library.root.is_dir():
        return
    try:
        library.ensure()
    except OSError as exc:
        problem = exc.strerror or str(exc)
        raise LibraryPathError(f"cannot create the library {library.root}: {problem}") from None
    print(f"created the library {library.root}", file=sys.stderr)


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
