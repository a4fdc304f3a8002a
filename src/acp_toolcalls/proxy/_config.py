"""What ``acp-toolcalls bridge`` was asked to do: ``ProxyConfig``.

Rules this module owns: the options of one proxy run, read by the edge (``_stdio``) and the log
(``_log``), fixed once the run starts (a frozen dataclass); its defaults are the command's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..codec import DEFAULT_MAX_BYTES
from ..records import Direction
from ..store import Limits
from ._files import DEFAULT_DISK_DIFF_BYTES
from ._output import VersionOption

__all__ = ["ProxyConfig"]


@dataclass(frozen=True)
class ProxyConfig:
    """What ``acp-toolcalls bridge`` was asked to do."""

    command: Sequence[str]
    client_version: VersionOption = "auto"
    agent_version: VersionOption = "auto"
    coalesce_ms: float = 50.0
    log_path: str | None = None
    max_line_bytes: int = DEFAULT_MAX_BYTES
    verbose: bool = False
    log_max_bytes: int | None = None
    log_secrets: bool = False
    limits: Limits | None = None
    """Memory caps of the connection and its bridges (``None``: the defaults)."""
    grace: float = 5.0
    """Seconds the agent gets to exit once its stdin is closed."""
    term_grace: float = 2.0
    """Seconds between SIGTERM and SIGKILL to what is left of the agent's process group."""
    disk_diffs: bool = True
    """v1 client, v2 agent: show a diff as a v1 diff, its texts rebuilt from the file on disk
    and its Git patch (D27 amended; ``False``: ``--no-disk-diffs``)."""
    disk_diff_max_bytes: int = DEFAULT_DISK_DIFF_BYTES
    """The largest file a diff's texts are rebuilt from."""
    adopt_orphans: bool = False
    """Make this process the agent's child subreaper (Linux; a no-op elsewhere) and end the
    agent's processes that left its group with the session (the ``bridge`` command: this
    process starts no other children)."""
    watch: Callable[[Direction, int | None, Sequence[bytes | int], float], None] | None = None
    """Given the lines read and written, as ``--log`` records them, a read's or a write's at
    a time: their direction, the version of their side (``None`` while unknown), the lines
    (or the size of one over the limit, skipped unread) and the time (``time.time()``). It
    must return at once (``bridge --inspect``: ``cli._live_bridge.Feed``)."""
