"""Deprecated alias of ``acp_toolcalls.codec`` (issue 18); kept for one release.

The lenient reader now lives in ``acp_toolcalls.codec._lenient``; ``DecodeError`` and
``Diagnostic`` are exported by ``acp_toolcalls.codec`` (and the package root).
"""

from __future__ import annotations

from .codec import DecodeError, Diagnostic, ItemError, Salvage, reader_for

__all__ = ["DecodeError", "Diagnostic", "ItemError", "Salvage", "reader_for"]
