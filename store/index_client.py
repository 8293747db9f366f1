"""One client protocol for the index: every operation the store asks of it, declared once.

Two engines stand behind it: the library's embedded Qdrant Edge shards
(``store.edge.EdgeClient``) and a Qdrant server reached through qdrant-client
(``store.index.ServerClient``). Besides the part of qdrant-client's interface the store uses
(with the arguments both engines accept), the protocol declares what differs between keeping an
index in the library and using a server's: bringing an older index up to date, closing it for a
repair, verifying it, settling it after a write. No caller asks which engine it has.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from qdrant_client import models


class IndexClient(Protocol):
    """What the store does with an index, whichever engine holds it."""

    # -- collections
    def collection_exists(self, collection_name: str) -> bool: ...

    def get_collections(self) -> models.CollectionsResponse: ...

    def collection_metadata(self, collection_name: str) -> dict[str, Any]:
        """The metadata a collection was created with (the embedding model that built it)."""
        ...

    def create_collection(
        self,
        collection_name: str,
        vectors_config: dict[str, models.VectorParams],
        *,
        sparse_vectors_config: dict[str, models.SparseVectorParams] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> object: ...

    def create_payload_index(
        self, collection_name: str, field_name: str, field_schema: models.PayloadSchemaType
    ) -> object: ...

    # -- points
    def upsert(
        self, collection_name: str, points: Sequence[models.PointStruct], *, wait: bool = True
    ) -> object: ...

    def set_payload(
        self,
        collection_name: str,
        payload: dict[str, Any],
        points: models.FilterSelector,
        *,
        wait: bool = True,
    ) -> object: ...

    def delete(
        self, collection_name: str, points_selector: models.FilterSelector, *, wait: bool = True
    ) -> object: ...

    def count(
        self,
        collection_name: str,
        *,
        count_filter: models.Filter | None = None,
        exact: bool = True,
    ) -> models.CountResult: ...

    def scroll(
        self,
        collection_name: str,
        *,
        scroll_filter: models.Filter | None = None,
        limit: int = 10,
        offset: Any = None,
        with_payload: bool | list[str] = True,
        with_vectors: bool | list[str] = False,
    ) -> tuple[list[models.Record], Any]: ...

    def retrieve(
        self,
        collection_name: str,
        ids: Sequence[Any],
        *,
        with_payload: bool | list[str] = True,
        with_vectors: bool | list[str] = False,
    ) -> list[models.Record]: ...

    def query_batch_points(
        self, collection_name: str, *, requests: Sequence[models.QueryRequest]
    ) -> list[models.QueryResponse]: ...

    def close(self) -> None: ...

    # -- keeping the index
    def upgrade(self, collection_name: str) -> dict[str, Any] | None:
        """Bring a collection written by an earlier version up to date; what was converted."""
        ...

    def closed(self) -> AbstractContextManager[None]:
        """The index closed for the block, so that a repair may move its files."""
        ...

    def damaged(self) -> dict[str, str]:
        """Each collection that cannot be read through (as the user knows its place), with
        why."""
        ...

    def settle(self) -> None:
        """After a write command: build indexes and flush what the writes left."""
        ...
