"""What a v1 editor sees of a v2 agent through ``acp-toolcalls bridge`` (issue 26, items 1, 2,
4, 5), over real subprocesses: a scripted v2 agent shaped as claude-agent-acp 0.101.0 and
codex-acp 2.6.0 send their tool calls and permission requests, and a raw v1 editor reads what
the bridge sends it (the harness of ``test_permission_integrity``).

- A Bash permission whose subject shows a ``terminal`` item: the v1 request shows the command
  and its working directory (not "output not available"), and so does the call.
- An edit permission with no ``description``: the v1 request carries the change approved.
- After the answer the call gets its own title back as the subject set it ("Edit files"),
  not an older one (D28, amended 2026-12-06).
- A terminal with no command, output or exit yet is not shown as an empty code block.
"""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.interop.raw import RawClient
from tests.interop.sessions import bounded
from tests.proxy.test_permission_integrity import (
    ALLOW,
    REJECT,
    SID,
    Session,
    _is_tag,
    chosen,
    run,
    update,
)

TERMINAL = "toolu_01"
EDIT = "call_edit"
PATCH = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n"


def bash_call(content: bool = True) -> dict[str, Any]:
    """claude's first report of a Bash tool use: a terminal named after the call."""
    body: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": TERMINAL,
        "title": "Terminal",
        "kind": "execute",
        "status": "pending",
    }
    if content:
        body["content"] = [{"type": "terminal", "terminalId": TERMINAL}]
    return update(body)


def terminal(**fields: Any) -> dict[str, Any]:
    return update({"sessionUpdate": "terminal_update", "terminalId": TERMINAL, **fields})


def permission(
    request_id: int, title: str, tool_call: dict[str, Any], description: str | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {
        "sessionId": SID,
        "title": title,
        "subject": {"type": "tool_call", "toolCall": tool_call},
        "options": [ALLOW, REJECT],
    }
    if description is not None:
        params["description"] = description
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/request_permission",
        "params": params,
    }


def texts(tool_call: dict[str, Any]) -> list[str]:
    return [
        item["content"]["text"]
        for item in tool_call.get("content", [])
        if item.get("type") == "content" and item["content"].get("type") == "text"
    ]


def test_a_v1_user_approving_a_bash_command_sees_the_command_and_its_cwd(tmp_path: Path) -> None:
    steps = [
        {"send": bash_call()},
        {"send": terminal(command="rm -rf build", cwd="/work/project")},
        {
            "send": permission(
                7,
                "rm -rf build",
                {
                    "toolCallId": TERMINAL,
                    "rawInput": {"command": "rm -rf build"},
                    "content": [{"type": "terminal", "terminalId": TERMINAL}],
                },
            )
        },
    ]
    seen: dict[str, Any] = {}

    async def editor(client: RawClient, session: Session) -> None:
        asked = await client.request("session/request_permission")
        seen["request"] = asked["params"]["toolCall"]
        await client.send(chosen(asked["id"], "allow"))
        await asyncio.sleep(0.2)

    _session, client, code, _err = run(tmp_path, (1, 2), steps, editor)
    assert code == 0
    shown = "\n".join(texts(seen["request"]))
    assert "$ rm -rf build" in shown and "Working directory: /work/project" in shown, shown
    assert "output not available" not in json.dumps(seen["request"])
    # The call shows the command and its cwd too, before and while the prompt is open.
    calls = [
        m["params"]["update"]
        for m in client.received
        if _is_tag("tool_call")(m) or _is_tag("tool_call_update")(m)
    ]
    shown_in_call = "\n".join(t for call in calls for t in texts(call))
    assert "$ rm -rf build" in shown_in_call and "/work/project" in shown_in_call


@pytest.mark.parametrize("description", [None, "Update a.txt"], ids=["bare", "described"])
def test_an_edit_permission_carries_the_diff_and_the_answer_restores_the_subjects_title(
    tmp_path: Path, description: str | None
) -> None:
    """Item 2 (no description: the diff was missing) and item 4 (with one: the title went
    back to "Editing files")."""
    diff = {
        "type": "diff",
        "changes": [{"operation": "modify", "path": "/work/project/a.txt"}],
        "patch": {"format": "git_patch", "text": PATCH},
    }
    steps = [
        {
            "send": update(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": EDIT,
                    "title": "Editing files",
                    "kind": "edit",
                    "status": "pending",
                    "content": [diff],
                }
            )
        },
        # codex: "Make edits?" with no description, the subject setting the title only
        {
            "send": permission(
                9, "Make edits?", {"toolCallId": EDIT, "title": "Edit files"}, description
            )
        },
    ]
    seen: dict[str, Any] = {}

    async def editor(client: RawClient, session: Session) -> None:
        asked = await client.request("session/request_permission")
        seen["request"] = asked["params"]["toolCall"]
        await client.send(chosen(asked["id"], "allow"))
        restored = await client.until(
            lambda m: _is_tag("tool_call_update")(m) and "title" in m["params"]["update"]
        )
        seen["restored"] = restored["params"]["update"]

    _session, _client, code, _err = run(tmp_path, (1, 2), steps, editor)
    assert code == 0
    request = seen["request"]
    assert request["title"] == "Make edits?"
    assert request.get("content"), request  # the change being approved is in the request
    assert "+new" in json.dumps(request["content"]) or any(
        item.get("type") == "diff" for item in request["content"]
    )
    assert seen["restored"]["title"] == "Edit files"  # the subject's title, not "Editing files"


def test_a_terminal_with_nothing_to_show_is_no_empty_code_block(tmp_path: Path) -> None:
    steps: list[dict[str, Any]] = [{"send": bash_call()}]

    async def editor(client: RawClient, session: Session) -> None:
        first = await client.until(_is_tag("tool_call"))
        seen.append(first["params"]["update"])
        await asyncio.sleep(0.1)

    seen: list[dict[str, Any]] = []
    _session, _client, code, _err = run(tmp_path, (1, 2), steps, editor)
    assert code == 0
    assert "```" not in json.dumps(seen[0]), seen[0]
    assert not seen[0].get("content"), seen[0]


# --------------------------------------------------------------------------------------------
# Item 6, the other direction: a v1 editor that offers the `_meta` terminal extension (Zed)


class ExtensionEditor(Session):
    """A v1 editor whose initialize offers ``clientCapabilities._meta`` ``offer``."""

    offer: dict[str, Any]

    async def start(self, *options: str) -> RawClient:
        client = await RawClient.start("--agent-version", "2", *options, agent=self.command)
        capabilities = {"_meta": self.offer}
        params = {"protocolVersion": 1, "clientCapabilities": capabilities}
        await client.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        assert (await client.answer_to(0))["result"]["protocolVersion"] == 1
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/new",
                "params": {"cwd": "/tmp", "mcpServers": []},
            }
        )
        assert (await client.answer_to(1))["result"]["sessionId"] == SID
        return client


def chunk(data: bytes) -> dict[str, Any]:
    encoded = base64.b64encode(data).decode()
    return update(
        {"sessionUpdate": "terminal_output_chunk", "terminalId": TERMINAL, "data": encoded}
    )


@pytest.mark.parametrize(
    ("offer", "key"),
    [
        ({"terminal_output": True}, "terminal_output"),
        ({"terminal_output_delta": True}, "terminal_output_delta"),
    ],
    ids=["terminal_output", "terminal_output_delta"],
)
def test_a_v1_editor_offering_the_terminal_extension_gets_a_live_terminal(
    tmp_path: Path, offer: dict[str, Any], key: str
) -> None:
    steps = [
        {"send": bash_call()},
        {"send": terminal(command="make", cwd="/work/project")},
        {"send": chunk(b"building\n")},
        {"send": chunk(b"\x1b[32mok\x1b[0m\n")},
        {"send": terminal(exitStatus={"exitCode": 0})},
        {
            "send": update(
                {"sessionUpdate": "tool_call_update", "toolCallId": TERMINAL, "status": "completed"}
            )
        },
    ]

    async def editor(client: RawClient, session: Session) -> None:
        await client.until(
            lambda m: (
                _is_tag("tool_call_update")(m)
                and m["params"]["update"].get("status") == "completed"
            )
        )

    session = ExtensionEditor(tmp_path, 1, 2, steps)
    session.offer = offer

    async def scenario() -> tuple[RawClient, int, str]:
        client = await session.start()
        await editor(client, session)
        code, err, rest = await client.finish()
        client.received += [json.loads(line) for line in rest.splitlines() if line.strip()]
        return client, code, err

    client, code, err = bounded(scenario())
    assert code == 0 and "Traceback" not in err, err
    calls = [
        m["params"]["update"]
        for m in client.received
        if _is_tag("tool_call")(m) or _is_tag("tool_call_update")(m)
    ]
    assert calls[0]["content"] == [{"type": "terminal", "terminalId": TERMINAL}]
    metas = [call.get("_meta", {}) for call in calls]
    infos = [meta["terminal_info"] for meta in metas if "terminal_info" in meta]
    assert infos == [{"terminal_id": TERMINAL}]  # announced once, at first sight
    output = "".join(meta[key]["data"] for meta in metas if key in meta)
    assert output == "building\n\x1b[32mok\x1b[0m\n"  # each byte once, as the agent wrote it
    exits = [meta["terminal_exit"] for meta in metas if "terminal_exit" in meta]
    assert exits == [{"terminal_id": TERMINAL, "exit_code": 0, "signal": None}]
    assert "```" not in json.dumps(calls)  # no fenced transcript beside the live terminal
