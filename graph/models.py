"""Which chat model drives a run: an OpenAI-compatible endpoint, or the offline navigator
(calls go through ``store.chat``)."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from graph.context import AgentContext
from store.chat import chat_model


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
