"""`vectree serve`: the LangGraph dev server over a library, for Studio and the HTTP API.

The server is `langgraph dev` on this project's langgraph.json, started with the library in
VECTREE_HOME. Its own run data (the in-memory runtime's files) and its log live in
LIBRARY/server/, never in the project folder; checkpoints go to LIBRARY/checkpoints.sqlite
through the persistent checkpointer named in langgraph.json, so threads survive restarts.

Who may call it is decided by ``graph.server_auth`` (API keys from VECTREE_SERVER_KEYS, one
owner per key); the served ``ingest`` graph reads PDFs only from the inbox folder. Blocking
calls on the server's event loop are errors (``langgraph dev`` runs its blocking-call detector).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import sys
from pathlib import Path

from graph.cli.common import create_library, library_of
from graph.console import EXIT_ERROR
from store.locks import SERVE_LOCK, hold_for_life
from store.settings import ServerSettings

STUDIO_URL = "https://smith.langchain.com/studio/?baseUrl=http://{host}:{port}"


def project_config() -> Path | None:
    """The langgraph.json next to the installed packages (a source checkout or editable install)."""
    candidate = Path(__file__).resolve().parents[2] / "langgraph.json"
    return candidate if candidate.is_file() else None


def server_config(config: Path, workdir: Path) -> Path:
    """A copy of langgraph.json whose relative paths are made absolute.

    `langgraph dev` resolves the checkpointer, auth and HTTP app paths against its working
    directory, and the server runs inside the library (so its run data stays out of the project).
    """
    root = config.parent
    data = json.loads(config.read_text())

    def absolute(spec: str) -> str:
        return str((root / spec).resolve()) if spec.startswith(".") else spec

    data["dependencies"] = [absolute(dep) for dep in data.get("dependencies", [])]
    data["graphs"] = {name: absolute(spec) for name, spec in data["graphs"].items()}
    for section, key in (("checkpointer", "path"), ("auth", "path"), ("http", "app")):
        if key in data.get(section, {}):
            data[section][key] = absolute(data[section][key])
    if "env" in data and isinstance(data["env"], str):
        data["env"] = absolute(data["env"])
    target = workdir / "langgraph.json"
    target.write_text(json.dumps(data, indent=2))
    return target


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now (the well-known 2024 is often taken)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def serve_command(config: Path, port: int, host: str, jobs: int) -> list[str]:
    """The `langgraph dev` command line: no browser, no reload, explicit port and config, and
    ``jobs`` runs at a time (`langgraph dev` alone runs one, so a long ingest would hold every
    question behind it)."""
    executable = shutil.which("langgraph") or str(Path(sys.executable).with_name("langgraph"))
    return [
        executable,
        "dev",
        "--config",
        str(config),
        "--no-browser",
        "--no-reload",
        "--host",
        host,
        "--port",
        str(port),
        "--n-jobs-per-worker",
        str(jobs),
    ]


def announce_access(settings: ServerSettings) -> None:
    """Say who may call the server: a warning on stderr when it is open (no keys)."""
    count = len(settings.api_keys)
    if count == 0:
        print(
            "warning: VECTREE_SERVER_KEYS is not set: the server runs without API keys and "
            "anyone who can reach it may call it (local development only)",
            file=sys.stderr,
            flush=True,
        )
        return
    plural = "" if count == 1 else "s"
    print(f"  access: {count} API key{plural} configured (send the x-api-key header)", flush=True)


def cmd_serve(args: argparse.Namespace) -> int:
    """Replace this process with the dev server (so its PID is the server's PID), holding
    the library's serve lock for the server's life: a second server on the same library would
    share its run data and lose the first one's threads."""
    config = project_config()
    if config is None:
        print(
            "error: serve needs the project's langgraph.json (run from a source checkout)",
            file=sys.stderr,
        )
        return EXIT_ERROR
    create_library(library_of(args))
    library = library_of(args).root
    workdir = library / "server"
    workdir.mkdir(parents=True, exist_ok=True)
    port_number = args.port or free_port(args.host)
    settings = ServerSettings.from_env()
    command = serve_command(server_config(config, workdir), port_number, args.host, settings.jobs)
    if not Path(command[0]).exists():
        print(
            "error: `langgraph` not found; install it with pip install 'langgraph-cli[inmem]'",
            file=sys.stderr,
        )
        return EXIT_ERROR
    port = command[command.index("--port") + 1]
    serving = hold_for_life(library / SERVE_LOCK, f"vectree serve --port {port}")
    if serving is not None:
        print(
            f"error: {library} is already served by {serving}; stop that server, or serve "
            "another library (--library)",
            file=sys.stderr,
        )
        return EXIT_ERROR
    inbox = settings.inbox_dir(library)
    inbox.mkdir(parents=True, exist_ok=True)
    print(
        f"LangGraph server for library {library}\n"
        f"  API:    http://{args.host}:{port}\n"
        f"  Studio: {STUDIO_URL.format(host=args.host, port=port)}\n"
        f"  inbox:  {inbox} (the ingest graph reads PDFs only from here)\n"
        f"  log:    {workdir / 'server.log'}",
        flush=True,
    )
    announce_access(settings)
    log = os.open(workdir / "server.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.chdir(workdir)
    environment = {
        **os.environ,
        **settings.server_limits(),
        "VECTREE_HOME": str(library),
        "VECTREE_INBOX": str(inbox),
    }
    os.execve(command[0], command, environment)
    return EXIT_ERROR  # not reached: execve replaces the process
