"""``bridge --log`` redaction on the parsed value, and a log that any line the reader accepts
cannot end (issue 27, item 7 and the ``--log`` part of item 3), over real subprocesses.

A name spelled with escapes is the name (``"\\u0065nv"`` is ``env``); an ``authenticate`` line
that cannot be parsed (trailing garbage) or has a key twice (``params`` twice: readers
disagree on which one counts) is redacted whole. A line nested hundreds deep, with a
credential in it or not, from either side, is logged and the session goes on: the editor's
prompt is answered and the bridge exits 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.interop.raw import RawClient
from tests.interop.sessions import bounded
from tests.proxy.test_permission_integrity import SID, Session
from tests.proxy.test_proxy_faults import prompt, turn_end, turn_ended

PAIRINGS = [(1, 1), (1, 2), (2, 2)]

ENV_ESCAPED = (
    b'{"jsonrpc":"2.0","id":10,"method":"session/new","params":{"cwd":"/tmp","mcpServers":['
    b'{"name":"f","command":"/bin/f","args":[],'
    b'"\\u0065nv":[{"name":"T","value":"sk-env-secret"}]},'
    b'{"type":"http","name":"w","url":"https://x.invalid",'
    b'"h\\u0065aders":[{"name":"A","value":"sk-hdr-secret"}]}]}}'
)
METHOD_ESCAPED = (
    b'{"jsonrpc":"2.0","id":11,"method":"\\u0061uthenticate",'
    b'"params":{"methodId":"key","_meta":{"apiKey":"sk-escaped-secret"}}}'
)
SLASH_ESCAPED = (
    b'{"jsonrpc":"2.0","id":12,"method":"auth\\/login",'
    b'"params":{"methodId":"key","_meta":{"apiKey":"sk-slash-secret"}}}'
)
TRAILING = (
    b'{"jsonrpc":"2.0","id":13,"method":"authenticate",'
    b'"params":{"methodId":"key","_meta":{"apiKey":"sk-trailing-secret"}}} trailing'
)
TWICE = (
    b'{"jsonrpc":"2.0","id":14,"method":"authenticate","params":{"methodId":"key"},'
    b'"params":{"methodId":"key","_meta":{"apiKey":"sk-twice-secret"}}}'
)
METHOD_TWICE = (
    b'{"jsonrpc":"2.0","id":15,"method":"authenticate","method":"session/load",'
    b'"params":{"methodId":"key","_meta":{"apiKey":"sk-method-twice-secret"}}}'
)
LINES = {
    ENV_ESCAPED: ("sk-env-secret", "sk-hdr-secret"),
    METHOD_ESCAPED: ("sk-escaped-secret",),
    SLASH_ESCAPED: ("sk-slash-secret",),
    TRAILING: ("sk-trailing-secret",),
    TWICE: ("sk-twice-secret",),
    METHOD_TWICE: ("sk-method-twice-secret",),  # a reader keeping the first key authenticates
}  # (METHOD_TWICE: what a converting bridge makes of it, a session/load, is logged as such)
WHOLE = (TRAILING, TWICE, METHOD_TWICE)


def _records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("pairing", PAIRINGS, ids=lambda p: f"v{p[0]}-v{p[1]}")
def test_every_spelling_of_a_credential_is_redacted_in_the_log(
    tmp_path: Path, pairing: tuple[int, int]
) -> None:
    session = Session(tmp_path, *pairing, [])
    log = tmp_path / "traffic.jsonl"

    async def scenario() -> tuple[int, str]:
        client = await session.start("--log", str(log))
        for line in LINES:
            await client.send(line)
        await client.send(prompt(20, "hello"))  # read after them all: they were all logged
        return (await client.finish())[:2]

    _code, err = bounded(scenario())
    assert "Traceback" not in err and "a bug" not in err, err
    text = log.read_text(encoding="utf-8")
    editor_text = "\n".join(r for r in text.splitlines() if '"client->proxy"' in r)
    for line, secrets in LINES.items():
        # A converting bridge sends METHOD_TWICE on as what it read last (a session/load).
        where = editor_text if line is METHOD_TWICE else text
        for secret in secrets:
            assert secret not in where, (secret, pairing)
    from_editor = [r for r in _records(log) if r["direction"] == "client->proxy"]
    whole = [r for r in from_editor if r.get("message") == "<redacted>"]
    assert len(whole) == len(WHOLE) and all(r["redacted"] is True for r in whole)
    names = [r["message"].get("method") for r in from_editor if isinstance(r["message"], dict)]
    assert "authenticate" in names and "auth/login" in names  # the escaped names, read


def _deep(depth: int, *, secret: bool) -> str:
    """A JSON ``_meta`` object with a value ``depth`` arrays deep (under ``env`` when
    ``secret``), as text: the json module would recurse that deep."""
    inner = "[" * depth + ('"sk-deep-secret"' if secret else '"x"') + "]" * depth
    return f'{{"env":{{"DEEP":{inner}}}}}' if secret else f'{{"deep":{inner}}}'


def _deep_chunk(depth: int, secret: bool, version: int) -> str:
    message = ',"messageId":"m1"' if version == 2 else ""
    head = '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"' + SID + '",'
    body = '"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"d"}'
    return head + body + message + ',"_meta":' + _deep(depth, secret=secret) + "}}}"


@pytest.mark.parametrize("pairing", [(1, 2), (2, 1)], ids=lambda p: f"v{p[0]}-v{p[1]}")
@pytest.mark.parametrize("depth", [250, 980], ids=["under-the-limit", "over-the-limit"])
def test_a_deep_line_from_either_side_is_logged_and_the_prompt_answered(
    tmp_path: Path, pairing: tuple[int, int], depth: int
) -> None:
    editor_version, agent_version = pairing
    steps: list[dict[str, Any]] = [
        {"await": {"method": "session/prompt"}, "as": "prompt"},
        {"raw": _deep_chunk(depth, True, agent_version)},
        {"raw": _deep_chunk(depth, False, agent_version)},
        *turn_end(agent_version),
    ]
    session = Session(tmp_path, editor_version, agent_version, steps)
    log = tmp_path / "traffic.jsonl"
    editor_line = (
        '{"jsonrpc":"2.0","method":"_x/deep","params":{"sessionId":"'
        + SID
        + '","_meta":'
        + _deep(depth, secret=True)
        + "}}"
    )

    async def scenario() -> tuple[int, str]:
        client: RawClient = await session.start("--log", str(log))
        await client.send(editor_line.encode())
        await client.send(prompt(5, "hello"))
        await client.until(turn_ended(editor_version, 5))
        return (await client.finish())[:2]

    code, err = bounded(scenario())
    assert code == 0, err
    assert "Traceback" not in err and "a bug" not in err and "internal error" not in err, err
    text = log.read_text(encoding="utf-8")
    assert "sk-deep-secret" not in text
    lines = text.splitlines()
    editor = [line for line in lines if '"direction":"client->proxy"' in line]
    assert len(editor) == 4  # initialize, session/new, the deep line, the prompt
    assert "[" * depth in editor[2] or '"message":"<redacted>"' in editor[2]  # raw, or whole
    agent = [line for line in lines if '"direction":"agent->proxy"' in line]
    assert sum("[" * depth in line for line in agent) >= 1  # the line without a credential
