"""Deprecated alias of acp_toolcalls.bridge (issue 18); kept for one release."""

from .bridge import TerminalProfile, V2ToV1Bridge

__all__ = ["TerminalProfile", "V2ToV1Bridge"]
