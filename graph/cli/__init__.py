"""The ``vectree`` command line, the top layer: nothing imports it, and it imports no ``evals``.

``commands`` parses arguments and dispatches; ``library`` (ingest, docs, tree, remove),
``query`` (ask, trace, threads, search) and ``serve`` hold the commands; ``eval`` is added by
the ``evals`` package through the ``vectree.commands`` entry point (``evals/command.py``);
``common`` what they share. ``main`` is the console script ``vectree``.
"""

from graph.cli.commands import main

__all__ = ["main"]
