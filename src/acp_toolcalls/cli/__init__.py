"""The ``acp-toolcalls`` command line: an argparse dispatcher over subcommands.

Rules this module owns:

- ``main(argv)`` never raises and never lets argparse exit the process: it returns the exit
  code (0 clean, 1 findings, 2 usage errors or unreadable input), so it works both as the
  console script (``sys.exit(main())`` in the generated wrapper) and in-process in tests.
- Each subcommand lives in its own module with ``register(subparsers)``, which sets a
  ``handler(args) -> int`` default; ``_COMMANDS`` lists them in help order.
- A closed stdout (``acp-toolcalls validate log | head``, exit 1) or Ctrl-C (exit 130) ends
  quietly, without a traceback. Never a traceback at all: a usage error is one line on stderr
  (exit 2); an output that cannot be written (a full disk) is one line (exit 2), because every
  command reports what it cannot read itself and lets only the output's ``OSError`` through;
  anything else is a bug, reported in one line that says so (exit ``INTERNAL_ERROR``, 70).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any

from .. import __version__
from . import bridge, convert, replay, validate

__all__ = ["INTERNAL_ERROR", "build_parser", "main"]

INTERNAL_ERROR = 70
"""Exit status for a bug in acp-toolcalls (sysexits' ``EX_SOFTWARE``)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line: what is wrong and where the help is."""

    def error(self, message: str) -> Any:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


_COMMANDS: tuple[Callable[[Any], None], ...] = (
    replay.register,
    validate.register,
    convert.register,
    bridge.register,
)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    parser = _Parser(
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
        print(
            "acp-toolcalls: error: a command is required (e.g. replay or validate; see "
            "acp-toolcalls --help)",
            file=sys.stderr,
        )
        return 2
    prog = f"acp-toolcalls {handler.__module__.rsplit('.', 1)[-1]}"
    try:
        return handler(args)
    except KeyboardInterrupt:
        _say(f"{prog}: interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away: point stdout at /dev/null so the exit-time flush stays quiet.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1
    except OSError as exc:  # the commands catch their input's errors: this is the output
        _say(f"{prog}: cannot write the output: {exc.strerror or exc}")
        return 2
    except Exception as exc:  # a bug: one line, never a traceback
        _say(
            f"{prog}: internal error ({type(exc).__name__}: {exc}); this is a bug, please report it"
        )
        return INTERNAL_ERROR


def _say(text: str) -> None:
    with contextlib.suppress(OSError, ValueError, AttributeError):  # no stderr to say it on
        print(text, file=sys.stderr, flush=True)
