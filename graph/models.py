"""Which chat model drives a run: an OpenAI-compatible endpoint, or the offline navigator."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from graph.context import AgentContext
from ingest.llm import chat_model


def agent_model(context: AgentContext) -> BaseChatModel:
    """The configured endpoint's model, else the deterministic offline navigator."""
    model = chat_model(context.llm_settings())
    if model is not None:
        return model
    from graph.navigator import NavigatorChatModel

    return NavigatorChatModel(top_k=context.top_k, page_cap=context.page_cap)
