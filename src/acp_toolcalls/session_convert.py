"""Deprecated alias of acp_toolcalls.convert (``SessionConverter``; issue 18); kept for one
release."""

from __future__ import annotations

from .convert import SessionConverter

__all__ = ["SessionConverter"]
