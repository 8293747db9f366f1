"""The packages read downward only: store < ingest < tools < graph < evals < cli."""

from __future__ import annotations

from pathlib import Path

from evals.import_graph import (
    LAYERS,
    back_arrows,
    circles,
    import_edges,
    layer_of,
    lines_of_code,
    module_graph,
    upward,
)


def test_no_package_imports_a_layer_above_it() -> None:
    edges = import_edges()
    assert edges, "the import graph should not be empty"
    assert upward(edges) == []


def test_the_command_line_is_its_own_layer_on_top() -> None:
    assert layer_of("graph.cli") == layer_of("graph.cli.query") == "cli"
    assert layer_of("graph.api") == layer_of("graph.trajectory.timeline") == "graph"
    assert layer_of("store.types") == "store"
    assert layer_of("langgraph.graph") is None
    assert LAYERS[-1] == "cli"


def test_the_command_line_inside_graph_imports_nothing_of_evals(tmp_path: Path) -> None:
    (tmp_path / "graph" / "cli").mkdir(parents=True)
    (tmp_path / "graph" / "cli" / "benchmark.py").write_text("from evals.run import run_eval\n")
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "command.py").write_text("from graph.console import EXIT_OK\n")
    edges = import_edges(tmp_path)
    assert edges == {("cli", "evals"): 1, ("evals", "graph"): 1}
    assert upward(edges) == [("cli", "evals")]


def test_an_upward_import_is_flagged(tmp_path: Path) -> None:
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "library.py").write_text("from ingest.tree import build_tree\n")
    (tmp_path / "ingest").mkdir()
    (tmp_path / "ingest" / "tree.py").write_text(
        "def build():\n    from store import types\n    from graph import cli\n"
    )
    edges = import_edges(tmp_path)
    assert edges == {("store", "ingest"): 1, ("ingest", "store"): 1, ("ingest", "cli"): 1}
    assert upward(edges) == [("store", "ingest"), ("ingest", "cli")]
    assert lines_of_code(tmp_path)["ingest"] == 3


def test_relative_imports_resolve_against_their_package(tmp_path: Path) -> None:
    (tmp_path / "graph" / "cli").mkdir(parents=True)
    (tmp_path / "graph" / "cli" / "__init__.py").write_text("from .commands import main\n")
    (tmp_path / "graph" / "api.py").write_text("from .cli import main\nfrom . import state\n")
    assert import_edges(tmp_path) == {("graph", "cli"): 1}


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert circles(module_graph()) == []


def test_a_circle_inside_a_package_is_found_deferred_and_type_only_imports_included(
    tmp_path: Path,
) -> None:
    (tmp_path / "graph" / "strategies").mkdir(parents=True)
    (tmp_path / "graph" / "strategies" / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .base import Request\n"
    )
    (tmp_path / "graph" / "strategies" / "base.py").write_text("from graph import context\n")
    (tmp_path / "graph" / "context.py").write_text(
        "def names():\n    from graph.strategies import NAMES\n"
    )
    (tmp_path / "graph" / "state.py").write_text("from graph import context\n")
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "settings.py").write_text("def model():\n    from store.chat import m\n")
    (tmp_path / "store" / "chat.py").write_text("from store.settings import LLMSettings\n")
    graph = module_graph(tmp_path)
    assert graph["graph.strategies"] == {"graph.strategies.base"}
    assert graph["graph.state"] == {"graph.context"}
    assert circles(graph) == [
        ["graph.context", "graph.strategies", "graph.strategies.base"],
        ["store.chat", "store.settings"],
    ]


def test_no_module_imports_a_sub_package_that_imports_it_back() -> None:
    assert back_arrows(module_graph()) == []


def test_a_registry_inside_the_package_of_its_readers_runners_is_an_arrow_back_up(
    tmp_path: Path,
) -> None:
    (tmp_path / "graph" / "strategies").mkdir(parents=True)
    (tmp_path / "graph" / "strategies" / "__init__.py").write_text("NAMES = ('vectree',)\n")
    (tmp_path / "graph" / "strategies" / "base.py").write_text("from graph import context\n")
    (tmp_path / "graph" / "context.py").write_text("from graph.strategies import NAMES\n")
    (tmp_path / "graph" / "nodes.py").write_text("from graph.strategies import base\n")
    graph = module_graph(tmp_path)
    assert circles(graph) == []  # no module circle: only the direction is wrong
    assert back_arrows(graph) == [("graph.context", "graph.strategies")]
