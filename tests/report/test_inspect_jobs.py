"""``inspect --jobs 2``: the checks in a second process, the report the same bytes (issue 29).

- ``--jobs 1`` and ``--jobs 2`` write the same report for plain logs (with findings), bridge
  logs, wrapped captures, overlong and unreadable lines, and stdin.
- The second process is fed the parent's lines: a log that grows while it is read gives
  the findings of the lines the history has, no more.
- A second process that fails or is killed is ``ChecksFailed`` with the reason; the command
  says so in one line, exit 70, and writes no report.
- Ctrl-C ends both processes: exit 130, nothing left running.

The commands run as real subprocesses.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acp_toolcalls.cli._checks_process import ChecksFailed, ChecksProcess, can_fork
from tests.builds import child_env

ROOT = Path(__file__).resolve().parents[2]
ENV = child_env()
LOGS = [
    ROOT / "examples" / "buggy-v2.jsonl",
    ROOT / "examples" / "session-v1.jsonl",
    ROOT / "tests" / "data" / "v1-client-v2-agent.jsonl",
    ROOT / "tests" / "data" / "real-agents" / "claude-edit-v2-bridge.jsonl",
    ROOT / "tests" / "data" / "captures" / "devtools-v1.jsonl",
]

pytestmark = pytest.mark.skipif(not can_fork(), reason="needs fork and two processors")


def inspect(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "acp_toolcalls.cli", "inspect", *args],
        capture_output=True,
        env=ENV,
        input=stdin,
        timeout=120,
    )


@pytest.mark.parametrize("log", LOGS, ids=lambda path: path.name)
def test_one_and_two_processes_write_the_same_report(log: Path, tmp_path: Path) -> None:
    pages = []
    for jobs in ("1", "2"):
        out = tmp_path / jobs / "report.html"
        out.parent.mkdir()
        done = inspect("--jobs", jobs, "-o", str(out), str(log))
        assert done.returncode == 0, done.stderr
        pages.append((out.read_bytes(), done.stderr.replace(str(out.parent).encode(), b"DIR")))
    assert pages[0] == pages[1]


def test_bad_lines_and_stdin_give_the_same_report(tmp_path: Path) -> None:
    lines = (ROOT / "examples" / "buggy-v2.jsonl").read_bytes().splitlines()
    lines[3:3] = [b"not json", b"\xff\xfe", b"{" * 70, b'{"jsonrpc":"2.0"}', b"x" * 5000]
    log = b"\n".join(lines) + b"\n"
    outputs = []
    for jobs in ("1", "2"):
        done = inspect("--jobs", jobs, "--max-line-bytes", "4096", "-o", "-", stdin=log)
        assert done.returncode == 0, done.stderr
        outputs.append((done.stdout, done.stderr))
    assert outputs[0] == outputs[1]
    assert b"line 8" in outputs[0][1]  # the overlong line, said once


def test_a_failing_second_process_is_said_with_its_reason() -> None:
    checks = ChecksProcess({"no_such_option": 1})
    try:
        checks.feed(1, b'{"jsonrpc":"2.0","method":"x"}')
        with pytest.raises(ChecksFailed, match="TypeError"):
            checks.result()
    finally:
        checks.stop()


def test_a_killed_second_process_is_said_with_its_signal() -> None:
    checks = ChecksProcess({})
    try:
        assert checks.pid is not None
        os.kill(checks.pid, signal.SIGKILL)
        with pytest.raises(ChecksFailed, match="ended by signal 9"):
            for number in range(1, 200_000):  # until the pipe is found broken
                checks.feed(number, b'{"jsonrpc":"2.0","method":"session/update"}')
            checks.result()
    finally:
        checks.stop()


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_killed_second_process_ends_the_command_with_70_and_no_report(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    proc = subprocess.Popen(
        [sys.executable, "-m", "acp_toolcalls.cli", "inspect", "--jobs", "2", "-o", str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert proc.stdin is not None
    try:
        line = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {}}) + "\n"
        proc.stdin.write(line.encode() * 10)
        proc.stdin.flush()
        deadline = time.monotonic() + 30
        while not (children := _children(proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(children) == 1
        os.kill(children[0], signal.SIGKILL)
        with contextlib.suppress(BrokenPipeError):  # the command may have ended already
            proc.stdin.write(line.encode() * 20_000)  # the lines go on to a process that is gone
            proc.stdin.close()
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 70
    assert err.decode() == (
        "acp-toolcalls inspect: internal error: the checks' process failed (it was ended by "
        "signal 9); this is a bug\n"
    )
    assert not out.exists()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_ctrl_c_ends_both_processes(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "acp_toolcalls.cli", "inspect", "--jobs", "2", "-o", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        start_new_session=True,
    )
    assert proc.stdin is not None
    try:
        deadline = time.monotonic() + 30
        while not (children := _children(proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(children) == 1
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal sends it: to the whole group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert b"Traceback" not in err
    assert not Path(f"/proc/{children[0]}").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ is Linux's")
def test_the_pipe_to_the_checks_holds_several_batches() -> None:
    # With a pipe of the default 64 KiB each batch waited until the other process took it:
    # the two processes ran in lockstep instead of side by side.
    import fcntl

    from acp_toolcalls.cli._checks_process import BATCH_BYTES, PIPE_BYTES

    checks = ChecksProcess({})
    try:
        size = fcntl.fcntl(checks._lines.fileno(), fcntl.F_GETPIPE_SZ)
        assert size == PIPE_BYTES >= 4 * BATCH_BYTES
    finally:
        checks.stop()
