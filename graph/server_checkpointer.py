"""The LangGraph server's persistent checkpointer (``checkpointer.path`` in langgraph.json).

The server calls this async context manager once at start-up. It keeps every thread's
checkpoints in the library's SQLite file, the same one the CLI writes, so threads and their
trajectories survive a server restart and `vectree trace` reads server threads too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from graph.trajectory.checkpoints import CHECKPOINT_FILE
from store.settings import default_library_dir


@asynccontextmanager
async def checkpointer() -> AsyncIterator[AsyncSqliteSaver]:
    """An AsyncSqliteSaver on LIBRARY/checkpoints.sqlite (VECTREE_HOME decides the library)."""
    library = default_library_dir()
    library.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(library / CHECKPOINT_FILE)) as saver:
        await saver.setup()
        yield saver
