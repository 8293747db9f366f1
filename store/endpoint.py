"""Model calls that end: one retry policy and one deadline for every request to the chat endpoint.

The openai SDK under langchain-openai retries by itself (``max_retries``), but its backoff (0.5 s
doubling to 8 s) and its Retry-After ceiling (2 minutes, above which it does not retry at all)
are module constants, every retry restarts its timeouts, and nothing bounds a call's total time:
a server that keeps a reply coming (an endless stream, a body trickling in) holds a run forever.
So ``store.chat`` turns the SDK's retries off and hands it an HTTP client with this module's
transport. The SDK still sets each attempt's timeouts (an ``httpx.Timeout``); the transport
retries only what is transient, waits out Retry-After (capped) or an exponential backoff with
jitter, clips every timeout to what is left of the call's deadline, ends the reply body at the
deadline, and gives up with one line saying how many attempts, how long, and the last failure.
"""

from __future__ import annotations

import email.utils
import logging
import math
import random
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import openai
from langchain_core.language_models import LanguageModelInput
from langchain_openai import ChatOpenAI
from langchain_openai._compat import httpx  # the httpx the SDK is built on (httpx2 for openai>=3)

from store.settings import LLMSettings

LOG = logging.getLogger(__name__)

# Each backoff wait is shortened by up to this fraction at random, so clients that failed
# together (a rate limit hits every worker at once) do not retry in step.
JITTER = 0.25
TIMEOUTS = ("connect", "read", "write", "pool")
# The least timeout an attempt is given: zero would make the socket non-blocking, not fail fast.
MIN_TIMEOUT_S = 0.01


@dataclass(frozen=True)
class RetryPolicy:
    """How often one model call is tried, how long it waits between tries, and how long it may
    take in all (the numbers are ``LLMSettings``'; frozen, so one HTTP client serves each)."""

    attempts: int
    backoff_s: float
    backoff_max_s: float
    retry_after_max_s: float
    deadline_s: float

    @classmethod
    def of(cls, settings: LLMSettings) -> RetryPolicy:
        return cls(
            attempts=settings.attempts,
            backoff_s=settings.backoff_s,
            backoff_max_s=settings.backoff_max_s,
            retry_after_max_s=settings.retry_after_max_s,
            deadline_s=settings.deadline_s,
        )

    def wait_s(self, failed_attempts: int, retry_after_s: float | None) -> float:
        """The wait before the next attempt: the server's Retry-After up to its cap (it knows
        when it will take requests again), else a backoff doubling per failed attempt."""
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.retry_after_max_s)
        backoff = min(self.backoff_s * 2 ** (failed_attempts - 1), self.backoff_max_s)
        return backoff * (1 - JITTER * random.random())


def retryable(status: int) -> bool:
    """Request timeouts, rate limits and server errors may pass; a request the server refused
    (400, 401, 403, 404, 422) would be refused again."""
    return status in (408, 429) or status >= 500


class EndpointFailed(openai.OpenAIError):
    """The endpoint gave no usable reply within the retry policy.

    An ``OpenAIError``, because the SDK passes those through from its transport unchanged
    (anything else it would wrap as a connection error), so this one line reaches the run.
    """

    def __init__(self, attempts: int, elapsed_s: float, failure: str, note: str = "") -> None:
        plural = "" if attempts == 1 else "s"
        line = f"the model endpoint failed after {attempts} attempt{plural} in "
        line += f"{_seconds(elapsed_s)} s: {failure}"
        super().__init__(f"{line} ({note})" if note else line)


@dataclass
class _Call:
    """One model call's clock and attempt count, shared by its attempts and its reply body."""

    policy: RetryPolicy
    started: float = field(default_factory=time.monotonic)
    attempts: int = 0

    def remaining_s(self) -> float:
        return self.started + self.policy.deadline_s - time.monotonic()

    def clipped(self, timeouts: Mapping[str, float | None]) -> dict[str, float]:
        """The attempt's timeouts, none past the deadline: a silent server fails the attempt
        when the call's time is up, not a whole read timeout later."""
        left = max(self.remaining_s(), MIN_TIMEOUT_S)
        clipped = {}
        for name in TIMEOUTS:
            value = timeouts.get(name)
            clipped[name] = left if value is None else min(value, left)
        return clipped

    def next_wait_s(self, failure: str, retry_after_s: float | None) -> float:
        """The wait before retrying after ``failure``; raises EndpointFailed when the attempts
        are spent or the wait would end past the deadline (waiting then failing helps no one)."""
        if self.attempts >= self.policy.attempts:
            raise self.give_up(failure)
        wait = self.policy.wait_s(self.attempts, retry_after_s)
        if wait >= self.remaining_s():
            deadline = _seconds(self.policy.deadline_s)
            raise self.give_up(failure, f"the {deadline} s deadline leaves no time for a retry")
        LOG.info(
            "model endpoint: %s; retrying in %.1f s (attempt %d of %d)",
            failure,
            wait,
            self.attempts + 1,
            self.policy.attempts,
        )
        return wait

    def give_up(self, failure: str, note: str = "") -> EndpointFailed:
        return EndpointFailed(self.attempts, time.monotonic() - self.started, failure, note)


class RetryingTransport(httpx.BaseTransport):
    """An HTTP transport that retries a request's transient failures under a RetryPolicy and
    bounds the request, its retries and its reply body by the policy's deadline."""

    def __init__(self, policy: RetryPolicy, inner: httpx.BaseTransport | None = None) -> None:
        self.policy = policy
        self.inner = inner or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        call = _Call(self.policy)
        timeouts = dict(request.extensions.get("timeout") or {})
        while True:
            call.attempts += 1
            request.extensions["timeout"] = call.clipped(timeouts)
            try:
                response = self.inner.handle_request(request)
            except httpx.TransportError as exc:  # refused, reset, closed, timed out
                failure, retry_after_s = _error_line(exc), None
            else:
                if not retryable(response.status_code):
                    return _with_deadline(response, call)
                response.close()
                failure = _status_line(response.status_code, response.reason_phrase)
                retry_after_s = _retry_after_s(response.headers)
            time.sleep(call.next_wait_s(failure, retry_after_s))

    def close(self) -> None:
        self.inner.close()


class _DeadlineBody(httpx.SyncByteStream):
    """A reply body that ends at the call's deadline: an endless stream, or a body trickling in
    too steadily for any read timeout to fire, fails its call instead of holding it."""

    def __init__(self, inner: httpx.SyncByteStream, call: _Call) -> None:
        self.inner = inner
        self.call = call

    def __iter__(self) -> Iterator[bytes]:
        """The body's chunks until the deadline. A body cut off or stalled is not retried: part
        of it may already have been handed on (a stream's first chunks)."""
        try:
            for chunk in self.inner:
                if self.call.remaining_s() <= 0:
                    deadline = _seconds(self.call.policy.deadline_s)
                    raise self.call.give_up(
                        f"the reply was still coming at the {deadline} s deadline"
                    )
                yield chunk
        except httpx.TransportError as exc:
            raise self.call.give_up(_error_line(exc), "while reading the reply") from exc

    def close(self) -> None:
        self.inner.close()


def _with_deadline(response: httpx.Response, call: _Call) -> httpx.Response:
    """The response with its body read under the call's deadline."""
    assert isinstance(response.stream, httpx.SyncByteStream)
    return httpx.Response(
        status_code=response.status_code,
        headers=response.headers,
        stream=_DeadlineBody(response.stream, call),
        extensions=response.extensions,
    )


def _retry_after_s(headers: httpx.Headers) -> float | None:
    """Seconds the server asked for (``Retry-After-Ms``, or ``Retry-After`` as seconds or an
    HTTP date); None when it named none or nothing readable."""
    milliseconds = _number(headers.get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        return email.utils.parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None


def _number(text: str | None) -> float | None:
    """A finite number, or None (absent, unreadable, infinite)."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _status_line(status: int, reason: str) -> str:
    return f"{status} {reason}".strip()


def _error_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def _seconds(value: float) -> str:
    """Seconds as people read them in a status line: 0.4, 3.2, 31."""
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


class ChatEndpoint(ChatOpenAI):
    """langchain-openai's client, sending requests every OpenAI-compatible server reads.

    Two fields of the payload langchain-openai writes are refused or ignored by servers other
    than OpenAI's own: an assistant message that calls tools gets ``"content": null``, which
    llama-cpp-python's server rejects (its schema wants a string, its chat templates read it: every
    request after a tool call then fails), so it is sent as an empty string, which OpenAI's API
    takes too; and the reply limit is
    sent as ``max_completion_tokens``, which llama.cpp, vLLM and Ollama ignore, so it is sent as
    ``max_tokens``, which they and OpenAI's chat models read.
    """

    context_tokens: int | None = None
    """The model's context window (``LLMSettings.context_tokens``), for ``store.chat``'s prompt
    budget; not sent."""

    def _get_request_payload(
        self, input_: LanguageModelInput, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        for message in payload.get("messages") or []:
            if message.get("role") == "assistant" and message.get("content") is None:
                message["content"] = ""
        if "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        return payload


@lru_cache(maxsize=8)
def http_client(policy: RetryPolicy) -> httpx.Client:
    """One pooled HTTP client per policy, shared by every chat model built with it: a model is
    built per agent turn, and a client each would leave a connection pool behind per turn."""
    return httpx.Client(transport=RetryingTransport(policy), follow_redirects=True)


def failure_line(exc: BaseException) -> str:
    """The one line a failed model call leaves as a run's status detail: the transport's own
    account when it gave up, the server's refusal with its message (never retried), else the
    exception's first line."""
    if isinstance(exc, EndpointFailed):
        return str(exc)
    if isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        message = str(body.get("message") or exc.message).strip().splitlines()[0]
        status = _status_line(exc.status_code, exc.response.reason_phrase)
        return f"the model endpoint refused the request (not retried): {status}: {message}"
    first_line = str(exc).splitlines()[0] if str(exc) else ""
    return f"the model call failed: {type(exc).__name__}: {first_line}".rstrip(": ")
