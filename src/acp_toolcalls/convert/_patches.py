"""Git patches read and applied exactly: a ``git_patch`` text's sections, each applied to a
file's text forward or in reverse, with no offset and no fuzz (D27, amended 2026-12-06).

Rules this module owns (sans-I/O: text in, text out):

- ``read_patch`` reads a ``git_patch`` text (D46 (diffs): one or more ``diff --git`` sections in
  Git's format, absolute unprefixed paths, quoted as Git quotes them) into its sections, or
  ``None`` when any line of it is not what Git writes there. A section is the ``diff --git``
  line (or a bare ``---``/``+++`` pair), Git's extended header lines (``old mode``, ``new file
  mode``, ``rename from``, ``similarity index``, ``index``, ...), then either the ``---`` and
  ``+++`` lines and hunks, or a binary marker (``Binary files ... differ``, ``GIT binary
  patch``: the section is read as binary, its lines skipped). Paths: ``--- /dev/null`` is the
  missing side of an add, ``+++ /dev/null`` of a delete; a path Git quoted is unquoted; the
  tab Git writes after a path with a space is not part of it.
- A hunk is ``@@ -A[,B] +C[,D] @@[ heading]`` (a count omitted is 1) and exactly ``B`` old and
  ``D`` new lines: `` `` context (both sides), ``-`` removed, ``+`` added, each ending with the
  patch's ``\\n`` (a ``\\r`` before it is part of the line); a ``\\ ...`` line after one (Git's
  ``\\ No newline at end of file``) says the side(s) of the line before end without a newline.
  A blank line inside a hunk, a count that does not add up, or text between sections makes the
  patch unreadable.
- ``apply_section`` applies a section's hunks to a text, forward (old -> new) or in reverse
  (new -> old), exactly: each hunk at the line its header names for the side applied (``A``,
  or ``A + 1`` for ``B = 0``: the line the insertion follows), the hunks in order and not
  overlapping, every context and removed line equal to the text's line byte for byte (line
  ends included); the other side's start must be where the hunk's lines land; a hunk with no
  trailing context must end at the end of the text (``git apply``'s rule without
  ``--unidiff-zero``: only the end of the file cuts a hunk's context short, so a patch made
  with no context at all applies only at the end); only the last line of the result may lack
  a newline. Anything else: ``None``.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = [
    "Hunk",
    "PatchSection",
    "apply_section",
    "read_patch",
    "split_lines",
    "unquote_git_path",
]

Operation = Literal["add", "delete", "modify", "rename", "copy"]

_HUNK = re.compile(r"@@ -([0-9]+)(?:,([0-9]+))? \+([0-9]+)(?:,([0-9]+))? @@(?: .*)?")
_EXTENDED = (
    "old mode ",
    "new mode ",
    "deleted file mode ",
    "new file mode ",
    "similarity index ",
    "dissimilarity index ",
    "index ",
    "rename from ",
    "rename to ",
    "copy from ",
    "copy to ",
)
"""Git's extended header lines (``git diff`` documentation, "generating patch text")."""
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


class Hunk:
    """One hunk: where it starts on each side (as its header says), and its lines per side."""

    __slots__ = (
        "leading",
        "new_count",
        "new_lines",
        "new_start",
        "old_count",
        "old_lines",
        "old_start",
        "trailing",
    )

    def __init__(self, old_start: int, old_count: int, new_start: int, new_count: int) -> None:
        self.old_start = old_start
        self.old_count = old_count
        self.new_start = new_start
        self.new_count = new_count
        self.old_lines: list[str] = []  # context and removed lines, their line ends included
        self.new_lines: list[str] = []  # context and added lines
        self.leading = 0  # context lines before the first change
        self.trailing = 0  # context lines after the last change


class PatchSection:
    """One file's section of a Git patch."""

    __slots__ = ("binary", "hunks", "mode_change", "new_path", "old_path", "operation", "text")

    def __init__(self) -> None:
        self.old_path: str | None = None  # None: /dev/null (an add), or not named
        self.new_path: str | None = None  # None: /dev/null (a delete), or not named
        self.operation: Operation = "modify"
        self.hunks: list[Hunk] = []
        self.binary = False
        self.mode_change = False  # `old mode` / `new mode` lines
        self.text = ""  # the section as it is in the patch


def unquote_git_path(text: str) -> str | None:
    """A path as Git writes it in a header, unquoted (``None``: a bad quoted form)."""
    if not text.startswith('"'):
        return text
    if len(text) < 2 or not text.endswith('"'):
        return None
    body = text[1:-1]
    out = bytearray()
    index = 0
    while index < len(body):
        char = body[index]
        if char == '"':
            return None
        if char != "\\":
            out += char.encode("utf-8", "surrogatepass")
            index += 1
            continue
        escape = body[index + 1 : index + 2]
        if escape in _ESCAPES:
            out.append(_ESCAPES[escape])
            index += 2
        elif re.fullmatch(r"[0-3][0-7][0-7]", body[index + 1 : index + 4]):
            out.append(int(body[index + 1 : index + 4], 8))
            index += 4
        else:
            return None
    try:
        return out.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None


def _side(text: str) -> tuple[bool, str | None]:
    """A ``---``/``+++`` line's path: (readable, path or ``None`` for ``/dev/null``)."""
    if text.endswith("\t"):
        text = text[:-1]  # Git's tab after a path with a space in it
    if text == "/dev/null":
        return True, None
    path = unquote_git_path(text)
    return path is not None, path


def _git_line_paths(rest: str) -> tuple[str | None, str | None]:
    """The two paths of a ``diff --git A B`` line, when it can be read without the other
    header lines: both quoted, or the same unquoted path twice."""
    if rest.startswith('"'):
        match = re.fullmatch(r'("(?:[^"\\]|\\.)*") ("(?:[^"\\]|\\.)*")', rest)
        if match is None:
            return None, None
        return unquote_git_path(match[1]), unquote_git_path(match[2])
    half = len(rest) // 2
    if len(rest) % 2 == 1 and rest[half] == " " and rest[:half] == rest[half + 1 :]:
        return rest[:half], rest[:half]
    return None, None


def read_patch(text: str) -> list[PatchSection] | None:
    """The sections of a ``git_patch`` text, or ``None`` when it is not one this reads."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    sections: list[PatchSection] = []
    index = 0
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    while index < len(lines):
        start = index
        section = PatchSection()
        line = lines[index]
        if line.startswith("diff --git "):
            section.old_path, section.new_path = _git_line_paths(line[11:])
            index += 1
        elif not line.startswith("--- "):
            return None
        index = _headers(lines, index, section)
        if index < 0:
            return None
        if section.binary:
            while index < len(lines) and not lines[index].startswith("diff --git "):
                index += 1
        else:
            index = _hunks(lines, index, section)
            if index < 0:
                return None
        section.text = text[offsets[start] : offsets[index]]
        sections.append(section)
    return sections


def _headers(lines: list[str], index: int, section: PatchSection) -> int:
    """The extended header lines and the ``---``/``+++`` pair; the index after them (-1:
    unreadable)."""
    while index < len(lines):
        line = lines[index]
        if line.startswith("--- "):
            if index + 1 >= len(lines) or not lines[index + 1].startswith("+++ "):
                return -1
            old_ok, old = _side(line[4:])
            new_ok, new = _side(lines[index + 1][4:])
            if not (old_ok and new_ok) or (old is None and new is None):
                return -1
            section.old_path, section.new_path = old, new
            if old is None:
                section.operation = "add"
            elif new is None:
                section.operation = "delete"
            return index + 2
        if line.startswith(("Binary files ", "GIT binary patch")):
            section.binary = True
            return index
        if line.startswith("diff --git "):
            return index  # a section without hunks (a mode change, a rename, an empty file)
        prefix = next((p for p in _EXTENDED if line.startswith(p)), None)
        if prefix is None:
            return -1
        value = line[len(prefix) :]
        if prefix in ("rename from ", "copy from ", "rename to ", "copy to "):
            path = unquote_git_path(value)
            if path is None:
                return -1
            if prefix.endswith("from "):
                section.old_path = path
            else:
                section.new_path = path
            section.operation = "rename" if prefix.startswith("rename") else "copy"
        elif prefix == "new file mode ":
            section.operation = "add"
            section.old_path = None
        elif prefix == "deleted file mode ":
            section.operation = "delete"
            section.new_path = None
        elif prefix in ("old mode ", "new mode "):
            section.mode_change = True
        index += 1
    return index


def _hunks(lines: list[str], index: int, section: PatchSection) -> int:
    """The section's hunks; the index after them (-1: unreadable)."""
    while index < len(lines) and not lines[index].startswith("diff --git "):
        match = _HUNK.fullmatch(lines[index])
        if match is None:
            return -1
        hunk = Hunk(
            int(match[1]),
            1 if match[2] is None else int(match[2]),
            int(match[3]),
            1 if match[4] is None else int(match[4]),
        )
        index += 1
        old_left, new_left = hunk.old_count, hunk.new_count
        changed = False
        last = ""  # the kind of the line before (a marker's subject)
        while old_left or new_left or (index < len(lines) and lines[index][:1] == "\\"):
            if index >= len(lines):
                return -1
            line = lines[index]
            kind = line[:1]
            index += 1
            if kind == "\\":
                if not _mark(hunk, last):
                    return -1
                last = "\\"
                continue
            body = line[1:] + "\n"
            if kind == " " and old_left and new_left:
                hunk.old_lines.append(body)
                hunk.new_lines.append(body)
                old_left, new_left = old_left - 1, new_left - 1
                if changed:
                    hunk.trailing += 1
                else:
                    hunk.leading += 1
            elif kind == "-" and old_left:
                hunk.old_lines.append(body)
                old_left -= 1
                changed, hunk.trailing = True, 0
            elif kind == "+" and new_left:
                hunk.new_lines.append(body)
                new_left -= 1
                changed, hunk.trailing = True, 0
            else:
                return -1
            last = kind
        section.hunks.append(hunk)
    return index


def _mark(hunk: Hunk, last: str) -> bool:
    """A ``\\ No newline at end of file`` line: the line before (of the side(s) it is on)
    has no line end; ``False`` where no line can take it."""
    sides = {" ": (hunk.old_lines, hunk.new_lines), "-": (hunk.old_lines,), "+": (hunk.new_lines,)}
    if last not in sides:
        return False
    for lines in sides[last]:
        if not lines or not lines[-1].endswith("\n"):
            return False
        lines[-1] = lines[-1][:-1]
    return True


def split_lines(text: str) -> list[str]:
    """``text``'s lines, each with its ``\\n`` (the last one may have none); Git's lines end at
    ``\\n`` only."""
    lines = text.split("\n")
    last = lines.pop()
    out = [line + "\n" for line in lines]
    if last:
        out.append(last)
    return out


def apply_section(text: str, section: PatchSection, *, reverse: bool = False) -> str | None:
    """``text`` with the section's hunks applied exactly (``reverse``: new -> old), or
    ``None`` when they do not apply as the module's rules say."""
    lines = split_lines(text)
    out: list[str] = []
    cursor = 0
    for hunk in section.hunks:
        old = (hunk.old_lines, hunk.old_start, hunk.old_count)
        new = (hunk.new_lines, hunk.new_start, hunk.new_count)
        (source, start, count), (target, target_start, target_count) = (
            (new, old) if reverse else (old, new)
        )
        at = start if count == 0 else start - 1
        end = at + len(source)
        if at < cursor or end > len(lines) or lines[at:end] != source:
            return None
        if not hunk.trailing and end != len(lines):
            return None  # its context cut short by the end of the file: it must end there
        out.extend(lines[cursor:at])
        if (target_start if target_count == 0 else target_start - 1) != len(out):
            return None
        out.extend(target)
        cursor = end
    out.extend(lines[cursor:])
    if any(not line.endswith("\n") for line in out[:-1]):
        return None  # a line without its newline is not the last one
    return "".join(out)
