"""Diffs both ways: Git patches out of v1 whole-file texts, v1 diffs or text out of v2 diffs.

Rules this module owns (D46 (diff conversion); D26, D27):

- v1 -> v2: a v1 diff becomes a v2 ``add`` (``oldText`` omitted or ``null``) or ``modify``
  (any string, ``""`` included: D26) with ``fileType: "text"`` and a generated Git patch
  (``git_patch``), which is omitted when the old and new texts are equal. Item ``_meta`` is
  copied; unknown keys are reported, not carried (D19).
- ``git_patch``: one ``diff --git`` section in Git's own format (absolute, unprefixed paths
  quoted as Git quotes them, 3 lines of context, the no-newline marker), byte for byte what
  ``git diff`` writes.
- v2 -> v1: a diff that adds one text file whose ``git_patch`` holds the whole new text is a
  v1 diff (``_PURE_ADD``); any other diff is one text item with a line per change and the
  patch in a fenced block (``diff_summary``): there is no mechanical mapping back to
  ``oldText``/``newText`` (D27). Fields a v1 diff has no place for are reported. The bridge
  rebuilds the texts of other diffs from the files on disk where it can (``bridge._disk_diffs``,
  the D27 amendment) and falls back to this text, saying why.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from itertools import islice
from typing import Any

import msgspec
from msgspec import UNSET

from .. import v1, v2
from ._fence import fenced
from ._kernel import TO_V1_MISSING, Losses, copy_meta, lookup, report_extra

# --------------------------------------------------------------------------------------------
# v1 -> v2: Git patches (D46 (diff conversion))

_NO_NEWLINE = "\\ No newline at end of file\n"


_C_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
}


def _quote_table() -> tuple[str, ...]:
    # Git's quote_c_style: `"` and `\` escaped, C escapes for \a \b \t \n \v \f \r, octal for
    # every other control byte, DEL and every byte of a non-ASCII character.
    table = [chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}" for b in range(256)]
    for char, escaped in _C_ESCAPES.items():
        table[ord(char)] = escaped
    return tuple(table)


_QUOTE = _quote_table()


def _git_path(path: str) -> str:
    """``path`` as Git writes it in patch headers: as is, or double-quoted and C-escaped."""
    if path.isascii() and path.isprintable() and '"' not in path and "\\" not in path:
        return path  # no byte Git escapes (0x20-0x7e but `"` and `\`): the common path
    raw = path.encode("utf-8", "surrogatepass")
    quoted = "".join(_QUOTE[b] for b in raw)
    if len(quoted) == len(raw):  # no byte needed escaping
        return path
    return f'"{quoted}"'


def _lines(text: str) -> list[str]:
    # Git lines end at "\n" only (str.splitlines would also split at "\r", "\x0c", ...).
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    if not lines[-1]:
        lines.pop()
    return lines


def git_patch(path: str, old: str | None, new: str) -> str:
    """A ``git_patch`` text turning ``old`` into ``new`` (``old=None``: a new file).

    One ``diff --git`` section in Git's format with absolute, unprefixed paths (D46 (diffs)):
    ``new file mode 100644`` and ``--- /dev/null`` for a new file, unified hunks with 3 lines
    of context and Git hunk headers, and ``\\ No newline at end of file`` after a side's last
    line when it has no trailing newline. Returns ``""`` for an existing file whose text does
    not change, as Git writes nothing for it (and rejects a section without hunks).
    """
    if old is not None and old == new:
        return ""
    name = _git_path(path)
    if old is None:
        head = f"diff --git {name} {name}\nnew file mode 100644\n--- /dev/null\n+++ {name}\n"
    else:
        head = f"diff --git {name} {name}\n--- {name}\n+++ {name}\n"
    out = [head]
    before = _lines(old or "")
    after = _lines(new)
    hunks: Iterable[str]
    if before and after and not set(before).isdisjoint(after):
        hunks = islice(difflib.unified_diff(before, after, n=3, lineterm="\n"), 2, None)
    else:  # no line in common: difflib's one hunk, written here (it costs ~5 µs to find)
        hunks = _one_hunk(before, after)
    for line in hunks:  # difflib's own ---/+++ lines are replaced by `head`
        # Only a side's last line can lack its newline; difflib leaves it bare.
        out.append(line if line.endswith("\n") else f"{line}\n{_NO_NEWLINE}")
    return "".join(out)


def _one_hunk(before: list[str], after: list[str]) -> list[str]:
    """What ``difflib.unified_diff`` writes after its ---/+++ lines for two sides without a
    line in common (no match, so one replace, delete or insert): one hunk of every line."""
    if not before and not after:
        return []
    return [
        f"@@ -{_hunk_range(len(before))} +{_hunk_range(len(after))} @@\n",
        *["-" + line for line in before],
        *["+" + line for line in after],
    ]


def _hunk_range(length: int) -> str:
    # difflib's _format_range_unified for a range starting at the first line.
    return "1" if length == 1 else f"{1 if length else 0},{length}"


def diff_to_v2(item: v1.Diff) -> v2.Diff:
    """A v1 whole-file diff as a v2 diff: one ``add``/``modify`` change and a Git patch.

    ``oldText`` omitted or ``null`` is a new file (``add``); any string, ``""`` included, is
    the previous content of an existing file (``modify``, D26). The patch is omitted when the
    texts are equal. The item ``_meta`` is copied; unknown keys are not (see ``content_to_v2``).
    """
    old = item.old_text if isinstance(item.old_text, str) else None
    change: v2.DiffChange
    if old is None:
        change = v2.AddDiffChange(path=item.path, file_type="text")
    else:
        change = v2.ModifyDiffChange(path=item.path, file_type="text")
    patch: v2.DiffPatch | msgspec.UnsetType = UNSET
    if old != item.new_text:
        patch = v2.DiffPatch(format="git_patch", text=git_patch(item.path, old, item.new_text))
    return v2.Diff(changes=[change], patch=patch, meta=copy_meta(item.meta))


def diff_item_to_v2(item: v1.Diff, path: str, losses: Losses) -> v2.ToolCallContent | None:
    """A v1 diff item as a v2 one; its unknown keys reported."""
    report_extra(item, path, losses)
    return diff_to_v2(item)


# --------------------------------------------------------------------------------------------
# v2 -> v1 (D46 (diff conversion), D27)

# One Git section adding a file: optional `diff --git` and `index` lines, then either the
# ---/+++ pair and at most one hunk `@@ -0,0 +1[,N] @@` of `+` lines (with the no-newline
# marker after the last), or neither (Git writes no ---/+++ lines for an empty new file).
_PURE_ADD = re.compile(
    r"(?:diff --git [^\n]*\n)?"
    r"(?P<mode>new file mode [0-7]+\n)?"
    r"(?:index [^\n]*\n)?"
    r"(?:(?P<files>--- /dev/null\n\+\+\+ (?!/dev/null\n)[^\n]*\n)"
    r"(?:@@ -0,0 \+1(?:,(?P<count>[0-9]+))? @@\n"
    r"(?P<body>(?:\+[^\n]*\n)*)"
    r"(?P<eof>\\ No newline at end of file\n)?)?)?"
)


def _added_text(patch: str) -> str | None:
    """The whole new text of a Git patch that only adds one file, else ``None``."""
    match = _PURE_ADD.fullmatch(patch)
    if match is None or not (match["mode"] or match["files"]):
        return None
    body = match["body"] or ""
    if match["count"] is None and not body:
        return "" if not match["eof"] else None  # no hunk: an empty file
    lines = body.count("\n")
    if lines != int(match["count"] or 1):
        return None
    text = "".join(line[1:] + "\n" for line in body.split("\n")[:-1])
    return text[:-1] if match["eof"] else text


def _whole_new_file(diff: v2.Diff) -> tuple[v2.AddDiffChange, v2.DiffPatch, str] | None:
    """9.5 step 1: one text ``add`` whose ``git_patch`` holds the whole file."""
    patch = diff.patch
    if len(diff.changes) != 1 or not isinstance(patch, v2.DiffPatch):
        return None
    change = diff.changes[0]
    if not isinstance(change, v2.AddDiffChange) or change.file_type not in (UNSET, None, "text"):
        return None  # omitted/null fileType: "the content kind is unknown"
    if patch.format != "git_patch":
        return None
    text = _added_text(patch.text)
    return None if text is None else (change, patch, text)


_CHANGE_LINES: dict[type[Any], Callable[[Any], str]] = {
    v2.AddDiffChange: lambda c: f"Added {c.path}",
    v2.DeleteDiffChange: lambda c: f"Deleted {c.path}",
    v2.ModifyDiffChange: lambda c: f"Modified {c.path}",
    v2.MoveDiffChange: lambda c: f"Moved {c.old_path} -> {c.path}",
    v2.CopyDiffChange: lambda c: f"Copied {c.old_path} -> {c.path}",
}


def _change_line(change: v2.DiffChange) -> str:
    if isinstance(change, v2.UnknownDiffChange):
        path = change.data.get("path")
        line = f"{change.tag} {path}" if isinstance(path, str) else change.tag
        file_type = change.data.get("fileType")
    else:
        line = lookup(_CHANGE_LINES, change, TO_V1_MISSING)(change)
        file_type = change.file_type
    if isinstance(file_type, str) and file_type != "text":  # omitted/null: not known
        line += f" ({file_type})"
    return line


def diff_summary(diff: v2.Diff) -> str:
    """The text a v1 client is shown for a v2 diff (D46 (diff conversion)).

    One line per change (``Added``, ``Deleted``, ``Modified``, ``Moved a -> b``, ``Copied a ->
    b``, or the operation's name; `` (fileType)`` when the type is given and not ``text``),
    then a blank line and the patch in a fenced block that nothing inside can close (info
    string ``diff`` for ``git_patch``).
    """
    parts = ["\n".join(_change_line(change) for change in diff.changes)]
    if isinstance(diff.patch, v2.DiffPatch):
        info = "diff" if diff.patch.format == "git_patch" else ""
        parts.append(fenced(diff.patch.text, info))
    return "\n\n".join(part for part in parts if part)


def whole_new_file(diff: v2.Diff) -> bool:
    """Whether a v2 diff is a v1 diff as it is: one text ``add`` whose ``git_patch`` holds the
    whole file (D46 (diff conversion))."""
    return _whole_new_file(diff) is not None


def change_line(change: v2.DiffChange) -> str:
    """The line a v1 client is shown for one change (``Added p``, ``Moved a -> b``, ...)."""
    return _change_line(change)


def diff_item_to_v1(item: v2.Diff, path: str, losses: Losses, why: str | None = None) -> list[Any]:
    """A v2 diff item as v1 items: a v1 diff, one text item, or none (``why``: why the bridge
    could not rebuild its files' texts from disk, said in the loss)."""
    new_file = _whole_new_file(item)
    if new_file is not None:
        change, patch, text = new_file
        report_extra(item, path, losses)
        report_extra(change, f"{path}.changes[0]", losses)
        report_extra(patch, f"{path}.patch", losses)
        for where, value in (
            (f"{path}.changes[0].mimeType", change.mime_type),
            (f"{path}.changes[0]._meta", change.meta),
            (f"{path}.patch._meta", patch.meta),
        ):
            if value is not UNSET and value is not None:
                losses.instead(where, "a v1 diff has no place for it", "dropped")
        return [v1.Diff(path=change.path, new_text=text, meta=copy_meta(item.meta))]
    text = diff_summary(item)
    if not text:
        losses.instead(path, "a diff with no changes and no patch has no v1 form", "dropped")
        return []
    reason = "there is no mechanical mapping from a v2 diff back to v1 `oldText`/`newText`"
    if why:
        reason = f"{reason} ({why})"
    losses.instead(path, reason, "sent as a text item: a line per change and the patch")
    return [v1.Content(content=v1.TextContent(text=text), meta=copy_meta(item.meta))]
