"""Recorded trajectories: the checkpointer every run is recorded in and reading threads back
(``checkpoints``, ``remote`` for a running server), layer-order adherence (``adherence``) and
the self-contained HTML timeline of one run (``timeline``)."""
