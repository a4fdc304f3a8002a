"""``acp-toolcalls bridge``: exits that used to hang (issue 27 item 5), over real subprocesses.

Scripted agents (small Python scripts written here) behind the real bridge command, a raw
editor that reads everything the bridge writes and then closes its stdin:

- (a) the agent forks a ``setsid`` daemon that keeps its stdout (and stderr) and exits at the
  editor's EOF: the daemon is found through the child subreaper and ended, in one line;
- (b) the agent stops reading while ~2 MB of the editor's lines wait for it: the editor's
  hang-up is seen although its lines wait unread, the agent gets the grace period, one line;
- (c) the agent floods permission requests past the pending caps without reading, so the
  bridge's own answers fill its stdin, while the editor's lines wait behind them: the same.

Each: the bridge exits within the grace period plus its SIGTERM/SIGKILL steps (a generous
subprocess timeout is the failure detector, not a timed assertion), exactly one explanatory
stderr line and no traceback, and no process of the agent's left (every agent carries a
marker in its environment; ``/proc`` is scanned for it).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.interop.raw import BRIDGE

GRACE = 5.0  # ProxyConfig.grace, the bridge command's
BOUND = GRACE + 20.0  # the failure detector: far above grace + term_grace + SIGKILL's second
CLEAN_EXIT = ("Traceback", "Exception ignored", "Event loop is closed", "a bug")
MARKER = "ACP_TOOLCALLS_TEST_EXITS"
LINE = 4000  # under PIPE_BUF: a non-blocking write of a line is all or nothing

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the child subreaper and /proc are Linux's"
)

_INIT_ANSWER = """
import json, os, sys
request = json.loads(sys.stdin.readline())
version = request["params"]["protocolVersion"]
result = (
    {"protocolVersion": 1, "agentInfo": {"name": "script", "version": "0"}}
    if version == 1
    else {"protocolVersion": 2, "info": {"name": "script", "version": "0"}, "capabilities": {}}
)
sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + "\\n")
sys.stdout.flush()
"""

DAEMON_AGENT = (
    _INIT_ANSWER
    + """
import time
pidfile = sys.argv[1]
if os.fork() == 0:  # a setsid daemon, double-forked, that keeps stdout and stderr
    os.setsid()
    if os.fork() == 0:
        if sys.argv[2:] == ["stubborn"]:  # ignores SIGTERM, and has a child of its own
            import signal
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            if os.fork() == 0:
                time.sleep(600)
        with open(pidfile + ".tmp", "w") as file:
            file.write(str(os.getpid()))
        os.rename(pidfile + ".tmp", pidfile)
        time.sleep(600)
    os._exit(0)
os.wait()
while not os.path.exists(pidfile):
    time.sleep(0.01)
for line in sys.stdin:  # an agent that exits at the end of its input
    pass
"""
)

DEAF_AGENT = (
    _INIT_ANSWER
    + """
import time
time.sleep(600)  # reads nothing more
"""
)

FLOOD_AGENT = (
    _INIT_ANSWER
    + """
options = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]
i = 0
while True:  # permission requests, never reading an answer
    i += 1
    call = {"toolCallId": "c%d" % i, "title": "t"}
    params = {"sessionId": "sess-1", "options": options, "toolCall": call}
    message = {"jsonrpc": "2.0", "id": i, "method": "session/request_permission", "params": params}
    sys.stdout.write(json.dumps(message) + "\\n")
    if i % 100 == 0:
        sys.stdout.flush()
"""
)


def _marked(marker: str) -> list[int]:
    """The running processes whose environment carries ``marker``."""
    found = []
    needle = f"{MARKER}={marker}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as file:
                environ = file.read().split(b"\0")
        except OSError:
            continue
        if needle in environ:
            found.append(int(entry))
    return found


def _editor_init(version: int) -> dict[str, Any]:
    params: dict[str, Any] = (
        {"protocolVersion": 1, "clientCapabilities": {}}
        if version == 1
        else {"protocolVersion": 2, "info": {"name": "editor", "version": "0"}, "capabilities": {}}
    )
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


def _session_new(request_id: int, version: int) -> bytes:
    """A ``session/new`` of about ``LINE`` bytes (the agent gets it in either pairing)."""
    params: dict[str, Any] = {"cwd": "/tmp/" + "x" * (LINE - 200)}
    if version == 1:
        params["mcpServers"] = []
    message = {"jsonrpc": "2.0", "id": request_id, "method": "session/new", "params": params}
    return json.dumps(message).encode() + b"\n"


def run_editor(
    tmp: Path, script: str, editor: int, agent: int, push_bytes: int, *agent_args: str
) -> tuple[int, list[str], str]:
    """The bridge over ``script``; the editor initializes, pushes ``push_bytes`` of whole
    lines (as many as the bridge takes), closes its stdin and reads stdout and stderr to
    their end. Returns the exit status, stderr's lines, and the marker."""
    path = tmp / "agent.py"
    path.write_text(textwrap.dedent(script))
    marker = uuid.uuid4().hex
    env = {**os.environ, MARKER: marker}
    versions = ("--client-version", str(editor), "--agent-version", str(agent))
    command = [*BRIDGE, *versions, "--limit", "max_pending_permissions=50"]
    command += ["--", sys.executable, str(path), *agent_args]
    bridge = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert bridge.stdin is not None and bridge.stdout is not None and bridge.stderr is not None
    first = threading.Event()
    stderr: list[bytes] = []

    def drain() -> None:
        assert bridge.stdout is not None
        while bridge.stdout.read1(1 << 16):  # type: ignore[attr-defined]
            first.set()
        first.set()

    def errors() -> None:
        assert bridge.stderr is not None
        stderr.append(bridge.stderr.read())

    readers = [threading.Thread(target=drain, daemon=True)]
    readers.append(threading.Thread(target=errors, daemon=True))
    for thread in readers:
        thread.start()
    try:
        bridge.stdin.write(json.dumps(_editor_init(editor)).encode() + b"\n")
        bridge.stdin.flush()
        assert first.wait(BOUND), "no answer to initialize"
        time.sleep(0.5)  # the agent is flooding, or has stopped reading, by now
        fd = bridge.stdin.fileno()
        os.set_blocking(fd, False)
        pushed, request_id, stalled = 0, 1, time.monotonic() + 1.0
        line = _session_new(request_id, editor)
        while pushed < push_bytes and time.monotonic() < stalled:
            try:
                os.write(fd, line)  # a whole line or nothing (under PIPE_BUF)
            except BlockingIOError:
                time.sleep(0.01)
                continue
            pushed += len(line)
            request_id += 1
            line = _session_new(request_id, editor)
            stalled = time.monotonic() + 1.0
        bridge.stdin.close()
        try:
            code = bridge.wait(BOUND)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the bridge still runs {BOUND:g} s after the editor's EOF")
        for thread in readers:
            thread.join(BOUND)
            assert not thread.is_alive(), "the bridge's stdout or stderr is still held open"
        return code, b"".join(stderr).decode(errors="replace").splitlines(), marker
    finally:
        if bridge.poll() is None:
            bridge.kill()
            bridge.wait()
        for pid in _marked(marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _check(lines: list[str], about: str) -> None:
    for bad in CLEAN_EXIT:
        assert not any(bad in line for line in lines), lines
    assert len([line for line in lines if about in line]) == 1, lines


@pytest.mark.parametrize("how", ["plain", "stubborn"])
def test_a_setsid_daemon_holding_the_agents_stdout_is_ended_with_the_session(
    tmp_path: Path, how: str
) -> None:
    """``stubborn``: the daemon ignores SIGTERM (SIGKILL after ``term_grace``) and has a
    child of its own (found below it, then re-parented to the bridge)."""
    pidfile = tmp_path / "daemon.pid"
    try:
        code, lines, marker = run_editor(tmp_path, DAEMON_AGENT, 1, 1, 0, str(pidfile), how)
        assert code == 0, lines
        daemon = int(pidfile.read_text())
        _check(lines, "outside its process group")
        assert lines == [line for line in lines if str(daemon) in line], lines  # only that
        assert _marked(marker) == []
    finally:
        if pidfile.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)


@pytest.mark.parametrize("pairing", [(1, 1), (2, 1)], ids=["pass-through-v1", "v2-editor-v1-agent"])
def test_an_agent_that_stops_reading_ends_within_grace_of_the_editors_eof(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    code, lines, marker = run_editor(tmp_path, DEAF_AGENT, *pairing, 2_000_000)
    assert code == 0, lines
    _check(lines, "closed its input while the agent was not reading it")
    assert len(lines) == 1, lines
    assert _marked(marker) == []


def test_an_agent_flooding_requests_without_reading_ends_within_grace_of_the_editors_eof(
    tmp_path: Path,
) -> None:
    code, lines, marker = run_editor(tmp_path, FLOOD_AGENT, 2, 1, 2_000_000)
    assert code == 0, lines
    _check(lines, "closed its input while the agent was not reading it")
    assert _marked(marker) == []
