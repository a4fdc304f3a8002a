"""Content items an agent builds: a text item, a one-file diff with its git patch.

Rules this module owns: a diff's path is absolute and native (D25, checked before anything is
built); ``old_text=None`` is a new file (an ``add`` change), otherwise a ``modify``; the patch
text is ``git_patch``'s, and an empty one (no change) is left out.
"""

from __future__ import annotations

from msgspec import UNSET

from .. import v2
from ..convert import git_patch
from ._senders import check_absolute_path


def text_content(text: str) -> v2.Content:
    """A text content item."""
    return v2.Content(content=v2.TextContent(text=text))


def diff_content(path: str, old_text: str | None, new_text: str) -> v2.Diff:
    """A one-file diff (``old_text=None``: a new file) with its ``git_patch`` text."""
    check_absolute_path(path, "diff.path")
    change: v2.DiffChange
    if old_text is None:
        change = v2.AddDiffChange(path=path, file_type="text")
    else:
        change = v2.ModifyDiffChange(path=path, file_type="text")
    text = git_patch(path, old_text, new_text)
    patch = v2.DiffPatch(format="git_patch", text=text) if text else UNSET
    return v2.Diff(changes=[change], patch=patch)
