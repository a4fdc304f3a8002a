"""``acp-toolcalls bridge`` under faults at full size (issue 15): peak RSS, bytes, wall time.

    python benchmarks/proxy_faults.py [SCENARIO ...]      # all of them: about a minute

The scenarios of ``tests/proxy/test_proxy_faults.py`` at the issue's sizes, with the same scripted
agent (``tests/interop/script_agent.py``) and raw editor (``tests/interop/raw.py``, in this
process). The bridge runs under ``/usr/bin/time -v``: its peak RSS is the bridge's own (not
the agent's, not the editor's). "to editor" counts the bytes the editor read on the bridge's
stdout; "wall" is from the bridge's start to its exit. One row per run; a run that fails its
check says so in the last column.

Scenarios: ``burst`` (an agent writes 32 MiB before it reads while a 1 MB prompt waits for it:
each pairing, and the pair connected directly), ``stderr`` (100,000 bad lines, stderr not read
until the end), ``stdin`` (``/dev/null``, closed), ``wrapper`` (a launcher script with a
wrapped ``sleep 30`` and a child that ignores SIGTERM), ``child-stdout`` (the agent exits while
its child holds its stdout), ``log`` (the burst logged: to a file, redacted; with
``--log-max-bytes``; to ``/dev/full``; to a 1 MiB tmpfs, when this runs as root).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # `benchmarks.*`, `tests.*` (the test helpers)
from benchmarks.environment import print_environment  # noqa: E402
from tests.interop.raw import BRIDGE, RawClient  # noqa: E402
from tests.proxy.test_permission_integrity import Session, editor_init, session_new  # noqa: E402
from tests.proxy.test_proxy_faults import (  # noqa: E402
    FAKE_AGENT,
    alive,
    chunk,
    pids,
    prompt,
    turn_end,
    turn_ended,
    wrapper,
)

MIB = 1 << 20
BURST = 32 * MIB
PROMPT_BYTES = 1_000_000
TEXT = "x" * 8000
ROWS: list[tuple[str, ...]] = []


class Counting(RawClient):
    """A raw editor that counts the bytes it reads."""

    bytes_read = 0

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), 600)
        assert line, "the proxy closed its stdout"
        self.bytes_read += len(line)
        message: dict[str, Any] = json.loads(line)
        self.received.append(message)
        return message


class Run:
    """One bridge under ``/usr/bin/time -v`` (or, ``direct``, the agent itself)."""

    def __init__(self, tmp: Path, name: str, mode: str) -> None:
        self.tmp, self.name, self.mode = tmp, name, mode
        self.times = tmp / f"time-{len(ROWS)}"
        self.started = 0.0
        self.client: Counting

    async def start(
        self, *options: str, agent: tuple[str, ...], stderr: Any = None, direct: bool = False
    ) -> Counting:
        command = agent if direct else (
            "/usr/bin/time", "-v", "-o", str(self.times), *BRIDGE, *options, "--", *agent
        )  # fmt: skip
        self.started = time.monotonic()
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE if stderr is None else stderr,
            limit=64 * MIB,
        )
        self.client = Counting(process)
        return self.client

    async def end(self, check: str = "") -> tuple[int, str]:
        """Close the editor's side, read the rest, and record the row."""
        process = self.client.process
        assert process.stdin is not None and process.stdout is not None
        process.stdin.close()
        rest = await process.stdout.read()
        self.client.bytes_read += len(rest)
        err = (await process.stderr.read()).decode() if process.stderr is not None else ""
        code = await process.wait()
        self.row(code, err, check)
        return code, err

    def row(self, code: int, err: str, check: str, wall: float | None = None) -> None:
        wall = time.monotonic() - self.started if wall is None else wall
        ROWS.append(
            (
                self.name,
                self.mode,
                str(code),
                f"{wall:.2f}",
                _peak_mib(self.times),
                f"{self.client.bytes_read / MIB:.2f} MiB" if hasattr(self, "client") else "0",
                (check or _first_line(err)).replace(f"{self.tmp}/", ""),
            )
        )


def _peak_mib(path: Path) -> str:
    if not path.exists():
        return "-"
    for line in path.read_text(encoding="utf-8").splitlines():
        if "Maximum resident set size" in line:
            return f"{int(line.rsplit(':', 1)[1]) / 1024:.0f}"
    return "?"


def _first_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    return (
        (lines[0][:110] + (f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""))
        if lines
        else ""
    )


# --------------------------------------------------------------------------------------------
# Scenarios


async def burst(tmp: Path, *extra: str, name: str = "burst", pairs: Any = None) -> None:
    """An agent writes 32 MiB before it reads; the editor's 1 MB prompt waits for it."""
    for editor, agent, direct in pairs or ((1, 1, 0), (1, 2, 0), (2, 1, 0), (1, 1, 1)):
        base = tmp / f"{name}-{editor}{agent}{'-direct' if direct else ''}"
        base.mkdir()
        go = base / "go"
        steps: list[dict[str, Any]] = [
            {"wait_file": str(go)},
            {"burst": BURST, "send": chunk(agent, TEXT)},
            {"await": {"method": "session/prompt"}, "as": "prompt"},
            *turn_end(agent),
        ]
        session = Session(base, editor, agent, steps)
        mode = "direct (no bridge)" if direct else _pairing(editor, agent)
        shown = " ".join(extra).replace(f"{tmp}/", "")
        run = Run(tmp, name, mode + (f" {shown}" if extra else ""))
        options = ("--agent-version", str(agent), *extra)
        client = await run.start(*options, agent=session.command, direct=bool(direct))
        await client.send(editor_init(editor))
        await client.answer_to(0)
        await client.send(session_new(editor))
        await client.answer_to(1)
        sending = asyncio.ensure_future(client.send(prompt(2, "p" * PROMPT_BYTES)))
        if not direct:  # the bridge reads it at once; an agent only after its burst
            await sending
        go.touch()  # the prompt is on its way to the agent: now it writes its burst
        await client.until(turn_ended(editor, 2))
        await sending
        said = sum(
            1
            for m in client.received
            if m.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
        )
        _code, err = await run.end()
        if not err:
            ROWS[-1] = (*ROWS[-1][:-1], f"{said} message chunks of 8,000 characters")


def _pairing(editor: int, agent: int) -> str:
    return f"v{editor} editor, v{agent} agent" + (" (pass-through)" if editor == agent else "")


async def stderr_unread(tmp: Path) -> None:
    """100,000 lines that are not JSON, each a note; stderr read only at the end."""
    garbage = 100_000
    session = Session(tmp, 2, 1, [{"await": {"method": "session/prompt"}, "as": "prompt"}])
    steps = [*json.loads(session.script.read_text(encoding="utf-8")), *turn_end(1)]
    session.script.write_text(json.dumps(steps), encoding="utf-8")
    read_end, write_end = os.pipe()
    run = Run(tmp, "stderr", "v2 editor, v1 agent; stderr unread")
    client = await run.start("--agent-version", "1", agent=session.command, stderr=write_end)
    os.close(write_end)
    await client.send(editor_init(2))
    await client.answer_to(0)
    await client.send(session_new(2))
    await client.answer_to(1)

    async def write() -> None:
        for number in range(garbage):
            await client.send(f"not json {number}".encode())

    writing = asyncio.ensure_future(write())
    for _ in range(garbage):
        await client.receive()
    await writing
    await client.send(prompt(2, "still here"))
    await client.until(turn_ended(2, 2))
    wall = time.monotonic() - run.started
    reading = asyncio.get_running_loop().run_in_executor(None, _read_all, read_end)
    code, _ = await run.end()
    err = (await reading).decode()
    shown = err.count("answered -32700")
    dropped = [line for line in err.splitlines() if "dropped" in line]
    run.row(code, err, f"{shown} notes shown; {' '.join(dropped)[22:]}", wall)
    del ROWS[-2]  # `end`'s row: this one has the wall time of the messages


def _read_all(fd: int) -> bytes:
    with open(fd, "rb") as file:
        return file.read()


async def stdin(tmp: Path) -> None:
    """stdin /dev/null or closed, ``cat`` as the agent."""
    for how in ("/dev/null", "closed"):
        pidfile = tmp / f"cat-{how.strip('/').replace('/', '-')}"
        agent = ("sh", "-c", f"echo $$ >> {pidfile}; exec cat")
        run = Run(tmp, "stdin", how)
        command = [*BRIDGE, "--", *agent]
        if how == "closed":  # closed by sh, which then is the bridge (exec)
            command = ["sh", "-c", 'exec "$@" <&-', "sh", *command]
        command = ["/usr/bin/time", "-v", "-o", str(run.times), *command]
        run.started = time.monotonic()
        done = subprocess.run(
            command, stdin=subprocess.DEVNULL, capture_output=True, timeout=120, check=False
        )
        left = [pid for pid in pids(pidfile) if alive(pid)]
        err = done.stderr.decode()
        run.row(done.returncode, err, f"{_first_line(err)}; agent left: {len(left)}")


async def wrapped(tmp: Path) -> None:
    """A launcher script: a wrapped ``sleep 30``, a child ignoring SIGTERM, the agent."""
    command, pidfile = wrapper(tmp, sys.executable, str(FAKE_AGENT), "echo", "1")
    run = Run(tmp, "wrapper", "client EOF; a wrapped sleep 30 and a TERM-ignoring child")
    client = await run.start("--agent-version", "1", agent=command)
    await client.send(editor_init(2))
    await client.answer_to(0)
    await client.send(session_new(2))
    await client.answer_to(1)
    _code, err = await run.end()  # reads the bridge's stderr to its end
    left = [pid for pid in pids(pidfile) if alive(pid)]
    ROWS[-1] = (*ROWS[-1][:-1], f"stderr read to EOF; {len(left)} of 3 left{_first_line(err)}")


async def child_stdout(tmp: Path) -> None:
    """The agent exits (code 3) on the prompt while a child it started holds its stdout."""
    pidfile = tmp / "child"
    steps: list[dict[str, Any]] = [
        {"await": {"method": "session/prompt"}, "as": "prompt"},
        {"spawn": ["sleep", "30"], "pidfile": str(pidfile)},
        {"exit": 3},
    ]
    session = Session(tmp, 1, 2, steps)
    run = Run(tmp, "child-stdout", _pairing(1, 2))
    client = await run.start("--agent-version", "2", agent=session.command)
    await client.send(editor_init(1))
    await client.answer_to(0)
    await client.send(session_new(1))
    await client.answer_to(1)
    await client.send(prompt(2, "go"))
    answer = await client.answer_to(2)
    _code, err = await run.end()
    left = [pid for pid in pids(pidfile) if alive(pid)]
    ROWS[-1] = (
        *ROWS[-1][:-1],
        f"prompt answered {answer['error']['code']}; child left: {len(left)}; {_first_line(err)}",
    )


async def log(tmp: Path) -> None:
    """The burst (v1 editor, v2 agent) with the log on."""
    pair = [(1, 2, 0)]
    await burst(tmp, "--log", str(tmp / "traffic.jsonl"), name="log", pairs=pair)
    ROWS[-1] = (*ROWS[-1][:-1], f"{(tmp / 'traffic.jsonl').stat().st_size / MIB:.1f} MiB logged")
    limited = tmp / "limited.jsonl"
    await burst(tmp, "--log", str(limited), "--log-max-bytes", str(MIB), name="log2", pairs=pair)
    await burst(tmp, "--log", "/dev/full", name="log3", pairs=pair)
    if os.geteuid() == 0:
        small = tmp / "smallfs"
        small.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(small)],
                          check=False).returncode == 0:  # fmt: skip
            try:
                await burst(tmp, "--log", str(small / "t.jsonl"), name="log4", pairs=pair)
            finally:
                subprocess.run(["umount", str(small)], check=False)


SCENARIOS: dict[str, Callable[[Path], Awaitable[None]]] = {
    "burst": burst,
    "stderr": stderr_unread,
    "stdin": stdin,
    "wrapper": wrapped,
    "child-stdout": child_stdout,
    "log": log,
}


def main() -> None:
    names = sys.argv[1:] or list(SCENARIOS)
    print_environment()
    for name in names:
        with tempfile.TemporaryDirectory(prefix=f"proxy_faults_{name}_") as tmp:
            asyncio.run(asyncio.wait_for(SCENARIOS[name](Path(tmp)), 600))
        print(f"  {name} done", file=sys.stderr)
    print()
    print("| scenario | run | exit | wall s | bridge peak RSS MiB | to editor | result |")
    print("|---|---|---|---|---|---|---|")
    for row in ROWS:
        print("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")


if __name__ == "__main__":
    main()
