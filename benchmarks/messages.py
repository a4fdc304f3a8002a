"""Deterministic, realistic ACP v2 ``session/update`` tool-call notifications for benchmarks.

``generate(n, seed)`` returns ``n`` compact JSON-RPC notification lines (UTF-8 bytes, no
newline), each 300-600 bytes, simulating the tool-call traffic of real agent sessions (shapes:
the upstream docs and RFDs: D46 (methods, tool-call update to diffs, terminals)):

- a first report per tool call: ``tool_call_update`` with ``name``, ``title``, ``kind``,
  ``status: "pending"``, ``rawInput`` and (for file tools) ``locations``;
- progress: ``tool_call_update`` with ``status: "in_progress"`` and a ``content`` array;
- streamed output: ``tool_call_content_chunk`` carrying one text item;
- edits completing with a file-state ``diff`` (``git_patch`` text with absolute paths and no
  ``a/``/``b/`` prefixes);
- completions with ``rawOutput``, failures and cancellations with explicit ``null`` clears;
- agent-owned display terminals: ``terminal_update`` and ``terminal_output_chunk`` (base64);
- some updates carry ``_meta`` (``{"vendor.example/elapsedMs": 12}`` and the like).

``generate_live(n, calls, seed)`` builds the same shapes (plus ``session/request_permission``
requests with a ``tool_call`` subject and diff content chunks) as ``calls`` long tool-call
streams that are all open at once, interleaved: the store benchmark's corpus.

Every message is one free-text field away from its size target: the message is built with a
sentinel in that field and the field is then filled with the longest prefix of a corpus slice
that keeps the encoded line within the target.

Run as a script to self-check: JSON-Schema validation of a sample against the bundled v2
schema, validation of every message by the official SDK's v2 pydantic model, size stats and mix.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable
from typing import Any

import orjson

__all__ = [
    "MAX_BYTES",
    "MIN_BYTES",
    "generate",
    "generate_labeled",
    "generate_live",
    "generate_live_labeled",
]

MIN_BYTES = 300
MAX_BYTES = 600

ROOT = "/home/user/project"

_SENTINEL = "\x01FILL\x01"
_SENTINEL_JSON = orjson.dumps(_SENTINEL)[1:-1]

_B62 = string.digits + string.ascii_letters
_ALNUM = string.digits + string.ascii_letters
_HEX = "0123456789abcdef"


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_WORDS = _words(
    "config loader session cache request handler parser token stream buffer client server "
    "timeout retry schema field value default update patch state store reducer message queue "
    "worker thread lock event callback result error status path file module package import "
    "test fixture assertion coverage module function class method argument return type "
    "validation encoder decoder registry plugin option flag setting environment variable the "
    "a of to in for with from when that this which is are be should can will not only before "
    "after because while if then each every missing invalid empty unknown new old"
)
_IDENTS = _words(
    "config settings loader parse_args load_config read_file write_file session_id request "
    "response handler payload items result cache key value path lines entries token buffer "
    "timeout retries options encoder decoder schema record update store state client"
)
_CLASSES = _words(
    "ConfigLoader Settings SessionStore RequestHandler ToolCall Diagnostics Registry Encoder "
    "Decoder StreamReader Worker RetryPolicy CacheEntry"
)
_MODULES = _words(
    "config settings loader server client session store cache handlers models utils encoding "
    "decoding registry cli main retry streams workers"
)
_PACKAGES = ("app", "core", "api", "services", "utils", "storage")
# Edited files get short paths so that a diff with its patch text fits in 600 bytes.
_SHORT_DIRS = ("src", "lib", "app")
_SHORT_MODULES = _words("cli db io api app util core main http auth jobs log cfg")
_DOCS = ("README.md", "docs/guide.md", "docs/architecture.md", "CHANGELOG.md")
_CONFIGS = ("pyproject.toml", "setup.cfg", "config/settings.json", ".github/workflows/ci.yml")
_COMMANDS = (
    "uv run pytest -q",
    "uv run pytest -q tests/test_config.py",
    "ruff check src tests",
    "python -m mypy src",
    "git status --short",
    "git diff --stat",
    "ls -la src/app",
    "npm test -- --watch=false",
    "cargo test --workspace",
    "make lint",
)
_URLS = (
    "https://docs.python.org/3/library/asyncio-stream.html",
    "https://agentclientprotocol.com/protocol/v2/tool-calls",
    "https://jcristharif.com/msgspec/structs.html",
    "https://peps.python.org/pep-0655/",
    "https://github.com/example/project/issues/412",
)
_GREP_PATTERNS = (
    "def load_config",
    "TODO",
    "session_id",
    r"raise \w+Error",
    "import orjson",
    "class .*Handler",
    "timeout=",
)
_GLOB_PATTERNS = ("**/*.py", "src/**/*.toml", "tests/**/test_*.py", "docs/**/*.md")
_MIME = {
    ".py": "text/x-python",
    ".md": "text/markdown",
    ".toml": "application/toml",
    ".json": "application/json",
    ".yml": "application/yaml",
    ".cfg": "text/plain",
}

# Tool name, kind, relative weight of how often an agent calls it.
_TOOLS: tuple[tuple[str, str, int], ...] = (
    ("read_file", "read", 26),
    ("edit_file", "edit", 20),
    ("bash", "execute", 17),
    ("grep", "search", 13),
    ("glob", "search", 5),
    ("write_file", "edit", 6),
    ("web_fetch", "fetch", 5),
    ("list_directory", "read", 4),
)
_TOOL_WEIGHTS = [w for _, _, w in _TOOLS]


def _fit(
    msg: dict[str, Any], make: Callable[[int], str], limit: int, target: int, min_fill: int = 0
) -> bytes:
    """Encode ``msg`` with its sentinel replaced by ``make(k)``: the largest ``k <= limit`` that
    keeps the line within ``target`` bytes, or failing that within ``min_fill`` bytes of fill
    (and ``MAX_BYTES``); then, if that line is shorter than ``MIN_BYTES``, the smallest larger
    ``k`` that reaches it. ``make(k)`` must grow with ``k``; its cost may grow in steps (an
    escaped character, a 4-character base64 group), so the largest fit can fall short of a
    ``target`` near ``MIN_BYTES``."""
    skeleton = orjson.dumps(msg)
    assert skeleton.count(_SENTINEL_JSON) == 1, skeleton
    base = len(skeleton) - len(_SENTINEL_JSON)
    budget = target - base
    if budget < min_fill:
        budget = min(min_fill, MAX_BYTES - base)

    def cost(k: int) -> int:
        return len(orjson.dumps(make(k))) - 2

    # Every character costs at least one byte, so k <= budget.
    lo, hi = 0, max(0, min(limit, budget))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cost(mid) <= budget:
            lo = mid
        else:
            hi = mid - 1

    def line(k: int) -> bytes:
        return skeleton.replace(_SENTINEL_JSON, orjson.dumps(make(k))[1:-1])

    fitted = line(lo)
    while len(fitted) < MIN_BYTES and lo < limit:
        lo += 1
        fitted = line(lo)
    return fitted


class _Corpus:
    """A long text and the offsets of its line starts; slices start at a line start."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n" and i + 1 < len(text)]
        # Leave at least 700 characters after a start.
        cut = len(text) - 700
        self.starts = [s for s in self.starts if s <= cut]

    def slicer(self, rng: random.Random) -> tuple[Callable[[int], str], int]:
        off = rng.choice(self.starts)
        text = self.text
        return (lambda k: text[off : off + k]), 700


class _Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self._code_pool = [self._new_code_line() for _ in range(5000)]
        self._short_lines: dict[int, list[str]] = {}
        self.code = _Corpus("\n".join(self._code_line() for _ in range(3000)))
        self.grep = _Corpus("\n".join(self._grep_line() for _ in range(2000)))
        self.shell = _Corpus("\n".join(self._shell_line() for _ in range(2500)))
        self.markdown = _Corpus(self._markdown(400))
        self.prose = _Corpus("\n".join(self._sentence() for _ in range(2500)))
        self.out: list[tuple[str, bytes]] = []
        self.session_id = ""
        self.id_style = ""
        self.call_no = 0
        self.calls_left = 0
        self._new_session()

    # -- corpora ---------------------------------------------------------------------------

    def _sentence(self) -> str:
        rng = self.rng
        words = rng.choices(_WORDS, k=rng.randint(6, 18))
        words[0] = words[0].capitalize()
        if rng.random() < 0.08:
            words.insert(rng.randrange(1, len(words)), rng.choice(("—", "→", "✓", "café")))
        if rng.random() < 0.2:
            words.insert(rng.randrange(1, len(words)), f"`{rng.choice(_IDENTS)}()`")
        return " ".join(words) + rng.choice((".", ".", ".", ":", "?"))

    def _code_line(self, max_len: int = 0) -> str:
        """A line from the pool; with ``max_len``, a non-blank, non-comment line that short."""
        pool = self._short_lines.get(max_len)
        if pool is None:
            pool = self._short_lines[max_len] = (
                [
                    ln
                    for ln in self._code_pool
                    if ln.strip()
                    and '"""' not in ln
                    and "# " not in ln
                    and (not max_len or len(ln) <= max_len)
                ]
                if max_len
                else self._code_pool
            )
        return self.rng.choice(pool)

    def _new_code_line(self) -> str:
        rng = self.rng
        a, b = rng.choice(_IDENTS), rng.choice(_IDENTS)
        cls = rng.choice(_CLASSES)
        ind = " " * rng.choice((0, 4, 4, 8, 8, 12))
        templates = (
            f"def {a}({b}: str, *, timeout: float = 30.0) -> {cls}:",
            f"{ind}{a} = {b}.get({rng.choice(_IDENTS)!r}, None)",
            f"{ind}if {a} is None:",
            f"{ind}return {a}",
            f'{ind}"""{self._sentence()}"""',
            f"from {rng.choice(_PACKAGES)}.{rng.choice(_MODULES)} import {cls}",
            f"class {cls}({rng.choice(_CLASSES)}):",
            f"{ind}# {self._sentence()}",
            f'{ind}raise ValueError(f"invalid {rng.choice(_WORDS)}: {{{a}!r}}")',
            f"{ind}for {a} in {b}:",
            f"{ind}{a}.append({b}[{rng.randint(0, 9)}])",
            f"{ind}self.{a} = {b}",
            f'{ind}return {{"{a}": {a}, "{b}": {b}}}',
            "",
        )
        return rng.choice(templates)

    def _rel_path(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.70:
            return f"src/{rng.choice(_PACKAGES)}/{rng.choice(_MODULES)}.py"
        if r < 0.88:
            return f"tests/test_{rng.choice(_MODULES)}.py"
        if r < 0.95:
            return rng.choice(_DOCS)
        return rng.choice(_CONFIGS)

    def _grep_line(self) -> str:
        return f"{self._rel_path()}:{self.rng.randint(1, 900)}:{self._code_line().strip()}"

    def _shell_line(self) -> str:
        rng = self.rng
        mod = rng.choice(_MODULES)
        pct = f"{' ' * 8}[{rng.randint(1, 99):3d}%]"
        templates = (
            f"tests/test_{mod}.py::test_{rng.choice(_IDENTS)} PASSED{pct}",
            f"tests/test_{mod}.py::test_{rng.choice(_IDENTS)} FAILED{pct}",
            f"===== {rng.randint(1, 400)} passed, {rng.randint(0, 3)} skipped in "
            f"{rng.uniform(0.1, 30):.2f}s =====",
            f"src/app/{mod}.py:{rng.randint(1, 400)}:{rng.randint(1, 80)}: F401 "
            f"`{rng.choice(_IDENTS)}` imported but unused",
            f" M src/{rng.choice(_PACKAGES)}/{mod}.py",
            f"?? tests/test_{mod}.py",
            f"   Compiling {mod} v0.{rng.randint(1, 9)}.{rng.randint(0, 20)} ({ROOT})",
            f"\x1b[32m✓\x1b[0m {mod} {rng.choice(_WORDS)} ({rng.randint(1, 900)} ms)",
            f"drwxr-xr-x  {rng.randint(2, 9)} user user  4096 Mar {rng.randint(1, 28)} 10:42 {mod}",
            f"Found {rng.randint(0, 20)} errors in {rng.randint(1, 9)} files "
            f"(checked {rng.randint(10, 90)} source files)",
        )
        return rng.choice(templates)

    def _markdown(self, sections: int) -> str:
        rng = self.rng
        parts = []
        for _ in range(sections):
            parts.append(f"## {self._sentence().rstrip('.:?')}\n")
            parts.append(" ".join(self._sentence() for _ in range(rng.randint(1, 3))) + "\n")
            for _ in range(rng.randint(0, 3)):
                parts.append(f"- `{rng.choice(_IDENTS)}()`: {self._sentence()}")
            parts.append("")
        return "\n".join(parts)

    # -- identifiers ------------------------------------------------------------------------

    def _new_session(self) -> None:
        rng = self.rng
        self.session_id = "sess_" + "".join(rng.choices(_B62, k=12))
        self.id_style = rng.choices(("anthropic", "openai", "functions"), (55, 35, 10))[0]
        self.calls_left = rng.randint(40, 160)
        self.call_no = 0

    def _tool_call_id(self, name: str) -> str:
        rng = self.rng
        self.call_no += 1
        if self.id_style == "anthropic":
            return "toolu_01" + "".join(rng.choices(_B62, k=22))
        if self.id_style == "openai":
            return "call_" + "".join(rng.choices(_ALNUM, k=24))
        return f"functions.{name}:{self.call_no}"

    # -- emission ---------------------------------------------------------------------------

    def _envelope(self, update: dict[str, Any]) -> bytes:
        return orjson.dumps(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": self.session_id, "update": update},
            }
        )

    def _emit(
        self,
        label: str,
        update: dict[str, Any],
        make: Callable[[int], str],
        limit: int,
        lo: int = MIN_BYTES,
        hi: int = 560,
        meta: bool = True,
        min_fill: int = 40,
    ) -> None:
        rng = self.rng
        if meta and rng.random() < 0.15 and "_meta" not in update:
            update["_meta"] = rng.choice(
                (
                    {"vendor.example/elapsedMs": rng.randint(1, 4000)},
                    {"vendor.example/elapsedMs": rng.randint(1, 900), "vendor.example/retries": 0},
                    {"vendor.example/model": "example-large-2"},
                    {"vendor.example/progress": None},
                )
            )
        msg = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": self.session_id, "update": update},
        }
        target = int(rng.triangular(lo, hi, lo + (hi - lo) * 0.4))
        line = _fit(msg, make, limit, target, min_fill)
        assert MIN_BYTES <= len(line) <= MAX_BYTES, (label, len(line), line)
        self.out.append((label, line))

    def _text_item(self, text: str) -> dict[str, Any]:
        return {"type": "content", "content": {"type": "text", "text": text}}

    def tool_call(self) -> None:
        rng = self.rng
        if self.calls_left <= 0:
            self._new_session()
        self.calls_left -= 1
        name, kind, _ = rng.choices(_TOOLS, _TOOL_WEIGHTS)[0]
        tcid = self._tool_call_id(name)
        rel = self._rel_path()
        path = f"{ROOT}/{rel}"
        line_no = rng.randint(1, 400)
        raw_input: dict[str, Any]
        locations: list[dict[str, Any]] | None = None
        fill_src = self.prose
        if name == "read_file":
            title = f"Read {rel}"
            raw_input = {"path": path, "offset": line_no, "limit": rng.choice((50, 100, 200, 2000))}
            raw_input["explanation"] = _SENTINEL
            locations = [{"path": path, "line": line_no}]
        elif name == "list_directory":
            rel = rel.rsplit("/", 1)[0] if "/" in rel else "."
            path = f"{ROOT}/{rel}" if rel != "." else ROOT
            title = f"List {rel}"
            raw_input = {"path": path, "explanation": _SENTINEL}
            locations = [{"path": path}]
        elif name in ("edit_file", "write_file"):
            rel = f"{rng.choice(_SHORT_DIRS)}/{rng.choice(_SHORT_MODULES)}.py"
            path = f"{ROOT}/{rel}"
            title = f"{'Edit' if name == 'edit_file' else 'Write'} {rel}"
            if name == "edit_file":
                raw_input = {
                    "path": path,
                    "old_string": self._code_line(60).strip(),
                    "new_string": _SENTINEL,
                    "replace_all": False,
                }
                fill_src = self.code
            else:
                raw_input = {"path": path, "content": _SENTINEL}
                fill_src = self.code
            locations = [{"path": path, "line": line_no}]
        elif name == "bash":
            cmd = rng.choice(_COMMANDS)
            title = f"`{cmd}`" if rng.random() < 0.5 else f"Run {cmd.split()[0]}"
            raw_input = {"command": cmd, "description": _SENTINEL, "timeout": 120000}
        elif name == "grep":
            pat = rng.choice(_GREP_PATTERNS)
            title = f"grep {pat!r} src"
            raw_input = {
                "pattern": pat,
                "path": f"{ROOT}/src",
                "glob": "*.py",
                "output_mode": "content",
                "explanation": _SENTINEL,
            }
            locations = [{"path": f"{ROOT}/src"}]
        elif name == "glob":
            pat = rng.choice(_GLOB_PATTERNS)
            title = f"Find `{pat}`"
            raw_input = {"pattern": pat, "path": ROOT, "explanation": _SENTINEL}
        else:  # web_fetch
            url = rng.choice(_URLS)
            title = f"Fetch {url}"
            raw_input = {"url": url, "prompt": _SENTINEL}

        first: dict[str, Any] = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": tcid,
            "name": name,
            "title": title,
            "kind": kind,
            "status": "pending",
            "rawInput": raw_input,
        }
        if locations is not None:
            first["locations"] = locations
        cancellable = kind in ("execute", "fetch")
        if cancellable:
            first["capabilities"] = {"cancel": {}}
        make, limit = fill_src.slicer(rng)
        self._emit("tool_call_update pending (first report)", first, make, limit, hi=500)

        # Terminal-backed commands.
        if name == "bash" and rng.random() < 0.4:
            self._terminal(tcid, raw_input["command"])
            return

        # Progress.
        if rng.random() < 0.6:
            src = self.prose
            upd: dict[str, Any] = {
                "sessionUpdate": "tool_call_update",
                "toolCallId": tcid,
                "status": "in_progress",
                "content": [self._text_item(_SENTINEL)],
            }
            if locations is not None and rng.random() < 0.3:
                upd["locations"] = [{"path": path, "line": line_no + rng.randint(1, 80)}]
            make, limit = src.slicer(rng)
            self._emit("tool_call_update in_progress (content)", upd, make, limit, hi=480)

        # Streamed output.
        src = {
            "read": self.code,
            "search": self.grep,
            "execute": self.shell,
            "fetch": self.markdown,
            "edit": self.code,
        }[kind]
        n_chunks = rng.choice((0, 0, 1, 1, 2, 3, 4, 6)) if kind != "edit" else rng.choice((0, 0, 1))
        for _ in range(n_chunks):
            chunk: dict[str, Any] = {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": tcid,
                "content": self._text_item(_SENTINEL),
            }
            make, limit = src.slicer(rng)
            self._emit("tool_call_content_chunk", chunk, make, limit, hi=600)

        # Final report.
        r = rng.random()
        if r < 0.05:
            self._final_failed(tcid, cancellable)
        elif r < 0.07:
            self._final_cancelled(tcid)
        elif kind == "edit":
            self._final_diff(tcid, name, path, line_no)
        else:
            self._final_output(tcid, kind, src, cancellable)

    def _final_output(self, tcid: str, kind: str, src: _Corpus, cancellable: bool) -> None:
        rng = self.rng
        upd: dict[str, Any] = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": tcid,
            "status": "completed",
        }
        if rng.random() < 0.5:
            upd["content"] = [self._text_item(_SENTINEL)]
            upd["rawOutput"] = {"truncated": False, "bytes": rng.randint(100, 90000)}
            if kind == "execute":
                upd["rawOutput"]["exitCode"] = 0
            label = "tool_call_update completed (text content + rawOutput)"
        else:
            if kind == "execute":
                upd["rawOutput"] = {"exitCode": 0, "stdout": _SENTINEL, "stderr": ""}
            elif kind == "search":
                upd["rawOutput"] = {"numMatches": rng.randint(0, 60), "matches": _SENTINEL}
            else:
                upd["rawOutput"] = {"content": _SENTINEL, "truncated": rng.random() < 0.2}
            label = "tool_call_update completed (rawOutput)"
        if cancellable:
            upd["capabilities"] = None
        upd["_meta"] = {"vendor.example/elapsedMs": rng.randint(1, 9000)}
        make, limit = src.slicer(rng)
        self._emit(label, upd, make, limit, hi=600)

    def _final_failed(self, tcid: str, cancellable: bool) -> None:
        rng = self.rng
        upd: dict[str, Any] = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": tcid,
            "status": "failed",
            "content": [self._text_item(_SENTINEL)],
            "rawOutput": None,
        }
        if cancellable or rng.random() < 0.5:
            upd["capabilities"] = None
        make, limit = self.prose.slicer(rng)
        self._emit("tool_call_update failed (null clears)", upd, make, limit, hi=450)

    def _final_cancelled(self, tcid: str) -> None:
        rng = self.rng
        upd: dict[str, Any] = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": tcid,
            "status": "cancelled",
            "capabilities": None,
            "rawOutput": None,
            "content": [self._text_item(_SENTINEL)],
            "_meta": {"vendor.example/progress": None, "vendor.example/cancelledBy": "user"},
        }
        make, limit = self.prose.slicer(rng)
        self._emit("tool_call_update cancelled (null clears)", upd, make, limit, hi=450)

    def _final_diff(self, tcid: str, name: str, path: str, line_no: int) -> None:
        rng = self.rng
        ext = "." + path.rsplit(".", 1)[-1]
        add = name == "write_file" and rng.random() < 0.7
        change: dict[str, Any] = {
            "operation": "add" if add else "modify",
            "path": path,
            "fileType": "text",
        }
        if rng.random() < 0.3:
            change["mimeType"] = _MIME.get(ext, "text/plain")
        upd: dict[str, Any] = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": tcid,
            "status": "completed",
        }
        if rng.random() < 0.35:
            upd["rawOutput"] = {"success": True, "linesChanged": rng.randint(1, 12)}
        if rng.random() < 0.15:
            upd["_meta"] = {"vendor.example/elapsedMs": rng.randint(1, 400)}
        before, after, max_len = rng.randint(1, 3), rng.randint(0, 2), 36
        code = [self._code_line(max_len) for _ in range(6)]
        while True:
            old = code[before]
            ident = next((w for w in _IDENTS if w in old), None)
            new = old.replace(ident, rng.choice(_IDENTS), 1) if ident else old.rstrip() + " or {}"
            if add:
                body = [f"+{ln}" for ln in code[: before + 1]] + [f"+{new}{_SENTINEL}"]
                head = [
                    f"diff --git {path} {path}",
                    "new file mode 100644",
                    "--- /dev/null",
                    f"+++ {path}",
                    f"@@ -0,0 +1,{len(body)} @@",
                ]
            else:
                body = [f" {ln}" for ln in code[:before]]
                body += [f"-{old}", f"+{new}{_SENTINEL}"]
                body += [f" {ln}" for ln in code[4 : 4 + after]]
                n_lines = before + 1 + after
                head = [
                    f"diff --git {path} {path}",
                    f"--- {path}",
                    f"+++ {path}",
                    f"@@ -{line_no},{n_lines} +{line_no},{n_lines} @@",
                ]
            text = "\n".join([*head, *body]) + "\n"
            upd["content"] = [
                {
                    "type": "diff",
                    "changes": [change],
                    "patch": {"format": "git_patch", "text": text},
                }
            ]
            base = len(self._envelope(upd)) - len(_SENTINEL_JSON)
            if base <= MAX_BYTES:
                break
            # Too long for the size band: drop context and extras, then shorten lines.
            if after:
                after -= 1
            elif before > 1:
                before -= 1
            elif "rawOutput" in upd:
                del upd["rawOutput"]
            elif "_meta" in upd:
                del upd["_meta"]
            elif "mimeType" in change:
                del change["mimeType"]
            else:
                max_len -= 4
                code = [self._code_line(max_len) for _ in range(6)]
        make, limit = self.prose.slicer(rng)
        # The filled text is a trailing comment on the changed line: no newlines in it.
        comment = "  # " + make(limit).replace("\n", " ")
        self._emit(
            "tool_call_update completed (diff)",
            upd,
            lambda k: comment[:k] if k >= 8 else "",
            len(comment),
            lo=400,
            hi=600,
            meta=False,
            min_fill=0,
        )

    def _terminal(self, tcid: str, command: str) -> None:
        rng = self.rng
        tid = "term_" + "".join(rng.choices(_HEX, k=12))
        shell = self.shell.text

        def b64(src_off: int) -> Callable[[int], str]:
            raw = shell[src_off : src_off + 600].replace("\n", "\r\n").encode()
            return lambda k: base64.b64encode(raw[:k]).decode()

        self._emit(
            "tool_call_update in_progress (terminal ref)",
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": tcid,
                "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": tid}, self._text_item(_SENTINEL)],
            },
            *self.prose.slicer(rng),
            hi=420,
        )
        self._emit(
            "terminal_update (create)",
            {
                "sessionUpdate": "terminal_update",
                "terminalId": tid,
                "command": command,
                "cwd": ROOT,
                "size": {"cols": rng.choice((80, 120, 160)), "rows": rng.choice((24, 40, 50))},
                "output": {"data": _SENTINEL},
                "capabilities": {"cancel": {}},
            },
            b64(rng.choice(self.shell.starts)),
            600,
            hi=520,
        )
        for _ in range(rng.randint(1, 6)):
            self._emit(
                "terminal_output_chunk",
                {
                    "sessionUpdate": "terminal_output_chunk",
                    "terminalId": tid,
                    "data": _SENTINEL,
                },
                b64(rng.choice(self.shell.starts)),
                600,
                hi=600,
            )
        # No negative exit codes (valid in the newest schema): SDK 1.0.0rc3 (schema alpha.5) has
        # ``exitCode >= 0`` and would silently read them as null.
        exit_code = 0 if rng.random() < 0.85 else rng.choice((1, 2, 101, 137))
        self._emit(
            "terminal_update (exit, null clears)",
            {
                "sessionUpdate": "terminal_update",
                "terminalId": tid,
                "exitStatus": {"exitCode": exit_code},
                "capabilities": None,
                "output": {"data": _SENTINEL},
            },
            b64(rng.choice(self.shell.starts)),
            600,
            hi=600,
        )
        upd: dict[str, Any] = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": tcid,
            "status": "completed" if exit_code == 0 else "failed",
            "capabilities": None,
            "rawOutput": {"exitCode": exit_code, "terminalId": tid, "summary": _SENTINEL},
        }
        self._emit(
            "tool_call_update completed (terminal, rawOutput)", upd, *self.prose.slicer(rng), hi=480
        )


def generate_labeled(n: int, seed: int = 0) -> list[tuple[str, bytes]]:
    """``n`` (shape label, notification line) pairs; deterministic for ``seed``."""
    g = _Generator(seed)
    while len(g.out) < n:
        g.tool_call()
    return g.out[:n]


def generate(n: int, seed: int = 0) -> list[bytes]:
    """``n`` compact JSON-RPC ``session/update`` notification lines (300-600 bytes each)."""
    return [line for _, line in generate_labeled(n, seed)]


# -- many live tool calls ------------------------------------------------------------------

_PERMISSION_OPTIONS = (
    {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
)


class _LiveGenerator(_Generator):
    """Long tool calls, each a complete stream of messages, for ``generate_live``."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.request_id = 0

    def _emit_request(
        self,
        label: str,
        params: dict[str, Any],
        make: Callable[[int], str],
        limit: int,
        lo: int = 400,
        hi: int = MAX_BYTES,
    ) -> None:
        self.request_id += 1
        msg = {
            "jsonrpc": "2.0",
            "id": self.request_id,
            "method": "session/request_permission",
            "params": params,
        }
        target = int(self.rng.triangular(lo, hi, lo + (hi - lo) * 0.4))
        line = _fit(msg, make, limit, target, 40)
        assert MIN_BYTES <= len(line) <= MAX_BYTES, (label, len(line), line)
        self.out.append((label, line))

    def _permission(self, tcid: str, first: dict[str, Any], label: str) -> None:
        tool_call: dict[str, Any] = {
            "toolCallId": tcid,
            "title": first["title"],
            "kind": first["kind"],
            "status": "pending",
        }
        if "locations" in first:
            tool_call["locations"] = first["locations"]
        params = {
            "sessionId": self.session_id,
            "title": f"Allow {first['name']}?",
            "description": _SENTINEL,
            "subject": {"type": "tool_call", "toolCall": tool_call},
            "options": list(_PERMISSION_OPTIONS),
        }
        self._emit_request(label, params, *self.prose.slicer(self.rng))

    def _b64_slicer(self) -> tuple[Callable[[int], str], int]:
        off = self.rng.choice(self.shell.starts)
        raw = self.shell.text[off : off + 600].replace("\n", "\r\n").encode()
        return (lambda k: base64.b64encode(raw[:k]).decode()), 600

    def _progress(
        self, tcid: str, src: _Corpus, done: int, total: int, path: str | None, title: str
    ) -> None:
        rng = self.rng
        upd: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": tcid}
        r = rng.random()
        if r < 0.5:
            upd["status"] = "in_progress"
        elif r < 0.7 and path is not None:
            upd["locations"] = [{"path": path, "line": rng.randint(1, 900)}]
        elif r < 0.85:
            upd["title"] = f"{title} ({done}/{total})"
        upd["rawOutput"] = {"progress": {"done": done, "total": total}, "tail": _SENTINEL}
        self._emit("tool_call_update progress (rawOutput)", upd, *src.slicer(rng), hi=520)

    def _text_chunk(self, tcid: str, src: _Corpus) -> None:
        chunk = {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": tcid,
            "content": self._text_item(_SENTINEL),
        }
        self._emit("tool_call_content_chunk (text)", chunk, *src.slicer(self.rng), hi=600)

    def _diff_chunk(self, tcid: str, path: str) -> None:
        rng = self.rng
        ln = rng.randint(1, 400)
        old = self._code_line(36)
        new = self._code_line(36)
        make, limit = self.prose.slicer(rng)
        added = f"{new.rstrip()}  # {make(limit).replace(chr(10), ' ')}"
        text = (
            f"diff --git {path} {path}\n--- {path}\n+++ {path}\n"
            f"@@ -{ln},1 +{ln},1 @@\n-{old}\n+{_SENTINEL}\n"
        )
        chunk = {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": tcid,
            "content": {
                "type": "diff",
                "changes": [{"operation": "modify", "path": path, "fileType": "text"}],
                "patch": {"format": "git_patch", "text": text},
            },
        }
        self._emit(
            "tool_call_content_chunk (diff)",
            chunk,
            lambda k: added[:k],
            len(added),
            lo=420,
            hi=600,
            meta=False,
            min_fill=0,
        )

    def _completed(self, tcid: str, kind: str, src: _Corpus, cancellable: bool) -> None:
        rng = self.rng
        upd: dict[str, Any] = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": tcid,
            "status": "completed",
        }
        if kind == "edit":
            upd["rawOutput"] = {
                "success": True,
                "linesChanged": rng.randint(1, 400),
                "summary": _SENTINEL,
            }
            src = self.prose
        else:
            upd["rawOutput"] = {"truncated": rng.random() < 0.2, "summary": _SENTINEL}
        if cancellable:
            upd["capabilities"] = None
        upd["_meta"] = {"vendor.example/elapsedMs": rng.randint(100, 900_000)}
        self._emit("tool_call_update completed (rawOutput)", upd, *src.slicer(rng), hi=560)

    def live_call(self, length: int) -> list[tuple[str, bytes]]:
        """The messages of one tool call, in order: ``length`` of them unless its fixed
        messages (first report, permission, terminal set-up, final report) need more."""
        rng = self.rng
        # The first report (title, kind, status, rawInput, locations) comes from the short
        # generator; the rest of that short call is discarded.
        head: list[tuple[str, bytes]] = []
        self.out = head
        self.tool_call()
        del head[1:]
        first = orjson.loads(head[0][1])["params"]["update"]
        tcid, name, kind = first["toolCallId"], first["name"], first["kind"]
        path = first["locations"][0]["path"] if "locations" in first else None
        cancellable = kind in ("execute", "fetch")
        asks = kind in ("edit", "execute", "fetch")
        if asks and rng.random() < 0.6:
            self._permission(tcid, first, "session/request_permission (tool_call subject)")
        src = {
            "read": self.code,
            "search": self.grep,
            "execute": self.shell,
            "fetch": self.markdown,
            "edit": self.code,
        }[kind]
        terminal_id = None
        if name == "bash" and rng.random() < 0.5:
            terminal_id = "term_" + "".join(rng.choices(_HEX, k=12))
            self._emit(
                "tool_call_update in_progress (terminal ref)",
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": tcid,
                    "status": "in_progress",
                    "content": [
                        {"type": "terminal", "terminalId": terminal_id},
                        self._text_item(_SENTINEL),
                    ],
                },
                *self.prose.slicer(rng),
                hi=420,
            )
            self._emit(
                "terminal_update (create)",
                {
                    "sessionUpdate": "terminal_update",
                    "terminalId": terminal_id,
                    "command": first["rawInput"]["command"],
                    "cwd": ROOT,
                    "size": {"cols": rng.choice((80, 120, 160)), "rows": rng.choice((24, 40, 50))},
                    "output": {"data": _SENTINEL},
                    "capabilities": {"cancel": {}},
                },
                *self._b64_slicer(),
                lo=320,
                hi=520,
            )
        elif rng.random() < 0.6:
            self._emit(
                "tool_call_update in_progress (content)",
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": tcid,
                    "status": "in_progress",
                    "content": [self._text_item(_SENTINEL)],
                },
                *self.prose.slicer(rng),
                hi=480,
            )
        n_fixed = len(head) + (2 if terminal_id else 1)
        total = max(0, length - n_fixed)
        for done in range(total):
            r = rng.random()
            if asks and r < 0.004:
                self._permission(tcid, first, "session/request_permission (tool_call subject)")
            elif r < 0.12:
                self._progress(tcid, src, done, total, path, first["title"])
            elif terminal_id is not None and r < 0.9:
                self._emit(
                    "terminal_output_chunk",
                    {
                        "sessionUpdate": "terminal_output_chunk",
                        "terminalId": terminal_id,
                        "data": _SENTINEL,
                    },
                    *self._b64_slicer(),
                    lo=320,
                    hi=600,
                )  # base64 fills in steps of 4
            elif kind == "edit" and path is not None and r < 0.7:
                self._diff_chunk(tcid, path)
            else:
                self._text_chunk(tcid, src)
        if terminal_id is not None:
            exit_code = 0 if rng.random() < 0.85 else rng.choice((1, 2, 101, 137))
            # No output snapshot here: it would replace the streamed bytes.
            self._emit(
                "terminal_update (exit, null clears)",
                {
                    "sessionUpdate": "terminal_update",
                    "terminalId": terminal_id,
                    "exitStatus": {"exitCode": exit_code},
                    "capabilities": None,
                    "_meta": {"vendor.example/lastLines": _SENTINEL},
                },
                *self.shell.slicer(rng),
                hi=400,
                meta=False,
            )
            self._emit(
                "tool_call_update completed (terminal, rawOutput)",
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": tcid,
                    "status": "completed" if exit_code == 0 else "failed",
                    "capabilities": None,
                    "rawOutput": {
                        "exitCode": exit_code,
                        "terminalId": terminal_id,
                        "summary": _SENTINEL,
                    },
                },
                *self.prose.slicer(rng),
                hi=480,
            )
        else:
            r = rng.random()
            if r < 0.04:
                self._final_failed(tcid, cancellable)
            elif r < 0.06:
                self._final_cancelled(tcid)
            else:
                self._completed(tcid, kind, src, cancellable)
        return head


def generate_live_labeled(n: int, calls: int = 500, seed: int = 0) -> list[tuple[str, bytes]]:
    """``n`` (shape label, line) pairs: ``calls`` tool calls all open at once, interleaved.

    Each call is a complete stream of about ``n / calls`` messages (lengths vary from 0.3x to
    1.7x the mean): a first report (``name``, ``title``, ``kind``, ``status: "pending"``,
    ``rawInput``, ``locations``); for edit, execute and fetch calls often a
    ``session/request_permission`` request whose ``tool_call`` subject patches the call (and
    rarely another one later); a replacement ``content`` array or, for half of the shell
    commands, a terminal reference and a ``terminal_update`` that creates the terminal; then
    content chunks (text, or ``diff`` items with ``git_patch`` text for edits), base64
    ``terminal_output_chunk``s, and progress updates (status, locations, title, ``rawOutput``);
    and a final report (completed with ``rawOutput`` and ``_meta``; 4% failed and 2% cancelled
    with ``null`` clears and a replacement content array; terminals get an exit update first).
    The streams are interleaved uniformly at random, in order within each call, so nearly all
    ``calls`` are live from the first percent of the stream to the last. Sessions change every
    40-160 calls as in ``generate``. Lines are 300-600 bytes. When ``n`` is too small for
    ``calls`` complete streams (under about 10 per call) the interleaving is cut at ``n``.
    """
    g = _LiveGenerator(seed)
    rng = random.Random(seed + 7)
    weights = [rng.uniform(0.3, 1.7) for _ in range(calls)]
    scale = n / sum(weights)
    lengths = [round(w * scale) for w in weights]
    lengths[-1] += n - sum(lengths)
    streams = [g.live_call(length) for length in lengths]
    order = [i for i, stream in enumerate(streams) for _ in stream]
    rng.shuffle(order)
    cursors = [0] * calls
    out: list[tuple[str, bytes]] = []
    for i in order:
        out.append(streams[i][cursors[i]])
        cursors[i] += 1
    return out[:n]


def generate_live(n: int, calls: int = 500, seed: int = 0) -> list[bytes]:
    """``n`` JSON-RPC lines over ``calls`` live tool calls (see ``generate_live_labeled``)."""
    return [line for _, line in generate_live_labeled(n, calls, seed)]


# -- self-check ----------------------------------------------------------------------------


def _self_check(n: int, sample: int, seed: int) -> None:
    import json
    import statistics
    import sys
    import time
    from collections import Counter
    from pathlib import Path

    import jsonschema
    from acp.experimental.v2.schema import (
        SessionTerminalOutputChunk,
        SessionTerminalUpdate,
        SessionToolCallUpdate,
        ToolCallContentChunkUpdate,
        UpdateSessionNotification,
    )

    t0 = time.perf_counter()
    labeled = generate_labeled(n, seed)
    t_gen = time.perf_counter() - t0
    assert len(labeled) == n
    assert generate(50, seed) == [line for _, line in labeled[:50]], "not deterministic"

    sizes = sorted(len(line) for _, line in labeled)
    print(f"generated {n} messages (seed {seed}) in {t_gen:.2f}s")
    print(
        f"size bytes: min {sizes[0]}  median {statistics.median(sizes):.0f}  "
        f"mean {statistics.fmean(sizes):.0f}  max {sizes[-1]}  total {sum(sizes) / 1e6:.1f} MB"
    )
    assert sizes[0] >= MIN_BYTES and sizes[-1] <= MAX_BYTES

    mix = Counter(label for label, _ in labeled)
    print("mix:")
    for label, count in mix.most_common():
        print(f"  {count / n:6.1%}  {count:7d}  {label}")
    with_meta = sum(b'"_meta":' in line for _, line in labeled)
    with_null = sum(b":null" in line for _, line in labeled)
    sessions = len({orjson.loads(line)["params"]["sessionId"] for _, line in labeled})
    print(
        f"  with _meta: {with_meta / n:.1%}; with an explicit null: {with_null / n:.1%}; "
        f"sessions: {sessions}"
    )

    # JSON Schema: a random sample plus the first message of every shape.
    schema_file = (
        Path(__file__).resolve().parent.parent / "src/acp_toolcalls/schemas/v2/schema.json"
    )
    root = json.loads(schema_file.read_text())
    schema = {
        "$schema": root["$schema"],
        "$ref": "#/$defs/UpdateSessionNotification",
        "$defs": root["$defs"],
    }
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(seed + 1)
    picked = set(rng.sample(range(n), min(sample, n)))
    firsts: dict[str, int] = {}
    for i, (label, _) in enumerate(labeled):
        firsts.setdefault(label, i)
    picked.update(firsts.values())
    bad = 0
    for i in sorted(picked):
        msg = orjson.loads(labeled[i][1])
        assert msg["jsonrpc"] == "2.0" and msg["method"] == "session/update"
        errors = list(validator.iter_errors(msg["params"]))
        if errors:
            bad += 1
            if bad <= 5:
                print(
                    f"SCHEMA INVALID #{i} {labeled[i][0]}: {errors[0].message} at "
                    f"{list(errors[0].absolute_path)}",
                    file=sys.stderr,
                )
    print(
        f"jsonschema (bundled v2 #/$defs/UpdateSessionNotification): "
        f"{len(picked) - bad}/{len(picked)} valid"
    )

    # Official SDK v2 model, every message: the update must land on the expected variant and
    # survive a round trip (no field silently defaulted), ignoring the fields this SDK release
    # does not model (tool-call and terminal `capabilities`, terminal `size`).
    expected = {
        "tool_call_update": SessionToolCallUpdate,
        "tool_call_content_chunk": ToolCallContentChunkUpdate,
        "terminal_update": SessionTerminalUpdate,
        "terminal_output_chunk": SessionTerminalOutputChunk,
    }
    unmodelled = {
        "tool_call_update": ("capabilities",),
        "terminal_update": ("capabilities", "size"),
    }
    sdk_bad = 0
    t0 = time.perf_counter()
    for i, (label, line) in enumerate(labeled):
        params = orjson.loads(line)["params"]
        model = UpdateSessionNotification.model_validate_json(orjson.dumps(params))
        upd = params["update"]
        kind = upd["sessionUpdate"]
        ok = type(model.update) is expected[kind]
        if ok:
            dumped = model.model_dump(mode="json", by_alias=True, exclude_unset=True)
            want = {
                **params,
                "update": {k: v for k, v in upd.items() if k not in unmodelled.get(kind, ())},
            }
            ok = dumped == want
        if not ok:
            sdk_bad += 1
            if sdk_bad <= 5:
                print(f"SDK MISMATCH #{i} {label}: {type(model.update).__name__}", file=sys.stderr)
    t_sdk = time.perf_counter() - t0
    print(
        f"official SDK v2 UpdateSessionNotification.model_validate_json: {n - sdk_bad}/{n} "
        f"valid as the expected variant and round-tripped unchanged in {t_sdk:.1f}s"
    )
    if bad or sdk_bad:
        raise SystemExit(1)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--sample", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    _self_check(args.n, args.sample, args.seed)
