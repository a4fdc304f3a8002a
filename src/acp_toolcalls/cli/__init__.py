"""The ``acp-toolcalls`` command line: an argparse dispatcher over subcommands.

Rules this module owns:

- ``main(argv)`` never raises and never lets argparse exit the process: it returns the exit
  code (0 clean, 1 findings, 2 usage errors or unreadable input), so it works both as the
  console script (``sys.exit(main())`` in the generated wrapper) and in-process in tests.
- Each subcommand lives in its own module with ``register(subparsers)``, which sets a
  ``handler(args) -> int`` default; ``_COMMANDS`` lists them in help order.
- A closed stdout (``acp-toolcalls validate log | head``) or Ctrl-C ends quietly, without a
  traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from .. import __version__
from . import bridge, convert, replay, validate

__all__ = ["build_parser", "main"]

_COMMANDS: tuple[Callable[[Any], None], ...] = (
    replay.register,
    validate.register,
    convert.register,
    bridge.register,
)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="acp-toolcalls",
        description="Tools for the tool-call surface of the Agent Client Protocol (v1 and v2).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for register in _COMMANDS:
        register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_usage(sys.stderr)
        print(
            "acp-toolcalls: error: a command is required (e.g. replay or validate)", file=sys.stderr
        )
        return 2
    try:
        return handler(args)
    except KeyboardInterrupt:
        print("acp-toolcalls: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away: point stdout at /dev/null so the exit-time flush stays quiet.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1
