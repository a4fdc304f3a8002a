"""Launch the real ACP agents pinned in ``agents/package.json`` against the fake model servers.

``@agentclientprotocol/codex-acp`` (over ``codex app-server``) and
``@agentclientprotocol/claude-agent-acp`` (over Claude Code), installed by
``npm ci --prefix tests/interop/agents``. :func:`codex_agent` and :func:`claude_agent` prepare a
private home in a temporary directory (config files, caches, sessions: nothing of the user's is
read or written), point the agent at a :mod:`interop.fake_models` server on 127.0.0.1 and
return an :class:`AgentSetup`: the command, the environment and the session's working directory.

The environment is built from nothing (``PATH``, ``LANG``, ``PYTHONPATH`` for the bridge, and
what is set here), so no real key or config reaches the agents. Updates, telemetry and error
reports are off; the proxy variables point at the fake server itself, so any request an agent
makes elsewhere lands there, recorded, and is refused
(:meth:`FakeModelServer.stray_requests`). Every process of one run carries
:data:`RUN_MARKER_ENV` in its environment: :func:`leftover_processes` finds those still alive
afterwards.

Without ``node`` or the packages, :func:`require_real_agents` skips the calling test, or fails
it under ``ACP_REQUIRE_NODE=1`` (as :func:`interop.ts_sdk.require_ts_sdk` does).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest

from tests.interop.fake_models import FakeMessagesServer, FakeResponsesServer
from tests.interop.ts_sdk import REQUIRE_NODE_ENV

AGENTS_DIR = Path(__file__).resolve().parent / "agents"
INSTALL_COMMAND = "npm ci --prefix tests/interop/agents"
CODEX_PACKAGE = "@agentclientprotocol/codex-acp"
CLAUDE_PACKAGE = "@agentclientprotocol/claude-agent-acp"
ENTRY_POINTS = {CODEX_PACKAGE: "dist/index.js", CLAUDE_PACKAGE: "dist/index.js"}
RUN_MARKER_ENV = "ACP_TOOLCALLS_REAL_AGENT_RUN"
CODEX_MODEL = "gpt-5.5"
"""codex offers its ``apply_patch`` tool only for a model it knows; this one, with
``include_apply_patch_tool = true``, gets it (as a freeform tool)."""
FAKE_KEY_ENV = "ACP_TOOLCALLS_FAKE_OPENAI_KEY"

AgentName = Literal["codex", "claude"]
Protocol = Literal["v1", "v2"]


def _pinned() -> dict[str, str]:
    manifest = json.loads((AGENTS_DIR / "package.json").read_text(encoding="utf-8"))
    return {name: str(version) for name, version in manifest["dependencies"].items()}


def real_agents_unavailable() -> str | None:
    """Why the real agents cannot be run here, or ``None`` when they can."""
    if shutil.which("node") is None:
        return f"`node` is not on PATH: install Node.js >= 20.6, then run `{INSTALL_COMMAND}`"
    for package, version in _pinned().items():
        installed = AGENTS_DIR / "node_modules" / package / "package.json"
        if not installed.is_file():
            return f"{package} is not installed: run `{INSTALL_COMMAND}`"
        found = str(json.loads(installed.read_text(encoding="utf-8")).get("version"))
        if found != version:
            return f"{package} {found} is installed, {version} is pinned: run `{INSTALL_COMMAND}`"
    return None


def require_real_agents() -> None:
    """Skip the calling test when the agents cannot run; fail it under ACP_REQUIRE_NODE=1."""
    reason = real_agents_unavailable()
    if reason is None:
        return
    if os.environ.get(REQUIRE_NODE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_NODE_ENV}=1 forbids skipping)", pytrace=False)
    pytest.skip(reason)


def agent_entry(package: str) -> Path:
    return AGENTS_DIR / "node_modules" / package / ENTRY_POINTS[package]


@dataclass(frozen=True)
class AgentSetup:
    """One agent, ready to start: ``command`` with ``env``, for a session in ``cwd``."""

    name: AgentName
    protocol: Protocol  # what the agent is pinned to (codex: what it is asked in)
    command: list[str]
    env: dict[str, str] = field(repr=False)
    home: Path
    cwd: Path  # the session's working directory (the project)
    marker: str  # the value of RUN_MARKER_ENV in every process of this run


def _base_env(home: Path, proxy: str) -> tuple[dict[str, str], str]:
    marker = uuid.uuid4().hex
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        # Anything not for 127.0.0.1 goes to the fake server, which records and refuses it.
        "HTTP_PROXY": proxy,
        "HTTPS_PROXY": proxy,
        "ALL_PROXY": proxy,
        "http_proxy": proxy,
        "https_proxy": proxy,
        "all_proxy": proxy,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "NO_COLOR": "1",
        RUN_MARKER_ENV: marker,
    }
    # The bridge in front of the agent is this package, as the tests import it (CI's second
    # stage puts a compiled wheel first on PYTHONPATH).
    for name in ("PYTHONPATH", "ACP_TOOLCALLS_FAST_PATH"):
        if name in os.environ:
            env[name] = os.environ[name]
    for name in ("tmp", ".config", ".cache"):
        (home / name).mkdir(parents=True, exist_ok=True)
    return env, marker


def _project(base: Path, files: dict[str, str]) -> Path:
    cwd = base / "project"
    cwd.mkdir(parents=True)
    for name, text in files.items():
        (cwd / name).write_text(text, encoding="utf-8")
    return cwd.resolve()


def codex_agent(
    base: Path,
    server: FakeResponsesServer,
    files: dict[str, str],
    protocol: Protocol = "v2",
) -> AgentSetup:
    """codex-acp in ``base`` (its home, and ``base/project`` with ``files`` as the session's cwd).

    codex runs in its read-only mode (``INITIAL_AGENT_MODE``): commands asking to run outside
    the sandbox and every edit are put to the client as permission requests. ``protocol`` is
    only recorded: codex-acp answers in the version the client (the bridge) asks.
    """
    home = base / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    env, marker = _base_env(home, server.origin)
    (codex_home / "config.toml").write_text(
        f"""model = "{CODEX_MODEL}"
model_provider = "fake"
include_apply_patch_tool = true
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

# What would reach for github.com or chatgpt.com at startup (plugins, apps), and the login
# shell snapshot (slow): off.
[features]
plugins = false
remote_plugin = false
plugin_discovery_prefetch = false
apps = false
tool_suggest = false
in_app_updates = false
shell_snapshot = false

[model_providers.fake]
name = "fake"
base_url = "{server.base_url}"
env_key = "{FAKE_KEY_ENV}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 20000
""",
        encoding="utf-8",
    )
    env.update(
        {
            "CODEX_HOME": str(codex_home),
            FAKE_KEY_ENV: "sk-fake-not-a-key",
            "INITIAL_AGENT_MODE": "read-only",
            "RUST_LOG": "error",
        }
    )
    cwd = _project(base, files)
    command = ["node", str(agent_entry(CODEX_PACKAGE))]
    return AgentSetup("codex", protocol, command, env, home, cwd, marker)


def claude_agent(
    base: Path,
    server: FakeMessagesServer,
    files: dict[str, str],
    protocol: Protocol = "v2",
) -> AgentSetup:
    """claude-agent-acp in ``base`` (its home, and ``base/project`` with ``files``), pinned to
    ``protocol`` (``CLAUDE_AGENT_ACP_PROTOCOL``), in its "default" permission mode (it asks
    before edits and before commands that are not read-only)."""
    home = base / "home"
    config = home / ".claude"
    config.mkdir(parents=True)
    (config / "settings.json").write_text(
        json.dumps({"permissions": {"defaultMode": "default"}}), encoding="utf-8"
    )
    env, marker = _base_env(home, server.origin)
    env.update(
        {
            "CLAUDE_CONFIG_DIR": str(config),
            "CLAUDE_AGENT_ACP_PROTOCOL": protocol,
            "ANTHROPIC_BASE_URL": server.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-fake-not-a-key",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_BUG_COMMAND": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
            "CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION": "false",
            "CLAUDE_CODE_SKIP_PROMPT_HISTORY": "1",
        }
    )
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"  # Claude Code refuses to run as root otherwise
    cwd = _project(base, files)
    command = ["node", str(agent_entry(CLAUDE_PACKAGE))]
    return AgentSetup("claude", protocol, command, env, home, cwd, marker)


def bridge_command(agent: AgentSetup, *, agent_version: int, log: Path | None = None) -> list[str]:
    """``acp-toolcalls bridge`` (this interpreter's package) in front of ``agent``."""
    command = [
        sys.executable,
        "-m",
        "acp_toolcalls",
        "bridge",
        "--agent-version",
        str(agent_version),
    ]
    if log is not None:
        command += ["--log", str(log)]
    return [*command, "--", *agent.command]


def leftover_processes(marker: str) -> list[str]:
    """``pid: command line`` of every live process whose environment carries ``marker``."""
    found = []
    needle = f"{RUN_MARKER_ENV}={marker}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            if needle not in environ.split(b"\0"):
                continue
            stat = (entry / "stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] == "Z":
                continue  # a zombie: exited, its parent has not reaped it yet
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        found.append(f"{entry.name}: {cmdline.strip()}")
    return found
