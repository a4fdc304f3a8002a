"""The one exception base of the library, and the decode error the models and the codec share.

Rules this module owns (issue 18):

- Every error the library raises on purpose derives from ``AcpToolcallsError``:
  ``DecodeError`` (input), ``EncodeError`` (output), ``ConversionError`` (strict conversion),
  ``SenderError`` (an agent's own message). ``except AcpToolcallsError`` catches them all.
- It is a ``ValueError``, as each of them was before, so existing ``except ValueError`` code
  keeps working.
- One message format: each carries ``path`` (a JSON path, or an argument's name for a
  ``SenderError``) and ``reason``, and reads ``"<reason> at <path>"``.
- ``DecodeError`` lives here, below both, because the models (``InvalidMessage``) hold one and
  the codec raises it.
"""

from __future__ import annotations

__all__ = ["AcpToolcallsError", "DecodeError"]


class AcpToolcallsError(ValueError):
    """Base of the errors acp-toolcalls raises: ``reason`` at ``path``."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{reason} at {path}")
        self.path = path
        self.reason = reason


class DecodeError(AcpToolcallsError):
    """The input cannot be read as the requested message; ``path`` says where."""
