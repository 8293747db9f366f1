"""Every call to a language model goes through this module, whoever makes it.

The query agent, every strategy, ingestion's LLM stages and the answer judges build their
client with :func:`chat_model`, call it with :func:`invoke` (or :func:`ask_text` /
:func:`ask_json`), read replies with :func:`message_text` and meter them with one
:class:`Usage`. So the retry policy (the HTTP transport of ``store.endpoint``), the one-line
failure, the logging of a failure (once, here: callers turn :class:`ModelCallError` into the end
of their run or stage without logging it again) and the repair of an unreadable JSON reply are
the same on every path. With no model configured there is no client and each caller takes its
offline path.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable

from store.embeddings import count_tokens
from store.settings import LLMSettings

LOG = logging.getLogger(__name__)
T = TypeVar("T")

JSON_REPAIRS = 1
"""Times an unreadable JSON reply is sent back with what was wrong before the call fails."""
CUT_REPAIRS = 1
"""Times a reply cut at its cap is sent back, asking for a shorter one, before the call fails."""

Purpose = Literal["tool_call", "answer", "json", "structure", "summary"]
REPLY_CAPS: dict[str, int] = {
    "tool_call": 512,  # a turn that must call a tool: one or two calls with their arguments
    "answer": 1024,  # a turn that may answer: a cited answer of a few paragraphs, or tool calls
    "json": 1024,  # a metadata object, a grade, a list of title repairs
    "structure": 2048,  # the section entries of a group of pages, or of a contents list
    "summary": 320,  # a node's summary of two or three sentences
}
"""The longest reply each kind of call may get (tokens) unless ``VECTREE_LLM_MAX_TOKENS`` sets
one for all: what the call needs with room to spare, so a model that writes on (a small one,
a looping one, a wrong stop token) costs at most this, never the whole deadline."""
MIN_REPLY_TOKENS = 64
"""A reply is allowed at least this many tokens even when the prompt nearly fills the window
(the server then refuses the request in one line, which is clearer than an empty reply)."""
CUT_NOTE = (
    "Your reply was cut off at {cap} tokens, before it ended. Reply again, much shorter: only "
    "what was asked for (the tool call, the JSON, or a brief answer)."
)
_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL)


def chat_model(settings: LLMSettings) -> BaseChatModel | None:
    """A ChatOpenAI client when a model is configured, otherwise None (offline path).

    The SDK keeps each attempt's timeouts; its own retries are off because the HTTP client's
    transport retries under the settings' policy and ends every call at its deadline
    (``store.endpoint`` says why the SDK's retries cannot).
    """
    if not settings.configured:
        return None
    from store.endpoint import ChatEndpoint, RetryPolicy, http_client, httpx

    return ChatEndpoint(
        model=settings.model or "",
        base_url=settings.base_url,
        api_key=settings.api_key or "not-needed",  # type: ignore[arg-type]
        temperature=settings.temperature,
        timeout=httpx.Timeout(settings.timeout_s, connect=settings.connect_timeout_s),
        max_retries=0,
        max_completion_tokens=settings.max_tokens,
        context_tokens=settings.context_tokens,
        http_client=http_client(RetryPolicy.of(settings)),
    )


class ModelCallError(RuntimeError):
    """A model call failed; ``reason`` is the one line a run's status detail carries."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class ModelReplyError(ModelCallError):
    """The model answered, but not in the form asked for, even after the repair round."""


class ReplyCutError(ModelReplyError):
    """The model's reply reached its cap (finish reason ``length``), also after the repair
    round: what it wrote is incomplete, so nothing is read from it."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        super().__init__(
            f"the model's reply was cut at {cap} tokens (twice: asked once to reply shorter)"
        )


@dataclass
class Usage:
    """Model tokens spent: as the endpoint reports them, or counted with the embedding
    tokenizer when a reply reports none (the offline models), flagged as estimated."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_calls: int = 0
    estimated: bool = False

    def add(self, prompt: Sequence[BaseMessage], reply: BaseMessage) -> None:
        self.model_calls += 1
        reported = getattr(reply, "usage_metadata", None)
        if reported:
            self.prompt_tokens += int(reported.get("input_tokens", 0))
            self.completion_tokens += int(reported.get("output_tokens", 0))
            return
        self.estimated = True
        self.prompt_tokens += sum(count_tokens(message_text(m)) for m in prompt)
        self.completion_tokens += count_tokens(message_text(reply))

    def merge(self, other: Usage) -> None:
        """Add another meter's counts (a part of the work metered on its own)."""
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.model_calls += other.model_calls
        self.estimated = self.estimated or other.estimated

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "model_calls": self.model_calls,
            "estimated": self.estimated,
        }


REPLY_RESERVE = 1024
"""Tokens kept for the reply when no reply limit is set."""
TOKENIZER_MARGIN = 0.7
"""Prompts are measured with the embedding tokenizer, which counts fewer tokens than most chat
models' tokenizers do for the same text (SmolLM2's: about a third more on these documents)."""


def prompt_budget(model: object, default: int) -> int:
    """The most tokens (as ``store.embeddings.count_tokens`` counts them) a prompt for this model
    may hold: ``default``, or less when the model's context window is known and would not fit
    that prompt and its reply."""
    window = getattr(model, "context_tokens", None)
    if not window:
        return default
    reply = getattr(model, "max_tokens", None) or REPLY_RESERVE
    return max(1, min(default, int((window - reply) * TOKENIZER_MARGIN)))


def turn_purpose(tool_choice: str) -> Purpose:
    """A turn whose ``tool_choice`` names a tool needs a tool call's room; one that may answer
    (``auto``) needs an answer's."""
    return "answer" if tool_choice == "auto" else "tool_call"


def reply_cap(model: object, messages: Sequence[BaseMessage], purpose: Purpose) -> int:
    """The most tokens the reply to ``messages`` may have: the cap of its kind of call
    (:data:`REPLY_CAPS`) or the one ``VECTREE_LLM_MAX_TOKENS`` set, never more than the model's
    context window leaves after the prompt (when the window is known)."""
    fixed = getattr(model, "max_tokens", None)
    cap = int(fixed) if isinstance(fixed, int) and fixed > 0 else REPLY_CAPS[purpose]
    window = getattr(model, "context_tokens", None)
    if isinstance(window, int) and window > 0:
        prompt = sum(count_tokens(message_text(m)) for m in messages) / TOKENIZER_MARGIN
        cap = min(cap, max(MIN_REPLY_TOKENS, window - int(prompt)))
    return cap


def invoke(
    model: Runnable[Any, Any],
    messages: Sequence[BaseMessage],
    usage: Usage | None = None,
    purpose: Purpose = "answer",
) -> AIMessage:
    """One model call (a chat model, or one with tools bound), capped and metered on ``usage``.

    Every request carries its reply cap (:func:`reply_cap`). A reply cut at the cap (finish
    reason ``length``) is incomplete: it is sent back once with :data:`CUT_NOTE`, and a second
    cut raises :class:`ReplyCutError`. An endpoint failure (refused, timed out, malformed reply)
    is logged once, with its traceback at debug level, and raised as :class:`ModelCallError`;
    every caller turns either into a clear end of its run or stage instead of a traceback.
    """
    conversation = list(messages)
    for _ in range(CUT_REPAIRS + 1):
        cap = reply_cap(model, conversation, purpose)
        reply = _call(model, conversation, cap, usage)
        if not was_cut(reply):
            return reply
        LOG.info("the model's reply was cut at %d tokens; asking for a shorter one", cap)
        conversation += [
            AIMessage(content=message_text(reply)),
            HumanMessage(CUT_NOTE.format(cap=cap)),
        ]
    error = ReplyCutError(cap)
    LOG.warning(error.reason)
    raise error


def was_cut(reply: BaseMessage) -> bool:
    """Whether the endpoint stopped the reply at its cap rather than the model ending it."""
    return (getattr(reply, "response_metadata", None) or {}).get("finish_reason") == "length"


def _call(
    model: Runnable[Any, Any], messages: Sequence[BaseMessage], cap: int, usage: Usage | None
) -> AIMessage:
    """The request itself, its failure turned into :class:`ModelCallError`."""
    try:
        reply = model.invoke(messages, max_completion_tokens=cap)
    except Exception as exc:
        from store.endpoint import failure_line  # loads the openai SDK: only once a call failed

        error = ModelCallError(failure_line(exc))
        LOG.warning(error.reason)
        LOG.debug("model call traceback", exc_info=True)
        raise error from exc
    if usage is not None:
        usage.add(messages, reply)
    return reply if isinstance(reply, AIMessage) else AIMessage(content=message_text(reply))


def ask_text(
    model: Runnable[Any, Any],
    system: str,
    user: str,
    usage: Usage | None = None,
    purpose: Purpose = "summary",
) -> str:
    """A plain-text reply to one system and one user message, stripped."""
    messages = [SystemMessage(system), HumanMessage(user)]
    return message_text(invoke(model, messages, usage, purpose)).strip()


def ask_json(
    model: Runnable[Any, Any],
    system: str,
    user: str,
    read: Callable[[str], T],
    usage: Usage | None = None,
    repairs: int = JSON_REPAIRS,
    purpose: Purpose = "json",
) -> T:
    """A reply to one system and one user message, read by ``read`` (which raises
    ``ValueError`` saying what is wrong with it).

    An unreadable reply is sent back with that reason and the model asked again, ``repairs``
    times; then :class:`ModelReplyError` (logged once) ends the call with the last reason.
    """
    conversation: list[BaseMessage] = [SystemMessage(system), HumanMessage(user)]
    problem = ""
    for _ in range(repairs + 1):
        reply = invoke(model, conversation, usage, purpose)
        try:
            return read(message_text(reply))
        except ValueError as exc:
            problem = str(exc)
            conversation += [reply, HumanMessage(f"{problem}. Reply with the JSON only.")]
    error = ModelReplyError(f"no usable JSON reply in {repairs + 1} attempts: {problem}")
    LOG.warning(error.reason)
    raise error


def message_text(message: BaseMessage) -> str:
    """A message's text, whether its content is a string or a list of parts."""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
    )


def json_values(text: str, openers: str = "{[") -> Iterator[Any]:
    """The JSON values embedded in a reply, in order: one per opening character in ``openers``
    where a valid value starts. Prose, code fences and ``<think>`` blocks around them are
    tolerated, since models add them."""
    text = _THINKING.sub("", text)
    decoder = json.JSONDecoder()
    for match in re.finditer(f"[{re.escape(openers)}]", text):
        try:
            yield decoder.raw_decode(text, match.start())[0]
        except json.JSONDecodeError:
            continue


def json_value(text: str) -> Any:
    """The first JSON object or list of a reply (``ValueError`` when there is none)."""
    for value in json_values(text):
        return value
    raise ValueError("the reply holds no JSON object or list")


def json_object(text: str) -> dict[str, Any]:
    """The first JSON object of a reply (``ValueError`` when there is none)."""
    for value in json_values(text, "{"):
        if isinstance(value, dict):
            return value
    raise ValueError("the reply holds no JSON object")
