"""Fake model servers on 127.0.0.1 for the real agents of ``tests/proxy/test_real_agents.py``.

Two HTTP servers, each on a free port of 127.0.0.1 in a thread of the test process:

- :class:`FakeResponsesServer`, the OpenAI Responses API (``POST .../responses``, streamed as
  server-sent events) that codex (``codex app-server``, under codex-acp) asks;
- :class:`FakeMessagesServer`, the Anthropic Messages API (``POST .../v1/messages``, streamed
  as server-sent events) that Claude Code (under claude-agent-acp) asks.

Each plays one scripted :class:`Turn`: a request whose conversation holds no answer of the model
yet (only the user's prompt) is answered with the turn's tool call; any later request (the tool
call's result, a side request after it) with a closing text, so the agent ends its turn. The answer
depends only on the request, so the agents' own side requests (titles, summaries, retries) and
the order of their requests do not matter. A request for the closing text after the client
cancelled never comes; the server answers whatever comes.

Every request is recorded (:attr:`FakeModelServer.requests`: method, path, body) so that a
test, or a person, can see what the agents really send. Nothing listens beyond 127.0.0.1 and
nothing is forwarded anywhere.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from typing import Any, ClassVar

FINAL_TEXT = "Done."


@dataclass(frozen=True)
class Turn:
    """What the fake model does for the prompt: one tool call, then :data:`FINAL_TEXT`.

    ``tool`` is the tool's name as the agent declares it (``exec_command``, ``apply_patch``,
    ``Bash``, ``Write``, ``Edit``); ``arguments`` its input: a JSON object, or for a freeform
    (custom) tool of the Responses API its raw text.
    """

    tool: str
    arguments: dict[str, Any] | str
    call_id: str = "call_1"


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: Any  # the parsed JSON body, or the text when it is not JSON, or None
    headers: dict[str, str] = field(repr=False, default_factory=dict)


class FakeModelServer:
    """A threading HTTP server on 127.0.0.1 (a free port) playing one :class:`Turn`.

    Use as a context manager; :attr:`base_url` is where to point the agent. Subclasses say
    how a request is answered (:meth:`answer`).
    """

    kind: ClassVar[str] = "fake"

    def __init__(self, turn: Turn | None = None) -> None:
        self.turn = turn  # set before the agent asks (it may name paths of the agent's setup)
        self.requests: list[Request] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._ids = count(1)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # recorded in server.requests instead

            def do_GET(self) -> None:
                server._handle(self, "GET")

            def do_POST(self) -> None:
                server._handle(self, "POST")

            def do_HEAD(self) -> None:
                server._handle(self, "HEAD")

            def do_CONNECT(self) -> None:
                server._handle(self, "CONNECT")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name=f"fake-{self.kind}", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)

    def next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def model_requests(self) -> list[Request]:
        """The recorded requests that asked the model for an answer."""
        return [r for r in self.requests if r.method == "POST" and self.is_model_path(r.path)]

    # --- the HTTP side ------------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        request = Request(method, handler.path, body, dict(handler.headers.items()))
        with self._lock:
            self.requests.append(request)
        if method == "CONNECT" or not handler.path.startswith("/"):
            # A request through the proxy variables, meant for another host: refused.
            status, content_type, chunks = 403, "text/plain", iter([b"nothing leaves"])
            method = "HEAD"  # no body after the refusal
        else:
            status, content_type, chunks = self._answer_logged(request)
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        if method == "HEAD":
            return
        try:
            for chunk in chunks:
                handler.wfile.write(chunk)
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the agent hung up (a cancelled turn)

    def _answer_logged(self, request: Request) -> tuple[int, str, Iterator[bytes]]:
        try:
            return self.answer(request)
        except Exception as error:  # a bug of the fake: say so in the answer and the record
            self.errors.append(f"{request.method} {request.path}: {error!r}")
            return 500, "application/json", iter([b'{"error":"fake"}'])

    def stray_requests(self) -> list[Request]:
        """Requests meant for another host (through the proxy variables): refused."""
        return [r for r in self.requests if r.method == "CONNECT" or not r.path.startswith("/")]

    # --- what subclasses define ---------------------------------------------------------------

    def is_model_path(self, path: str) -> bool:
        raise NotImplementedError

    def answer(self, request: Request) -> tuple[int, str, Iterator[bytes]]:
        raise NotImplementedError


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def _json(value: Any) -> tuple[int, str, Iterator[bytes]]:
    return 200, "application/json", iter([json.dumps(value).encode()])


def _not_found() -> tuple[int, str, Iterator[bytes]]:
    return 404, "application/json", iter([b'{"error":{"message":"not found"}}'])


# --- the OpenAI Responses API (codex) -----------------------------------------------------------


class FakeResponsesServer(FakeModelServer):
    """``POST {base_url}/responses``, streamed; :attr:`base_url` ends in ``/v1``."""

    kind = "openai-responses"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def is_model_path(self, path: str) -> bool:
        return path.split("?")[0].rstrip("/").endswith("/responses")

    def answer(self, request: Request) -> tuple[int, str, Iterator[bytes]]:
        path = request.path.split("?")[0].rstrip("/")
        if request.method == "GET" and path.endswith("/models"):
            return _json({"object": "list", "data": [], "models": []})
        if request.method != "POST" or not self.is_model_path(path):
            return _not_found()
        body = request.body if isinstance(request.body, dict) else {}
        return 200, "text/event-stream", iter(self._events(body))

    def _events(self, body: dict[str, Any]) -> list[bytes]:
        number = self.next_id()
        response_id = f"resp_{number}"
        model = str(body.get("model") or "gpt-5.5")
        given = body.get("input")
        items = given if isinstance(given, list) else []
        # Once the conversation holds a tool call, the turn's call has been made: close it.
        answered = any(
            isinstance(item, dict) and item.get("type") in ("function_call", "custom_tool_call")
            for item in items
        )
        tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        turn = self.turn
        if answered or turn is None or turn.tool not in tools:
            item: dict[str, Any] = {
                "type": "message",
                "id": f"msg_{number}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": FINAL_TEXT, "annotations": []}],
            }
        elif isinstance(turn.arguments, str):  # a freeform tool (apply_patch)
            item = {
                "type": "custom_tool_call",
                "id": f"ctc_{number}",
                "status": "completed",
                "call_id": turn.call_id,
                "name": turn.tool,
                "input": turn.arguments,
            }
        else:
            item = {
                "type": "function_call",
                "id": f"fc_{number}",
                "status": "completed",
                "call_id": turn.call_id,
                "name": turn.tool,
                "arguments": json.dumps(turn.arguments),
            }
        response = {
            "id": response_id,
            "object": "response",
            "model": model,
            "status": "in_progress",
        }
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        events = [
            _sse("response.created", {"type": "response.created", "response": response}),
            _sse(
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": 0, "item": item},
            ),
        ]
        if item["type"] == "message":
            events.append(
                _sse(
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "delta": FINAL_TEXT,
                    },
                )
            )
        events.append(
            _sse(
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            )
        )
        done = {**response, "status": "completed", "output": [item], "usage": usage}
        events.append(_sse("response.completed", {"type": "response.completed", "response": done}))
        return events


# --- the Anthropic Messages API (claude) --------------------------------------------------------


class FakeMessagesServer(FakeModelServer):
    """``POST {base_url}/v1/messages``, streamed or not; :attr:`base_url` is the origin."""

    kind = "anthropic-messages"

    @property
    def base_url(self) -> str:
        return self.origin

    def is_model_path(self, path: str) -> bool:
        return path.split("?")[0].rstrip("/").endswith("/v1/messages")

    def answer(self, request: Request) -> tuple[int, str, Iterator[bytes]]:
        path = request.path.split("?")[0].rstrip("/")
        body = request.body if isinstance(request.body, dict) else {}
        if request.method == "POST" and path.endswith("/v1/messages/count_tokens"):
            return _json({"input_tokens": 10})
        if request.method != "POST" or not self.is_model_path(path):
            return _not_found()
        message = self._message(body)
        if not body.get("stream"):
            return _json(message)
        return 200, "text/event-stream", iter(self._events(message))

    def _message(self, body: dict[str, Any]) -> dict[str, Any]:
        number = self.next_id()
        messages = body.get("messages") or []
        # Once the conversation holds an answer of the model, the turn's call has been made
        # (a side request after it, such as a prompt suggestion, gets the closing text too).
        answered = any(isinstance(m, dict) and m.get("role") == "assistant" for m in messages)
        tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        turn = self.turn
        block: dict[str, Any]
        if answered or turn is None or turn.tool not in tools:
            block = {"type": "text", "text": FINAL_TEXT}
            stop = "end_turn"
        else:
            block = {
                "type": "tool_use",
                "id": f"toolu_{turn.call_id}",
                "name": turn.tool,
                "input": turn.arguments,
            }
            stop = "tool_use"
        return {
            "id": f"msg_{number}",
            "type": "message",
            "role": "assistant",
            "model": str(body.get("model") or "claude-sonnet-4-5"),
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    def _events(self, message: dict[str, Any]) -> list[bytes]:
        [block] = message["content"]
        start = {**message, "content": [], "stop_reason": None}
        events = [_sse("message_start", {"type": "message_start", "message": start})]
        if block["type"] == "text":
            events += [
                _sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                ),
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": block["text"]},
                    },
                ),
            ]
        else:
            events += [
                _sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {**block, "input": {}},
                    },
                ),
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {
                            "type": "input_json_delta",
                            "partial_json": json.dumps(block["input"]),
                        },
                    },
                ),
            ]
        events += [
            _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
            _sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            ),
            _sse("message_stop", {"type": "message_stop"}),
        ]
        return events
