"""The human view of ``acp-toolcalls replay``: a store rendered as one rich table per session.

Rules this module owns:

- Pure: ``render_store(store)`` reads the store and returns a rich renderable; it prints
  nothing and changes nothing, so the live view and the tests call it alike.
- Columns: id, title (the display title), kind, status (coloured by ``STATUS_STYLES``;
  unknown statuses plain), a content summary and the locations (``path:line``). Ids and
  paths are never split across lines: when a column is too narrow they end in an ellipsis.
- The status is what the agent said. What the client concluded on its own about a call the
  agent left open (``ended_locally``: ``session/cancel``, ``sweep``) is shown beside it as
  ``client: cancelled``, never in its place (D15); counts and summaries use the agent's.
- A big log (more than ``SUMMARY_AFTER`` tool calls in all) is summarized per session: the
  counts by status and by kind, then only the calls still open, the failed ones (the latest
  ``LISTED_CALLS`` of each) and the last ``LAST_CALLS``, in log order. ``replay --all`` asks
  for every row.
- Content summary: the first text excerpt (and how many items follow), every file of a diff
  from its authoritative ``changes`` (with line counts from a ``git_patch``), and for a
  ``terminal`` item the terminal's command, exit and last output lines, for a ``session`` item
  that session, its title and how many of its calls the log has (each session has its own
  table, a session the client never created too). Terminals no call references get a table.
- Absolute paths under one common directory are shown relative to it, and the table title
  names that directory once: long project paths otherwise crowd every other column out.
- Every string from the log is shown as plain text (never as rich markup), and is cleaned of
  ANSI escape and control sequences, so a log can neither style nor move the cursor.
  Bidirectional controls and marks are shown as escapes (``\\u202e``), and in values (ids,
  titles, commands, paths, text excerpts) a carriage return or backspace too (``\\x0d``), so
  no text can hide or reorder what is shown before it; terminal output keeps a terminal's
  carriage return (the last text drawn over a line is what shows).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from .. import v2
from ..store import SessionState, TerminalState, ToolCallState, ToolCallStore, ToolCallView
from ._render_text import excerpt as _excerpt
from ._render_text import one_line as _one_line
from ._render_text import sanitize
from ._render_text import variant_tag as _tag

__all__ = [
    "BLOCKS_BELOW",
    "LAST_CALLS",
    "LISTED_CALLS",
    "STATUS_STYLES",
    "SUMMARY_AFTER",
    "last_output_lines",
    "patch_counts",
    "render_parts",
    "render_store",
    "sanitize",
    "should_summarize",
]

STATUS_STYLES: Mapping[str, str] = {
    "pending": "dim",
    "in_progress": "yellow",
    "completed": "green",
    "failed": "red",
    "cancelled": "magenta",
}
"""Rich style per known status; any other status is shown plain."""

TERMINAL_LINES = 3
"""Last output lines shown for a terminal."""
SUMMARY_AFTER = 200
"""A log with more tool calls than this is shown as per-session summaries (``--all``: whole)."""
LAST_CALLS = 5
"""A summary shows the last this many calls of the session ..."""
LISTED_CALLS = 20
"""... and at most this many of its open calls, and of its failed ones (the latest)."""
BLOCKS_BELOW = 120
"""Narrower than this many columns, each call is a block of lines instead of a table row."""
_TAIL_BYTES = 16 * 1024  # only the tail of a terminal's output is decoded for its last lines


def _block_summary(block: Any) -> Text:
    if isinstance(block, v2.TextContent):
        return Text(_excerpt(block.text))
    if isinstance(block, v2.ImageContent):
        return Text(f"[image {_one_line(block.mime_type)}]", style="cyan")
    if isinstance(block, v2.AudioContent):
        return Text(f"[audio {_one_line(block.mime_type)}]", style="cyan")
    if isinstance(block, v2.ResourceLink):
        return Text(f"[link {_one_line(block.name)}]", style="cyan")
    if isinstance(block, v2.EmbeddedResource):
        return Text(f"[resource {_one_line(block.resource.uri)}]", style="cyan")
    return Text(f"[{_tag(block, 'type')} block]", style="cyan")


def patch_counts(text: str) -> tuple[int, int]:
    """Lines added and removed by a ``git_patch`` text (hunk lines only, not headers)."""
    added = removed = 0
    in_hunk = False
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            in_hunk = False
        elif line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line.startswith("+"):
            added += 1
        elif in_hunk and line.startswith("-"):
            removed += 1
    return added, removed


_PATH_OPERATIONS: tuple[tuple[type[Any], str], ...] = (
    (v2.AddDiffChange, "add"),
    (v2.DeleteDiffChange, "delete"),
    (v2.ModifyDiffChange, "modify"),
    (v2.MoveDiffChange, "move"),
    (v2.CopyDiffChange, "copy"),
)


def _status(status: str) -> Text:
    return Text(_one_line(status), style=STATUS_STYLES.get(status, ""))


def _local(ended: str) -> Text:
    """The client's own conclusion about a call."""
    return Text(f"client: {_one_line(ended)}", style=f"italic {STATUS_STYLES.get(ended, '')}")


def _status_cell(tc: ToolCallView) -> Text:
    cell = _status(tc.status)
    if tc.ended_locally is not None:
        cell.append("\n")
        cell.append_text(_local(tc.ended_locally))
    return cell


def last_output_lines(terminal: TerminalState, count: int = TERMINAL_LINES) -> list[str]:
    """The last ``count`` non-blank output lines of a terminal, cleaned for display."""
    output = terminal.output
    if not isinstance(output, bytearray) or not output:
        return []
    text = bytes(output[-_TAIL_BYTES:]).decode("utf-8", "replace")
    lines = [line.rstrip() for line in sanitize(text).split("\n")]
    if len(output) > _TAIL_BYTES:
        lines = lines[1:]  # the first line of a cut tail is partial
    return [line for line in lines if line.strip()][-count:]


def _exit_text(terminal: TerminalState) -> Text:
    status = terminal.exit_status
    if status is None:
        return Text("running", style="yellow")
    if isinstance(status.signal, str):
        return Text(f"killed by {_one_line(status.signal)}", style="magenta")
    if isinstance(status.exit_code, int):
        return Text(f"exit {status.exit_code}", style="green" if status.exit_code == 0 else "red")
    return Text("exited", style="green")


def _terminal_lines(terminal_id: str, terminal: TerminalState | None) -> list[Text]:
    if terminal is None:
        return [Text(f"terminal {_one_line(terminal_id)} (no output yet)", style="dim")]
    command = terminal.command
    head = Text("$ " + (_one_line(command) if command is not None else "?"), style="bold")
    head.append("  ")
    head.append_text(_exit_text(terminal))
    out = [head]
    for line in last_output_lines(terminal):
        # Output lines are a preview: cut, not wrapped, like a terminal that is too narrow.
        out.append(Text("  " + line, style="dim", no_wrap=True, overflow="ellipsis"))
    return out


def _referenced(calls: Iterable[ToolCallState]) -> set[str]:
    return {
        item.terminal_id for tc in calls for item in tc.content if isinstance(item, v2.Terminal)
    }


def _base_dir(paths: list[str]) -> str | None:
    """The common directory of absolute POSIX paths, if deeper than ``/``."""
    if not paths or not all(path.startswith("/") for path in paths):
        return None
    try:
        base = posixpath.commonpath(paths)
    except ValueError:
        return None
    if base in paths and len(set(paths)) == 1:  # one file: its directory
        base = posixpath.dirname(base)
    return base if base not in ("", "/") else None


def _session_paths(calls: Iterable[ToolCallView]) -> list[str]:
    paths = []
    for tc in calls:
        paths += [location.path for location in tc.locations]
        for item in tc.content:
            if isinstance(item, v2.Diff):
                for change in item.changes:
                    path = getattr(change, "path", None)
                    old = getattr(change, "old_path", None)
                    paths += [p for p in (path, old) if isinstance(p, str)]
    return paths


class _SessionView:
    """Renders the calls of one session; knows its terminals and the common path prefix."""

    def __init__(self, store: ToolCallStore, session: SessionState, calls: list[ToolCallView]):
        self.store = store
        self.session = session
        self.calls = calls
        self.base = _base_dir(_session_paths(calls))

    def path(self, path: str) -> str:
        if self.base is not None and path.startswith(self.base + "/"):
            path = path[len(self.base) + 1 :]
        return _one_line(path)

    def change(self, change: Any) -> str:
        for cls, operation in _PATH_OPERATIONS:
            if isinstance(change, cls):
                old = getattr(change, "old_path", None)
                moved = f"{self.path(old)} -> " if isinstance(old, str) else ""
                return f"{operation} {moved}{self.path(change.path)}"
        return f"{_tag(change, 'operation')} (unknown operation)"

    def diff(self, diff: v2.Diff) -> list[Text]:
        if not diff.changes:
            return [Text("diff (no files)", style="cyan")]
        out = [Text(f"diff: {self.change(change)}", style="cyan") for change in diff.changes]
        patch = diff.patch
        if isinstance(patch, v2.DiffPatch) and patch.format == "git_patch":
            added, removed = patch_counts(patch.text)
            out[-1].append(f" (+{added} -{removed})", style="dim")
        return out

    def content(self, tc: ToolCallView) -> RenderableType:
        lines: list[Text] = []
        text_items = 0
        for item in tc.content:
            if isinstance(item, v2.Content):
                text_items += 1
                if text_items == 1:
                    lines.append(_block_summary(item.content))
            elif isinstance(item, v2.Diff):
                lines += self.diff(item)
            elif isinstance(item, v2.Terminal):
                terminal = self.session.terminals.get(item.terminal_id)
                lines += _terminal_lines(item.terminal_id, terminal)
            elif isinstance(item, v2.SessionReference):
                lines.append(self.reference(item.session_id))
            else:
                lines.append(Text(f"[{_tag(item, 'type')} item]", style="cyan"))
        if text_items > 1:
            lines.append(Text(f"(+{text_items - 1} more content item(s))", style="dim"))
        if tc.dropped_items:
            lines.append(Text(f"({tc.dropped_items} item(s) dropped by the cap)", style="dim"))
        return Group(*lines)

    def reference(self, session_id: str) -> Text:
        """A ``session`` item: the session, its title, and its calls in this log."""
        title = self.store.session_title(session_id)
        text = Text(f"session {_one_line(session_id)}", style="cyan")
        text.append(f" \u201c{_one_line(title)}\u201d" if title else "")
        other = self.store.sessions.get(session_id)
        count = len(other.tool_calls) if other is not None else 0
        return text.append(f" ({count or 'no'} tool call(s) in this log)", style="dim")

    def locations(self, tc: ToolCallView) -> Text:
        out = []
        for location in tc.locations:
            line = f":{location.line}" if isinstance(location.line, int) else ""
            out.append(self.path(location.path) + line)
        return Text("\n".join(out))

    def title(self) -> Text:
        title = Text(f"session {_one_line(self.session.session_id)}", style="bold")
        if self.base is not None:
            title.append(f"  (paths relative to {_one_line(self.base)})", style="dim")
        return title


def _tally(values: Iterable[str]) -> str:
    by_value: dict[str, int] = {}
    for value in values:
        by_value[value] = by_value.get(value, 0) + 1
    return ", ".join(f"{count} {_one_line(value)}" for value, count in by_value.items())


def _counts(calls: list[ToolCallState], summary: str | None) -> Text:
    total = len(calls)
    text = f"{total} tool call{'s' if total != 1 else ''}"
    if calls:
        text += f": {_tally(tc.status for tc in calls)}"
    if summary is not None:
        text += f"; by kind: {_tally(tc.kind for tc in calls)}\n{summary}"
    return Text(text)


def _summarized(states: list[ToolCallState]) -> tuple[list[ToolCallState], str]:
    """The calls a summary shows (still open, failed, the last few; in first-seen order) and
    the line that says so."""
    open_calls = [tc for tc in states if not tc.is_final]
    failed = [tc for tc in states if tc.status == "failed"]
    keep = {id(tc) for tc in open_calls[-LISTED_CALLS:] + failed[-LISTED_CALLS:]}
    keep.update(id(tc) for tc in states[-LAST_CALLS:])
    shown = [tc for tc in states if id(tc) in keep]
    parts = [
        f"{len(open_calls)} still open"
        + (f" (the last {LISTED_CALLS} shown)" if len(open_calls) > LISTED_CALLS else ""),
        f"{len(failed)} failed"
        + (f" (the last {LISTED_CALLS} shown)" if len(failed) > LISTED_CALLS else ""),
        f"the last {min(LAST_CALLS, len(states))}",
    ]
    return shown, f"shown: {', '.join(parts)}; --all shows every call"


class _Session:
    """One session's calls, drawn as a table, or, narrower than ``BLOCKS_BELOW`` columns
    (a pipe is 80), as one block per call: six columns in 80 would cut every id."""

    def __init__(
        self, store: ToolCallStore, session: SessionState, max_rows: int | None, summarize: bool
    ) -> None:
        states = list(session.tool_calls.values())
        self.total = len(states)
        self.summary: str | None = None
        if summarize:
            kept, self.summary = _summarized(states)
        else:
            kept = states if max_rows is None else states[-max_rows:]
        views = [store.view(session.session_id, tc.tool_call_id) for tc in kept]
        self.view = _SessionView(store, session, views)
        self.caption = _counts(states, self.summary)
        # (calls not shown before this row, the row's call): only the live view's cut is shown
        # as a row; a summary's caption says which calls it shows.
        earlier = len(states) - len(kept) if self.summary is None else 0
        self.rows: list[tuple[int, ToolCallView]] = [(earlier, self.view.calls[0])] if kept else []
        self.rows += [(0, tc) for tc in self.view.calls[1:]]
        referenced = _referenced(states)
        self.orphans = [t for tid, t in session.terminals.items() if tid not in referenced]
        self.orphan_count = len(self.orphans)
        if summarize:
            self.orphans = self.orphans[-LISTED_CALLS:]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if options.max_width < BLOCKS_BELOW:
            yield from self._blocks()
        else:
            yield from self._tables()

    def _orphans_note(self) -> Text | None:
        if self.orphan_count > len(self.orphans):
            return Text(f"{self.orphan_count} terminals; the last {len(self.orphans)} shown")
        return None

    def _tables(self) -> RenderResult:
        view = self.view
        table = Table(
            title=view.title(),
            caption=self.caption,
            title_justify="left",
            caption_justify="left",
            show_lines=True,
            expand=True,
        )
        # Ids and paths end in an ellipsis when there is no room, never split across lines;
        # prose wraps at spaces, and is what narrows first.
        table.add_column("id", no_wrap=True, overflow="ellipsis", style="dim")
        table.add_column("title", overflow="ellipsis", ratio=1)
        table.add_column("kind", no_wrap=True)
        table.add_column("status", no_wrap=True)
        table.add_column("content", overflow="ellipsis", ratio=2)
        table.add_column("locations", no_wrap=True, overflow="ellipsis", ratio=1)
        for skipped, tc in self.rows:
            if skipped:
                table.add_row(
                    Text(f"… {skipped} earlier tool call(s)", style="dim", overflow="fold")
                )
            table.add_row(
                Text(_one_line(tc.tool_call_id)),
                Text(_one_line(tc.title)),
                Text(_one_line(tc.kind)),
                _status_cell(tc),
                view.content(tc),
                view.locations(tc),
            )
        yield table
        if self.orphans:
            terminals = Table(
                title=Text("terminals that no tool call shows", style="bold"),
                title_justify="left",
                caption=self._orphans_note(),
                caption_justify="left",
                show_lines=True,
                expand=True,
            )
            terminals.add_column("id", no_wrap=True, overflow="ellipsis", style="dim", ratio=1)
            terminals.add_column("terminal", overflow="ellipsis", ratio=4)
            for terminal in self.orphans:
                lines = _terminal_lines(terminal.terminal_id, terminal)
                terminals.add_row(Text(_one_line(terminal.terminal_id)), Group(*lines))
            yield terminals

    def _blocks(self) -> RenderResult:
        view = self.view
        yield view.title()
        for skipped, tc in self.rows:
            if skipped:
                yield Text(f"  … {skipped} earlier tool call(s)", style="dim")
            head = Text("  ", no_wrap=True, overflow="ellipsis")
            head.append(_one_line(tc.tool_call_id), style="bold")
            head.append("  ")
            head.append_text(_status(tc.status))
            if tc.ended_locally is not None:
                head.append(" (")
                head.append_text(_local(tc.ended_locally))
                head.append(")")
            head.append("  " + _one_line(tc.kind))
            yield head
            details: list[RenderableType] = [Text(_one_line(tc.title), overflow="ellipsis")]
            details.append(view.content(tc))
            if tc.locations:
                where = view.locations(tc)
                where.no_wrap, where.overflow = True, "ellipsis"
                details.append(Text("at ", style="dim") + where)
            yield Padding(Group(*details), (0, 0, 0, 6), expand=False)
        yield Padding(self.caption, (0, 0, 0, 2), expand=False)
        if self.orphans:
            yield Text("  terminals that no tool call shows", style="bold")
            for terminal in self.orphans:
                yield Text("  " + _one_line(terminal.terminal_id), style="bold", no_wrap=True)
                lines = _terminal_lines(terminal.terminal_id, terminal)
                yield Padding(Group(*lines), (0, 0, 0, 6), expand=False)
            note = self._orphans_note()
            if note is not None:
                yield Padding(note, (0, 0, 0, 2), expand=False)
        yield Text("")


def should_summarize(store: ToolCallStore) -> bool:
    """Whether the log holds more than ``SUMMARY_AFTER`` tool calls (sessions are summarized)."""
    total = 0
    for session in store.sessions.values():
        total += len(session.tool_calls)
        if total > SUMMARY_AFTER:
            return True
    return False


def render_parts(
    store: ToolCallStore, *, max_rows: int | None = None, summarize: bool = False
) -> Iterator[RenderableType]:
    """Every session of ``store`` as rich tables, in first-seen order, one renderable at a time
    (a caller that prints them as they come stops at the first one it cannot write).

    ``summarize`` shows per session the counts by status and kind and only the calls still
    open, the failed ones and the last few; ``max_rows`` keeps only the last that many calls
    per session (the live view, which has one screen); neither shows them all.
    """
    if not store.sessions:
        yield Text("no tool calls or terminals in the log", style="dim")
        return
    for session in store.sessions.values():
        yield _Session(store, session, max_rows, summarize)


def render_store(
    store: ToolCallStore, *, max_rows: int | None = None, summarize: bool = False
) -> RenderableType:
    """``render_parts`` as one renderable."""
    return Group(*render_parts(store, max_rows=max_rows, summarize=summarize))
