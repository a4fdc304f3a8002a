"""``acp-toolcalls bridge --inspect``: a real session watched live in headless Chromium (issue 31).

The official Python SDK's v1 client drives ``examples/agent.py`` negotiated at v2 through
``acp-toolcalls bridge --inspect`` (real subprocesses, real stdio), while the page its stderr
named is open:

- every tool call the editor receives is on the page within 500 ms of the editor receiving it
  (the page's ``Date.now()`` against the client's ``time.time()``: one clock);
- the permission request is shown waiting while the editor holds its answer, then answered;
- the page, its data and its events refuse a request without the token, or with another
  one (403);
- a second browser killed mid-session changes nothing for the editor: the requests and
  responses it received, and the calls its updates fold to, equal what it gets from the same
  bridge without ``--inspect``, and the bridge exits 0 having said nothing but the URL;
- a pass-through session (both sides v1) is served the same way;
- without aiohttp, one line names the extra and the agent is never started (exit 2);
- the bridge's end of the pipe to the page's process never waits: what it cannot send is
  counted, never half sent, and the count goes with the next frame; the page's server says
  lines it was not given once, counts them at the end and shows them on the page.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import schema as v1s
from acp.client import ClientSideConnection as V1ClientConnection
from acp.connection import StreamEvent
from acp.transports import spawn_stdio_transport

from acp_toolcalls import ToolCallStore
from acp_toolcalls.sdk import store_observer
from tests.builds import child_env
from tests.interop.raw import bridged
from tests.interop.sessions import (
    PROMPT,
    TIMEOUT,
    SdkV1Client,
    prepared,
    session_document,
)

Hook = Callable[[], Awaitable[None]]


@dataclass
class Watched:
    """One v1 SDK session through ``bridge [--inspect]``, as the editor saw it."""

    url: str | None
    stop_reason: str
    received: list[dict[str, Any]]
    document: dict[str, Any]
    arrived: dict[str, float] = field(default_factory=dict)  # call id -> time.time() first seen
    returncode: int | None = None
    stderr: str = ""


class HeldClient:
    """The SDK's v1 client that approves, after ``hold`` returns."""

    def __init__(self, hold: Hook | None) -> None:
        self.approve = SdkV1Client("approve")
        self.hold = hold

    async def request_permission(self, **request: Any) -> v1s.RequestPermissionResponse:
        if self.hold is not None:
            await self.hold()
        return await self.approve.request_permission(**request)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        pass


async def watched_session(
    cwd: Path,
    *options: str,
    opened: Callable[[str], Awaitable[None]] | None = None,
    hold: Hook | None = None,
) -> Watched:
    """One prompt from the SDK's v1 client to the example agent behind ``bridge *options``;
    with ``--inspect``, ``opened(url)`` runs before the client says anything."""
    store = ToolCallStore(version="v1")
    received: list[dict[str, Any]] = []
    arrived: dict[str, float] = {}

    def record(event: StreamEvent) -> None:
        if event.direction.value != "incoming":
            return
        received.append(event.message)
        update = (event.message.get("params") or {}).get("update") or {}
        if event.message.get("method") == "session/update" and "toolCallId" in update:
            arrived.setdefault(update["toolCallId"], time.time())

    client = HeldClient(hold)
    command = bridged(*options)
    async with spawn_stdio_transport(*command, env=child_env(), stderr=asyncio.subprocess.PIPE) as (
        reader,
        writer,
        process,
    ):
        assert process.stderr is not None
        url = None
        if "--inspect" in options:
            first = (await asyncio.wait_for(process.stderr.readline(), TIMEOUT)).decode()
            assert " live at " in first, first
            url = first.split(" live at ")[1].split()[0]
            if opened is not None:
                await opened(url)
        rest = asyncio.ensure_future(process.stderr.read())
        observers = [store_observer(store), record]
        # The SDK annotates its own Client protocol; this client satisfies it at run time.
        conn = V1ClientConnection(client, writer, reader, observers=observers)  # type: ignore[arg-type]
        info = v1s.Implementation(name="t", version="0")
        await conn.initialize(protocol_version=1, client_info=info)
        session = await conn.new_session(cwd=str(cwd))
        text = v1s.TextContentBlock(type="text", text=PROMPT)
        response = await conn.prompt(session_id=session.session_id, prompt=[text])
        await conn.close()
    stderr = (await asyncio.wait_for(rest, TIMEOUT)).decode()
    document = session_document(store, session.session_id)
    return Watched(
        url, str(response.stop_reason), received, document, arrived, process.returncode, stderr
    )


def run(coroutine: Awaitable[Watched]) -> Watched:
    return asyncio.run(asyncio.wait_for(coroutine, 3 * TIMEOUT))


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def data_of(url: str) -> dict[str, Any]:
    base, token = url.split("/?token=")
    with urllib.request.urlopen(f"{base}/data?token={token}", timeout=10) as response:
        result: dict[str, Any] = json.loads(response.read())
    return result


def not_updates(watched: Watched) -> list[dict[str, Any]]:
    return [m for m in watched.received if m.get("method") != "session/update"]


def comparable(received: Any, cwd: Path) -> list[str]:
    """What the editor received, its session id made one name (the agent makes it up) and
    its working directory ``<cwd>``."""
    sessions: dict[str, str] = {}

    def rename(value: Any) -> Any:
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if key == "sessionId" and isinstance(item, str):
                    item = sessions.setdefault(item, f"session-{len(sessions)}")
                out[key] = rename(item)
            return out
        if isinstance(value, list):
            return [rename(item) for item in value]
        return value

    dumped = (json.dumps(rename(message), sort_keys=True) for message in received)
    return [text.replace(str(cwd), "<cwd>") for text in dumped]


# --------------------------------------------------------------------------------------------
# The browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from tests.report.test_inspect_browser import new_browser

    driver = new_browser()
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(driver: Any, script: str, what: str, timeout: float = 30) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.02).until(
        lambda d: d.execute_script(script), message=f"waiting for {what}"
    )


# Records, in wall-clock milliseconds, when each card is first in the document.
SEEN = """
window.seenAt = {};
const mark = () => {
  for (const card of document.querySelectorAll('#cards .card')) {
    if (!(card.dataset.id in window.seenAt)) window.seenAt[card.dataset.id] = Date.now();
  }
};
new MutationObserver(mark).observe(
  document.getElementById('cards'), {childList: true, subtree: true}
);
mark();
"""
ASK_STATES = "[...document.querySelectorAll('.ask')].map((a) => a.dataset.state)"


def open_live(driver: Any, url: str) -> None:
    driver.get(url)
    wait_for(driver, "return document.body.dataset.live || document.body.dataset.error", "events")
    assert driver.execute_script("return document.body.dataset.error") is None
    assert driver.execute_script("return document.body.dataset.live") == "connected"


def kill_browser(driver: Any) -> None:
    """SIGKILL to ChromeDriver's browser and everything it started, then to ChromeDriver."""
    root = driver.service.process.pid
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                parent = int(stat.rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    assert found, "the browser's processes"
    for pid in found:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    driver.service.process.kill()


# --------------------------------------------------------------------------------------------
# The tests


def test_a_live_session_is_on_the_page_as_it_happens(browser: Any, tmp_path: Path) -> None:
    from tests.report.test_inspect_browser import new_browser

    other = new_browser()
    seen: dict[str, Any] = {}

    async def opened(url: str) -> None:
        def both() -> None:
            for driver in (browser, other):
                open_live(driver, url)
            browser.execute_script(SEEN)

        await asyncio.to_thread(both)
        seen["url"] = url

    async def hold() -> None:
        url = seen["url"]

        def look() -> None:
            # The editor holds its answer: the request waits on the page, on both sides.
            wait_for(browser, f"return {ASK_STATES}.length === 2", "both sides' requests")
            seen["asked"] = browser.execute_script(f"return {ASK_STATES}")
            waiting = "document.querySelector('.ask.waiting .ask-answer').textContent"
            seen["waiting"] = browser.execute_script(f"return {waiting}")
            # Without the token, or with another one, nothing is served.
            base, token = url.split("/?token=")
            for path in ("/", "/data", "/events"):
                seen.setdefault("refused", []).append(
                    (status_of(base + path), status_of(f"{base}{path}?token={token[::-1]}"))
                )
            kill_browser(other)  # mid-session: the editor must not notice

        await asyncio.to_thread(look)

    cwd, plain_cwd = prepared(tmp_path / "watched"), prepared(tmp_path / "plain")
    watched = run(
        watched_session(
            cwd,
            "--inspect",
            "--agent-version",
            "2",
            opened=opened,
            hold=hold,
        )
    )
    plain = run(watched_session(plain_cwd, "--agent-version", "2"))

    # Each call on the page within 500 ms of the editor receiving it.
    shown = browser.execute_script("return window.seenAt")
    assert set(watched.arrived) == {call["toolCallId"] for call in watched.document["toolCalls"]}
    for call, arrived in watched.arrived.items():
        assert call in shown, f"{call} never shown"
        late = shown[call] - arrived * 1000
        assert late < 500, f"{call} shown {late:.0f} ms after the editor received it"
    # The permission request waited, then was answered (both sides).
    assert seen["asked"] == ["waiting", "waiting"]
    assert seen["waiting"] == "Answer: waiting for the answer"
    wait_for(browser, f"return {ASK_STATES}.every((s) => s === 'answered')", "the answers", 10)
    answers = browser.execute_script(
        "return [...document.querySelectorAll('.ask .ask-answer')].map((a) => a.textContent)"
    )
    assert all("selected" in answer for answer in answers), answers
    assert seen["refused"] == [(403, 403)] * 3
    # The browser killed mid-session changed nothing for the editor.
    assert watched.returncode == 0 == plain.returncode
    assert watched.stop_reason == plain.stop_reason == "end_turn"
    # Every request and response alike; the updates (how many depends on timing: coalescing,
    # the agent's subprocess output) fold to the same calls.
    assert comparable(not_updates(watched), cwd) == comparable(not_updates(plain), plain_cwd)
    assert comparable([watched.document], cwd) == comparable([plain.document], plain_cwd)
    said = watched.stderr.strip()
    assert said == plain.stderr.strip() == "", said


def test_a_pass_through_session_is_served_the_same_way(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    async def opened(url: str) -> None:
        seen["url"] = url

    async def hold() -> None:
        seen["data"] = await asyncio.to_thread(data_of, seen["url"])

    watched = run(
        watched_session(
            prepared(tmp_path / "work"),
            "--inspect",
            "--agent-version",
            "1",
            opened=opened,
            hold=hold,
        )
    )
    assert watched.returncode == 0 and watched.stop_reason == "end_turn"
    data = seen["data"]
    sides = [(side["name"], side["protocol"]) for side in data["sides"]]
    assert sides == [("client", "v1"), ("agent", "v1")], sides
    for position, side in enumerate(data["sides"]):  # the call, its request waiting
        assert [call["id"] for call in data["calls"][position]] == ["edit"]
        assert [(r["call"], r["answer"]) for r in side["asks"]] == [("edit", None)]


def test_without_aiohttp_one_line_names_the_extra_and_no_agent_starts(tmp_path: Path) -> None:
    blocker = tmp_path / "aiohttp"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('no aiohttp here')\n")
    started = tmp_path / "started"
    agent = [sys.executable, "-c", f"open({str(started)!r}, 'w')"]
    env = child_env()
    env["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{env['PYTHONPATH']}"
    done = subprocess.run(
        [*bridged("--inspect", agent=tuple(agent))],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=TIMEOUT,
    )
    assert done.returncode == 2
    said = done.stderr.decode().strip()
    assert said == (
        "acp-toolcalls bridge: --inspect needs the inspect extra: "
        "pip install 'acp-toolcalls[inspect]'"
    )
    assert not started.exists()


def test_lines_the_inbox_refused_are_said_once_counted_at_the_end_and_on_the_page(
    browser: Any,
) -> None:
    from acp_toolcalls.cli import _serve
    from acp_toolcalls.report.live import LiveModel
    from acp_toolcalls.report.page import live_page

    said: list[str] = []
    server = _serve.LiveServer(LiveModel(), live_page("flood"), say=said.append)
    line = b'{"jsonrpc":"2.0","method":"_x","params":{"pad":"%s"}}' % (b"x" * ((1 << 20) - 100))
    offered = [
        server.offer(line, direction="agent->proxy", protocol=2, when=1.0) for _ in range(12)
    ]
    assert offered == [True] * 8 + [False] * 4  # not started yet: nothing drains the inbox
    server.start()
    try:
        deadline = time.monotonic() + TIMEOUT
        while not said and time.monotonic() < deadline:
            time.sleep(0.01)
        assert said == [
            "the live page fell behind the session: lines it passed are not shown (the "
            "session is not slowed); the page may miss what they did"
        ]
        assert server.offer(b"{}", direction="agent->proxy", protocol=2, when=2.0)
        assert data_of(server.url)["unseen"] == 4
        open_live(browser, server.url)
        note = wait_for(browser, "return document.getElementById('unseen')?.textContent", "it")
        assert note.startswith("4 line(s) of the session were not shown"), note
    finally:
        server.stop()
    assert said[1:] == [
        "4 line(s) were not shown on the live page: they came faster than it could take them"
    ]


def test_the_feed_never_waits_drops_whole_frames_and_says_how_many() -> None:
    """Nobody reads the pipe: the feed returns anyway (a write that waited would hang the
    test), counts the lines it could not send, finishes a frame the pipe took in part before
    anything else, and sends the count with the next frame; every frame read back is whole."""
    from acp_toolcalls.cli._live_bridge import Feed, read_frame

    reading, writing = os.pipe()
    os.set_blocking(writing, False)
    os.set_blocking(reading, False)
    feed = Feed(writing)
    line = b'{"jsonrpc":"2.0","method":"_x","params":{"pad":"%s"}}' % (b"x" * 3000)
    offered = 0
    for number in range(100):  # far more than a pipe holds
        feed("agent->proxy", 2, [line, 7], float(number))  # a line and one skipped (7 bytes)
        offered += 2
    assert feed.unsent > 0

    def drained() -> bytes:
        data = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(reading, 1 << 16):
                data += chunk
        return data

    data = drained()
    feed("client->proxy", 1, [b"{}"], 101.0)  # the rest of a frame, then the count, then it
    offered += 1
    data += drained()
    feed.close()
    read = [read_frame(frame) for frame in data.split(b"\n")[:-1]]
    lines = [frame for frame in read if not isinstance(frame, int)]
    counts = [frame for frame in read if isinstance(frame, int)]
    assert counts == [feed.unsent] and len(lines) + feed.unsent == offered
    assert lines[-1] == ("client->proxy", 1, b"{}", 101.0)
    assert {frame[2] for frame in lines[:-1]} == {line, 7}
    assert all(frame[:2] == ("agent->proxy", 2) for frame in lines[:-1])


def test_a_watcher_gone_costs_the_feed_nothing() -> None:
    from acp_toolcalls.cli._live_bridge import Feed

    reading, writing = os.pipe()
    os.set_blocking(writing, False)
    os.close(reading)  # the page's process ended (a crash, a kill)
    feed = Feed(writing)
    feed("agent->proxy", 2, [b"{}"], 1.0)  # EPIPE: no exception, no signal
    assert feed.closed
    feed("agent->proxy", 2, [b"{}"], 2.0)  # and nothing more is tried
    feed.close()
