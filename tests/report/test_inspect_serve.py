"""``acp-toolcalls inspect --serve``: the live model, its server and its page.

- The live model (``report.live.LiveModel``): the events, applied in order, give the
  snapshot's history; a permission request is waiting until the event with its answer; a
  watcher that fell behind the ring of events is told to resynchronise, and the ring stays
  within its bytes whatever a watcher does; the held state stays within its budget.
- The server, over a real ``python -m acp_toolcalls.cli inspect --serve --follow LOG``: every
  request without the token, or with a wrong one, gets 403 (page, data, events); any method but
  GET gets 405; it listens on 127.0.0.1 only; Ctrl-C ends it with 130 and no traceback;
  without aiohttp it says which extra to install (exit 2); without ``--follow`` the finished
  log is served whole; the inbox between the reader and the server's thread refuses a line
  that does not fit; a watcher that stops reading its events while 16 MiB of lines come
  holds nothing up and, when it reads again, is told to resynchronise; a followed log that is
  rotated or truncated is read again from its start; a failure of the live view on a line is
  one line, said once, and the lines after it are still served.
- The page, in headless Chromium: a tool call appended to the log is on the page within
  500 ms (the page's own clock); a permission request is shown waiting, then answered once
  its answer is appended; two browsers watching both update; terminal output and content
  chunks come live, and the agent's text (a title, output, a chunk) is text, never markup; a
  page that missed events loads the snapshot and goes on with the next events.
"""

from __future__ import annotations

import base64
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from acp_toolcalls.report.live import LiveModel
from acp_toolcalls.store import Limits
from tests.builds import child_env

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "src" / "acp_toolcalls" / "data" / "demo-session.jsonl"
BRIDGE_LOG = ROOT / "tests" / "data" / "v1-client-v2-agent.jsonl"


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def fed(path: Path, **options: Any) -> LiveModel:
    model = LiveModel(**options)
    for data in lines_of(path):
        model.feed(data)
        model.publish()
    return model


def test_the_events_applied_in_order_give_the_snapshots_history() -> None:
    model = fed(BRIDGE_LOG)
    events = model.since(0)
    assert events is not None and [seq for seq, _ in events] == list(range(1, model.seq + 1))
    held: dict[tuple[int, str, str], dict[str, list[Any]]] = {}
    for _, data in events:
        for side, index, entries, values, items in json.loads(data)["calls"]:
            call = held.setdefault((side, index["session"], index["id"]), {})
            for name, added in (("entries", entries), ("values", values), ("items", items)):
                call.setdefault(name, []).extend(added)
    snapshot = json.loads(model.snapshot())
    assert snapshot["seq"] == model.seq and snapshot["lineCount"] == len(lines_of(BRIDGE_LOG))
    whole = {
        (side, call["session"], call["id"]): call["loaded"]
        for side, calls in enumerate(snapshot["calls"])
        for call in calls
    }
    assert held == whole and len(whole) == 6  # three calls, on both sides


def test_a_permission_request_waits_until_its_answer() -> None:
    model = LiveModel()
    answered_on = None
    for data in lines_of(BRIDGE_LOG):
        model.feed(data)
        seq = model.publish()
        event = json.loads(model.since(seq - 1)[0][1]) if seq else {}  # type: ignore[index]
        for side, index, request in event.get("asks", []):
            if request["answer"] is None:
                assert answered_on is None
                snapshot = json.loads(model.snapshot())
                assert snapshot["sides"][side]["asks"][index]["answer"] is None
            elif answered_on is None:
                answered_on = request["answer"]["l"]
    assert answered_on == 23  # the editor's answer, on the client side
    agent = next(side for side in json.loads(model.snapshot())["sides"] if side["name"] == "agent")
    assert agent["asks"][0]["answer"]["by"] == "the editor, through the proxy"  # as inspect says


def test_a_watcher_behind_the_ring_is_resynchronised_and_the_ring_stays_bounded() -> None:
    model = LiveModel(events_bytes=4096)
    stalled = 0  # a watcher that never reads: only this number
    sizes = []
    for round_ in range(20):
        for data in lines_of(DEMO):
            model.feed(data.replace(b"toolu_", b"toolu_%d_" % round_))
            model.publish()
            sizes.append(model._events_size)
    assert max(sizes) <= 4096 + max(len(data) for _, data in model._events)
    assert model.since(stalled) is None  # dropped: a snapshot next
    assert model.since(model.seq) == []
    assert model.since(model.seq + 5) is None
    recent = model.since(model.seq - 1)
    assert recent is not None and [seq for seq, _ in recent] == [model.seq]


def test_the_held_state_stays_within_its_budget() -> None:
    limits = Limits(max_store_bytes=64 * 1024)
    model = LiveModel(limits=limits)
    forgot = 0
    for round_ in range(40):
        for data in lines_of(DEMO):
            model.feed(data.replace(b"toolu_", b"toolu_%d_" % round_))
            seq = model.publish()
            forgot += json.loads(model.since(seq - 1)[0][1]).get("forgot", 0)  # type: ignore[index]
    assert forgot > 0
    assert model._held <= 64 * 1024
    assert len(model.snapshot()) < 4 * 64 * 1024


def summaries(model: LiveModel) -> list[dict[str, Any]]:
    return [side["summary"] for side in json.loads(model.snapshot())["sides"]]


@pytest.mark.parametrize("batch", [1, 3, 7])
def test_the_summaries_kept_as_calls_change_are_the_ones_counted_from_every_call(
    batch: int,
) -> None:
    """Published every ``batch`` lines, the sides' counts (by status, by kind, the open calls)
    are the ones of a model that looks at every call once, at the end; with a budget that
    makes it forget calls too (their summaries are made again)."""
    logs = [BRIDGE_LOG, DEMO, ROOT / "tests" / "data" / "v2-client-v1-agent-cancel.jsonl"]
    for path in logs:
        for limits in (None, Limits(max_store_bytes=16 * 1024)):
            lines = lines_of(path) * (1 if limits is None else 6)
            stepped, whole = LiveModel(limits=limits), LiveModel(limits=limits)
            for start in range(0, len(lines), batch):
                for data in lines[start : start + batch]:
                    stepped.feed(data)
                    whole.feed(data)
                stepped.publish()
            whole.publish()
            assert summaries(stepped) == summaries(whole), (path.name, limits)


# ---------------------------------------------------------------------------------------------
# The server, in a subprocess


class Served(NamedTuple):
    process: subprocess.Popen[bytes]
    url: str
    port: int
    token: str


@contextmanager
def serving(log: Path, *, follow: bool = True) -> Iterator[Served]:
    """``inspect --serve [--follow] log`` running; Ctrl-C at the end, which must exit 130
    quietly."""
    command = [sys.executable, "-m", "acp_toolcalls.cli", "inspect", "--serve", str(log)]
    process = subprocess.Popen(
        command + (["--follow"] if follow else []),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    assert process.stderr is not None
    first = process.stderr.readline().decode()
    assert "serving" in first, first
    url = first.split(" live at ")[1].split()[0]
    port = int(url.split(":")[2].split("/")[0])
    try:
        yield Served(process, url, port, url.split("token=")[1])
    finally:
        process.send_signal(signal.SIGINT)
        try:
            rest = process.communicate(timeout=20)[1].decode()
        finally:
            process.kill()
        assert process.returncode == 130, rest
        assert "Traceback" not in rest


def status_of(url: str, method: str = "GET") -> int:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def append(log: Path, *lines: bytes) -> None:
    with log.open("ab") as out:
        out.write(b"".join(line + b"\n" for line in lines))


@pytest.fixture
def demo_log(tmp_path: Path) -> Path:
    log = tmp_path / "demo.jsonl"
    log.write_bytes(DEMO.read_bytes())
    return log


def test_every_request_needs_the_token_and_only_get_is_served(demo_log: Path) -> None:
    with serving(demo_log) as served:
        base = f"http://127.0.0.1:{served.port}"
        for path in ("/", "/data", "/events", "/nothing"):
            assert status_of(base + path) == 403, path
            assert status_of(f"{base}{path}?token=wrong") == 403, path
            assert status_of(f"{base}{path}?token={served.token}x") == 403, path
            assert status_of(f"{base}{path}?token={served.token[:-1]}") == 403, path
        for path in ("/", "/data"):
            with urllib.request.urlopen(f"{base}{path}?token={served.token}", timeout=10) as r:
                assert r.status == 200
                assert r.headers.get("Access-Control-Allow-Origin") is None
        for method in ("POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"):
            for path in ("/", "/data", "/events"):
                assert status_of(f"{base}{path}?token={served.token}", method) == 405
            assert status_of(f"{base}/data", method) == 403


def test_it_listens_on_127_0_0_1_only(demo_log: Path) -> None:
    with serving(demo_log) as served:
        assert served.url.startswith(f"http://127.0.0.1:{served.port}/?token=")
        assert len(served.token) >= 43  # token_urlsafe(32)
        listening = [
            fields[1]
            for fields in (
                row.split() for row in Path("/proc/net/tcp").read_text().splitlines()[1:]
            )
            if fields[3] == "0A" and int(fields[1].split(":")[1], 16) == served.port
        ]
        assert listening == [f"0100007F:{served.port:04X}"]
        assert not [
            row
            for row in Path("/proc/net/tcp6").read_text().splitlines()[1:]
            if row.split()[3] == "0A" and int(row.split()[1].split(":")[1], 16) == served.port
        ]
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.2", served.port), timeout=5).close()


def test_without_aiohttp_one_line_names_the_extra(demo_log: Path) -> None:
    blocked = (
        "import sys; sys.modules['aiohttp'] = None; from acp_toolcalls.cli import main; "
        f"sys.exit(main(['inspect', '--serve', {str(demo_log)!r}]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocked], capture_output=True, env=child_env(), timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        "acp-toolcalls inspect: --serve needs the inspect extra: "
        "pip install 'acp-toolcalls[inspect]'"
    ]


# ---------------------------------------------------------------------------------------------
# The page, in headless Chromium

NEW_CALL = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_7f3a9c21",'
    b'"update":{"sessionUpdate":"tool_call_update","toolCallId":"%s","title":"Appended live",'
    b'"kind":"read","status":"pending"}}}'
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from tests.report.test_inspect_browser import new_browser

    driver = new_browser()
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(driver: Any, script: str, what: str, timeout: float = 60) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.02).until(
        lambda d: d.execute_script(script), message=f"waiting for {what}"
    )


def open_live(driver: Any, url: str) -> None:
    driver.get(url)
    wait_for(driver, "return document.body.dataset.live || document.body.dataset.error", "events")
    assert driver.execute_script("return document.body.dataset.error") is None
    wait_for(driver, "return document.body.dataset.ready", "the cards")


def card_ids(driver: Any) -> list[str]:
    return list(
        driver.execute_script(
            "return [...document.querySelectorAll('#cards .card')].map((c) => c.dataset.id)"
        )
    )


# Records, in the page's clock, when a card with this id is first in the document.
WATCH = """
const id = arguments[0];
window.seen = null;
new MutationObserver((changes, observer) => {
  if (document.querySelector(`#cards .card[data-id="${id}"]`)) {
    window.seen = performance.now();
    observer.disconnect();
  }
}).observe(document.getElementById("cards"), { childList: true, subtree: true });
return performance.now();
"""


def test_a_tool_call_appended_to_the_log_is_on_the_page_within_500_ms(
    browser: Any, demo_log: Path
) -> None:
    with serving(demo_log) as served:
        open_live(browser, served.url)
        assert "toolu_01_read" in card_ids(browser)
        assert browser.execute_script("return document.body.dataset.live") == "connected"
        browser.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
        for number in range(3):
            call = b"live_%d" % number
            start = browser.execute_script(WATCH, call.decode())
            append(demo_log, NEW_CALL % call)
            seen = wait_for(browser, "return window.seen", f"{call!r} on the page", 10)
            assert seen - start < 500, f"{call!r} shown after {seen - start:.0f} ms"
        assert {"live_0", "live_1", "live_2"} <= set(card_ids(browser))
        title = browser.execute_script(
            "return document.querySelector('.card[data-id=\"live_2\"] .title').textContent"
        )
        assert title == "Appended live"


def test_a_permission_request_waits_then_is_answered(browser: Any, tmp_path: Path) -> None:
    lines = lines_of(BRIDGE_LOG)
    log = tmp_path / "bridge.jsonl"
    log.write_bytes(b"".join(line + b"\n" for line in lines[:22]))  # the answers: 23, 25
    states = "return [...document.querySelectorAll('.ask')].map((a) => a.dataset.state)"
    with serving(log) as served:
        open_live(browser, served.url)
        wait_for(browser, f"{states}.length === 2", "both sides' requests")
        assert browser.execute_script(states) == ["waiting", "waiting"]
        waiting = browser.execute_script(
            "const a = document.querySelector('.ask.waiting');"
            "return [getComputedStyle(a).outlineStyle, a.querySelector('.ask-answer').textContent]"
        )
        assert waiting == ["solid", "Answer: waiting for the answer"]
        append(log, *lines[22:23])  # the editor answers
        wait_for(browser, f"{states}.includes('answered')", "the editor's answer")
        assert sorted(browser.execute_script(states)) == ["answered", "waiting"]
        append(log, *lines[23:])
        wait_for(browser, f"{states}.every((s) => s === 'answered')", "the proxy's answer")
        answers = browser.execute_script(
            "return [...document.querySelectorAll('.ask .ask-answer')].map((a) => a.textContent)"
        )
        assert all("selected “Allow”" in answer for answer in answers), answers
        assert not browser.execute_script("return document.querySelector('.ask.waiting')")


def test_two_browsers_watching_both_update(browser: Any, demo_log: Path) -> None:
    from tests.report.test_inspect_browser import new_browser

    other = new_browser()
    try:
        with serving(demo_log) as served:
            for driver in (browser, other):
                open_live(driver, served.url)
                driver.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
            append(demo_log, NEW_CALL % b"seen_by_both")
            for driver in (browser, other):
                wait_for(
                    driver,
                    "return document.querySelector('.card[data-id=\"seen_by_both\"]')",
                    "the new call",
                    10,
                )
    finally:
        other.quit()


def test_a_finished_log_is_served_whole_without_follow(demo_log: Path) -> None:
    with serving(demo_log, follow=False) as served:
        base = f"http://127.0.0.1:{served.port}"
        deadline = time.monotonic() + 30
        while True:
            with urllib.request.urlopen(f"{base}/data?token={served.token}", timeout=10) as r:
                data = json.loads(r.read())
            if data["lineCount"] == len(lines_of(DEMO)) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert data["lineCount"] == len(lines_of(DEMO))
        assert [card["id"] for card in data["cards"]][:2] == ["toolu_01_read", "toolu_02_grep"]
        with urllib.request.urlopen(f"{base}/?token={served.token}", timeout=10) as r:
            page = r.read().decode()
        assert "connect-src 'self'" in page and "<script src" not in page


def test_follow_and_port_go_with_serve(capsys: pytest.CaptureFixture[str]) -> None:
    from acp_toolcalls.cli import main

    assert main(["inspect", "--follow", str(DEMO)]) == 2
    assert "--follow and --port go with --serve" in capsys.readouterr().err


def test_the_inbox_refuses_what_does_not_fit() -> None:
    from acp_toolcalls.cli import _serve

    server = _serve.LiveServer(LiveModel(), "page")  # not started: nothing drains it
    big = b"x" * (_serve.INBOX_BYTES // 4)
    assert [server.offer(big) for _ in range(5)] == [True, True, True, True, False]
    assert server.dropped == 1


def test_a_stalled_watcher_is_resynchronised_not_buffered(demo_log: Path) -> None:
    chunk = (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_7f3a9c21",'
        b'"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%s"}}}}'
    )
    with serving(demo_log) as served:
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(("127.0.0.1", served.port))
        stalled.sendall(
            b"GET /events?token=%s&since=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            % served.token.encode()
        )
        for batch in range(16):  # 16 MiB of lines: twice the events kept for watchers
            append(demo_log, *[chunk % (b"%d" % batch * 5000) for _ in range(200)])
        append(demo_log, NEW_CALL % b"after_the_flood")
        base = f"http://127.0.0.1:{served.port}/data?token={served.token}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with urllib.request.urlopen(base, timeout=30) as response:
                if b"after_the_flood" in response.read():
                    break
            time.sleep(0.1)
        else:
            pytest.fail("the server did not take the new lines while a watcher was stalled")
        stalled.settimeout(30)
        received = b""
        while b"event: resync" not in received:
            data = stalled.recv(1 << 20)
            assert data, "the stalled watcher's stream ended without a resync"
            received = received[-64:] + data
        stalled.close()


def data_has(served: Served, text: bytes, seconds: float = 30) -> bool:
    url = f"http://127.0.0.1:{served.port}/data?token={served.token}"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with urllib.request.urlopen(url, timeout=10) as response:
            if text in response.read():
                return True
        time.sleep(0.05)
    return False


def test_a_rotated_or_truncated_log_is_read_again_from_its_start(demo_log: Path) -> None:
    with serving(demo_log) as served:
        assert data_has(served, b"toolu_06_suite")
        rotated = demo_log.with_suffix(".new")
        rotated.write_bytes(NEW_CALL % b"after_rotation" + b"\n")
        rotated.replace(demo_log)
        assert data_has(served, b"after_rotation")
        demo_log.write_bytes(NEW_CALL % b"cut" + b"\n")  # shorter: truncated
        assert data_has(served, b'"cut"')


def update(body: str) -> bytes:
    return (
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_7f3a9c21",'
        f'"update":{body}}}}}'
    ).encode()


def test_terminal_output_and_chunks_come_live_and_agent_text_is_never_markup(
    browser: Any, demo_log: Path
) -> None:
    markup = '<img src=x onerror="document.body.dataset.pwned=1">'
    first, second = (base64.b64encode(text).decode() for text in (b"first\r\n", b"<b>2</b>\r\n"))
    with serving(demo_log) as served:
        open_live(browser, served.url)
        browser.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
        append(
            demo_log,
            update(
                '{"sessionUpdate":"tool_call_update","toolCallId":"markup_call","title":'
                + json.dumps(markup)
                + ',"kind":"execute","status":"in_progress",'
                '"content":[{"type":"terminal","terminalId":"term_live"}]}'
            ),
            update(
                '{"sessionUpdate":"terminal_update","terminalId":"term_live","command":"echo",'
                f'"output":{{"data":"{first}"}}}}'
            ),
        )
        card = '.card[data-id="markup_call"]'
        output = f"document.querySelector('{card} pre.terminal')"
        wait_for(browser, f"return {output} && {output}.textContent.includes('first')", "output")
        append(
            demo_log,
            update(
                f'{{"sessionUpdate":"terminal_output_chunk","terminalId":"term_live","data":"{second}"}}'
            ),
            update(
                '{"sessionUpdate":"tool_call_content_chunk","toolCallId":"markup_call",'
                '"content":{"type":"content","content":{"type":"text","text":"<i>chunk</i>"}}}'
            ),
        )
        wait_for(browser, f"return {output}.textContent.includes('<b>2</b>')", "the output chunk")
        wait_for(
            browser,
            f"return document.querySelector('{card}').textContent.includes('<i>chunk</i>')",
            "the content chunk",
        )
        title = browser.execute_script(
            f"return document.querySelector('{card} .title').textContent"
        )
        assert title == markup
        assert not browser.execute_script(
            "return document.querySelector('#cards img, #cards b, #cards i')"
        )
        assert browser.execute_script("return document.body.dataset.pwned") is None


def test_wire_lines_with_their_direction_read_as_their_records() -> None:
    """What ``bridge --inspect`` will feed: each wire line with its direction and time."""
    from acp_toolcalls.records import read_record

    records = fed(BRIDGE_LOG)
    wire = LiveModel()
    for data in lines_of(BRIDGE_LOG):
        record = read_record(json.loads(data))
        message = json.dumps(record.message, separators=(",", ":")).encode()
        wire.feed(message, direction=record.direction, protocol=record.protocol, when=record.time)
    wire.publish()
    mine, theirs = json.loads(wire.snapshot()), json.loads(records.snapshot())
    assert [side["summary"] for side in mine["sides"]] == [
        side["summary"] for side in theirs["sides"]
    ]
    assert mine["cards"] == theirs["cards"] and mine["findings"] == theirs["findings"]


def test_a_failure_of_the_live_view_is_one_line_and_the_serving_goes_on() -> None:
    from acp_toolcalls.cli import _serve

    class Failing(LiveModel):
        def feed(self, data: bytes | int, **where: Any) -> None:
            if data == b"boom":
                raise ValueError("a bug")
            super().feed(data, **where)

    said: list[str] = []
    server = _serve.LiveServer(Failing(), "page", say=said.append)
    server.start()
    try:
        for data in [b"boom", *lines_of(DEMO)[:5], b"boom", *lines_of(DEMO)[5:]]:
            server.offer_wait(data)
        base = f"http://127.0.0.1:{server.port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"{base}/data?token={server.token}", timeout=10) as r:
                if json.loads(r.read())["lineCount"] == len(lines_of(DEMO)):
                    break
            time.sleep(0.05)
        assert said == ["the live view failed on a line (ValueError: a bug); this is a bug"]
    finally:
        server.stop()


def test_a_page_that_missed_events_loads_the_snapshot_and_goes_on(
    browser: Any, demo_log: Path
) -> None:
    with serving(demo_log) as served:
        open_live(browser, served.url)
        browser.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
        cards = browser.execute_script("return R.cards.length")
        # An event from further on than the next one: the page missed some, and resyncs.
        browser.execute_async_script(
            "const done = arguments[0];"
            "liveBusy = liveBusy.then(() => take({ seq: R.seq + 5 })).then(() => done(R.seq));"
        )
        assert browser.execute_script("return R.cards.length") == cards
        append(demo_log, NEW_CALL % b"after_resync")
        wait_for(
            browser,
            "return document.querySelector('.card[data-id=\"after_resync\"]')",
            "a call after the resync",
            10,
        )
        assert browser.execute_script("return R.cards.length") == cards + 1


def test_input_that_is_no_log_is_said_once_and_the_next_lines_read() -> None:
    said: list[str] = []
    model = LiveModel(name="x.jsonl", report=said.append)
    for number in range(10):
        model.feed(b'{"user":"ana","n":%d}' % number)
    model.feed(NEW_CALL % b"after_the_noise")
    model.publish()
    assert len(said) == 1 and "is not a log of ACP messages" in said[0]
    assert b"after_the_noise" in model.snapshot()
