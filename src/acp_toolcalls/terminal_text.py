"""Deprecated alias of acp_toolcalls.bridge (issue 18); kept for one release."""

from .bridge import DEFAULT_TAIL_CHARS, TailRenderer, fenced, sanitize, tail

__all__ = ["DEFAULT_TAIL_CHARS", "TailRenderer", "fenced", "sanitize", "tail"]
