"""Conventions every command-line entry point shares: exit statuses, JSON output, count options.

The ``vectree`` parser (``graph/cli/``) and the commands other packages add to it through the
``vectree.commands`` entry point (``evals/command.py``) both use them; they sit below the CLI so
that a plug-in never imports the command line it plugs into.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

EXIT_OK, EXIT_ERROR, EXIT_PARTIAL = 0, 1, 2


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def positive_int(text: str) -> int:
    """argparse type for counts that must be at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value
