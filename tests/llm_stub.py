"""A real OpenAI-compatible chat endpoint on 127.0.0.1, scripted by the test that starts it.

The stub speaks enough of the OpenAI HTTP API for ``langchain-openai``'s ``ChatOpenAI`` (and the
``openai`` SDK under it): ``POST /v1/chat/completions`` (also ``/chat/completions``), plain or
``"stream": true`` (server-sent events). Every reply's text comes from a responder function
``(messages) -> str`` that the test supplies, so the test decides by the system prompt which
ingestion stage is calling. Every request is recorded for assertions.

Faults are injected per request: ``LLMStub(responder, faults=[...])`` serves the scripted
:class:`Fault` sequence to the first requests, in order, and the responder's replies after that —
an HTTP status with headers such as ``Retry-After``, a reply slower than the client's timeout, a
connection closed without a reply, a reply that never ends, or a body that is not a completion.
Every fault is bounded (by its own duration, ``ENDLESS_LIMIT_S``, or ``stop()``), so a test whose
client never gives up still ends by itself.

Usage::

    with LLMStub(responder) as stub:
        ChatOpenAI(model="stub-model", base_url=stub.base_url, api_key="test")
        ...
    assert stub.requests

The server runs on a daemon thread and serves only until ``stop()`` (or the end of the ``with``
block); binding port 0 gives an ephemeral port, so parallel tests never collide.
"""

from __future__ import annotations

import itertools
import json
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

# A reply is text, a ToolCalls request (the assistant asks for tool calls), or RunsOn.
Responder = Callable[[list[dict[str, Any]]], "str | ToolCalls | RunsOn"]

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
# An endless reply sends a piece every tick and stops by itself after the limit, so a client
# without a deadline fails its test instead of hanging it.
ENDLESS_TICK_S = 0.05
ENDLESS_LIMIT_S = 30.0
# What an endless reply ended by: the client hung up, or the stub's own limit or stop().
HUNG_UP, STUB_LIMIT = "client hung up", "stub limit"


@dataclass(frozen=True)
class ToolCalls:
    """An assistant reply that calls tools: (name, raw JSON arguments string) pairs.

    Arguments are passed as raw strings so a test can send malformed JSON on purpose.
    """

    calls: list[tuple[str, str]]
    content: str = ""

    def as_message(self, id_prefix: str) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": self.content or None,
            "refusal": None,
            "tool_calls": [
                {
                    "id": f"{id_prefix}-{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
                for i, (name, arguments) in enumerate(self.calls)
            ],
        }


@dataclass(frozen=True)
class RunsOn:
    """A model that never ends its reply by itself: it writes until the request's cap
    (``max_tokens``) or, with no cap, until ``window`` tokens, and the reply ends with the finish
    reason ``length``, as llama.cpp's server ends a small model that rambles."""

    window: int = 8192

    def reply(self, body: dict[str, Any]) -> tuple[str, int]:
        """The text written and its token count (one token per word)."""
        cap = body.get("max_tokens") or body.get("max_completion_tokens") or self.window
        return " ".join(["more"] * int(cap)), int(cap)


@dataclass(frozen=True)
class Fault:
    """One scripted failure, served to one request instead of the responder's reply.

    Build one with the class methods; ``kind`` says what the stub does:
    ``status`` replies with ``status``, ``headers`` and an OpenAI-style error body; ``slow``
    waits ``seconds`` (cut short by ``stop()``) and then replies normally; ``drop`` reads the
    request and closes the connection without a reply; ``endless`` replies 200 and never
    finishes (SSE content chunks for a streaming request, JSON-legal whitespace for a plain one)
    until the client hangs up or ``ENDLESS_LIMIT_S``; ``garbage`` replies 200 with ``body``.
    """

    kind: Literal["status", "slow", "drop", "endless", "garbage"]
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    seconds: float = 0.0
    body: str = ""

    @classmethod
    def http(cls, status: int, headers: Mapping[str, str] | None = None) -> Fault:
        return cls("status", status=status, headers=tuple((headers or {}).items()))

    @classmethod
    def slow(cls, seconds: float) -> Fault:
        return cls("slow", seconds=seconds)

    @classmethod
    def drop(cls) -> Fault:
        return cls("drop")

    @classmethod
    def endless(cls) -> Fault:
        return cls("endless")

    @classmethod
    def garbage(cls, body: str) -> Fault:
        return cls("garbage", body=body)


@dataclass(frozen=True)
class RecordedRequest:
    """One chat-completion request as the stub received it."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def system(self) -> str:
        """The text of the first system message ("" when there is none)."""
        return next((message_text(m) for m in self.messages if m.get("role") == "system"), "")


def message_text(message: dict[str, Any]) -> str:
    """The text of one OpenAI message, whether ``content`` is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return "" if content is None else str(content)


def approx_tokens(text: str) -> int:
    return max(1, len(text.split()))


class LLMStub:
    """An OpenAI-compatible HTTP server whose replies come from ``responder``."""

    def __init__(
        self, responder: Responder, host: str = "127.0.0.1", faults: Iterable[Fault] = ()
    ) -> None:
        self.responder = responder
        self.requests: list[RecordedRequest] = []
        self.errors: list[str] = []
        # HUNG_UP or STUB_LIMIT, one per endless reply as it ends (a test can wait for it)
        self.endless_endings: queue.Queue[str] = queue.Queue()
        self._faults = deque(faults)
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer((host, 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The URL to give an OpenAI client (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LLMStub:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"llm-stub-{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close the socket and wait for the serving thread; faults still
        waiting or streaming end at once."""
        self._stopping.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> LLMStub:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- recorded traffic ------------------------------------------------------------------
    def requests_with_system(self, system: str) -> list[RecordedRequest]:
        """Recorded requests whose system prompt is exactly ``system``."""
        with self._lock:
            return [r for r in self.requests if r.system == system]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def _next_id(self) -> str:
        with self._lock:
            return f"chatcmpl-stub-{next(self._ids)}"

    # -- HTTP ------------------------------------------------------------------------------
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/") in ("/v1/models", "/models"):
                    self._json(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})
                else:
                    self._error(404, f"no route for GET {self.path}")

            def do_POST(self) -> None:
                path = self.path.split("?", 1)[0].rstrip("/")
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if path not in CHAT_PATHS:
                    self._error(404, f"no route for POST {self.path}")
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError as exc:
                    self._error(400, f"request body is not JSON: {exc}")
                    return
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = RecordedRequest(path, body, headers)
                stub._record(request)
                fault = stub._next_fault()
                try:
                    if fault is None or not self._fault(fault, request):
                        self._reply(request)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up first
                    self.close_connection = True

            def _reply(self, request: RecordedRequest) -> None:
                try:
                    text = stub.responder(request.messages)
                except Exception as exc:  # a responder bug must show up in the test, not hang it
                    stub.errors.append(f"{type(exc).__name__}: {exc}")
                    self._error(500, f"responder failed: {type(exc).__name__}: {exc}")
                    return
                if request.body.get("stream") and isinstance(text, str):
                    self._stream(request, text)
                else:
                    self._json(200, stub._completion(request, text))

            def _fault(self, fault: Fault, request: RecordedRequest) -> bool:
                """Serve ``fault``; False when the request is to be answered normally after it."""
                if fault.kind == "slow":
                    stub._stopping.wait(fault.seconds)
                    return stub._stopping.is_set()
                if fault.kind == "status":
                    message = f"injected fault: {fault.status}"
                    error = {"message": message, "type": "stub_fault", "code": fault.status}
                    self._json(fault.status, {"error": error}, fault.headers)
                elif fault.kind == "garbage":
                    self._raw(200, fault.body.encode("utf-8"), "application/json")
                elif fault.kind == "endless":
                    self._endless(request)
                self.close_connection = True  # "drop" closes without writing anything
                return True

            def _json(
                self,
                status: int,
                payload: dict[str, Any],
                headers: Iterable[tuple[str, str]] = (),
            ) -> None:
                self._raw(status, json.dumps(payload).encode("utf-8"), "application/json", headers)

            def _raw(
                self,
                status: int,
                data: bytes,
                content_type: str,
                headers: Iterable[tuple[str, str]] = (),
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _endless(self, request: RecordedRequest) -> None:
                """A 200 reply that never completes: each tick one more SSE content chunk (or,
                for a plain request, one more space of a close-delimited JSON body)."""
                streaming = bool(request.body.get("stream"))
                self.send_response(200)
                kind = "text/event-stream" if streaming else "application/json"
                self.send_header("Content-Type", kind)
                self.send_header("Connection", "close")
                self.end_headers()
                piece = stub._chunks(request, "more ")[1] if streaming else None
                line = f"data: {json.dumps(piece)}\n\n".encode() if streaming else b" "
                ending = STUB_LIMIT
                limit = time.monotonic() + ENDLESS_LIMIT_S
                while not stub._stopping.wait(ENDLESS_TICK_S) and time.monotonic() < limit:
                    try:
                        self.wfile.write(line)
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        ending = HUNG_UP
                        break
                stub.endless_endings.put(ending)

            def _error(self, status: int, message: str) -> None:
                self._json(
                    status,
                    {"error": {"message": message, "type": "stub_error", "code": status}},
                )

            def _stream(self, request: RecordedRequest, text: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in stub._chunks(request, text):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        return Handler

    def _completion(self, request: RecordedRequest, text: str | ToolCalls) -> dict[str, Any]:
        prompt = sum(approx_tokens(message_text(m)) for m in request.messages)
        ident = self._next_id()
        if isinstance(text, ToolCalls):
            message, finish, completion = text.as_message(ident), "tool_calls", len(text.calls)
        elif isinstance(text, RunsOn):
            written, completion = text.reply(request.body)
            message, finish = {"role": "assistant", "content": written, "refusal": None}, "length"
        else:
            message = {"role": "assistant", "content": text, "refusal": None}
            finish, completion = "stop", approx_tokens(text)
        return {
            "id": ident,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model,
            "system_fingerprint": "stub",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def _chunks(self, request: RecordedRequest, text: str) -> list[dict[str, Any]]:
        ident, created = self._next_id(), int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
            return {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": request.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        pieces = [text[i : i + 64] for i in range(0, len(text), 64)] or [""]
        return [
            chunk({"role": "assistant", "content": ""}, None),
            *(chunk({"content": piece}, None) for piece in pieces),
            chunk({}, "stop"),
        ]
