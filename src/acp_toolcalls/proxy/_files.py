"""The file reader the proxy's edge gives the v2 -> v1 bridge, for diffs shown as v1 diffs.

Rules this module owns (the I/O half of D27 as amended; what is read, and when, is the
bridge's ``_disk_diffs``):

- ``DiskFiles(max_bytes)(path, roots)`` returns the bytes of the regular file at ``path``, or
  a short reason why not. Only a file whose resolved path (every symbolic link followed,
  ``os.path.realpath``) lies under one of the resolved ``roots`` is read: a link inside a root
  that points out of it is refused.
- The file is opened component by component from its root's directory, none of them followed
  if it is a symbolic link (``O_NOFOLLOW``, relative to the directory opened before it), so a
  link swapped in after the check is refused, not followed; where the platform cannot open
  relative to a directory, the resolved path is opened with ``O_NOFOLLOW``.
- Nothing but a regular file is opened: ``stat`` says first, so a FIFO, a socket or a device
  is never opened (opening a FIFO blocks, a device may act), and the opened file is checked
  again (``fstat``); it is opened ``O_NONBLOCK`` besides.
- At most ``max_bytes`` (default ``DEFAULT_DISK_DIFF_BYTES``, 1 MiB) are read; a larger file
  is refused, by its size and by what a read finds (it may grow meanwhile).
- Every ``OSError`` is a reason (the file does not exist, permission denied, ...), never
  raised.
"""

from __future__ import annotations

import os
import stat

__all__ = ["DEFAULT_DISK_DIFF_BYTES", "DiskFiles"]

DEFAULT_DISK_DIFF_BYTES = 1 << 20
"""The largest file (in bytes) whose text a diff is rebuilt from, by default."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_RELATIVE = os.open in os.supports_dir_fd and bool(_NOFOLLOW and _DIRECTORY)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class DiskFiles:
    """Reads files for the bridge, under a session's roots, at most ``max_bytes`` each."""

    def __init__(self, max_bytes: int = DEFAULT_DISK_DIFF_BYTES) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be 0 or more, not {max_bytes}")
        self.max_bytes = max_bytes

    def __call__(self, path: str, roots: tuple[str, ...]) -> bytes | str:
        try:
            return self._read(path, roots)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError):
                return "it does not exist"
            if exc.errno is not None and exc.errno == getattr(os, "ELOOP", -1):
                return "a symbolic link on its path changed while it was read"
            return f"it cannot be read ({exc.strerror or exc})"

    def _read(self, path: str, roots: tuple[str, ...]) -> bytes | str:
        real = os.path.realpath(path)
        root = next(
            (r for r in (os.path.realpath(root) for root in roots) if _within(real, r)), None
        )
        if root is None:
            return "it resolves outside the session's directories (a symbolic link)"
        info = os.stat(real)
        if not stat.S_ISREG(info.st_mode):
            return "it is not a regular file"
        if info.st_size > self.max_bytes:
            return f"it is larger than {self.max_bytes} bytes ({info.st_size} bytes)"
        fd = self._open(real, root)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return "it is not a regular file"
            chunks: list[bytes] = []
            size = 0
            while size <= self.max_bytes:
                chunk = os.read(fd, self.max_bytes + 1 - size)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        finally:
            os.close(fd)
        if size > self.max_bytes:
            return f"it is larger than {self.max_bytes} bytes"
        return b"".join(chunks)

    @staticmethod
    def _open(real: str, root: str) -> int:
        """``real`` opened for reading without following a symbolic link on the way from
        ``root`` (both resolved)."""
        if not _RELATIVE:
            return os.open(real, _FLAGS | _NOFOLLOW)
        parts = [p for p in os.path.relpath(real, root).split(os.sep) if p not in ("", ".")]
        fd = os.open(root, os.O_RDONLY | _DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        try:
            for index, part in enumerate(parts):
                last = index == len(parts) - 1
                flags = (_FLAGS if last else os.O_RDONLY | _DIRECTORY) | _NOFOLLOW
                step = os.open(part, flags, dir_fd=fd)
                os.close(fd)
                fd = step
            if not parts:  # the root itself: a directory, not a file
                raise IsADirectoryError(21, "Is a directory")
        except BaseException:
            os.close(fd)
            raise
        return fd
