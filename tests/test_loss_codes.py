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

DOCS = Path(__file__).resolve().parent.parent / "docs" / "conversion.md"


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
