"""Big logs and odd input, as a user meets them: over real subprocesses (issue 17).

- ``replay`` summarizes sessions past ``SUMMARY_AFTER`` calls (``--all``: every row); piped
  output never splits an id or a path; ``replay BIG | head -1`` stops at the first failed write
  with exit 1.
- A progress bar on a terminal for input that takes more than a second, never on a pipe.
- Input that is not JSON Lines stops at once with one line and exit 2; a byte-order mark is
  skipped.
- ``--follow`` starts over when the file is truncated or replaced, and says so.
- Empty stdin says how to see the bundled example (``--demo``).
- Messages name no decision of the specification (users do not have it).
"""

from __future__ import annotations

import array
import fcntl
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from acp_toolcalls.cli.lines import NOT_JSON_LINES_AFTER
from acp_toolcalls.cli.render import LAST_CALLS, SUMMARY_AFTER

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "acp_toolcalls"]
# Tables are as wide as COLUMNS says on a pipe: the tests set the width they mean.
ENV = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
COMMANDS = [["replay"], ["validate"], ["convert", "--to", "v1"]]


def update(body: dict[str, Any], session: str = "sess_1") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": body},
    }


def tcu(call_id: str, session: str = "sess_1", **fields: Any) -> dict[str, Any]:
    return update({"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}, session)


def write(path: Path, messages: list[Any]) -> Path:
    path.write_bytes(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    return path


def run(args: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*CLI, *args], input=stdin, capture_output=True, env=ENV, timeout=120, check=False
    )


# --------------------------------------------------------------------------------------------
# Summaries of big logs

LONG = "toolu_01ABCDEFGHIJKLMNOPQRSTUVWX"  # 30 characters, like a real Anthropic id


def _big_session() -> tuple[list[Any], dict[str, list[str]]]:
    """250 calls in one session: completed ones, 12 failed, 4 still open; plus a small one."""
    messages: list[Any] = []
    ids: dict[str, list[str]] = {"completed": [], "failed": [], "open": []}
    for n in range(250):
        call_id = f"{LONG}{n:04d}"
        status = (
            "failed" if n % 20 == 7 else "in_progress" if n in (3, 90, 180, 201) else "completed"
        )
        ids[
            "failed" if status == "failed" else "open" if status == "in_progress" else "completed"
        ].append(call_id)
        kind = ("read", "edit", "execute")[n % 3]
        location = [{"path": f"/home/user/project/src/pkg/module_{n}.py", "line": n + 1}]
        messages.append(
            tcu(call_id, title=f"Call number {n}", kind=kind, status=status, locations=location)
        )
    messages.append(tcu("small_1", "sess_2", title="A small session", status="completed"))
    return messages, ids


def test_a_big_log_is_summarized_and_all_shows_every_call(tmp_path: Path) -> None:
    log = write(tmp_path / "big.jsonl", _big_session()[0])
    messages, ids = _big_session()
    assert len(messages) > SUMMARY_AFTER
    for width in ("200", "80"):  # a table; one block per call
        done = run(["replay", "--width", width, str(log)])
        assert done.returncode == 0, done.stderr
        out = done.stdout.decode()
        counts = f"{len(ids['completed'])} completed, 4 in_progress, {len(ids['failed'])} failed"
        assert f"250 tool calls: {counts}" in " ".join(out.split())
        assert "by kind: 84 read, 83 edit, 83 execute" in " ".join(out.split())
        assert "--all shows every call" in out
        shown = set(re.findall(rf"{LONG}\d{{4}}", out))
        last = {f"{LONG}{n:04d}" for n in range(250 - LAST_CALLS, 250)}
        assert shown == set(ids["open"]) | set(ids["failed"]) | last
        assert "A small session" in out
    every = run(["replay", "--all", "--width", "200", str(log)]).stdout.decode()
    assert set(re.findall(rf"{LONG}\d{{4}}", every)) == {f"{LONG}{n:04d}" for n in range(250)}
    assert "--all shows every call" not in every


def test_piped_tables_never_split_an_id_or_a_path(tmp_path: Path) -> None:
    # Piped output is 80 columns: each call is a block there, ids and paths whole on a line.
    title = "Read a file with a rather long title that has to wrap somewhere"
    calls = [
        tcu(f"{LONG}{n}", title=title, kind="read", status="completed",
            locations=[{"path": f"/home/user/project/pkg_{n}/deep/package/module.py", "line": 3}])
        for n in range(3)
    ]  # fmt: skip
    log = write(tmp_path / "log.jsonl", calls)
    out = run(["replay", str(log)]).stdout.decode()
    lines = out.splitlines()
    for n in range(3):
        assert any(f"{LONG}{n}" in line for line in lines), out
        assert any(f"pkg_{n}/deep/package/module.py:3" in line for line in lines), out
    assert max(len(line.rstrip()) for line in lines) <= 80
    # --width: a table, wide enough for whole ids.
    wide = run(["replay", "--width", "160", str(log)]).stdout.decode()
    assert "┏" in wide and all(f"{LONG}{n}" in wide for n in range(3))


def test_a_closed_stdout_stops_the_replay_at_the_first_failed_write(tmp_path: Path) -> None:
    # 300 sessions: a summary too, but far more output than a pipe holds.
    messages = [
        tcu(f"call_{n}", f"session_{n}", title=f"Call {n}", status="completed") for n in range(300)
    ]
    log = write(tmp_path / "big.jsonl", messages)
    proc = subprocess.Popen(
        [*CLI, "replay", "--width", "200", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()  # `| head -1`
    proc.stdout.close()
    assert proc.wait(timeout=60) == 1
    assert b"session session_0" in first
    assert proc.stderr.read() == b""


# --------------------------------------------------------------------------------------------
# Progress on a terminal


def _slow_input(proc: subprocess.Popen[bytes], lines: list[bytes]) -> None:
    # Some lines, then a pause longer than PROGRESS_AFTER, then the rest: reading takes > 1 s.
    # The pause starts once the command has taken the first lines: on a loaded machine its
    # start-up alone could outlast a pause counted from the write, and then it read everything
    # at once.
    assert proc.stdin is not None
    proc.stdin.write(b"".join(lines[:300]))
    proc.stdin.flush()
    deadline = time.monotonic() + 60
    while _unread(proc.stdin.fileno()) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(1.5)
    proc.stdin.write(b"".join(lines[300:]))
    proc.stdin.close()


def _unread(fd: int) -> int:
    """Bytes written to the pipe ``fd`` and not read yet (``FIONREAD``)."""
    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return count[0]


def _lines(count: int) -> list[bytes]:
    return [
        json.dumps(tcu(f"c{n}", title="t", status="completed")).encode() + b"\n"
        for n in range(count)
    ]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_progress_on_a_terminal_never_on_a_pipe(argv: list[str]) -> None:
    lines = _lines(1200)
    env = {**ENV, "TERM": "xterm-256color"}
    # stderr a terminal (a pty): the bar is drawn there.
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*CLI, *argv, "-"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=slave, env=env
    )
    os.close(slave)
    seen = bytearray()

    def drain() -> None:
        while True:
            ready, _, _ = select.select([master], [], [], 30)
            if not ready:
                return
            try:
                data = os.read(master, 4096)
            except OSError:
                return
            if not data:
                return
            seen.extend(data)

    reader = threading.Thread(target=drain)
    reader.start()
    _slow_input(proc, lines)
    assert proc.wait(timeout=60) in (0, 1)
    reader.join(timeout=30)
    os.close(master)
    verb = {"replay": b"replaying", "validate": b"validating", "convert": b"converting"}[argv[0]]
    assert verb in seen, bytes(seen[-500:])
    # stderr a pipe: never.
    proc = subprocess.Popen(
        [*CLI, *argv, "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    _slow_input(proc, lines)
    assert proc.wait(timeout=60) in (0, 1)
    assert proc.stderr is not None
    assert verb not in proc.stderr.read()


# --------------------------------------------------------------------------------------------
# Input that is not JSON Lines


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_a_binary_file_is_not_json_lines(argv: list[str]) -> None:
    done = run([*argv, sys.executable])  # the Python interpreter: binary, many "lines"
    assert done.returncode == 2
    (line,) = done.stderr.decode().splitlines()
    assert (
        f"{sys.executable!r} is not JSON Lines: none of its first {NOT_JSON_LINES_AFTER} lines"
        in line
    )
    assert "each line must be one JSON-RPC message" in line
    assert done.stdout == b""


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_a_pretty_printed_json_document_is_not_json_lines(argv: list[str], tmp_path: Path) -> None:
    path = tmp_path / "pretty.json"
    path.write_text(json.dumps([tcu("c1", title="t"), tcu("c2", title="u")], indent=2))
    done = run([*argv, str(path)])
    assert done.returncode == 2
    (line,) = done.stderr.decode().splitlines()
    assert "is not JSON Lines" in line and "one JSON document over several lines" in line
    assert "jq -c" in line


def test_a_few_bad_lines_before_good_ones_are_reported_one_by_one(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    bad = [b"not json"] * (NOT_JSON_LINES_AFTER - 1)
    path.write_bytes(b"\n".join([*bad, json.dumps(tcu("c1", title="t")).encode()]) + b"\n")
    done = run(["replay", "--json", str(path)])
    assert done.returncode == 0
    assert len(done.stderr.decode().splitlines()) == NOT_JSON_LINES_AFTER - 1
    assert json.loads(done.stdout)["sessions"]["sess_1"]["toolCalls"][0]["toolCallId"] == "c1"


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_a_byte_order_mark_is_skipped(argv: list[str], tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(
        b"\xef\xbb\xbf" + json.dumps(tcu("c1", title="t", status="completed")).encode() + b"\n"
    )
    done = run([*argv, str(path)])
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""


# --------------------------------------------------------------------------------------------
# --follow across log rotation


def _wait_for(
    proc: subprocess.Popen[bytes], text: bytes, seen: bytearray, timeout: float = 20
) -> None:
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    while text not in seen:
        assert time.monotonic() < deadline, bytes(seen)
        ready, _, _ = select.select([proc.stderr], [], [], 0.2)
        if ready:
            seen.extend(os.read(proc.stderr.fileno(), 4096))


def _wait_until_read(pid: int, path: Path, timeout: float = 60) -> None:
    """Until process ``pid`` holds ``path`` open at its end (Linux: ``/proc``)."""
    size = path.stat().st_size
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") != str(path.resolve()):
                    continue
                info = Path(f"/proc/{pid}/fdinfo/{fd}").read_text()
            except OSError:
                continue
            if int(info.split()[1]) == size:  # "pos: N"
                return
        time.sleep(0.02)
    raise AssertionError(f"{path} was not read to its end within {timeout} s")


@pytest.mark.parametrize("how", ["truncated", "replaced"])
def test_follow_starts_over_when_the_file_is_truncated_or_replaced(
    tmp_path: Path, how: str
) -> None:
    log = write(
        tmp_path / "agent.log", [tcu("old_call", title="Before rotation", status="completed")]
    )
    proc = subprocess.Popen(
        [*CLI, "replay", "--follow", "--width", "120", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    try:
        # It is polling at the file's end once it holds it open there (a busy machine can take
        # more than a second to start it: a fixed wait let the file change first).
        _wait_until_read(proc.pid, log)
        if how == "truncated":
            with log.open("r+b") as f:
                f.truncate(0)
        else:
            fresh = tmp_path / "agent.log.new"
            fresh.write_bytes(b"")
            os.replace(fresh, log)
        seen = bytearray()
        _wait_for(proc, f"was {how}".encode(), seen)
        with log.open("ab") as f:
            f.write(
                json.dumps(tcu("new_call", title="After rotation", status="completed")).encode()
                + b"\n"
            )
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert b"replaying it from the start" in bytes(seen) + err
    final = out.decode().split("session sess_1")[-1]  # the last frame drawn
    assert "new_call" in final and "old_call" not in final


# --------------------------------------------------------------------------------------------
# See it work: an empty stdin, --demo


def test_empty_stdin_says_how_to_see_the_example() -> None:
    done = subprocess.run(
        [*CLI, "replay"], stdin=subprocess.DEVNULL, capture_output=True, env=ENV, timeout=60
    )
    assert done.returncode == 0
    assert done.stdout == b""
    (line,) = done.stderr.decode().splitlines()
    assert "nothing to read on standard input" in line and "acp-toolcalls replay --demo" in line
    demo = subprocess.run(
        [*CLI, "replay", "--demo"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=ENV,
        timeout=60,
    )
    assert demo.returncode == 0 and b"session sess_7f3a9c21" in demo.stdout
    both = run(["replay", "--demo", "some.jsonl"])
    assert both.returncode == 2 and b"--demo" in both.stderr


# --------------------------------------------------------------------------------------------
# Words a user can act on


def test_messages_cite_no_decision_of_the_specification(tmp_path: Path) -> None:
    v1_terminal = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": {
            "sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Run", "kind": "execute",
            "content": [{"type": "terminal", "terminalId": "t1"}], "location": [], "extra": 1}},
    }  # fmt: skip
    v1_log = write(tmp_path / "v1.jsonl", [v1_terminal])
    v2_log = ROOT / "examples" / "session-v2.jsonl"
    outputs = [
        run(["replay", "--protocol", "v1", str(v1_log)]),
        run(["convert", "--to", "v2", str(v1_log)]),
        run(["convert", "--to", "v1", str(v2_log)]),
        run(["validate", str(ROOT / "examples" / "buggy-v2.jsonl")]),
    ]
    for done in outputs:
        text = (done.stdout + done.stderr).decode()
        assert not re.search(r"\bD\d+\b", text), text
        assert "TOOL-CALLS" not in text and "shared/spec" not in text
    # A v1 terminal is valid v1 (validate calls the log clean): replay says it is not shown,
    # and where to read why, not that the log is wrong.
    assert run(["validate", "--protocol", "v1", str(v1_log)]).returncode in (0, 1)
    (note,) = [line for line in outputs[0].stderr.decode().splitlines() if "terminal" in line]
    assert note.startswith("line 1: $.params.update.content[0]: not shown, valid v1: ")
    assert "docs/conversion.md" in note
