"""records: the proxy's --log records, written and read back one side at a time."""

from __future__ import annotations

import json
from typing import Any, cast

from acp_toolcalls.records import (
    REDACTED,
    Direction,
    Redactor,
    is_record,
    log_line,
    one_side,
    read_record,
    skipped_line,
)

MESSAGE = b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w"}}'


def test_a_record_holds_the_wire_line_as_it_was() -> None:
    line = log_line("client->proxy", 1, MESSAGE, 1796356425.5)
    assert line.endswith(b"}\n")
    value = json.loads(line)
    assert value == {
        "time": 1796356425.5,
        "direction": "client->proxy",
        "protocol": 1,
        "message": json.loads(MESSAGE),
    }
    assert is_record(value)
    record = read_record(value)
    assert (record.direction, record.protocol, record.time) == ("client->proxy", 1, 1796356425.5)


def test_a_line_that_is_not_json_is_kept_as_text() -> None:
    value = json.loads(log_line("agent->proxy", None, b"Traceback \xff", 0.0))
    assert value["line"] == "Traceback \ufffd" and value["protocol"] is None
    assert "message" not in value


def test_one_side_is_a_log_like_any_other() -> None:
    lines: list[tuple[int, bytes | int]] = [
        (1, log_line("client->proxy", 1, MESSAGE, 0.0)),
        (2, log_line("proxy->agent", 2, MESSAGE, 0.0)),
        (3, skipped_line("agent->proxy", 2, 123456, 0.0)),
        (4, log_line("proxy->client", 1, b"oops", 0.0)),
        (5, 99),  # an over-long line of the log itself
    ]
    client = list(one_side(lines, "client"))
    assert [number for number, _ in client] == [1, 4, 5]
    assert json.loads(cast(bytes, client[0][1])) == json.loads(MESSAGE)
    assert client[1][1] == b"oops" and client[2][1] == 99
    agent = list(one_side(lines, "agent"))
    # (line 5 is not a record: every side reads it, as a plain log would)
    assert [(number, type(data)) for number, data in agent] == [(2, bytes), (3, int), (5, int)]
    assert agent[1][1] == 123456


def test_a_log_that_is_not_the_proxys_passes_unchanged() -> None:
    # examples/client.py --log writes messages with a "direction" key of their own.
    own = b'{"direction":"incoming","jsonrpc":"2.0","method":"session/update","params":{}}'
    lines = [(1, MESSAGE), (2, own), (3, b"not json")]
    assert list(one_side(lines, "agent")) == lines


def _redacted(redactor: Redactor, direction: Direction, message: object) -> dict[str, Any]:
    record = json.loads(redactor.record(direction, 1, json.dumps(message).encode(), 0.0))
    assert is_record(record)
    return record


def test_credentials_are_redacted_and_the_shape_is_kept() -> None:
    redactor = Redactor()
    new = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/new",
        "params": {
            "cwd": "/w",
            "mcpServers": [
                {"name": "a", "command": "/a", "args": [], "env": [{"name": "K", "value": "s1"}]},
                {
                    "type": "http",
                    "name": "b",
                    "url": "u",
                    "headers": [{"name": "H", "value": "s2"}],
                },
            ],
        },
    }
    record = _redacted(redactor, "client->proxy", new)
    assert record["redacted"] is True and "s1" not in json.dumps(record)
    servers = record["message"]["params"]["mcpServers"]
    assert servers[0]["env"] == [{"name": "K", "value": REDACTED}]
    assert servers[1]["headers"] == [{"name": "H", "value": REDACTED}]
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": 1,
            "authMethods": [{"id": "k", "name": "Key", "_meta": {"apiKey": "s3", "n": 1}}],
        },
    }
    method = _redacted(redactor, "agent->proxy", init)["message"]["result"]["authMethods"][0]
    assert method == {"id": "k", "name": "Key", "_meta": {"apiKey": REDACTED, "n": REDACTED}}


def test_authenticate_params_and_their_answer_are_redacted_in_that_direction_only() -> None:
    redactor = Redactor()
    login = {"jsonrpc": "2.0", "id": 7, "method": "authenticate",
             "params": {"methodId": "k", "_meta": {"token": "s4"}}}  # fmt: skip
    params = _redacted(redactor, "proxy->agent", login)["message"]["params"]
    assert params == {"methodId": "k", "_meta": {"token": REDACTED}}
    answer = {"jsonrpc": "2.0", "id": 7, "result": {"_meta": {"session": "s5"}}}
    other = {"jsonrpc": "2.0", "id": 7, "result": {"stopReason": "end_turn"}}
    assert "redacted" not in _redacted(redactor, "proxy->client", other)  # another connection
    assert _redacted(redactor, "agent->proxy", [answer])["message"] == [
        {"jsonrpc": "2.0", "id": 7, "result": {"_meta": {"session": REDACTED}}}
    ]
    assert "redacted" not in _redacted(redactor, "agent->proxy", other)  # answered once
    assert redactor.redact("client->proxy", b'{"env": not json') == b'"<redacted>"'  # whole
    assert redactor.redact("client->proxy", MESSAGE) is None
