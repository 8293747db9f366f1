"""`vectree demo` hands ingest every option `vectree ingest` would have at its default."""

import argparse
from collections.abc import Callable

import pytest

from graph.cli import commands


def test_demo_ingests_with_every_ingest_option(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, argparse.Namespace] = {}

    def fake(name: str) -> Callable[[argparse.Namespace], int]:
        def handler(args: argparse.Namespace) -> int:
            seen[name] = argparse.Namespace(**vars(args))
            return 0

        return handler

    for name in ("cmd_ingest", "cmd_docs", "cmd_ask"):
        monkeypatch.setattr(commands, name, fake(name))
    demo_args = commands.build_parser().parse_args(["demo"])
    assert commands.cmd_demo(demo_args) == 0
    ingest_defaults = vars(commands.build_parser().parse_args(["ingest", "x.pdf"]))
    given = vars(seen["cmd_ingest"])
    missing = set(ingest_defaults) - set(given)
    assert not missing, f"demo does not set {sorted(missing)}"
    assert given["ocr"] == ingest_defaults["ocr"]
    assert given["paths"] == [str(commands.demo_corpus())]
