"""The rules the conformance vectors check: each a sentence quoted from ``docs/decisions.md``
(whose D46 rows quote the upstream schema and RFDs), with where it is from. A vector names
one of them by key; ``test_vectors.py`` checks each quote is in the file it names."""

from __future__ import annotations

D46_SOURCE = "docs/decisions.md D46 ({row})"

RULES: dict[str, tuple[str, str]] = {
    # --- patch fields: omitted, null, value
    "patch": (
        "Omitted leaves a field unchanged, `null` clears it (or resets it to its default), a "
        "value replaces it; `[]` and `null` both clear a collection.",
        D46_SOURCE.format(row="patch semantics"),
    ),
    "kind-status-null": (
        "`kind: null` resets to `other`, `status: null` to `pending`; `capabilities` is "
        "replaced whole.",
        D46_SOURCE.format(row="tool-call update"),
    ),
    "stored-as-received": (
        "The store keeps `None` for a cleared `kind`, `status` or `title`.",
        "docs/decisions.md D4",
    ),
    "raw-null": (
        "On receipt, `null` in `rawInput`/`rawOutput` always clears the field.",
        "docs/decisions.md D3",
    ),
    "invalid-no-change": (
        "An invalid (non-null) value of a default-on-error field reads as `UNSET`, which means "
        "no change.",
        "docs/decisions.md D11",
    ),
    "empty-strings": (
        'Receivers accept `""` as a `toolCallId`, `terminalId` or `title`.',
        "docs/decisions.md D24",
    ),
    "name-patch": (
        "Receivers apply a changed `name` like any patch field.",
        "docs/decisions.md D31",
    ),
    # --- collections and chunks
    "collection-stored": (
        "`content: []` is stored as `[]` and `content: null` is stored as `None`.",
        "docs/decisions.md D2",
    ),
    "chunks": (
        "A `tool_call_content_chunk` appends exactly one item; a `content` array on an update "
        "replaces everything, chunks included, and later chunks append to it.",
        D46_SOURCE.format(row="content chunks"),
    ),
    "received-order": (
        "Updates and chunks apply in received order per id (D1 for an unseen id).",
        D46_SOURCE.format(row="content chunks"),
    ),
    # --- _meta
    "meta": (
        "A `_meta` object patches the stored metadata by top-level key (a `null` value removes "
        "the key), `_meta: null` clears it all; the `_meta` of a chunk or an item is scoped to "
        "it (D13).",
        D46_SOURCE.format(row="meta patches"),
    ),
    "meta-new-id": (
        "On a new id, the incoming object is applied to an empty map, so `null`-valued keys are "
        "simply absent.",
        "docs/decisions.md D13",
    ),
    "meta-empty": (
        "`_meta: {}` changes nothing on an existing id and creates an empty map on a new id.",
        "docs/decisions.md D13",
    ),
    "meta-nested": (
        "`_meta` patches by top-level key: a key set to `null` is removed, `_meta: null` clears "
        "the whole map, and there is no nested merge.",
        "docs/decisions.md D13",
    ),
    "meta-v1": (
        "v1 `_meta` on `tool_call`/`tool_call_update` is merged by the same rule in the store "
        '(through v1 → v2), and a v1 `null` means "unchanged" (D8).',
        "docs/decisions.md D13",
    ),
    # --- first sight
    "first-sight": (
        "The first reference to a `toolCallId` creates the tool call with the protocol "
        "defaults: no title, kind `other`, status `pending`, empty content.",
        "docs/decisions.md D1",
    ),
    "upsert": (
        "A `tool_call_update` for an unseen id creates the call with the defaults, then applies "
        "its fields; for a known id it patches.",
        D46_SOURCE.format(row="upsert"),
    ),
    # --- permissions
    "permission-subject": (
        "A permission request's `tool_call` subject is applied like a `tool_call_update`, "
        "synchronously, in stream order with the `session/update` notifications, when the "
        "request is read.",
        "docs/decisions.md D18",
    ),
    "permission-prompt": (
        "The request's `title` and `description` never touch stored state.",
        "docs/decisions.md D18",
    ),
    "permission-other-subject": (
        "An unknown subject type decodes as an unknown variant. It is preserved verbatim when "
        "proxying and changes no stored state.",
        "docs/decisions.md D21",
    ),
    "permission-v1": (
        "The v1 store applies a v1 permission request's `toolCall` as a v1 `tool_call_update` "
        "before the prompt, so D8 and D32 apply.",
        "docs/decisions.md D33",
    ),
    # --- terminals
    "terminals": (
        "`terminal_update` is a patch (an `output` replaces all bytes); each "
        "`terminal_output_chunk` is decoded on its own and appended; a reference may come "
        "before or after the terminal; exit status is independent of the call's status.",
        D46_SOURCE.format(row="terminals"),
    ),
    "terminal-unseen": (
        "A `terminal_update` or `terminal_output_chunk` for an unseen `terminalId` creates "
        "terminal state.",
        "docs/decisions.md D22",
    ),
    "terminal-bad-chunk": (
        "A `terminal_output_chunk` whose `data` is not valid base64 is dropped whole (no bytes "
        "appended) and reported.",
        "docs/decisions.md D22",
    ),
    "terminal-bad-snapshot": (
        "A `terminal_update` whose `output.data` is not valid RFC 4648 base64 has an invalid "
        "`output`, read as omitted (no change) and reported.",
        "docs/decisions.md D22",
    ),
    "terminal-reference": (
        "A content reference to a terminal without state renders as an empty terminal, and "
        "later updates fill it.",
        "docs/decisions.md D22",
    ),
    "terminal-ids": (
        "Terminal ids are never matched to tool-call ids by string equality.",
        "docs/decisions.md D22",
    ),
    "line-zero": (
        "v2 receipt: a location whose `line` is `0`, negative, fractional or above 2^32−1 keeps "
        "its path and loses the line (an invalid value reads as omitted, D11). The v1 codec "
        "keeps `line: 0`, because the v1 schema allows it. v1 readers (the store's v1 path) "
        "and v1 → v2 conversion drop it, and the drop is reported.",
        "docs/decisions.md D7",
    ),
    # --- v1
    "v1-terminal-meta": (
        "on a `tool_call` or `tool_call_update`, `_meta.terminal_info {terminal_id, cwd?}` "
        'announces a terminal (the call\'s content carries `{"type": "terminal", '
        '"terminalId"}`), `_meta.terminal_output {terminal_id, data}` gives the whole output '
        "so far, `_meta.terminal_output_delta {terminal_id, data}` appends, "
        "`_meta.terminal_exit {terminal_id, exit_code, signal}` ends it (`data` is text). That "
        "is a v2 display terminal, not the client-owned terminal above.",
        "docs/decisions.md D38",
    ),
    "v1-store": (
        "A repeated `tool_call` merges (D9); a `tool_call_update` for an unseen id creates the "
        "call; an update applies each field present and not `null` (a v1 `null` changes "
        "nothing, D8); `_meta` merges by key (D13).",
        D46_SOURCE.format(row="v1 store"),
    ),
    "v1-null": (
        "In a v1 `tool_call_update` and in a v1 permission `toolCall`, `null` on any field "
        'means "unchanged".',
        "docs/decisions.md D8",
    ),
    "v1-repeat": (
        "Because a v1 `tool_call` cannot tell an omitted field from its default, default-valued "
        'fields are also treated as omitted: `kind: "other"`, `status: "pending"`, '
        "`content: []`, `locations: []`, and `null` raw fields, `name` or `_meta`.",
        "docs/decisions.md D9",
    ),
    "v1-unknown-enum": (
        "The v1 store reads it as a v1 reader does and does not apply it: on a create the "
        "default applies (`other`/`pending`), and on an update nothing changes. It keeps the "
        "raw string beside the state, only to send it on (`snapshot()` writes it in place of "
        "the applied value).",
        "docs/decisions.md D32",
    ),
    "v1-mapping": (
        "v1 to v2: both messages become `tool_call_update`, a create's default values are "
        "dropped, a v1 `null` never clears.",
        D46_SOURCE.format(row="field mapping"),
    ),
    "v1-diff": (
        "A v1 diff becomes an `add` (no `oldText`) or `modify` change with a `git_patch` (none "
        "when the texts are equal).",
        D46_SOURCE.format(row="diff conversion"),
    ),
    # --- unknown
    "v1-only-on-v2": (
        "On a v2 stream, `tool_call`, `plan` and `current_mode_update` are parsed as unknown "
        "update variants. They conform to the schema and are preserved for proxying and "
        "replay, but they are not applied.",
        "docs/decisions.md D17",
    ),
    "ignored-updates": (
        'The store reports a stray `tool_call` ("ignored") and silently ignores the other '
        "two, as it does every update it does not read.",
        "docs/decisions.md D17",
    ),
    "unknown-keys": (
        "They are written back for same-version re-encoding and patched by key in the store, "
        "but never interpreted.",
        "docs/decisions.md D19",
    ),
    "terminal-output-object": (
        "The store keeps an `output` snapshot's `_meta` and unknown keys with the output until "
        "the next `output` or `null`; a `terminal_output_chunk` adds bytes only.",
        "docs/decisions.md D19",
    ),
    "unknown-keys-across": (
        "Unknown keys of known objects are kept (`extra`), written back only in the same "
        "version and dropped across versions (D19); senders never add root fields.",
        D46_SOURCE.format(row="unknown keys"),
    ),
    "open-enums": (
        "Any string is a valid value of a v2 open enum (kind, status, option kind, ...) and is "
        "kept verbatim; a non-string is invalid.",
        D46_SOURCE.format(row="open enums"),
    ),
    "tagged-unions": (
        "A missing discriminator, or a known one with a malformed payload, is an item error; "
        "an unknown discriminator is the unknown variant, kept with all its keys.",
        D46_SOURCE.format(row="tagged unions"),
    ),
    "error-containment": (
        "A bad array element is skipped; a notification with an item error is dropped and "
        "reported, changing nothing;",
        D46_SOURCE.format(row="error containment"),
    ),
    # --- ordering
    "batch-order": (
        "Receivers process the elements of a batch in array order: the store, the lint, "
        "`replay`, the bridges and the proxy. A bad element costs nothing else.",
        "docs/decisions.md D16",
    ),
    "any-status": (
        "Any status is applied as received. Monotonic progress is never enforced: `paused` may "
        "return to `in_progress`, and a final status may be followed by another one.",
        "docs/decisions.md D23",
    ),
    # --- cancellation
    "cancel-overlay": (
        "It is never exported (`snapshot`, `document`, `replay --json`) or converted. Any later "
        "agent update that sets `status`, to a value or `null`, is applied normally and removes "
        "the overlay: the agent wins.",
        "docs/decisions.md D15",
    ),
    "no-invented-state": (
        "It never changes protocol state on its own.",
        "docs/decisions.md D14",
    ),
    "reused-ids": (
        "It applies the upsert as specified, because it cannot tell a reused id.",
        "docs/decisions.md D20",
    ),
}
