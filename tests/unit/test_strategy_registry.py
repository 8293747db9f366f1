"""Strategies are declared once; the CLI, the run context and the README follow the registry."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graph.cli.commands import build_parser
from graph.context import AgentContext
from graph.prompts import system_prompt
from graph.registry import STRATEGY_HELP, STRATEGY_NAMES, STRATEGY_SPECS
from graph.strategies.base import runner
from tools.schemas import TOOL_SCHEMAS

README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_strategy_rows() -> list[str]:
    section = README.read_text().split("## Strategies", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z0-9-]+)`", section, re.MULTILINE)


def test_the_readme_table_lists_the_registered_strategies_in_order() -> None:
    assert _readme_strategy_rows() == list(STRATEGY_NAMES)


def test_cli_choices_and_context_values_come_from_the_registry() -> None:
    ask = build_parser().parse_args(["ask", "q", "--strategy", STRATEGY_NAMES[-1]])
    assert ask.strategy == STRATEGY_NAMES[-1]
    with pytest.raises(SystemExit):
        build_parser().parse_args(["ask", "q", "--strategy", "not-a-strategy"])
    with pytest.raises(ValueError, match="is not a strategy; choose one of"):
        AgentContext(library="x", strategy="not-a-strategy")
    assert all(name in STRATEGY_HELP for name in STRATEGY_NAMES)


@pytest.mark.parametrize("spec", STRATEGY_SPECS, ids=lambda s: s.name)
def test_each_declaration_is_consistent(spec: object) -> None:
    from graph.registry import StrategySpec

    assert isinstance(spec, StrategySpec)
    assert spec.disabled_tools <= set(TOOL_SCHEMAS)
    if spec.uses_agent_loop:
        assert spec.chunk_scheme is None
    else:
        assert callable(runner(spec.name)) and not spec.disabled_tools
    if spec.disabled_tools:
        assert spec.prompt_note.strip() in system_prompt([], 30, 10, spec.name)
