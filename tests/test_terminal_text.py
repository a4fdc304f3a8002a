"""The terminal transcript fallback (TOOL-CALLS.md 9.6)."""

from __future__ import annotations

import pytest

from acp_toolcalls.terminal_text import sanitize, tail


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (b"plain\n", "plain\n"),
        (b"\x1b[31mred\x1b[0m ok", "red ok"),
        (b"\x1b[2K\x1b[1;1Hmoved", "moved"),
        (b"\x1b]0;window title\x07after", "after"),
        (b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
        (b"a\r\nb\r\n", "a\nb\n"),
        (b"10%\r50%\r100%\ndone", "100%\ndone"),
        (b"progress 50%\r\n", "progress 50%\n"),
        (b"tail\r", "tail"),
        (b"abc\b\bX", "aX"),
        (b"bell\x07 nul\x00 del\x7f tab\tok", "bell nul del tab\tok"),
        (b"\xff\xfe", "\ufffd\ufffd"),
        ("caf\u00e9 \u009b1m".encode(), "caf\u00e9 "),  # 8-bit CSI
        ("x\u0085y".encode(), "xy"),  # C1 control
        (b"cut off \x1b", "cut off "),
        (b"\x1bPq#0;2;0;0;0\x1b\\sixel gone", "sixel gone"),
        (b"keypad \x1b=on", "keypad on"),
    ],
)
def test_sanitize(raw: bytes, text: str) -> None:
    assert sanitize(raw) == text


def test_sanitized_text_holds_no_control_characters() -> None:
    every_byte = bytes(range(256)) * 3
    for char in sanitize(every_byte):
        assert char in "\t\n" or (ord(char) >= 0x20 and not 0x7F <= ord(char) <= 0x9F)


def test_tail_keeps_the_end_and_says_what_it_dropped() -> None:
    assert tail("short", 10) == "short"
    assert tail("0123456789abc", 3) == "[… 10 earlier characters omitted]\nabc"


def test_fence_is_longer_than_any_backtick_run_inside() -> None:
    from acp_toolcalls.terminal_text import fenced

    assert fenced("a\n") == "```\na\n```"
    assert fenced("a") == "```\na\n```"
    assert fenced("x ```` y", "diff") == "`````diff\nx ```` y\n`````"
    assert fenced("") == "```\n```"
