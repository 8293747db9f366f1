"""The query agent graph, exported in langgraph.json as ``agent``.

Explicit nodes and edges (not a prebuilt ReAct loop): ``prepare`` → ``model_turn`` → one of
``layer0``/``layer1``/``layer2`` by the layer of the requested tools → ``nudge`` (from the
nudge threshold on) → ``model_turn`` … → ``finish``. Strategies with their own retrieval
(``context.strategy``, see ``graph.strategies``) go ``prepare`` → ``strategy`` → ``finish``, or,
when the strategy's model calls its own tools, ``prepare`` → ``tool_loop`` (a subgraph:
``turn`` → ``tools`` → … ) → ``finish``.
The exported ``graph`` has no checkpointer (a LangGraph server supplies its own);
``compile_agent(checkpointer)`` is for ``graph.api.ask`` (and so the CLI).
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graph import nodes
from graph.context import AgentContext, ServedAgentContext
from graph.models import agent_model
from graph.state import AgentInput, AgentOutput, AgentState
from graph.strategies.tool_loop import loop_graph, strategy_loop


def build_agent_graph(
    model_factory: nodes.ModelFactory = agent_model,
    context_schema: type[AgentContext] = AgentContext,
) -> StateGraph[Any, Any, Any, Any]:
    """The uncompiled agent graph; ``model_factory`` picks the chat model for a run,
    ``context_schema`` what a caller may set (``ServedAgentContext`` on the server)."""
    builder = StateGraph(
        AgentState,
        context_schema=context_schema,
        input_schema=AgentInput,
        output_schema=AgentOutput,
    )
    builder.add_node("prepare", nodes.prepare)
    builder.add_node("model_turn", nodes.make_model_turn(model_factory))  # type: ignore[call-overload]
    builder.add_node("layer0", nodes.layer0)
    builder.add_node("layer1", nodes.layer1)
    builder.add_node("layer2", nodes.layer2)
    builder.add_node("nudge", nodes.nudge)
    builder.add_node("strategy", nodes.run_strategy)
    builder.add_node("tool_loop", loop_graph(nodes.strategy_request, strategy_loop))
    builder.add_edge("tool_loop", "finish")
    builder.add_node("finish", nodes.finish)
    builder.add_edge(START, "prepare")
    return builder


def compile_agent(
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    model_factory: nodes.ModelFactory = agent_model,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile with a checkpointer (``graph.api``) or without one (evals); the caller's
    context is trusted (the server's graph is ``graph`` below)."""
    return build_agent_graph(model_factory).compile(checkpointer=checkpointer, name="agent")


graph = build_agent_graph(context_schema=ServedAgentContext).compile(name="agent")
"""The served graph: a run's library, endpoint and model come from the server's environment."""
