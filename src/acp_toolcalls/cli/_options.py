"""The command-line options several commands share, worded once.

Rules this module owns:

- ``positive_int``: the argparse ``type`` of every count and size (``--max-line-bytes``,
  ``--width``, ``--log-max-bytes``): an integer of at least 1, else a usage error saying why.
- ``--protocol`` of a log (``replay``, ``inspect``): ``v1``, ``v2`` or ``auto`` (default: the
  ``initialize`` exchange decides, v2 without one).
- ``--max-line-bytes`` of a log reader (``replay``, ``convert``, ``inspect``): the longest line
  read, default ``codec.DEFAULT_MAX_BYTES``; a longer one is reported and skipped.
- ``--side`` of a ``bridge --log`` log: ``client`` or ``agent``; each command says what it does
  with it.
- ``--json``: print one JSON document.

Each ``add_*`` adds the option to a command's parser with its help text; the commands keep
the options only they have.
"""

from __future__ import annotations

import argparse

from ..codec import DEFAULT_MAX_BYTES

__all__ = [
    "PROTOCOLS",
    "SIDES",
    "add_json",
    "add_max_line_bytes",
    "add_protocol",
    "add_side",
    "port_number",
    "positive_int",
]

PROTOCOLS = ("v1", "v2", "auto")
"""What ``--protocol`` accepts."""
SIDES = ("client", "agent")
"""What ``--side`` accepts: the two conversations of a ``bridge --log`` log."""


def positive_int(text: str) -> int:
    """argparse ``type`` of a count or size: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def port_number(text: str) -> int:
    """argparse ``type`` of a TCP port: 0 (a free one) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, not {value}")
    return value


def add_protocol(parser: argparse.ArgumentParser) -> None:
    """``--protocol v1|v2|auto`` of the log read (default ``auto``)."""
    parser.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="auto",
        help="protocol version of the log (default: auto, from the initialize exchange; "
        "v2 without one)",
    )


def add_max_line_bytes(parser: argparse.ArgumentParser, default: int | None) -> None:
    """``--max-line-bytes N``; ``default`` is what the command finds when it is not given."""
    parser.add_argument(
        "--max-line-bytes",
        type=positive_int,
        default=default,
        metavar="N",
        help=f"longest line read, in bytes; a longer one is reported and skipped "
        f"(default: {DEFAULT_MAX_BYTES})",
    )


def add_side(parser: argparse.ArgumentParser, default: str | None, help: str) -> None:
    """``--side client|agent`` of a ``bridge --log`` log, with the command's own ``help``."""
    parser.add_argument("--side", choices=SIDES, default=default, help=help)


def add_json(parser: argparse.ArgumentParser) -> None:
    """``--json``: one JSON document on stdout."""
    parser.add_argument("--json", action="store_true", help="print one JSON document")
