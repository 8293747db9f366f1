"""Each agent tool is declared once (schema + layer) and has exactly one handler."""

from __future__ import annotations

from pathlib import Path

from tools.schemas import TOOL_LAYERS, TOOLS, openai_tool_spec
from tools.toolbox import HANDLERS

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_declared_tool_has_a_layer_and_a_handler() -> None:
    names = [schema.__name__ for schema in TOOLS]
    assert set(names) == set(HANDLERS) == set(TOOL_LAYERS)
    assert all(TOOL_LAYERS[name] in (0, 1, 2) for name in names)


def test_the_model_is_offered_every_declared_tool_with_its_docstring() -> None:
    specs = [openai_tool_spec(schema) for schema in TOOLS]
    assert [s["function"]["name"] for s in specs] == [schema.__name__ for schema in TOOLS]
    assert all(s["function"]["description"] for s in specs)


def test_the_readme_names_every_tool() -> None:
    text = README.read_text()
    assert all(schema.__name__ in text for schema in TOOLS)
