"""``acp-toolcalls bridge``: a stdio proxy between an ACP client and an agent of another version.

Rules this module owns (issue 7; the command line is fixed):

- ``acp-toolcalls bridge [--client-version 1|2|auto] [--agent-version 1|2|auto]
  [--coalesce-ms N] [--log FILE] -- AGENT_COMMAND [ARGS...]``, plus ``--log-max-bytes``,
  ``--log-secrets``, ``--max-line-bytes``, ``--limit NAME=N`` (a field of ``Limits``),
  ``--no-disk-diffs``, ``--disk-diff-max-bytes N`` (D27 amended), ``--verbose`` and
  ``--inspect[=PORT]`` (issue 31). The editor starts it in place of the agent command.
- ``--inspect``: the session's report, live, served on 127.0.0.1 by a process of its own
  (``_live_bridge``, started before the agent; its URL with its token said once on stderr)
  while the session runs, both sides, credentials redacted as ``--log`` redacts them. The
  proxy hands it every line and never waits for it (``ProxyConfig.watch``); it stops with the
  session.
- Exit 0 when the client ended the session; 1 when the agent exited, crashed or broke the
  protocol first; 2 for a usage error, an agent that cannot be started or a log that cannot be
  opened (a symbolic link is refused); 130 when interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from typing import Any

from ..codec import DEFAULT_MAX_BYTES
from ..proxy import DEFAULT_DISK_DIFF_BYTES, ProxyConfig, run_proxy
from ..store import Limits
from ._options import port_number, positive_int

__all__ = ["register", "run"]

PROG = "acp-toolcalls bridge"

_EXIT_CODES = """\
exit status:
  0    the client ended the session (EOF on stdin); the agent was stopped
  1    the agent exited, crashed or wrote something that is not JSON-RPC first: the
       client was answered every request it was waiting for
  2    usage error, the agent cannot be started, or FILE cannot be opened (or is a
       symbolic link)
  130  interrupted (Ctrl-C, SIGTERM)

stderr: one line per problem ("acp-toolcalls bridge: agent line 7: ..."); with --verbose
also every field one version could not carry over to the other. The agent's own stderr
passes through. Notes stderr cannot take (nobody reads it) are dropped and counted.
"""


def _version(text: str) -> Any:
    if text == "auto":
        return "auto"
    if text in ("1", "2"):
        return int(text)
    raise argparse.ArgumentTypeError(f"expected 1, 2 or auto, not {text!r}")


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of milliseconds, not {text!r}"
        ) from None
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError(f"expected 0 or more milliseconds, not {text!r}")
    return value


_LIMIT_NAMES = tuple(Limits.__struct_fields__)


def _limit(text: str) -> tuple[str, int | None]:
    """``NAME=N`` or ``NAME=none``: one memory cap (a field of ``Limits``)."""
    name, sep, value = text.partition("=")
    if not sep or name not in _LIMIT_NAMES:
        raise argparse.ArgumentTypeError(
            f"expected NAME=N with NAME one of {', '.join(_LIMIT_NAMES)}; not {text!r}"
        )
    if value == "none":
        return name, None
    return name, positive_int(value)


def register(subparsers: Any) -> None:
    """Add the ``bridge`` subcommand to the dispatcher's subparsers."""
    parser = subparsers.add_parser(
        "bridge",
        help="run an agent behind a proxy that lets a v1 client use a v2 agent (and the reverse)",
        description=(
            "Start AGENT_COMMAND and speak newline-delimited JSON-RPC with it on its stdin and "
            "stdout, and with the client (the editor that started this command) on ours. The "
            "versions come from the initialize exchange; when both sides speak the same one, "
            "every line is forwarded byte for byte. Otherwise every message is converted: "
            "session setup, prompts (a v1 prompt response is sent when a v2 agent reports idle), "
            "message chunks, plans, tool calls (chunks coalesced for a v1 client), terminals and "
            "permission requests."
        ),
        epilog=_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--client-version",
        type=_version,
        default="auto",
        metavar="1|2|auto",
        help="the client's ACP version (auto: its initialize request says)",
    )
    parser.add_argument(
        "--agent-version",
        type=_version,
        default="auto",
        metavar="1|2|auto",
        help="the agent's ACP version: it is asked in this version (auto: the client's), and "
        "its initialize response decides",
    )
    parser.add_argument(
        "--coalesce-ms",
        type=_non_negative,
        default=50.0,
        metavar="N",
        help="v2 agent, v1 client: send a tool call's changes at most N ms after the first "
        "one waiting (default 50; 0 sends every change at once)",
    )
    parser.add_argument(
        "--log",
        metavar="FILE",
        help="append both sides' traffic as JSON Lines (direction, time, version) that "
        "`replay --side` and `validate` read; created 0600, never through a symbolic link; "
        "credentials redacted (env and header values, auth methods' _meta, authenticate and "
        "auth/login params and results)",
    )
    parser.add_argument(
        "--log-max-bytes",
        type=positive_int,
        default=None,
        metavar="N",
        help="stop logging (one line on stderr; the session goes on) before FILE gets more "
        "than N bytes from this session (default: no limit)",
    )
    parser.add_argument(
        "--log-secrets",
        action="store_true",
        help="log credentials as they were sent instead of redacting them",
    )
    parser.add_argument(
        "--max-line-bytes",
        type=positive_int,
        default=DEFAULT_MAX_BYTES,
        metavar="N",
        help=f"skip (and report) a line longer than N bytes (default {DEFAULT_MAX_BYTES})",
    )
    parser.add_argument(
        "--limit",
        type=_limit,
        action="append",
        default=[],
        metavar="NAME=N",
        help="change one memory cap (repeatable; N or none): "
        + ", ".join(f"{name} ({getattr(Limits(), name)})" for name in _LIMIT_NAMES)
        + "; a cap that bites is reported on stderr",
    )
    parser.add_argument(
        "--no-disk-diffs",
        dest="disk_diffs",
        action="store_false",
        help="v2 agent, v1 client: never read a file to show an edit as a v1 diff (by default "
        "a diff's Git patch is applied to the file under the session's cwd or "
        "additionalDirectories, when it applies exactly, to rebuild its old and new text; "
        "otherwise the patch is shown as text)",
    )
    parser.add_argument(
        "--disk-diff-max-bytes",
        type=positive_int,
        default=DEFAULT_DISK_DIFF_BYTES,
        metavar="N",
        help="the largest file (in bytes) read to rebuild a v1 diff "
        f"(default {DEFAULT_DISK_DIFF_BYTES}); a larger one is shown as text",
    )
    parser.add_argument(
        "--inspect",
        type=port_number,
        nargs="?",
        const=0,
        default=None,
        metavar="PORT",
        help="watch the session live in a browser: its report is served on 127.0.0.1 (PORT, "
        "or a free one), at a URL with a token printed once on stderr, until the session ends; "
        "credentials redacted as in --log. Needs the inspect extra: pip install "
        "'acp-toolcalls[inspect]'",
    )
    parser.add_argument(
        "--verbose", "-v", action="store_true", help="report every conversion loss on stderr"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- AGENT_COMMAND [ARGS...]")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """The ``bridge`` command; returns the exit status."""
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        print(f"{PROG}: error: the agent command is missing (after --)", file=sys.stderr)
        return 2
    if args.log is None and (args.log_max_bytes is not None or args.log_secrets):
        print(f"{PROG}: error: --log-max-bytes and --log-secrets need --log FILE", file=sys.stderr)
        return 2
    config = ProxyConfig(
        command=command,
        client_version=args.client_version,
        agent_version=args.agent_version,
        coalesce_ms=args.coalesce_ms,
        log_path=args.log,
        log_max_bytes=args.log_max_bytes,
        log_secrets=args.log_secrets,
        max_line_bytes=args.max_line_bytes,
        limits=Limits(**dict(args.limit)),
        verbose=args.verbose,
        disk_diffs=args.disk_diffs,
        disk_diff_max_bytes=args.disk_diff_max_bytes,
        adopt_orphans=True,  # this process starts no other children: the agent's orphans
    )
    if args.inspect is None:
        return run_proxy(config)
    return _inspected(config, args.inspect)


def _inspected(config: ProxyConfig, port: int) -> int:
    """``run_proxy`` with every line handed to the live report's process."""
    from ._live_bridge import start_watcher

    title = f"bridge: {os.path.basename(config.command[0])}"
    watcher = start_watcher(title, port, config.max_line_bytes, config.limits)
    if watcher is None:
        return 2
    try:
        return run_proxy(dataclasses.replace(config, watch=watcher.feed))
    finally:
        watcher.stop()
