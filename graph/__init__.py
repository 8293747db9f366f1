"""The query agent: its graph and nodes, the retrieval strategies (``graph.strategies``), the
programmatic entry point (``graph.api``), the trajectory tools (``graph.trajectory``) and, on
top of everything, the ``vectree`` command line (``graph.cli``)."""
