"""Which chat model drives a run: an OpenAI-compatible endpoint, or the offline navigator."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable

from graph.context import AgentContext
from store.chat import chat_model

LOG = logging.getLogger(__name__)


class ModelCallError(RuntimeError):
    """A chat-model call failed; ``reason`` is the one line a run's status detail carries."""

    def __init__(self, exc: BaseException) -> None:
        from store.endpoint import failure_line  # loads the openai SDK: only once a call failed

        self.reason = failure_line(exc)
        super().__init__(self.reason)


def invoke_model(model: Runnable[Any, Any], messages: Sequence[BaseMessage]) -> Any:
    """One model call. An endpoint failure (refused, timed out, malformed reply) is logged with
    its traceback and raised as :class:`ModelCallError`, which every caller turns into a clear
    end of its run instead of a traceback."""
    try:
        return model.invoke(messages)
    except Exception as exc:
        error = ModelCallError(exc)
        LOG.warning(error.reason)
        LOG.debug("model call traceback", exc_info=True)
        raise error from exc


def configured_model(context: AgentContext) -> BaseChatModel | None:
    """The configured endpoint's chat model, or None when no LLM is configured."""
    return chat_model(context.llm_settings())


def agent_model(context: AgentContext) -> BaseChatModel:
    """The configured endpoint's model, else the deterministic offline navigator."""
    model = configured_model(context)
    if model is not None:
        return model
    from graph.navigator import NavigatorChatModel

    return NavigatorChatModel(
        top_k=context.top_k, page_cap=context.page_cap, strategy=context.strategy
    )
