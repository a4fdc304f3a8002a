"""The server of a live ``inspect`` page (``inspect --serve``, and ``bridge --inspect``'s
watcher process, ``_live_bridge``).

Rules this module owns (issue 31):

- aiohttp (the ``inspect`` extra) is imported here only, when a server starts; without it,
  ``MissingExtra`` says which extra to install (the command prints it, exit 2).
- The server runs in a thread of its own with its own event loop: whoever feeds it never
  waits for it. Lines are handed over through an inbox bounded in bytes (``offer`` refuses a
  line that does not fit, and counts it; ``offer_wait`` waits for room); the loop feeds them to
  the ``report.live.LiveModel``, which only this thread touches, as they come, and publishes
  what they changed at most every ``PUBLISH_SECONDS`` (a publication looks at every call
  kept), and before every snapshot (so that no change is both in a snapshot and an event).
- Bound to 127.0.0.1 only, on a free port unless one is given. Every request needs the
  token (``secrets.token_urlsafe(32)``, compared with ``hmac.compare_digest``): without it,
  403, whatever the path or method. Then GET only (any other method: 405); no CORS header;
  the page can send nothing anywhere (it only reads ``/data`` and ``/events``).
- Routes: ``/`` the page (``report.page.live_page``), ``/data`` the model's snapshot,
  ``/events`` server-sent events: each event the model published after the watcher's
  ``Last-Event-ID`` (or ``since``), or ``resync`` when those are no longer kept. A watcher is a
  sequence number and the one event being written: a slow one waits on its socket (aiohttp
  stops at its write buffer's high mark), then resynchronises; it never grows the server.
- A wire line offered with its direction (``bridge --inspect``) is made its ``bridge --log``
  record in this thread, not by whoever offers it; with ``redact``, its credentials replaced
  as the log replaces them (``records.Redactor``, fed every line in order).
- ``start_server`` is how a command starts one: it says in one line why it could not (the
  extra missing, the port not bound: the command then exits 2), and otherwise the URL, with
  its token, once.
- Lines refused by a full inbox are not shown: the first time, and with their count when the
  server stops, one line says so (the session they passed was not slowed).
- A failure of the live view (a bug: the model on a line, a request's handler) is said once,
  in one line (``say``), never as a traceback, and the serving goes on: whoever feeds the
  server never sees it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import secrets
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, cast

from ..records import Direction, Redactor, log_line, skipped_line
from ..report import printable
from ..report.live import LiveModel

__all__ = ["INBOX_BYTES", "PUBLISH_SECONDS", "LiveServer", "MissingExtra", "start_server"]

INBOX_BYTES = 8 * 1024 * 1024
"""Bytes of lines waiting for the server's thread, at most."""
PUBLISH_SECONDS = 0.05
"""The shortest time between two events published (what changed meanwhile is one event)."""
_BATCH_BYTES = 1 << 20  # lines folded at a time before the loop serves requests again
_KEEPALIVE_SECONDS = 15.0
_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


class MissingExtra(Exception):
    """aiohttp cannot be imported: the ``inspect`` extra is not installed."""


def _web() -> Any:
    try:
        from aiohttp import web
    except ImportError as exc:
        raise MissingExtra("needs the inspect extra: pip install 'acp-toolcalls[inspect]'") from exc
    return web


_Line = tuple["bytes | int", "str | None", "int | None", "float | None"]


def _stderr(text: str) -> None:
    print(printable(text), file=sys.stderr, flush=True)


def _record(
    redactor: Redactor | None, direction: str, protocol: int | None, data: bytes | int, now: float
) -> bytes:
    """The ``bridge --log`` record of a wire line (or of one skipped), without its newline."""
    way = cast(Direction, direction)
    if not isinstance(data, bytes):
        return skipped_line(way, protocol, data, now)[:-1]
    if redactor is None:
        return log_line(way, protocol, data, now)[:-1]
    return redactor.record(way, protocol, data, now)[:-1]


class LiveServer:
    """A ``LiveModel`` served to browsers from a thread of its own."""

    def __init__(
        self,
        model: LiveModel,
        page: str,
        *,
        port: int = 0,
        redact: bool = False,
        say: Callable[[str], None] = _stderr,
    ) -> None:
        self._web = _web()
        self._redactor = Redactor() if redact else None
        self._say = say
        self._failed_once = False
        self.model = model
        self.page = page.encode("utf-8")
        self.token = secrets.token_urlsafe(32)
        self.port = port
        self.dropped = 0  # lines refused because the inbox was full
        self._inbox: deque[_Line] = deque()
        self._inbox_bytes = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tick: asyncio.Future[None] | None = None
        self._started = threading.Event()
        self._failed: BaseException | None = None
        self._runner: Any = None
        self._scheduled = False
        self._published_at = 0.0  # the loop's time of the last publication
        self._publish_pending = False
        self._said_dropped = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    # -- the feeding side (any thread) -------------------------------------------------------

    def offer(
        self,
        data: bytes | int,
        *,
        direction: str | None = None,
        protocol: int | None = None,
        when: float | None = None,
    ) -> bool:
        """Hand one line to the server; ``False`` (and counted) when the inbox is full."""
        if self._put((data, direction, protocol, when)):
            return True
        self.dropped += 1
        return False

    def offer_wait(self, data: bytes | int, **where: Any) -> None:
        """``offer``, waiting for room (a file read is no live traffic: nothing is dropped)."""
        line = (data, where.get("direction"), where.get("protocol"), where.get("when"))
        while not self._put(line):
            threading.Event().wait(0.01)

    def _put(self, line: _Line) -> bool:
        data, direction, protocol, when = line
        size = len(data) if isinstance(data, bytes) else 64
        with self._lock:
            if self._inbox and self._inbox_bytes + size > INBOX_BYTES:
                return False
            self._inbox.append((data, direction, protocol, when))
            self._inbox_bytes += size
            wake = not self._scheduled
            self._scheduled = True
        if wake and self._loop is not None:
            self._loop.call_soon_threadsafe(self._drain)
        return True

    def start(self) -> None:
        """Bind and serve in a thread of its own; raises the ``OSError`` binding met."""
        self._thread = threading.Thread(target=self._run, name="inspect-server", daemon=True)
        self._thread.start()
        self._started.wait()
        if self._failed is not None:
            raise self._failed

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        with contextlib.suppress(RuntimeError, TimeoutError):  # the loop already ended
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(5)
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        if self.dropped:
            self._say(
                f"{self.dropped} line(s) were not shown on the live page: they came faster "
                "than it could take them"
            )

    # -- the server's thread -----------------------------------------------------------------

    def _run(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:  # binding failed: the starter raises it
            self._failed = exc
            self._started.set()
            loop.close()
            return
        self._started.set()
        if self._inbox:
            loop.call_soon(self._drain)
        try:
            loop.run_forever()
        finally:
            loop.close()

    def _fault(self, what: str) -> None:
        if not self._failed_once:
            self._failed_once = True
            self._say(f"{what}; this is a bug")

    async def _serve(self) -> None:
        web = self._web
        # aiohttp's own logging of a failed request would print a traceback: one line instead.
        quiet = logging.getLogger("aiohttp")
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
        asyncio.get_running_loop().set_exception_handler(
            lambda loop, context: self._fault(f"the live server failed: {context.get('message')}")
        )
        guard = self._guard

        async def guarded(request: Any, handler: Any) -> Any:
            return await guard(request, handler)

        app = web.Application(middlewares=[web.middleware(guarded)])
        app.router.add_get("/", self._page, allow_head=False)
        app.router.add_get("/data", self._data, allow_head=False)
        app.router.add_get("/events", self._events, allow_head=False)
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        self._tick = asyncio.get_running_loop().create_future()

    async def _shutdown(self) -> None:
        tick, self._tick = self._tick, None  # the watchers end
        if tick is not None and not tick.done():
            tick.set_result(None)
        await self._runner.cleanup()

    def _drain(self) -> None:
        """Feed the lines waiting to the model, a batch at a time, and wake the watchers."""
        taken = 0
        with self._lock:
            lines = []
            while self._inbox and taken < _BATCH_BYTES:
                line = self._inbox.popleft()
                lines.append(line)
                taken += len(line[0]) if isinstance(line[0], bytes) else 64
            self._inbox_bytes -= taken
            more = bool(self._inbox)
            self._scheduled = more
        if self.dropped and not self._said_dropped:
            self._said_dropped = True
            self._say(
                "the live page fell behind the session: lines it passed are not shown (the "
                "session is not slowed); the page may miss what they did"
            )
        if self.dropped != self.model.unseen:
            self.model.note_unseen(self.dropped)  # the page says so too
        redactor = self._redactor
        for data, direction, protocol, when in lines:
            if direction is not None:  # the line's record: what the log would hold
                data = _record(redactor, direction, protocol, data, when or 0.0)
                direction = None
            try:
                self.model.feed(data, direction=direction, protocol=protocol, when=when)
            except Exception as exc:  # a bug of the live view must not end the serving
                self._fault(f"the live view failed on a line ({type(exc).__name__}: {exc})")
        loop = asyncio.get_running_loop()
        wait = self._published_at + PUBLISH_SECONDS - loop.time()
        if wait <= 0:
            self._publish()
        elif not self._publish_pending:
            self._publish_pending = True
            loop.call_later(wait, self._publish)
        if more:
            loop.call_soon(self._drain)

    def _publish(self) -> None:
        """One event of what the lines fed since the last one changed; the watchers woken."""
        self._publish_pending = False
        self._published_at = asyncio.get_running_loop().time()
        before = self.model.seq
        try:
            self.model.publish()
        except Exception as exc:
            self._fault(f"the live view failed ({type(exc).__name__}: {exc})")
        if self.model.seq != before and self._tick is not None and not self._tick.done():
            self._tick.set_result(None)
            self._tick = asyncio.get_running_loop().create_future()

    async def _guard(self, request: Any, handler: Any) -> Any:
        web = self._web
        given = request.query.get("token", "")
        if not hmac.compare_digest(given.encode("utf-8"), self.token.encode("utf-8")):
            return web.Response(
                status=403, text="403: the URL's token is needed\n", headers=_HEADERS
            )
        if request.method != "GET":
            return web.Response(
                status=405, text="405: GET only\n", headers={**_HEADERS, "Allow": "GET"}
            )
        response = await handler(request)
        response.headers.update(_HEADERS)
        return response

    async def _page(self, request: Any) -> Any:
        return self._web.Response(body=self.page, content_type="text/html", charset="utf-8")

    async def _data(self, request: Any) -> Any:
        self._publish()  # what the snapshot holds, no later event repeats
        return self._web.Response(body=self.model.snapshot(), content_type="application/json")

    async def _events(self, request: Any) -> Any:
        web = self._web
        try:
            cursor = int(request.headers.get("Last-Event-ID") or request.query.get("since", "0"))
        except ValueError:
            cursor = 0
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        with contextlib.suppress(ConnectionError, asyncio.CancelledError):
            while self._tick is not None:
                events = self.model.since(cursor)
                if events is None:
                    cursor = self.model.seq
                    await response.write(b"event: resync\ndata: {}\n\n")
                    continue
                for seq, data in events:
                    await response.write(b"id: %d\ndata: %s\n\n" % (seq, data))
                    cursor = seq
                if events:
                    continue
                try:
                    await asyncio.wait_for(asyncio.shield(self._tick), _KEEPALIVE_SECONDS)
                    if self._tick is None:
                        break
                except asyncio.TimeoutError:
                    await response.write(b": still here\n\n")
        return response


def start_server(
    model: LiveModel,
    title: str,
    *,
    port: int,
    prog: str,
    option: str,
    what: str,
    until: str,
    redact: bool = False,
) -> LiveServer | None:
    """A started ``LiveServer`` of ``model`` (its page titled ``title``) whose URL was said on
    stderr ("serving ``what`` live at URL (``until``)"), or ``None`` once one line said why
    there is none, naming the command's ``option`` (the command then exits 2)."""
    from ..report.page import live_page

    def say(text: str) -> None:
        _stderr(f"{prog}: {text}")

    try:
        server = LiveServer(model, live_page(title), port=port, redact=redact, say=say)
    except MissingExtra as exc:
        say(f"{option} {exc}")
        return None
    try:
        server.start()
    except OSError as exc:
        say(f"error: cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}")
        return None
    say(f"serving {what} live at {server.url} ({until})")
    return server
