"""The ``--log`` file of ``acp-toolcalls bridge``.

Rules this module owns: every line read and written, with direction and time (the records of
``acp_toolcalls.records``, credentials redacted unless ``log_secrets``), in a file created 0600
and never opened through a symbolic link; past ``log_max_bytes`` or on a write error, logging
stops with one line on stderr and the session goes on. (Every stderr note of the bridge is shown
through ``_text.printable``, so no note can move the cursor or reorder the text.)
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..records import Direction, Redactor, log_line, skipped_line

if TYPE_CHECKING:
    from ._config import ProxyConfig


class _Log:
    """The ``--log`` file: whole records; past ``max_bytes`` written or on a write error,
    logging stops with one line and the session goes on."""

    def __init__(self, config: ProxyConfig, fd: int, say: Callable[[str], None]) -> None:
        self.path = config.log_path
        self.fd: int | None = fd
        self.max_bytes = config.log_max_bytes
        self.redactor = None if config.log_secrets else Redactor()
        self.say = say
        self.written = 0

    def lines(self, direction: Direction, protocol: int | None, lines: list[bytes]) -> None:
        if self.fd is None or not lines:
            return
        now = time.time()
        record = log_line if self.redactor is None else self.redactor.record
        self._write([record(direction, protocol, line, now) for line in lines])

    def skipped(self, direction: Direction, protocol: int | None, size: int) -> None:
        if self.fd is not None:
            self._write([skipped_line(direction, protocol, size, time.time())])

    def _write(self, records: list[bytes]) -> None:
        assert self.fd is not None
        data = b"".join(records)
        full = self.max_bytes is not None and self.written + len(data) > self.max_bytes
        if full:  # whole records up to the limit
            room, fits = (self.max_bytes or 0) - self.written, 0
            for record in records:
                if fits + len(record) > room:
                    break
                fits += len(record)
            data = data[:fits]
        try:
            while data:
                written = os.write(self.fd, data)
                self.written += written
                data = data[written:]
        except OSError as exc:
            self.stop(f"cannot write to it ({exc.strerror or exc})")
            return
        if full:
            self.stop(f"{self.max_bytes} bytes written, the limit of --log-max-bytes")

    def stop(self, why: str) -> None:
        self.close()
        self.say(f"--log {self.path}: {why}; logging stopped, the session goes on")

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


def open_log(path: str) -> int:
    """``path`` opened to append: created 0600, never through a symbolic link at its last
    component (``OSError``, ``ELOOP``, for one)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK  # a FIFO with no reader: fail
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    if not hasattr(os, "O_NOFOLLOW") and os.path.islink(path):
        raise OSError(40, "Too many levels of symbolic links")
    fd = os.open(path, flags, 0o600)
    os.set_blocking(fd, True)
    return fd


def _log_error(path: str, exc: OSError) -> str:
    if os.path.islink(path):
        return f"error: --log {path} is a symbolic link: refused (name the file itself)"
    return f"error: cannot open --log {path}: {exc.strerror or exc}"
