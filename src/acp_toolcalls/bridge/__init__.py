"""The stateful bridges between a v1 and a v2 peer, and the text of terminal output.

Rules this package owns: ``V2ToV1Bridge`` (a v2 agent's traffic for a v1 client:
``_to_v1*.py``), ``V1ToV2Bridge`` (a v1 agent's traffic for a v2 client: ``_to_v2.py``), the
permission requests a bridge forwarded until their one answer (``_forwarded.py``, used by
both), terminal bytes as safe text (``_terminal_text.py``), and v2 diffs rebuilt as v1 diffs
from files read by what the I/O edge supplies (``_disk_diffs.py``, ``ReadFile``). Importing
the package costs nothing until a name is used (PEP 562): the terminal text helpers load
neither the bridges nor the converters.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `from typing import ...`: the package's start-up stays light
if TYPE_CHECKING:
    from ._disk_diffs import READING_OFF, ReadFile
    from ._terminal_text import DEFAULT_TAIL_CHARS, TailRenderer, fenced, sanitize, tail
    from ._to_v1 import TerminalProfile, V2ToV1Bridge
    from ._to_v2 import V1ToV2Bridge

__all__ = [
    "DEFAULT_TAIL_CHARS",
    "READING_OFF",
    "ReadFile",
    "TailRenderer",
    "TerminalProfile",
    "V1ToV2Bridge",
    "V2ToV1Bridge",
    "fenced",
    "sanitize",
    "tail",
]

_EXPORTS: dict[str, tuple[str, ...]] = {
    "_disk_diffs": ("READING_OFF", "ReadFile"),
    "_terminal_text": ("DEFAULT_TAIL_CHARS", "TailRenderer", "fenced", "sanitize", "tail"),
    "_to_v1": ("TerminalProfile", "V2ToV1Bridge"),
    "_to_v2": ("V1ToV2Bridge",),
}
"""Module -> the names the package exports from it (the same as the imports above)."""

if not TYPE_CHECKING:  # type checkers read the imports above
    from .._lazy import exports

    __getattr__, __dir__ = exports(__name__, _EXPORTS)
