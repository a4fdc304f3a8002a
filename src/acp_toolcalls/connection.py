"""Deprecated alias of acp_toolcalls.proxy (issue 18); kept for one release."""

from __future__ import annotations

from .proxy import ConnectionBridge, ConnectionNote, Outbox, Version

__all__ = ["ConnectionBridge", "ConnectionNote", "Outbox", "Version"]
