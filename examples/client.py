"""An ACP client that shows the example agent's tool calls live, from a ``ToolCallStore``.

It starts ``examples/agent.py`` as a subprocess, speaks v2 (``--protocol 1`` for v1), sends one
prompt, answers the permission request (``--approve``, the default, or ``--reject``) and shows
every tool call and terminal as they change (``rich.live.Live`` + ``render_store``). With
``--json`` it prints the store's final document instead (the ``acp-toolcalls replay --json``
shape); ``--log FILE`` records every message, both directions, as JSON Lines.

Built on the official SDK's client connections (``acp.client.ClientSideConnection`` for v1,
``acp.experimental.v2.ClientSideConnection`` for v2): they do the handshake, the typed
requests and the permission callback. The SDK's models drop ``null`` clears, unknown keys and
``capabilities``, so the tool-call state does not come from them: ``store_observer`` feeds the
store the raw messages, before the SDK parses them.

    python examples/client.py [--protocol 1|2] [--approve|--reject] [--json] [--cwd DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import IO, Any

from acp import schema as v1s
from acp.client import ClientSideConnection as V1ClientConnection
from acp.connection import StreamDirection, StreamEvent
from acp.experimental.v2 import ClientSideConnection as V2ClientConnection
from acp.experimental.v2 import schema as v2s
from acp.transports import spawn_stdio_transport
from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from acp_toolcalls import ToolCallStore
from acp_toolcalls.cli.render import render_store
from acp_toolcalls.sdk import store_observer

AGENT = Path(__file__).resolve().with_name("agent.py")
NAME, VERSION = "acp-toolcalls-example-client", "0.1.0"
DEFAULT_PROMPT = "Remember to water the plants"


def choose(options: Sequence[Any], approve: bool) -> str | None:
    """The option id to answer with: the first allowing (or rejecting) option offered."""
    kinds = ("allow_once", "allow_always") if approve else ("reject_once", "reject_always")
    return next((option.option_id for option in options if option.kind in kinds), None)


class V1Client:
    """The v1 SDK client callbacks: answer permission requests; updates go to the store."""

    def __init__(self, approve: bool) -> None:
        self.approve = approve

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> v1s.RequestPermissionResponse:
        option = choose(options, self.approve)
        if option is None:
            return v1s.RequestPermissionResponse(outcome=v1s.DeniedOutcome(outcome="cancelled"))
        selected = v1s.AllowedOutcome(option_id=option, outcome="selected")
        return v1s.RequestPermissionResponse(outcome=selected)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        pass  # the store has it already, from the raw message


class V2Client:
    """The v2 SDK client callbacks (``session_update`` is optional in v2)."""

    def __init__(self, approve: bool) -> None:
        self.approve = approve

    async def request_permission(
        self, session_id: str, title: str, options: list[Any], **_: Any
    ) -> v2s.RequestPermissionResponse:
        option = choose(options, self.approve)
        if option is None:
            return v2s.RequestPermissionResponse(outcome=v2s.CancelledPermissionOutcome())
        selected = v2s.SelectedPermissionOutcomeVariant(option_id=option)
        return v2s.RequestPermissionResponse(outcome=selected)


def idle_stop_reason(message: dict[str, Any]) -> str | None:
    """The stop reason of a v2 idle ``state_update`` (``""`` without one), else ``None``."""
    if message.get("method") != "session/update":
        return None
    update = (message.get("params") or {}).get("update") or {}
    if update.get("sessionUpdate") != "state_update" or update.get("state") != "idle":
        return None
    return str(update.get("stopReason") or "")


async def run(
    *,
    version: int,
    approve: bool,
    cwd: Path,
    prompt: str,
    log: IO[str] | None = None,
    on_change: Callable[[ToolCallStore], None] | None = None,
) -> tuple[ToolCallStore, str]:
    """One session with one prompt; returns the store and the turn's stop reason."""
    store = ToolCallStore(version="v1" if version == 1 else "v2")
    idle: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def watch(event: StreamEvent) -> None:  # after `observer`: the store is up to date
        if log is not None:
            log.write(json.dumps({"direction": event.direction.value, **event.message}) + "\n")
        if event.direction is StreamDirection.INCOMING and on_change is not None:
            on_change(store)
        stop = idle_stop_reason(event.message) if event.direction.value == "incoming" else None
        if stop is not None and not idle.done():
            idle.set_result(stop)

    observers = [store_observer(store), watch]
    # The SDK terminates an agent that has not exited `shutdown_timeout` seconds after its
    # stdin closed (2 s by default, short on a loaded machine), and that races the exit
    # (ProcessLookupError): the example agent exits at once on EOF; let it.
    async with spawn_stdio_transport(
        sys.executable, str(AGENT), stderr=None, shutdown_timeout=30.0
    ) as (
        reader,
        writer,
        _process,
    ):
        if version == 1:
            client = V1Client(approve)  # the part of the SDK's `Client` protocol it needs
            # The SDK annotates its own Client protocol; ours satisfies it at run time.
            v1 = V1ClientConnection(client, writer, reader, observers=observers)  # type: ignore[arg-type]
            await v1.initialize(
                protocol_version=1, client_info=v1s.Implementation(name=NAME, version=VERSION)
            )
            session = await v1.new_session(cwd=str(cwd))
            text = v1s.TextContentBlock(type="text", text=prompt)
            response = await v1.prompt(session_id=session.session_id, prompt=[text])
            stop = str(response.stop_reason)
            await v1.close()
        else:
            v2 = V2ClientConnection(V2Client(approve), writer, reader, observers=observers)
            await v2.initialize(
                protocol_version=2, info=v2s.Implementation(name=NAME, version=VERSION)
            )
            session2 = await v2.new_session(cwd=str(cwd))
            await v2.prompt(
                session_id=session2.session_id, prompt=[v2s.TextContentBlock(text=prompt)]
            )
            stop = await idle  # the response only acknowledged the user message
            await v2.close()
    return store, stop


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", type=int, choices=(1, 2), default=2)
    answer = parser.add_mutually_exclusive_group()
    answer.add_argument("--approve", dest="approve", action="store_true", default=True)
    answer.add_argument("--reject", dest="approve", action="store_false")
    parser.add_argument("--json", action="store_true", help="print store.document() at the end")
    parser.add_argument(
        "--cwd", type=Path, help="the session's directory (default: a new temp dir)"
    )
    parser.add_argument("--prompt", default=DEFAULT_PROMPT)
    parser.add_argument("--log", type=Path, help="record every message as JSON Lines")
    args = parser.parse_args(argv)
    cwd = (args.cwd or Path(tempfile.mkdtemp(prefix="acp-example-"))).resolve()
    session = partial(run, version=args.protocol, approve=args.approve, cwd=cwd, prompt=args.prompt)

    with ExitStack() as stack:
        log = stack.enter_context(args.log.open("w", encoding="utf-8")) if args.log else None
        if args.json:
            store, stop = asyncio.run(session(log=log))
            print(json.dumps({"stopReason": stop, **store.document()}, indent=2))
            return 0
        live = stack.enter_context(Live(Text("starting the agent..."), console=Console()))

        def show(store: ToolCallStore) -> None:
            live.update(render_store(store), refresh=True)

        store, stop = asyncio.run(session(log=log, on_change=show))
        ended = Text.from_markup(f"turn ended: [bold]{stop}[/] (session directory: {cwd})")
        live.update(Group(render_store(store), ended), refresh=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
