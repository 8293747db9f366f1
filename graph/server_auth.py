"""What the LangGraph server lets through: API keys, per-caller ownership, browser origins.

langgraph.json names ``auth`` here as the server's custom authentication (``auth.path``) and
``app`` as its HTTP app (``http.app``), whose only job is one middleware on every response.

- **Keys.** With VECTREE_SERVER_KEYS set, every request must carry ``x-api-key: <a key>``;
  a missing or wrong key is answered 401 before anything else runs. Without keys the server is
  open, for local development (`vectree serve` says so when it starts).
- **Ownership.** Each key is one caller, named by a hash of the key (the key itself is never
  stored). Whatever a caller creates — threads and the runs on them, crons, assistants — is
  stamped with ``metadata.owner``, and every read, search, update and delete is filtered to the
  caller's own, so another caller's thread answers 404 and never shows up in a search (also
  where creating or copying a thread meets it, which the server alone answers 409: see
  ``OthersThreadsAreNotFound``). The
  graphs' built-in assistants stay readable by everyone; store items live under the caller's
  namespace. Anything without a rule of its own is refused (fail closed).
- **Ingestion.** VECTREE_SERVER_INGEST_KEYS names the keys whose callers may run the ``ingest``
  graph (unset: every key; ``none``: no one). Anyone else's run of it, or assistant made
  from it, is answered 403; what the graph accepts is checked field by field
  (``ingest.request``).
- **Server pages.** ``/info``, ``/metrics``, ``/docs`` and ``/openapi.json`` are outside
  the custom authentication; with keys configured they answer 401 without one
  (``KeysForServerPages``). ``/ok`` stays open for health checks.
- **Browsers.** CORS (``http.cors``) admits only LangGraph Studio's origin. A Chromium-based
  browser asks before a public page (Studio) may call a server on the private network (this
  one, on 127.0.0.1): its preflight carries ``Access-Control-Request-Private-Network: true``,
  which the server's CORS middleware refuses outright (400 "Disallowed CORS private-network"),
  while ``langgraph dev`` adds ``Access-Control-Allow-Private-Network: true`` to every other
  preflight, which would let any web page reach it. The middleware here decides instead:
  the private-network grant goes with, and only with, an answer that admits the origin.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, cast
from uuid import UUID, uuid5

from langgraph_sdk import Auth
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware

from store.settings import ServerSettings

OWNER = "owner"
OPEN_CALLER = "open"
"""The one identity of an open server (no keys configured): nothing is filtered."""
SYSTEM_ASSISTANTS: Auth.types.FilterType = {"created_by": "system"}
KEY_HEADER = b"x-api-key"
GRAPH_NAMESPACE = UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")
"""The namespace of the server's built-in assistant ids (uuid5 of the graph's name)."""

auth = Auth()


def caller_identity(key: str) -> str:
    """A stable, non-secret name for a key: owner metadata is returned to clients and logged."""
    return "key-" + hashlib.sha256(key.encode()).hexdigest()[:16]


def identity_for(supplied: bytes | None, keys: tuple[str, ...]) -> str | None:
    """The identity of the configured key equal to ``supplied``, or None.

    Every key is compared in constant time, so the answer's timing tells nothing about them.
    """
    if not supplied:
        return None
    matches = [key for key in keys if hmac.compare_digest(key.encode(), supplied)]
    return caller_identity(matches[0]) if matches else None


@auth.authenticate
async def authenticate(headers: dict[bytes, bytes]) -> Auth.types.MinimalUserDict:
    """Admit a request carrying a configured key (any request when none is configured)."""
    keys = ServerSettings.from_env().api_keys
    if not keys:
        return {"identity": OPEN_CALLER}
    identity = identity_for(headers.get(KEY_HEADER), keys)
    if identity is None:
        raise Auth.exceptions.HTTPException(
            status_code=401, detail="missing or wrong x-api-key header"
        )
    return {"identity": identity}


def _stamp(value: MutableMapping[str, Any], identity: str) -> None:
    """Mark the caller as owner of what it creates or changes.

    The server keeps a reference to the value's metadata dict, so it is changed in place; an
    owner the caller put there itself is overwritten.
    """
    metadata = value.get("metadata")
    if metadata is None:
        metadata = value["metadata"] = {}
    metadata[OWNER] = identity


def _own(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Stamp what is written and keep only the caller's own resources."""
    identity = ctx.user.identity
    if identity == OPEN_CALLER:
        return None
    if ctx.action in ("create", "update", "create_run") and isinstance(value, MutableMapping):
        _stamp(value, identity)
    return {OWNER: identity}


INGEST_GRAPH = "ingest"
INGEST_ASSISTANTS = frozenset({INGEST_GRAPH, str(uuid5(GRAPH_NAMESPACE, INGEST_GRAPH))})
"""How a run names the ingest graph's built-in assistant: by graph name or by its id."""


def _may_ingest(identity: str) -> bool:
    """Whether a caller may run the ingest graph (VECTREE_SERVER_INGEST_KEYS)."""
    settings = ServerSettings.from_env()
    if identity == OPEN_CALLER or settings.ingest_keys is None:
        return True
    return identity in {caller_identity(key) for key in settings.ingest_keys}


def _names_ingest(value: Any) -> bool:
    """Whether a request's fields name the ingest graph or its assistant."""
    if not isinstance(value, MutableMapping):
        return False
    names = {str(value.get("assistant_id") or ""), str(value.get("graph_id") or "")}
    return bool(names & INGEST_ASSISTANTS)


def _refuse_ingest(ctx: Auth.types.AuthContext, value: Any) -> None:
    """403 for a run of the ingest graph, an assistant made from it, or a cron that would run
    it (its assistant is named in the cron's ``payload``), by a caller the operator has not
    let ingest."""
    if not isinstance(value, MutableMapping) or _may_ingest(ctx.user.identity):
        return
    if _names_ingest(value) or _names_ingest(value.get("payload")):
        raise Auth.exceptions.HTTPException(
            status_code=403, detail="this key may not ingest documents (VECTREE_SERVER_INGEST_KEYS)"
        )


@auth.on.threads
async def threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Threads, and the runs and checkpoints (trajectories) on them, belong to their creator;
    only callers allowed to ingest may run the ingest graph."""
    if ctx.action == "create_run":
        _refuse_ingest(ctx, value)
    return _own(ctx, value)


@auth.on.crons
async def crons(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Scheduled runs belong to their creator (and ingest only for those allowed to)."""
    if ctx.action in ("create", "update"):
        _refuse_ingest(ctx, value)
    return _own(ctx, value)


@auth.on.assistants
async def assistants(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Created assistants belong to their creator; the graphs' built-in ones are shared read-only
    (an update or delete never matches them: they carry no owner)."""
    if ctx.action in ("create", "update"):
        _refuse_ingest(ctx, value)
    owned = _own(ctx, value)
    if owned is None or ctx.action not in ("read", "search"):
        return owned
    either: Auth.types.FilterType = cast(Any, {"$or": [owned, SYSTEM_ASSISTANTS]})
    return either


@auth.on.store
async def store(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Store items live under the caller's own top-level namespace."""
    identity = ctx.user.identity
    if identity == OPEN_CALLER:
        return
    namespace = tuple(value.get("namespace") or ())
    if namespace[:1] != (identity,):
        value["namespace"] = (identity, *namespace)


@auth.on
async def anything_else(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Fail closed: a resource with no rule above is refused unless the server is open."""
    return ctx.user.identity == OPEN_CALLER


# -- browsers ----------------------------------------------------------------------------
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class PrivateNetworkForAllowedOrigins:
    """Grant ``Access-Control-Allow-Private-Network`` exactly where CORS admitted the origin.

    Runs outside the server's CORS middleware (``http.app`` middleware wraps it), so it sees
    the request first and the final preflight answer last. The private-network request header
    is taken off before CORS judges the preflight (CORS would refuse it whatever the origin);
    on the answer, the grant is set when ``Access-Control-Allow-Origin`` admits the origin and
    removed otherwise.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "OPTIONS":
            await self.app(scope, receive, send)
            return
        others = [h for h in scope["headers"] if h[0].lower() != PRIVATE_NETWORK_REQUEST]
        asked = len(others) < len(scope["headers"])
        if asked:
            scope = {**scope, "headers": others}

        async def send_checked(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                del headers[PRIVATE_NETWORK_GRANT]
                if asked and "access-control-allow-origin" in headers:
                    headers[PRIVATE_NETWORK_GRANT] = "true"
            await send(message)

        await self.app(scope, receive, send_checked)


PRIVATE_NETWORK_REQUEST = b"access-control-request-private-network"
PRIVATE_NETWORK_GRANT = "access-control-allow-private-network"
THREAD_CREATION = re.compile(r"/threads(?:/(?P<copied>[0-9a-fA-F-]{36})/copy)?/?")
EXISTING_THREAD = re.compile(rb"Thread with ID ([0-9a-fA-F-]{36}) already exists")
NOT_FOUND = b'{"detail":"Thread not found"}'


class OthersThreadsAreNotFound:
    """Answer 404 where creating or copying a thread meets another caller's thread.

    The server checks whether a thread id exists before it applies the owner filter, so
    ``threads.create(thread_id=…)`` on another caller's thread answers 409 ("already exists"),
    telling the caller it exists, and ``threads.copy(…)`` answers 409 for any thread it cannot
    copy, where every other call answers 404. On
    such a 409 this middleware asks the server, with the caller's own headers, whether the caller
    can see that thread; if not, the answer is 404, as for any thread that is not the caller's.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and THREAD_CREATION.fullmatch(scope["path"])
        ):
            await self.app(scope, receive, send)
            return
        held: list[Message] = []

        async def hold_conflicts(message: Message) -> None:
            if held or (message["type"] == "http.response.start" and message["status"] == 409):
                held.append(message)
                if message["type"] == "http.response.body" and not message.get("more_body"):
                    await self._answer(scope, held, send)
                return
            await send(message)

        await self.app(scope, receive, hold_conflicts)

    async def _answer(self, scope: Scope, held: list[Message], send: Send) -> None:
        """The held 409, or 404 when the thread it is about (the one copied, or the one whose id
        a creation asked for) is not the caller's."""
        copied = THREAD_CREATION.fullmatch(scope["path"])
        thread_id = copied.group("copied") if copied else None
        if thread_id is None:
            body = b"".join(m.get("body", b"") for m in held if m["type"] == "http.response.body")
            existing = EXISTING_THREAD.search(body)
            thread_id = existing.group(1).decode() if existing else None
        if thread_id is not None and not await self._visible(scope, thread_id):
            headers = [(b"content-type", b"application/json")]
            headers.append((b"content-length", str(len(NOT_FOUND)).encode()))
            await send({"type": "http.response.start", "status": 404, "headers": headers})
            await send({"type": "http.response.body", "body": NOT_FOUND})
            return
        for message in held:
            await send(message)

    async def _visible(self, scope: Scope, thread_id: str) -> bool:
        """Whether ``GET /threads/{id}`` with the caller's headers finds the thread."""
        path = f"/threads/{thread_id}"
        lookup = {
            **scope,
            "method": "GET",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "headers": [h for h in scope["headers"] if h[0].lower() not in BODY_HEADERS],
        }
        status: list[int] = []

        async def no_body() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def note_status(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))

        await self.app(lookup, no_body, note_status)
        return bool(status) and status[0] == 200


BODY_HEADERS = (b"content-length", b"content-type", b"transfer-encoding")
SERVER_PAGES = frozenset({"/info", "/metrics", "/docs", "/openapi.json"})
"""The server's own pages, which its custom authentication does not cover: they describe the
deployment (graphs, versions, load), so with keys configured they need one too. ``/ok`` stays
open for health checks."""
UNAUTHORISED = b'{"detail":"missing or wrong x-api-key header"}'


def admitted(scope: Scope) -> bool:
    """Whether a request may pass a key check outside the custom authentication (a server page
    here, the MCP endpoint of ``graph.mcp_server``): no keys are configured, or it carries one."""
    keys = ServerSettings.from_env().api_keys
    return not keys or identity_for(dict(scope["headers"]).get(KEY_HEADER), keys) is not None


async def refuse_unauthorised(send: Send) -> None:
    """Answer 401 with the same body the custom authentication sends."""
    headers = [(b"content-type", b"application/json")]
    headers.append((b"content-length", str(len(UNAUTHORISED)).encode()))
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": UNAUTHORISED})


class KeysForServerPages:
    """Answer 401 to a request for one of ``SERVER_PAGES`` without a configured key (preflights
    pass: CORS answers them)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] == "OPTIONS"
            or scope["path"].rstrip("/") not in SERVER_PAGES
            or admitted(scope)
        ):
            await self.app(scope, receive, send)
            return
        await refuse_unauthorised(send)


app = Starlette(
    middleware=[
        Middleware(PrivateNetworkForAllowedOrigins),
        Middleware(KeysForServerPages),
        Middleware(OthersThreadsAreNotFound),
    ]
)
