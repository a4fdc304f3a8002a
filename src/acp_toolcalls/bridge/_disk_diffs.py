"""v2 diffs as real v1 diffs: each file's old and new text rebuilt from the file on disk and
the diff's Git patch (D27, amended 2026-12-06).

Rules this module owns (sans-I/O: the bridge is given ``read_file``, which the I/O edge
supplies, ``proxy._files.DiskFiles``; nothing here opens a file):

- Only a diff with a ``git_patch`` is rebuilt; one that adds a single text file whose patch
  holds it whole is a v1 diff as before, and one without a Git patch is today's text (D27).
  Without ``read_file`` (``acp-toolcalls bridge --no-disk-diffs``, or a bridge built without
  it) every other diff is today's text, the loss saying reading files is off.
- Each change of the diff is rebuilt on its own, from its section of the patch (matched by
  its paths) applied exactly (``convert._patches``): an ``add`` from its patch alone (new =
  the patch applied to nothing), a ``delete`` too (old = the patch applied in reverse to
  nothing; v1 has no deletion: a v1 diff to an empty ``newText``, after a text line saying
  it was deleted), a ``modify`` from the file at its path, a ``move`` or ``copy`` from the
  file at its old path (forward) or at its new path (in reverse), after a text line saying
  what moved where (a v1 diff has one path).
- The agent may send a diff before or after it writes the file: a patch that applies forward
  to the file gives old = the file and new = the patch applied; one that applies in reverse
  (the file holds the new text) gives new = the file and old = the patch applied in reverse.
  One that applies both ways is refused (there is no telling which the file holds).
- A file is read only when its path is absolute and normal (no ``.`` or ``..`` component)
  and under one of the session's roots: the ``cwd`` and ``additionalDirectories`` the client
  gave in ``session/new``, ``load`` or ``resume`` (``set_roots``); ``read_file`` checks the
  same of the resolved path (no symbolic link out), refuses what is not a regular file and
  what is over its size cap, and says why. A file that is not UTF-8 or holds a NUL byte
  (binary) is refused, and so is a change whose ``fileType`` is given and not ``text``.
- What is not rebuilt is today's text: with no change rebuilt, the whole diff as before (a
  line per change and the patch), the loss saying why per file; otherwise the rebuilt files
  are v1 diffs and the rest one text item (their lines and their sections of the patch).
  Every loss is reported: what could not be rebuilt and why, a deletion or move shown as
  such, a mode change, the fields a v1 diff has no place for.
- Nothing is cached: a file is read each time the item is projected (once, unless the call's
  content is replaced), and a diff without a Git patch costs nothing more than before.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from msgspec import UNSET, UnsetType

from .. import v1, v2
from ..convert import (
    Losses,
    PatchSection,
    apply_section,
    change_line,
    copy_meta,
    diff_item_to_v1,
    fenced,
    read_patch,
    unknown_keys,
    whole_new_file,
)

__all__ = [
    "MAX_ROOTED_SESSIONS",
    "READING_OFF",
    "ReadFile",
    "disk_diff_to_v1",
    "normal_roots",
    "outside",
]

ReadFile = Callable[[str, tuple[str, ...]], "bytes | str"]
"""``read_file(path, roots)``: the bytes of the regular file at ``path``, or why not (a short
reason). The I/O edge's ``DiskFiles`` resolves ``path`` and ``roots`` (symbolic links) and
refuses a path that resolves outside every root, a file that is not regular, or one over its
cap."""

MAX_ROOTED_SESSIONS = 4_096
"""Sessions whose roots the bridge keeps (the least recently set go first)."""

READING_OFF = "reading files from disk is off"
"""Why a diff was not rebuilt, in its loss, when the bridge has no ``read_file`` (the report's
bridge never has one: ``report.losses`` finds what the editor got instead)."""
_NO_ROOTS = "the session's directories are not known (no session/new, load or resume seen)"


def normal_roots(cwd: Any, additional: Any) -> tuple[str, ...]:
    """A session's roots, from its setup params: the absolute paths, normalized."""
    roots = [cwd, *(additional if isinstance(additional, list) else [])]
    kept = [os.path.normpath(r) for r in roots if isinstance(r, str) and os.path.isabs(r)]
    return tuple(dict.fromkeys(kept))


def outside(path: str, roots: tuple[str, ...]) -> str | None:
    """Why ``path`` may not be read for a session with ``roots`` (``None``: it may), by its
    text alone; ``read_file`` checks the resolved path."""
    if not os.path.isabs(path):
        return "its path is not absolute"
    if os.path.normpath(path) != path or ".." in path.split(os.sep):
        return "its path is not normal (a `.` or `..` component, or a doubled separator)"
    for root in roots:
        if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
            return None
    return "it is outside the session's directories (cwd and additionalDirectories)"


def _file_text(path: str, roots: tuple[str, ...] | None, read: ReadFile) -> tuple[bool, str]:
    """(True, the file's text) or (False, why not)."""
    if roots is None:
        return False, _NO_ROOTS
    why = outside(path, roots)
    if why is not None:
        return False, why
    data = read(path, roots)
    if isinstance(data, str):
        return False, data
    if b"\0" in data:
        return False, "it is binary (it holds a NUL byte)"
    try:
        return True, data.decode("utf-8")
    except UnicodeDecodeError:
        return False, "it is not UTF-8 text"


def _both_ways(text: str, section: PatchSection) -> tuple[str, str] | str:
    """(old, new) from a file's text and its section: forward when the file holds the old
    text, in reverse when it holds the new one; else why not."""
    forward = apply_section(text, section)
    backward = apply_section(text, section, reverse=True)
    if forward is not None and backward is not None:
        return "the patch applies to it both forward and in reverse: which side it holds is unclear"
    if forward is not None:
        return text, forward
    if backward is not None:
        return backward, text
    return "the patch does not apply to it exactly (forward or in reverse)"


def _section(change: Any, sections: list[PatchSection]) -> PatchSection | None:
    """The patch's section about ``change``, by its paths and operation."""
    for section in sections:
        old, new = section.old_path, section.new_path
        if isinstance(change, v2.AddDiffChange):
            found = section.operation == "add" and new == change.path
        elif isinstance(change, v2.DeleteDiffChange):
            found = section.operation == "delete" and old == change.path
        elif isinstance(change, (v2.MoveDiffChange, v2.CopyDiffChange)):
            found = old == change.old_path and new == change.path
        else:
            found = section.operation == "modify" and old == new == change.path
        if found:
            return section
    return None


def _rebuild(
    change: Any,
    section: PatchSection | None,
    roots: tuple[str, ...] | None,
    read: ReadFile,
) -> tuple[str | None, str] | str:
    """(old text or ``None`` for a new file, new text) of one change, or why not."""
    if isinstance(change, v2.UnknownDiffChange):
        return f"the operation {change.tag!r} is not one v1 can show"
    if change.file_type not in (UNSET, None, "text"):
        return f"it is not a text file ({change.file_type})"
    if section is None:
        return "the patch has no section about it"
    if section.binary:
        return "its patch is binary"
    if isinstance(change, v2.AddDiffChange):
        new = apply_section("", section)
        return ("its patch does not hold the whole new file") if new is None else (None, new)
    if isinstance(change, v2.DeleteDiffChange):
        old = apply_section("", section, reverse=True)
        return ("its patch does not hold the whole deleted file") if old is None else (old, "")
    if not section.hunks:
        return "its patch changes no line"
    if isinstance(change, (v2.MoveDiffChange, v2.CopyDiffChange)):
        why: list[str] = []
        for where, reverse in ((change.old_path, False), (change.path, True)):
            ok, text = _file_text(where, roots, read)
            if ok:
                applied = apply_section(text, section, reverse=reverse)
                if applied is not None:
                    return (applied, text) if reverse else (text, applied)
                text = "the patch does not apply to it exactly"
            why.append(f"{where}: {text}")
        return "; ".join(why)
    ok, text = _file_text(change.path, roots, read)
    return _both_ways(text, section) if ok else text


def disk_diff_to_v1(
    item: v2.Diff,
    path: str,
    losses: Losses,
    roots: tuple[str, ...] | None,
    read: ReadFile | None,
) -> list[Any]:
    """A v2 diff item as v1 items, its files' texts rebuilt from disk where the rules allow
    (losses at ``path``, the item's)."""
    patch = item.patch
    if not isinstance(patch, v2.DiffPatch) or patch.format != "git_patch":
        return diff_item_to_v1(item, path, losses)  # as before the amendment
    if read is None:  # (a whole new file is still a v1 diff: `READING_OFF` is said of the others)
        return diff_item_to_v1(item, path, losses, READING_OFF)
    if whole_new_file(item):
        return diff_item_to_v1(item, path, losses)
    sections = read_patch(patch.text)
    if sections is None:
        return diff_item_to_v1(item, path, losses, "the patch is not a Git patch the bridge reads")
    rebuilt: list[Any] = []
    left: list[tuple[Any, PatchSection | None]] = []
    why: list[str] = []
    used: set[int] = set()
    for index, change in enumerate(item.changes):
        section = _section(change, sections)
        result = _rebuild(change, section, roots, read)
        where = f"{path}.changes[{index}]"
        if isinstance(result, str):
            named = getattr(change, "path", None) or getattr(change, "tag", "?")
            why.append(f"{named}: {result}")
            left.append((change, section))
            continue
        assert section is not None and not isinstance(change, v2.UnknownDiffChange)
        used.add(id(section))
        old, new = result
        meta = copy_meta(item.meta)
        if not isinstance(change, (v2.AddDiffChange, v2.ModifyDiffChange)):
            rebuilt.append(v1.Content(content=v1.TextContent(text=change_line(change)), meta=meta))
            done = "said in a text line before a v1 diff of its text"
            if isinstance(change, v2.DeleteDiffChange):
                done += " to an empty `newText`"
            losses.instead(where, "v1 has no deletion, move or copy", done)
        was: str | UnsetType = UNSET if old is None else old  # omitted: a new file
        rebuilt.append(v1.Diff(path=change.path, old_text=was, new_text=new, meta=meta))
        losses.found.extend(unknown_keys(change, where))
        for field, value in (("mimeType", change.mime_type), ("_meta", change.meta)):
            if value is not UNSET and value is not None:
                losses.instead(f"{where}.{field}", "a v1 diff has no place for it", "dropped")
        if section.mode_change:
            losses.instead(where, "a v1 diff has no file mode", "the mode change dropped")
    if not rebuilt:
        return diff_item_to_v1(item, path, losses, "; ".join(why))
    losses.found.extend(unknown_keys(item, path))
    losses.found.extend(unknown_keys(patch, f"{path}.patch"))
    if patch.meta is not UNSET and patch.meta is not None:
        losses.instead(f"{path}.patch._meta", "a v1 diff has no place for it", "dropped")
    rest = [s for s in sections if id(s) not in used]
    if left or rest:
        lines = "\n".join(change_line(change) for change, _ in left)
        body = fenced("".join(s.text for s in rest), "diff") if rest else ""
        text = "\n\n".join(part for part in (lines, body) if part)
        rebuilt.append(v1.Content(content=v1.TextContent(text=text), meta=copy_meta(item.meta)))
        losses.instead(
            path,
            "not every file of the diff could be rebuilt from disk"
            + (f" ({'; '.join(why)})" if why else ""),
            "the rest sent as a text item: a line per change and their part of the patch",
        )
    return rebuilt
