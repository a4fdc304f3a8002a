"""A small but real ACP agent (stdio) whose tool calls go through ``acp-toolcalls``.

It is built on the official Python SDK (``agent-client-protocol``) and speaks ACP v1 and the
experimental v2: ``AgentProtocolRouter`` reads the client's ``initialize`` and attaches the v1
or the v2 agent below; each session then gets a ``ToolCallEmitter`` for that version. No model
is involved: every prompt runs the same scripted turn, doing real work in the session's
``cwd``:

1. ``edit``: streams the call's arguments (a growing text item), asks permission with the diff
   in the subject's content (the question itself in the request's title/description), then
   appends the prompt as a line of ``notes.txt`` if approved, clearing ``rawInput`` (``null``)
   once the change is made. Rejected: ``failed``; dismissed or cancelled: ``cancelled``.
2. ``run``: a real subprocess whose output is streamed through an agent-owned terminal (v2
   ``terminal_update`` + ``terminal_output_chunk``; a v1 client gets the terminal rendered as
   text by the emitter's bridge).
3. ``read``: reading ``missing.txt`` fails: ``failed`` with the error as content, and the
   location cleared (``null``) since there is nothing to follow.

Every tool-call message goes out through ``acp_toolcalls.sdk.send``/``request``, which write
our messages as they are: the SDK's own ``session_update`` drops ``null``, so it could not
send a clear. Other updates (message chunks, v2 state) use the SDK's typed methods.

A v1 turn ends with the ``session/prompt`` response (``stopReason``). In v2 the response only
acknowledges the user message (``messageId``); the turn goes on in a task and ends with an
idle ``state_update`` carrying the stop reason (``ToolCallEmitter.end_turn``).
``session/cancel`` stops the turn where it waits (a permission request, the subprocess): the
request is abandoned (the SDK sends ``$/cancel_request``), open calls end ``cancelled`` and the
stop reason is ``cancelled``.

Run it from an ACP client, e.g. ``python examples/client.py`` (which starts it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shlex
import sys
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from acp import schema as v1s
from acp.agent.connection import AgentSideConnection as V1Connection
from acp.exceptions import RequestError
from acp.experimental.negotiation import AgentProtocolRouter
from acp.experimental.v2 import AgentSideConnection as V2Connection
from acp.experimental.v2 import schema as v2s

from acp_toolcalls import PermissionAnswer, ToolCallEmitter, sdk, v2
from acp_toolcalls.agent import diff_content, text_content

logger = logging.getLogger("example-agent")
T = TypeVar("T")
C = TypeVar("C", V1Connection, V2Connection)

NOTES = "notes.txt"
MISSING = "missing.txt"
SCRIPT = 'for i in range(1, 4): print(f"step {i}/3", flush=True)'
NAME, VERSION = "acp-toolcalls-example-agent", "0.1.0"


class Cancelled(Exception):
    """The client sent ``session/cancel`` (or dismissed a permission prompt)."""


class Session(Generic[C]):
    """One session: its emitter and the scripted turn, the same code for v1 and v2."""

    PROTOCOL_VERSION: ClassVar[int]

    def __init__(self, conn: C, session_id: str, cwd: str) -> None:
        self.conn: C = conn
        self.session_id = session_id
        self.cwd = Path(cwd)
        self.emitter = ToolCallEmitter(session_id, version=self.PROTOCOL_VERSION)
        self.cancelled = asyncio.Event()
        self.lock = asyncio.Lock()  # one turn at a time
        self.turns = 0
        self.requests = 0

    # What differs between v1 and v2 (the subclasses below).
    async def say(self, text: str) -> None:
        """Stream ``text`` as an agent message, a few words per chunk, as a model would."""
        words = text.split(" ")
        for start in range(0, len(words), 4):
            piece = " ".join(words[start : start + 4])
            await self.say_chunk(piece if start + 4 >= len(words) else piece + " ")

    async def say_chunk(self, text: str) -> None:
        raise NotImplementedError

    async def set_state(self, state: str) -> None:
        """v2 ``state_update`` around waits for the user (v1 has none)."""

    # Plumbing.
    async def send(self, messages: list[Any]) -> None:
        await sdk.send(self.conn, *messages)

    async def until_cancelled(self, awaitable: Awaitable[T]) -> T:
        """``await awaitable``, unless ``session/cancel`` comes first (then ``Cancelled``)."""
        task = asyncio.ensure_future(awaitable)
        cancel = asyncio.ensure_future(self.cancelled.wait())
        try:
            await asyncio.wait({task, cancel}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancel.cancel()
        if not task.done():
            task.cancel()  # a pending request: the SDK sends `$/cancel_request`
            raise Cancelled
        return task.result()

    async def ask(self, call_id: str, **prompt: Any) -> PermissionAnswer:
        self.requests += 1
        ask = self.emitter.request_permission(call_id, request_id=self.requests, **prompt)
        if ask.settled is not None:  # the v1 bridge answered for the client
            await self.send(list(ask.messages))
            return ask.settled
        *before, request = ask.messages
        await self.send(before)
        await self.set_state("requires_action")
        try:
            response = await self.until_cancelled(sdk.request(self.conn, request))
        except Cancelled:
            self.emitter.abandon(ask.request_id)
            raise
        await self.set_state("running")
        return self.emitter.answer(response)

    # The turn.
    async def turn(self, text: str) -> str:
        """Run the scripted turn; returns the stop reason (after the emitter's ``end_turn``)."""
        async with self.lock:
            self.turns += 1
            self.cancelled.clear()
            await self.set_state("running")
            try:
                edited = await self.edit(text)
                code = await self.run_command()
                error = await self.read_missing()
                await self.say(f"{edited}; the script exited {code}; {error}.")
                stop = "end_turn"
            except Cancelled:
                stop = "cancelled"
            except Exception:
                await self.send(self.emitter.end_turn("error"))
                raise
            await self.send(self.emitter.end_turn(stop))
            return stop

    async def edit(self, text: str) -> str:
        em, path = self.emitter, self.cwd / NOTES
        old = path.read_text(encoding="utf-8") if path.exists() else None
        line = f"- {text}\n"
        new = (old or "") + line
        await self.send(
            em.start(
                "edit",
                title=f"Add a line to {NOTES}",
                kind="edit",
                name="append_line",
                locations=[v2.ToolCallLocation(path=str(path))],
            )
        )
        # A model streams the call's arguments: one growing text item, sent throttled.
        arguments = json.dumps({"path": str(path), "line": line})
        for start in range(0, len(arguments), 16):
            piece = arguments[start : start + 16]
            await self.send(em.grow_text("edit", piece, now=time.monotonic()))
        await self.send(em.end_text("edit"))
        await self.send(em.update("edit", raw_input=json.loads(arguments)))
        answer = await self.ask(
            "edit",
            title=f"Allow the agent to edit {NOTES}?",
            description=f"Your prompt becomes a new line of {path}.",
            content=[text_content(arguments), diff_content(str(path), old, new)],
        )
        if answer.outcome == "cancelled":  # dismissed, or a v1 client's answer after cancel
            await self.send(em.finish("edit", "cancelled"))
            raise Cancelled
        if not answer.approved:
            await self.send(em.finish("edit", "failed"))
            return f"{NOTES} left unchanged (permission {answer.outcome})"
        path.write_text(new, encoding="utf-8")
        # Done: the diff shows the change, the raw arguments can go (a `null` clear).
        await self.send(em.update("edit", status="in_progress", raw_input=None))
        await self.send(em.finish("edit"))
        return f"added a line to {NOTES}"

    async def run_command(self) -> int:
        em, terminal = self.emitter, f"term-{self.turns}"
        command = shlex.join(["python", "-c", SCRIPT])
        await self.send(em.start_terminal(terminal, command=command, cwd=str(self.cwd)))
        await self.send(
            em.start(
                "run",
                title="Run a three-step script",
                kind="execute",
                name="run_command",
                raw_input={"command": command},
                content=[v2.Terminal(terminal_id=terminal)],
            )
        )
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            SCRIPT,
            cwd=self.cwd,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        assert process.stdout is not None
        await self.send(em.update("run", status="in_progress"))
        try:
            while data := await self.until_cancelled(process.stdout.read(4096)):
                await self.send(em.terminal_output(terminal, data))
            code = await process.wait()
        except Cancelled:
            with contextlib.suppress(ProcessLookupError):  # it may have exited meanwhile
                process.kill()
            await process.wait()
            await self.send(em.exit_terminal(terminal, signal="SIGKILL"))
            raise
        await self.send(em.exit_terminal(terminal, exit_code=code))
        status = "completed" if code == 0 else "failed"
        await self.send(em.finish("run", status, raw_output={"exitCode": code}))
        return code

    async def read_missing(self) -> str:
        em, path = self.emitter, self.cwd / MISSING
        await self.send(
            em.start(
                "read",
                title=f"Read {MISSING}",
                kind="read",
                name="read_file",
                locations=[v2.ToolCallLocation(path=str(path))],
                raw_input={"path": str(path)},
            )
        )
        try:
            data = path.read_text(encoding="utf-8")
        except OSError as exc:
            error = f"{exc.strerror}: {path}"
            # Failed: the error is the content, and there is no location to follow (`null`).
            await self.send(
                em.finish("read", "failed", content=[text_content(error)], locations=None)
            )
            return f"reading {MISSING} failed ({exc.strerror})"
        await self.send(em.finish("read", content=[text_content(data)]))
        return f"read {MISSING}"


# --------------------------------------------------------------------------------------------
# v1


class V1Session(Session[V1Connection]):
    PROTOCOL_VERSION = 1

    async def say_chunk(self, text: str) -> None:
        chunk = v1s.AgentMessageChunk(
            session_update="agent_message_chunk",
            content=v1s.TextContentBlock(type="text", text=text),
        )
        await self.conn.session_update(session_id=self.session_id, update=chunk)


class V1Agent:
    """The ACP v1 agent: ``session/prompt`` answers with the stop reason when the turn ends."""

    def __init__(self, conn: V1Connection) -> None:
        self.conn = conn
        self.sessions: dict[str, V1Session] = {}

    async def initialize(self, protocol_version: int, **_: Any) -> v1s.InitializeResponse:
        return v1s.InitializeResponse(
            protocol_version=1,
            agent_capabilities=v1s.AgentCapabilities(),
            agent_info=v1s.Implementation(name=NAME, version=VERSION),
        )

    async def new_session(self, cwd: str, **_: Any) -> v1s.NewSessionResponse:
        session_id = f"sess-{len(self.sessions) + 1}"
        self.sessions[session_id] = V1Session(self.conn, session_id, cwd)
        return v1s.NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> v1s.PromptResponse:
        stop = await _session(self.sessions, session_id).turn(_text(prompt))
        # `stop` is one of the SDK's stop-reason literals (the mapping above), typed as str.
        return v1s.PromptResponse(stop_reason=stop)  # type: ignore[arg-type]

    async def cancel(self, session_id: str, **_: Any) -> None:
        _session(self.sessions, session_id).cancelled.set()


# --------------------------------------------------------------------------------------------
# v2


class V2Session(Session[V2Connection]):
    PROTOCOL_VERSION = 2

    async def say_chunk(self, text: str) -> None:
        chunk = v2s.AgentMessageChunk(
            message_id=f"msg-agent-{self.turns}", content=v2s.TextContentBlock(text=text)
        )
        await self.conn.session_update(session_id=self.session_id, update=chunk)

    async def set_state(self, state: str) -> None:
        update = (
            v2s.RequiresActionSessionStateUpdate()
            if state == "requires_action"
            else v2s.RunningSessionStateUpdate()
        )
        await self.conn.session_update(session_id=self.session_id, update=update)


class V2Agent:
    """The experimental ACP v2 agent: ``session/prompt`` acknowledges the user message at once
    (``messageId``); the turn runs in a task and ends with the emitter's idle ``state_update``."""

    def __init__(self, conn: V2Connection) -> None:
        self.conn = conn
        self.sessions: dict[str, V2Session] = {}
        self.tasks: set[asyncio.Task[str]] = set()
        self.messages = 0

    async def initialize(self, protocol_version: int, **_: Any) -> v2s.InitializeResponse:
        return v2s.InitializeResponse(
            protocol_version=2,
            info=v2s.Implementation(name=NAME, version=VERSION),
            capabilities=v2s.AgentCapabilities(session=v2s.SessionCapabilities()),
        )

    async def new_session(self, cwd: str, **_: Any) -> v2s.NewSessionResponse:
        session_id = f"sess-{len(self.sessions) + 1}"
        self.sessions[session_id] = V2Session(self.conn, session_id, cwd)
        return v2s.NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> v2s.PromptResponse:
        session = _session(self.sessions, session_id)
        self.messages += 1
        message_id = f"msg-user-{self.messages}"
        for block in prompt:  # echo the inserted user message, under its id
            echo = v2s.UserMessageChunk(message_id=message_id, content=block)
            await self.conn.session_update(session_id=session_id, update=echo)
        task = asyncio.create_task(session.turn(_text(prompt)))
        self.tasks.add(task)
        task.add_done_callback(self._done)
        return v2s.PromptResponse(message_id=message_id)

    async def cancel_session(self, session_id: str, **_: Any) -> None:
        _session(self.sessions, session_id).cancelled.set()

    def _done(self, task: asyncio.Task[str]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("the turn failed", exc_info=task.exception())


# --------------------------------------------------------------------------------------------


S = TypeVar("S", V1Session, V2Session)


def _session(sessions: dict[str, S], session_id: str) -> S:
    try:
        return sessions[session_id]
    except KeyError:
        raise RequestError.invalid_params(
            {"sessionId": session_id, "details": "unknown session"}
        ) from None


def _text(prompt: list[Any]) -> str:
    texts = [block.text for block in prompt if getattr(block, "type", None) == "text"]
    return " ".join(texts).strip() or "(no text)"


async def main() -> None:
    # V1Agent implements the part of the SDK's `Agent` protocol it supports.
    # The router takes agent factories; the SDK annotates them with its own Agent protocol.
    await AgentProtocolRouter(v1=V1Agent, v2=V2Agent).run()  # type: ignore[arg-type]


if __name__ == "__main__":
    asyncio.run(main())
