"""traffic.py: the proxy's --log records, written and read back one side at a time."""

from __future__ import annotations

import json

from acp_toolcalls.traffic import is_record, log_line, one_side, read_record, skipped_line

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
    lines = [
        (1, log_line("client->proxy", 1, MESSAGE, 0.0)),
        (2, log_line("proxy->agent", 2, MESSAGE, 0.0)),
        (3, skipped_line("agent->proxy", 2, 123456, 0.0)),
        (4, log_line("proxy->client", 1, b"oops", 0.0)),
        (5, 99),  # an over-long line of the log itself
    ]
    client = list(one_side(lines, "client"))
    assert [number for number, _ in client] == [1, 4, 5]
    assert json.loads(client[0][1]) == json.loads(MESSAGE)  # type: ignore[arg-type]
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
