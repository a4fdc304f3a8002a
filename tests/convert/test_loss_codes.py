"""Every ``Loss`` has a stable ``code`` of ``LOSS_CODES``, and docs/conversion.md lists them."""

from __future__ import annotations

import re
from pathlib import Path

from acp_toolcalls import decode, v2
from acp_toolcalls.convert import (
    LOSS_CODES,
    Loss,
    StatelessV2ToV1,
    tool_call_update_to_v1,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "conversion.md"


def test_docs_list_every_loss_code_and_no_other() -> None:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("### Loss codes", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `([a-z-]+)` \|", section, flags=re.MULTILINE)
    assert sorted(listed) == sorted(LOSS_CODES)


def test_codes_are_short_kebab_case() -> None:
    for code in LOSS_CODES:
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", code), code
    assert Loss("$", "why").code == "lossy-mapping"


def test_codes_do_not_change_which_loss_it_is() -> None:
    assert Loss("$.a", "why", "unknown-key") == Loss("$.a", "why")


def test_each_kind_of_loss_has_its_code() -> None:
    update = decode(
        '{"toolCallId":"c","status":"paused","capabilities":{},"x-extra":1}', v2.ToolCallUpdate
    ).value
    _, report = tool_call_update_to_v1(update)
    codes = {loss.path: loss.code for loss in report}
    assert codes == {
        '$["x-extra"]': "unknown-key",
        "$.status": "unrepresentable",
        "$.capabilities": "lossy-mapping",
    }
    line = (
        b'[{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        b'{"sessionUpdate":"tool_call_update","toolCallId":"c","title":"t","kind":7}}}, 1]'
    )
    converted = StatelessV2ToV1().convert(line)
    kinds = {loss.code for loss in converted.losses}
    assert {"input-salvaged", "invalid-message"} <= kinds
    assert kinds <= set(LOSS_CODES)


def test_the_bridges_keep_each_loss_code() -> None:
    # The bridges root a mapping's losses into the message and read input through the
    # converters' frame: the code of each loss survives (it was `lossy-mapping` for all).
    from acp_toolcalls import V1ToV2Bridge, V2ToV1Bridge

    line = (
        b'[{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        b'{"sessionUpdate":"tool_call_update","toolCallId":"c","title":"t","status":"paused",'
        b'"kind":7}}}, 1]'
    )
    bridge = V2ToV1Bridge()
    losses = [*bridge.convert(line).losses, *bridge.flush().losses]
    codes = {loss.path: loss.code for loss in losses}
    assert [c for p, c in codes.items() if p.endswith(".status")] == ["unrepresentable"], codes
    assert "input-salvaged" in codes.values() and "invalid-message" in codes.values()
    v1_line = (
        b'[{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        b'{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","kind":7}}}, 1]'
    )
    codes_v1 = {loss.code for loss in V1ToV2Bridge().convert(v1_line).losses}
    assert {"input-salvaged", "invalid-message"} <= codes_v1 <= set(LOSS_CODES)
