"""Deprecated alias of acp_toolcalls.convert (``Loss``, ``LossReport``, ...; issue 18); kept
for one release."""

from __future__ import annotations

from .convert import ConversionError, Converted, Loss, LossReport

__all__ = ["ConversionError", "Converted", "Loss", "LossReport"]
