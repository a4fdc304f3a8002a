"""The ``acp-toolcalls`` command line: an argparse dispatcher over subcommands.

Rules this module owns:

- ``main(argv)`` never raises and never lets argparse exit the process: it returns the exit
  code (0 clean, 1 findings, 2 usage errors or unreadable input), so it works both as the
  console script (``sys.exit(main())`` in the generated wrapper) and in-process in tests.
- Each subcommand lives in its own module with ``register(subparsers)``, which sets a
  ``handler(args) -> int`` default; ``COMMANDS`` lists them in help order. What several
  commands share: ``lines`` (the log reader, the demo session, how messages are shown) and
  ``_options`` (the options they have in common); ``_follow`` reads ``replay --follow``'s
  file. Only the module of the command given is imported (``--help`` and usage errors import
  them all), and ``--version`` imports none, nor argparse (it prints the version and the
  schema provenance, ``schema.provenance_text``, which imports nothing): a command pays only
  for what it uses (``bridge`` never loads jsonschema or rich).
- A closed stdout (``acp-toolcalls validate log | head``, exit 1) or Ctrl-C (exit 130) ends
  quietly, without a traceback. Never a traceback at all: a usage error is one line on stderr
  (exit 2); an output that cannot be written (a full disk) is one line (exit 2), because every
  command reports what it cannot read itself and lets only the output's ``OSError`` through;
  anything else is a bug, reported in one line that says so (exit ``INTERNAL_ERROR``, 70).
"""

from __future__ import annotations

import importlib
import os
import sys

from .. import __version__

TYPE_CHECKING = False  # not from typing: `--version` imports nothing it does not need
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

__all__ = ["COMMANDS", "INTERNAL_ERROR", "build_parser", "main"]

COMMANDS = ("replay", "validate", "convert", "bridge", "inspect", "conformance")
"""The subcommands, each a module of this package, in help order."""

INTERNAL_ERROR = 70
"""Exit status for a bug in acp-toolcalls (sysexits' ``EX_SOFTWARE``)."""


def _parser_class() -> type[argparse.ArgumentParser]:
    import argparse

    class _Parser(argparse.ArgumentParser):
        """argparse, but a usage error is one line: what is wrong and where the help is."""

        def error(self, message: str) -> Any:
            self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    return _Parser


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered, or only ``command``."""
    parser = _parser_class()(
        prog="acp-toolcalls",
        description="Tools for the tool-call surface of the Agent Client Protocol (v1 and v2).",
    )
    parser.add_argument(
        "--version",
        action="store_true",
        help="show the version and the provenance of the bundled schemas, and exit",
    )
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name in COMMANDS:
        if command is None or name == command:
            importlib.import_module(f".{name}", __name__).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    words = sys.argv[1:] if argv is None else argv
    if words == ["--version"]:  # before any import: the start-up people wait for in scripts
        return _version()
    parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:  # --help, usage errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    if getattr(args, "version", False):
        return _version()
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


def _version() -> int:
    """``--version``: the version, then where the bundled schemas come from (a module that
    imports nothing and reads no file)."""
    from ..schema import provenance_text

    print(f"acp-toolcalls {__version__}\n{provenance_text()}")
    return 0


def _say(text: str) -> None:
    try:  # noqa: SIM105 - contextlib is an import `--version` would pay for
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):  # no stderr to say it on
        pass
