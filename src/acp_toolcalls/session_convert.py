"""Deprecated alias of acp_toolcalls.sessions (``SessionConverter``; issue 18); kept for one
release."""

from __future__ import annotations

from .sessions import SessionConverter

__all__ = ["SessionConverter"]
