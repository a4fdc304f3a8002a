"""The terminal transcript fallback (D46 (terminal conversion))."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_toolcalls.bridge import TailRenderer, sanitize, tail


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
    from acp_toolcalls.bridge import fenced

    assert fenced("a\n") == "```\na\n```"
    assert fenced("a") == "```\na\n```"
    assert fenced("x ```` y", "diff") == "`````diff\nx ```` y\n`````"
    assert fenced("") == "```\n```"


_PIECES = [
    b"ab",
    b"\n",
    b"\r",
    b"\r\n",
    b"\x08",
    b"\x1b[31m",
    b"\x1b]0;t",
    b"\x07",
    b"\x1b\\",
    b"\x1bP",
    b"\xe2\x82",
    b"\xac",
    b"\x9b",
    b"\x1b",
    b"`",
    b"\t",
    b"\x00",
    "é".encode(),
]


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(_PIECES), max_size=12), min_size=1, max_size=20),
    st.sampled_from([0, 1, 5, 20, 100]),
)
def test_the_tail_renderer_equals_the_whole_render(appends: list[list[bytes]], chars: int) -> None:
    """Issue 19: the renderer settles complete lines once; after every append its transcript
    is the one of all the bytes (escape strings that run over line ends included)."""
    renderer = TailRenderer(chars)
    data = bytearray()
    for pieces in appends:
        data += b"".join(pieces)
        assert renderer.render(data) == tail(sanitize(bytes(data)), chars)


def test_the_tail_renderer_starts_again_on_shorter_output() -> None:
    renderer = TailRenderer(10)
    assert renderer.render(b"one\ntwo\nthree\n") == "[… 4 earlier characters omitted]\ntwo\nthree\n"
    assert renderer.render(b"x\n") == "x\n"
