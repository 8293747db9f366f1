"""The ``vectree`` command line, the top layer: it may import every package, evals included.

``commands`` parses arguments and dispatches; ``library`` (ingest, docs, tree, remove),
``query`` (ask, trace, threads, search), ``serve`` and ``benchmark`` (eval) hold the commands,
``common`` what they share. ``main`` is the console script ``vectree``.
"""

from graph.cli.commands import main

__all__ = ["main"]
