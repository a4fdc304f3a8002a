"""The one exception base of the library.

Rules this module owns (issue 18):

- Every error the library raises on purpose derives from ``AcpToolcallsError``:
  ``DecodeError`` (input), ``EncodeError`` (output), ``ConversionError`` (strict conversion),
  ``SenderError`` (an agent's own message). ``except AcpToolcallsError`` catches them all.
- It is a ``ValueError``, as each of them was before, so existing ``except ValueError`` code
  keeps working.
"""

from __future__ import annotations

__all__ = ["AcpToolcallsError"]


class AcpToolcallsError(ValueError):
    """Base of the errors acp-toolcalls raises; most carry ``path`` and ``reason``."""
