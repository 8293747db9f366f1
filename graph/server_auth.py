"""What the LangGraph server lets through: API keys, per-caller ownership, browser origins.

langgraph.json names ``auth`` here as the server's custom authentication (``auth.path``) and
``app`` as its HTTP app (``http.app``), whose only job is one middleware on every response.

- **Keys.** With VECTREE_SERVER_KEYS set, every request must carry ``x-api-key: <a key>``;
  a missing or wrong key is answered 401 before anything else runs. Without keys the server is
  open, for local development (`vectree serve` says so when it starts).
- **Ownership.** Each key is one caller, named by a hash of the key (the key itself is never
  stored). Whatever a caller creates — threads and the runs on them, crons, assistants — is
  stamped with ``metadata.owner``, and every read, search, update and delete is filtered to the
  caller's own, so another caller's thread answers 404 and never shows up in a search. The
  graphs' built-in assistants stay readable by everyone; store items live under the caller's
  namespace. Anything without a rule of its own is refused (fail closed).
- **Browsers.** CORS (``http.cors``) admits only LangGraph Studio's origin. ``langgraph dev``
  answers every preflight with ``Access-Control-Allow-Private-Network: true``, which would let
  any web page ask a browser to reach a server on the private network; the middleware keeps
  that header only on answers that also admit the request's origin.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, cast

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


@auth.on.threads
async def threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Threads, and the runs and checkpoints (trajectories) on them, belong to their creator."""
    return _own(ctx, value)


@auth.on.crons
async def crons(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Scheduled runs belong to their creator."""
    return _own(ctx, value)


@auth.on.assistants
async def assistants(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Created assistants belong to their creator; the graphs' built-in ones are shared read-only
    (an update or delete never matches them: they carry no owner)."""
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
    """Keep ``Access-Control-Allow-Private-Network`` only where CORS admitted the origin.

    Runs outside the server's CORS middleware (``http.app`` middleware wraps it), so it sees the
    final preflight answer: without ``Access-Control-Allow-Origin`` the origin was refused, and
    the private-network grant is removed with it.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "OPTIONS":
            await self.app(scope, receive, send)
            return

        async def send_checked(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if "access-control-allow-origin" not in headers:
                    del headers["access-control-allow-private-network"]
            await send(message)

        await self.app(scope, receive, send_checked)


app = Starlette(middleware=[Middleware(PrivateNetworkForAllowedOrigins)])
