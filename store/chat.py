"""The chat model of an OpenAI-compatible endpoint, for every layer that talks to an LLM.

Ingestion's LLM stages, the query agent and the evaluation judges all build their client here
from ``LLMSettings``; with no model configured there is no client and each falls back to its
offline path.
"""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from store.settings import LLMSettings


def chat_model(settings: LLMSettings) -> BaseChatModel | None:
    """A ChatOpenAI client when a model is configured, otherwise None (offline path).

    The SDK keeps each attempt's timeouts; its own retries are off because the HTTP client's
    transport retries under the settings' policy and ends every call at its deadline
    (``store.endpoint`` says why the SDK's retries cannot).
    """
    if not settings.configured:
        return None
    from langchain_openai import ChatOpenAI

    from store.endpoint import RetryPolicy, http_client, httpx

    return ChatOpenAI(
        model=settings.model or "",
        base_url=settings.base_url,
        api_key=settings.api_key or "not-needed",  # type: ignore[arg-type]
        temperature=settings.temperature,
        timeout=httpx.Timeout(settings.timeout_s, connect=settings.connect_timeout_s),
        max_retries=0,
        http_client=http_client(RetryPolicy.of(settings)),
    )
