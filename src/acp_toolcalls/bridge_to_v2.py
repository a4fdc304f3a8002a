"""Deprecated alias of acp_toolcalls.bridge (issue 18); kept for one release."""

from .bridge import V1ToV2Bridge

__all__ = ["V1ToV2Bridge"]
