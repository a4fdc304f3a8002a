"""``acp-toolcalls bridge`` under faults, over real subprocesses (issue 15, the I/O edge).

Never stuck: each direction makes progress on its own, notes never block the messages,
stdin ``/dev/null`` or closed ends cleanly. The agent process, all of it: its whole process
group ends with the session, and its exit is seen on the process even while a child holds its
stdout. The log: created 0600, never through a symbolic link, credentials redacted, a byte
limit, and a write error that costs the log only. A scripted agent (``interop/script_agent.py``)
and a raw editor (``interop/raw.py``); floods are scaled down (``benchmarks/proxy_faults.py``
runs them at full size, docs/robustness.md has the figures).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.cli import main as cli_main
from tests.interop.raw import BRIDGE, RawClient, bridged
from tests.interop.sessions import TIMEOUT, bounded
from tests.proxy.test_permission_integrity import (
    CONVERTING,
    PASS_THROUGH,
    SID,
    Session,
    agent_init,
    editor_init,
    run,
    session_new,
    update,
)

MIB = 1 << 20
FAKE_AGENT = Path(__file__).resolve().parents[1] / "interop" / "fake_agent.py"
CLEAN_EXIT = ("Traceback", "Exception ignored", "Event loop is closed", "a bug")


def chunk(version: int, text: str) -> dict[str, Any]:
    body = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    if version == 2:
        body["messageId"] = "m1"
    return update(body)


def prompt(request_id: int, text: str) -> dict[str, Any]:
    params = {"sessionId": SID, "prompt": [{"type": "text", "text": text}]}
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}


def turn_end(agent_version: int) -> list[dict[str, Any]]:
    """The agent's steps that end the turn of the prompt saved as ``prompt``."""
    if agent_version == 1:
        answer = {"stopReason": "end_turn"}
        return [{"send": {"jsonrpc": "2.0", "id": {"$id": "prompt"}, "result": answer}}]
    idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    return [
        {"send": {"jsonrpc": "2.0", "id": {"$id": "prompt"}, "result": {"messageId": "u1"}}},
        {"send": update(idle)},
    ]


def turn_ended(editor_version: int, request_id: int) -> Any:
    """What ends a prompt's turn for the editor: the v1 response, the v2 idle state."""

    def found(message: dict[str, Any]) -> bool:
        if editor_version == 1:
            return "method" not in message and message.get("id") == request_id
        body = message.get("params", {}).get("update", {})
        return message.get("method") == "session/update" and body.get("state") == "idle"

    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not: here PID 1 does not reap orphans)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            return file.read().rpartition(b")")[2].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


def pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text(encoding="utf-8").split()]


def assert_clean(err: str) -> None:
    for text in CLEAN_EXIT:
        assert text not in err, err


# --------------------------------------------------------------------------------------------
# Never stuck

BURST = 4 * MIB  # issue 15: 32 MiB (benchmarks/proxy_faults.py)
PROMPT_BYTES = 1_000_000
LINE_LIMIT = "1100000"  # the proxy reads ahead up to twice its line limit: scaled with the burst


@pytest.mark.parametrize("pairing", CONVERTING + PASS_THROUGH)
def test_an_agent_bursting_before_it_reads_and_a_1_mb_prompt_both_get_through(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    editor_version, agent_version = pairing
    text = "x" * 8000
    go = tmp_path / "go"
    # After the prelude (session/new answered) it writes, not reading the prompt.
    steps: list[dict[str, Any]] = [
        {"wait_file": str(go)},
        {"burst": BURST, "send": chunk(agent_version, text)},
        {"await": {"method": "session/prompt"}, "as": "prompt"},
        *turn_end(agent_version),
    ]
    session = Session(tmp_path, editor_version, agent_version, steps)

    async def scenario() -> tuple[RawClient, int, str]:
        client = await RawClient.start("--agent-version", str(agent_version),
                                       "--max-line-bytes", LINE_LIMIT,
                                       agent=session.command)  # fmt: skip
        await client.send(editor_init(editor_version))
        await client.answer_to(0)
        await client.send(session_new(editor_version))
        assert "result" in await client.answer_to(1)
        await client.send(prompt(2, "p" * PROMPT_BYTES))
        go.touch()  # the prompt is on its way to the agent: now it writes its burst
        await client.until(turn_ended(editor_version, 2))
        code, err, _ = await client.finish()
        return client, code, err

    client, code, err = bounded(scenario())
    lines = -(-BURST // (len(json.dumps(chunk(agent_version, text))) + 1))
    said = [
        m["params"]["update"]["content"]["text"]
        for m in client.received
        if m.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
    ]
    assert len(said) == lines and set(said) == {text}
    [asked] = [m for m in session.received() if m.get("method") == "session/prompt"]
    assert len(asked["params"]["prompt"][0]["text"]) == PROMPT_BYTES
    assert code == 0
    assert_clean(err)


def test_a_client_that_does_not_read_holds_the_agent_back_and_memory_stays_bounded(
    tmp_path: Path,
) -> None:
    burst = 24 * MIB
    go = tmp_path / "go"
    steps: list[dict[str, Any]] = [
        {"wait_file": str(go)},
        {"burst": burst, "send": chunk(1, "y" * 8000)},
        {"await": {"method": "session/prompt"}, "as": "prompt"},
        *turn_end(1),
    ]
    session = Session(tmp_path, 1, 1, steps)
    # Plain pipes: nothing reads the bridge's stdout while this editor does not.
    bridge = subprocess.Popen(bridged(agent=session.command), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    stdin, stdout, stderr = bridge.stdin, bridge.stdout, bridge.stderr
    assert stdin is not None and stdout is not None and stderr is not None

    def send(message: dict[str, Any]) -> None:
        stdin.write(json.dumps(message).encode() + b"\n")
        stdin.flush()

    def editor() -> tuple[int, int, Any]:
        send(editor_init(1))
        stdout.readline()
        send(session_new(1))
        stdout.readline()
        before = _status(bridge.pid, "VmRSS")
        go.touch()
        time.sleep(1.0)  # not reading: an unbounded queue would take the whole burst
        send(prompt(2, "go"))
        count = 0
        while "id" not in (message := json.loads(stdout.readline())):
            count += 1
        return count, _status(bridge.pid, "VmHWM") - before, message["id"]

    try:
        count, growth, answered = bounded(asyncio.to_thread(editor))
        stdin.close()
        assert bridge.wait(TIMEOUT) == 0
        assert_clean(stderr.read().decode())
    finally:
        bridge.kill()
    assert answered == 2 and count * 8000 > burst * 0.95
    assert growth < 12 * MIB, f"the bridge grew by {growth / MIB:.1f} MiB"  # 36 MiB before


def _status(pid: int, key: str) -> int:
    """A ``/proc/PID/status`` figure in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {key} for {pid}")


def test_notes_never_block_the_messages_when_nobody_reads_stderr(tmp_path: Path) -> None:
    garbage = 6000  # about 600 KB of notes: past the pipe and the notes' buffer
    session = Session(tmp_path, 2, 1, [{"await": {"method": "session/prompt"}, "as": "prompt"}])
    steps = [*json.loads(session.script.read_text(encoding="utf-8")), *turn_end(1)]
    session.script.write_text(json.dumps(steps), encoding="utf-8")

    async def scenario() -> tuple[int, str]:
        stderr, stderr_end = os.pipe()  # a pipe nobody reads until the end
        process = await asyncio.create_subprocess_exec(
            *bridged("--agent-version", "1", agent=session.command),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr_end,
        )
        os.close(stderr_end)
        client = RawClient(process)
        await client.send(editor_init(2))
        await client.answer_to(0)
        await client.send(session_new(2))
        await client.answer_to(1)
        for number in range(garbage):
            await client.send(f"not json {number}".encode())
        for _ in range(garbage):
            assert (await client.receive())["error"]["code"] == -32700
        await client.send(prompt(2, "still here"))
        await client.until(turn_ended(2, 2))
        reading = asyncio.get_running_loop().run_in_executor(None, _read_all, stderr)
        assert process.stdin is not None and process.stdout is not None
        process.stdin.close()
        await process.stdout.read()
        return await process.wait(), (await reading).decode()

    code, err = bounded(scenario())
    assert code == 0
    assert_clean(err)
    shown = err.count("answered -32700")
    [dropped] = re.findall(r"(\d+) note\(s\) dropped: stderr was not being read", err)
    assert int(dropped) > 0 and shown + int(dropped) == garbage


def _read_all(fd: int) -> bytes:
    with open(fd, "rb") as file:
        return file.read()


@pytest.mark.parametrize("inspect", [False, True])
@pytest.mark.parametrize("stdin", ["/dev/null", "closed"])
def test_stdin_dev_null_or_closed_ends_cleanly_in_one_line_and_stops_the_agent(
    tmp_path: Path, stdin: str, inspect: bool
) -> None:
    """Also with ``--inspect``, whose pipe to the page's process must not take the place of a
    closed stdin (it did: the bridge read its own pipe, failed, and hung)."""
    pidfile = tmp_path / "pids"
    agent = ("sh", "-c", f"echo $$ >> {pidfile}; exec cat")  # cat: it would wait for input
    command = [*BRIDGE, *(["--inspect"] if inspect else []), "--", *agent]
    if stdin == "closed":
        command = ["sh", "-c", 'exec "$@" <&-', "sh", *command]
    done = subprocess.run(
        command, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT, check=False
    )
    err = done.stderr.decode()
    assert done.returncode == 0, err
    said = err.splitlines()
    if inspect:
        assert " live at " in said.pop(0)
    [line] = said
    assert line.startswith("acp-toolcalls bridge: stdin ")
    assert ("closed" in line) == (stdin == "closed") and line.endswith("the agent is stopped")
    assert done.stdout == b""
    [agent_pid] = pids(pidfile)
    assert not alive(agent_pid)


# --------------------------------------------------------------------------------------------
# The agent process, all of it


def wrapper(tmp_path: Path, *agent: str) -> tuple[tuple[str, ...], Path]:
    """A launcher script (as ``npx`` or a shell wrapper is) that starts two children of its
    own, one of which ignores SIGTERM, and runs ``agent`` as its child; the pids it started,
    its own included, go to the file returned."""
    pidfile = tmp_path / "pids"
    script = tmp_path / "launch.sh"
    script.write_text(
        "#!/bin/sh\n"
        f"sleep 30 & echo $! >> {pidfile}\n"
        f"(trap '' TERM; exec sleep 30) & echo $! >> {pidfile}\n"
        f"echo $$ >> {pidfile}\n" + " ".join(f"'{part}'" for part in agent) + "\n",
        encoding="utf-8",
    )
    return ("sh", str(script)), pidfile


def test_nothing_of_a_wrapped_agents_group_survives_the_bridge(tmp_path: Path) -> None:
    command, pidfile = wrapper(tmp_path, sys.executable, str(FAKE_AGENT), "echo", "1")

    async def scenario() -> tuple[int, str]:
        client = await RawClient.start("--agent-version", "1", agent=command)
        await client.send(editor_init(2))
        await client.answer_to(0)
        await client.send(session_new(2))
        await client.answer_to(1)
        return (await client.finish())[:2]  # reads stderr to its end: no child may hold it

    code, err = bounded(scenario())
    assert code == 0 and err == ""
    started = pids(pidfile)
    assert len(started) == 3 and not any(alive(pid) for pid in started)


def test_a_bridge_told_to_stop_ends_the_whole_group_of_a_wrapped_agent(tmp_path: Path) -> None:
    command, pidfile = wrapper(tmp_path, sys.executable, str(FAKE_AGENT), "echo", "1")

    async def scenario() -> tuple[int, str]:
        client = await RawClient.start("--agent-version", "1", agent=command)
        await client.send(editor_init(2))
        await client.answer_to(0)
        client.process.terminate()  # as an editor stops it: SIGTERM
        return (await client.finish(close=False))[:2]

    code, err = bounded(scenario())
    assert code == 130
    assert_clean(err)
    started = pids(pidfile)
    assert len(started) == 3 and not any(alive(pid) for pid in started)


@pytest.mark.parametrize(
    ("pairing", "method"),
    [
        pytest.param((1, 2), "session/prompt", id="v1-editor-v2-agent"),
        pytest.param((2, 1), "session/prompt", id="v2-editor-v1-agent"),
        pytest.param((1, 1), "_vendor/work", id="pass-through-v1"),
        pytest.param((1, 1), "session/prompt", id="pass-through-v1-prompt"),
        pytest.param((2, 2), "session/prompt", id="pass-through-v2-prompt"),
    ],
)
def test_an_agent_that_exits_while_its_child_holds_its_stdout_ends_the_session(
    tmp_path: Path, pairing: tuple[int, int], method: str
) -> None:
    editor_version, _agent_version = pairing
    pidfile = tmp_path / "child"
    steps: list[dict[str, Any]] = [{"await": {"method": method}, "as": "prompt"}]
    if pairing == (2, 2):  # a v2 agent acknowledges the prompt: the turn runs
        ack = {"jsonrpc": "2.0", "id": {"$id": "prompt"}, "result": {"messageId": "u1"}}
        steps.append({"send": ack})
    steps += [
        {"spawn": ["sleep", "30"], "pidfile": str(pidfile)},  # keeps the agent's stdout open
        {"exit": 3},
    ]

    async def editor(client: RawClient, session: Session) -> None:
        await client.send({**prompt(2, "go"), "method": method})
        if editor_version == 1:
            answer = await client.answer_to(2)
            assert answer["error"]["code"] == -32603, answer
            assert "exited with code 3" in answer["error"]["data"]["details"]
        else:
            await client.answer_to(2)  # the v2 acknowledgement
            ended = await client.until(turn_ended(2, 2))
            assert ended["params"]["update"]["stopReason"] == "error"

    _session, _client, code, err = run(tmp_path, pairing, steps, editor)
    assert code == 1
    assert err.count("the agent exited with code 3") == 1, err  # reported once
    assert_clean(err)
    [child] = pids(pidfile)
    assert not alive(child)


# --------------------------------------------------------------------------------------------
# The log

SECRETS = ("sk-agent-secret", "sk-editor-secret", "sk-result-secret", "mcp-env-secret", "hdr")


def _auth_steps(agent_version: int) -> list[dict[str, Any]]:
    method = {"id": "key"} if agent_version == 1 else {"methodId": "key", "type": "agent"}
    auth = {**method, "name": "API key", "_meta": {"apiKey": "sk-agent-secret"}}
    login = "authenticate" if agent_version == 1 else "auth/login"
    result = {**agent_init(agent_version), "authMethods": [auth]}
    return [
        {"await": {"method": "initialize"}, "as": "init"},
        {"send": {"jsonrpc": "2.0", "id": {"$id": "init"}, "result": result}},
        {"await": {"method": login}, "as": "login"},
        {
            "send": {
                "jsonrpc": "2.0",
                "id": {"$id": "login"},
                "result": {"_meta": {"token": "sk-result-secret"}},
            }
        },
        {"await": {"method": "session/new"}, "as": "new"},
        {"send": {"jsonrpc": "2.0", "id": {"$id": "new"}, "result": {"sessionId": SID}}},
    ]


async def _log_in(client: RawClient, editor_version: int) -> None:
    await client.send(editor_init(editor_version))
    await client.answer_to(0)
    login = "authenticate" if editor_version == 1 else "auth/login"
    params = {"methodId": "key", "_meta": {"apiKey": "sk-editor-secret"}}
    await client.send({"jsonrpc": "2.0", "id": 1, "method": login, "params": params})
    assert "result" in await client.answer_to(1)
    new = session_new(editor_version)
    new["id"] = 2
    new["params"]["mcpServers"] = [
        {
            "name": "files",
            "command": "/usr/bin/mcp-files",
            "args": [],
            "env": [{"name": "TOKEN", "value": "mcp-env-secret"}],
        },
        {"type": "http", "name": "web", "url": "https://example.invalid/mcp", "headers": []},
    ]
    new["params"]["mcpServers"][1]["headers"] = [{"name": "Authorization", "value": "hdr"}]
    if editor_version == 2:
        new["params"]["mcpServers"][0]["type"] = "stdio"
    await client.send(new)
    await client.answer_to(2)


@pytest.mark.parametrize("pairing", [*CONVERTING, PASS_THROUGH[0]])
@pytest.mark.parametrize("secrets", [False, True], ids=["redacted", "log-secrets"])
def test_the_log_is_private_and_redacted_and_still_replays(
    tmp_path: Path,
    pairing: tuple[int, int],
    secrets: bool,
    capsys: pytest.CaptureFixture[str],
) -> None:
    editor_version, agent_version = pairing
    session = Session(tmp_path, editor_version, agent_version, _auth_steps(agent_version))
    log = tmp_path / "traffic.jsonl"
    options = ("--agent-version", str(agent_version), "--log", str(log))

    async def scenario() -> tuple[int, str]:
        client = await RawClient.start(*options, *(["--log-secrets"] if secrets else []),
                                       agent=session.command)  # fmt: skip
        await _log_in(client, editor_version)
        return (await client.finish())[:2]

    code, err = bounded(scenario())
    assert code == 0 and err == ""
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    sent = session.record.read_text(encoding="utf-8")
    assert "sk-editor-secret" in sent  # the agent got them all the same
    text = log.read_text(encoding="utf-8")
    logged = [secret for secret in SECRETS if secret in text]
    if secrets:
        assert "sk-editor-secret" in logged and "<redacted>" not in text
    else:
        assert logged == [] and "<redacted>" in text
        records = [json.loads(line) for line in text.splitlines()]
        redacted = [r for r in records if r.get("redacted")]
        assert {r["direction"] for r in redacted} >= {"client->proxy", "proxy->agent"}
    for side in ("client", "agent"):  # still a log each side reads
        assert cli_main(["replay", "--json", "--side", side, str(log)]) == 0
        assert cli_main(["validate", "--side", side, str(log)]) == 0, capsys.readouterr()
    capsys.readouterr()


def test_a_symbolic_link_at_the_log_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    link = tmp_path / "traffic.jsonl"
    link.symlink_to(target)
    done = subprocess.run(
        [*BRIDGE, "--log", str(link), "--", "cat"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 2
    [line] = done.stderr.decode().splitlines()
    assert "is a symbolic link: refused" in line
    assert not target.exists()


@pytest.mark.parametrize("log", ["limit", "/dev/full"])
def test_the_log_stops_at_its_limit_or_a_write_error_and_the_session_goes_on(
    tmp_path: Path, log: str
) -> None:
    pidfile = tmp_path / "agent"
    steps: list[dict[str, Any]] = [
        {"pidfile": str(pidfile)},
        {"await": {"method": "session/prompt"}, "as": "prompt"},
        *turn_end(2),
    ]
    session = Session(tmp_path, 1, 2, steps)
    path = tmp_path / "traffic.jsonl" if log == "limit" else Path(log)
    options = ("--log", str(path), *(["--log-max-bytes", "700"] if log == "limit" else []))

    async def scenario() -> tuple[int, str]:
        client = await session.start(*options)
        await client.send(prompt(2, "go"))
        assert (await client.answer_to(2))["result"]["stopReason"] == "end_turn"
        return (await client.finish())[:2]

    code, err = bounded(scenario())
    assert code == 0
    [line] = err.splitlines()
    assert line.startswith(f"acp-toolcalls bridge: --log {path}: ")
    assert line.endswith("; logging stopped, the session goes on")
    if log == "limit":
        assert "700 bytes written, the limit of --log-max-bytes" in line
        data = path.read_bytes()
        assert 0 < len(data) <= 700 and data.endswith(b"\n")  # whole records
        assert all(json.loads(record)["direction"] for record in data.splitlines())
    else:
        assert "cannot write to it (No space left on device)" in line
    [agent] = pids(pidfile)
    assert not alive(agent)
    assert os.path.exists(path)
