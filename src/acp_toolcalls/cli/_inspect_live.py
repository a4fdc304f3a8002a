"""``acp-toolcalls inspect --serve [--follow] LOG``: a log's report, live in the browser.

Rules this module owns (issue 31):

- The log is read as ``replay --follow`` reads it (``_follow.FollowReader``: complete lines,
  numbered from 1, an overlong line dropped as it is read) and every line is handed to the
  server (``_serve.LiveServer``), whose thread folds it into its ``report.live.LiveModel``.
- Without ``--follow`` the log is read to its end and served until Ctrl-C; with it, a regular
  file is polled every ``POLL_SECONDS`` for new lines. A file replaced (log rotation) or
  truncated is said once on stderr and read again from its start; its lines come after the
  ones already shown (the page is not reset: the live view numbers the lines it was given).
- The URL, with its token, is printed once on stderr; a note per line read badly, as
  ``inspect`` prints them. Without aiohttp: one line naming the extra, exit 2. A port that
  cannot be bound: one line, exit 2. Ctrl-C ends it quietly (exit 130, as ``inspect``).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any

from ..models import VersionChoice
from ..records import Side
from ..report import printable
from ..report.live import LiveModel
from ._follow import FollowReader, changed, is_regular
from .lines import DEMO, ReadError, open_log, shown

__all__ = ["POLL_SECONDS", "serve"]

PROG = "acp-toolcalls inspect"
POLL_SECONDS = 0.05
"""How often ``--follow`` looks for new lines in a file it has read to the end."""


def _say(text: str) -> None:
    print(printable(text), file=sys.stderr, flush=True)


def serve(
    name: str | None,
    *,
    demo: bool,
    follow: bool,
    port: int,
    version: VersionChoice,
    side: Side | None,
    max_line_bytes: int,
) -> int:
    """Serve the log's live report until Ctrl-C; the exit code."""
    from ._serve import start_server

    title = os.path.basename(DEMO if demo else ("stdin" if name in (None, "-") else name))
    model = LiveModel(
        name=title,
        version=version,
        side=side,
        max_line_bytes=max_line_bytes,
        report=_say,
    )
    server = start_server(
        model, title, port=port, prog=PROG, option="--serve", what=title, until="Ctrl-C to stop"
    )
    if server is None:
        return 2
    try:
        return _read(server, name, demo, follow, max_line_bytes)
    finally:
        server.stop()


def _read(server: Any, name: str | None, demo: bool, follow: bool, max_line_bytes: int) -> int:
    try:
        with open_log(name, demo) as stream, contextlib.ExitStack() as reopened:
            regular = follow and name not in (None, "-") and not demo and is_regular(stream)
            reader = FollowReader(stream, max_line_bytes)
            while True:
                lines = reader.poll()
                if reader.eof and not regular:
                    lines += reader.finish()
                for _, data in lines:
                    server.offer_wait(data)
                if not reader.eof:
                    continue
                if not regular:
                    break
                what = changed(str(name), stream)
                if what is not None:
                    if what.startswith("was replaced"):
                        try:
                            fresh = open(str(name), "rb")  # noqa: SIM115 (closed by the stack)
                        except OSError:
                            threading.Event().wait(POLL_SECONDS)  # not there yet
                            continue
                        stream = reopened.enter_context(fresh)
                    else:
                        stream.seek(0)
                    _say(f"{PROG}: {name!r} {what}: reading it from its start")
                    reader = FollowReader(stream, max_line_bytes)
                    continue
                threading.Event().wait(POLL_SECONDS)
    except ReadError as exc:
        _say(f"{PROG}: cannot read {shown(name)}: {exc.error.strerror or exc.error}")
        return 2
    threading.Event().wait()  # served until Ctrl-C
    return 0
