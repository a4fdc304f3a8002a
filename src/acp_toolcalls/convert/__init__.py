"""v1 <-> v2 conversion: the stateless mappings, the stateless and session converters, losses.

Rules this package owns (D46 (conversion modes to what is lost); docs/conversion.md lists every
loss):
a conversion carries what both versions can say and reports everything else as a ``Loss``
with its JSON path and a stable ``code``; strict mode raises ``ConversionError`` instead at
the first thing the target version cannot represent. One concept per module, both directions
side by side in each:

- ``_kernel``: ``Losses``, table lookups, the copy helpers, loss rooting and the converter
  frame (decode, convert, batch, root losses), once for every converter.
- ``_loss``: ``Loss`` (and ``LOSS_CODES``), ``LossReport``, ``ConversionError``, ``Converted``.
- ``_content``: content items, blocks and locations; ``_diffs``: diffs and Git patches;
  ``_patches``: Git patches read and applied exactly (the bridge's diffs rebuilt from disk).
- ``_tool_calls``: the tool-call field tables and the D10 title chain; ``_plain``: their fast
  paths for the common loss-free shapes.
- ``_permissions``: permission requests and answers.
- ``_opaque``, ``_session_updates`` and ``_unstable``: session updates (the JSON-level rules,
  the dispatch, the unstable surface).
- ``_stateless``: ``StatelessV2ToV1``/``StatelessV1ToV2``, message by message.
- ``_fence``: Markdown fenced blocks nothing inside can close (diffs, commands, transcripts).
- ``_terminal_meta``: a v1 agent's ``_meta`` terminal extension read as v2 display terminals.

Whole sessions (``SessionConverter``) are ``acp_toolcalls.sessions``, above the bridges and
the proxy's tables it uses. Names are imported on first use (PEP 562), so that importing one
costs only its modules. Names not in ``__all__`` are the helpers the store, the bridges and
the proxy build on.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `from typing import ...`: importing this package stays light

if TYPE_CHECKING:
    from ._content import content_to_v1, content_to_v2
    from ._content import plain_text_to_v1 as plain_text_to_v1
    from ._content import session_reference_to_v1 as session_reference_to_v1
    from ._diffs import change_line as change_line
    from ._diffs import diff_item_to_v1 as diff_item_to_v1
    from ._diffs import diff_summary, diff_to_v2, git_patch
    from ._diffs import whole_new_file as whole_new_file
    from ._fence import fenced
    from ._kernel import RAW_INPUT as RAW_INPUT
    from ._kernel import Frame as Frame
    from ._kernel import Json as Json
    from ._kernel import Losses as Losses
    from ._kernel import batched as batched
    from ._kernel import copy_meta as copy_meta
    from ._kernel import invalid_element as invalid_element
    from ._kernel import read_input as read_input
    from ._kernel import rooted as rooted
    from ._loss import (
        LOSS_CODES,
        ConversionError,
        Converted,
        Loss,
        LossReport,
    )
    from ._loss import NO_LOSSES as NO_LOSSES
    from ._loss import UNKNOWN_KEY as UNKNOWN_KEY
    from ._loss import key_path as key_path
    from ._loss import unknown_keys as unknown_keys
    from ._opaque import block_to_v1 as block_to_v1
    from ._opaque import block_to_v2 as block_to_v2
    from ._patches import PatchSection as PatchSection
    from ._patches import apply_section as apply_section
    from ._patches import read_patch as read_patch
    from ._permissions import (
        DEFAULT_PERMISSION_TITLE,
        SYNTHETIC_ID_PREFIX,
        answer_ambiguity,
        permission_request_to_v1,
        permission_request_to_v2,
        permission_response_to_v1,
        permission_response_to_v2,
        synthetic_tool_call_id,
    )
    from ._permissions import prompt_items as prompt_items
    from ._plain import plain_fields as plain_fields
    from ._plain import plain_stored_fields as plain_stored_fields
    from ._plain import plain_tool_call_fields as plain_tool_call_fields
    from ._session_updates import V1_PLAN_ID, session_update_to_v1, session_update_to_v2
    from ._session_updates import command_to_v1 as command_to_v1
    from ._session_updates import config_option_to_v1 as config_option_to_v1
    from ._session_updates import config_option_to_v2 as config_option_to_v2
    from ._session_updates import prepare_update_checks as prepare_update_checks
    from ._stateless import StatelessV1ToV2, StatelessV2ToV1
    from ._terminal_meta import EXTENSION_KEYS as EXTENSION_KEYS
    from ._terminal_meta import TERMINAL_BYTES as TERMINAL_BYTES
    from ._terminal_meta import TerminalReader as TerminalReader
    from ._terminal_meta import extension_offer as extension_offer
    from ._terminal_meta import uses_extension as uses_extension
    from ._tool_calls import (
        DEFAULT_TOOL_CALL_TITLE,
        display_title,
        tool_call_to_v1,
        tool_call_to_v2,
        tool_call_update_to_v1,
        tool_call_update_to_v2,
    )
    from ._tool_calls import create_defaults as create_defaults
    from ._tool_calls import create_values as create_values
    from ._tool_calls import update_values as update_values
    from ._unstable import session_message_as_text as session_message_as_text

__all__ = [
    "DEFAULT_PERMISSION_TITLE",
    "DEFAULT_TOOL_CALL_TITLE",
    "LOSS_CODES",
    "SYNTHETIC_ID_PREFIX",
    "V1_PLAN_ID",
    "ConversionError",
    "Converted",
    "Loss",
    "LossReport",
    "StatelessV1ToV2",
    "StatelessV2ToV1",
    "answer_ambiguity",
    "content_to_v1",
    "content_to_v2",
    "diff_summary",
    "diff_to_v2",
    "display_title",
    "fenced",
    "git_patch",
    "permission_request_to_v1",
    "permission_request_to_v2",
    "permission_response_to_v1",
    "permission_response_to_v2",
    "session_update_to_v1",
    "session_update_to_v2",
    "synthetic_tool_call_id",
    "tool_call_to_v1",
    "tool_call_to_v2",
    "tool_call_update_to_v1",
    "tool_call_update_to_v2",
]

_EXPORTS: dict[str, tuple[str, ...]] = {
    "_content": (
        "content_to_v1",
        "content_to_v2",
        "plain_text_to_v1",
        "session_reference_to_v1",
    ),
    "_diffs": (
        "change_line",
        "diff_item_to_v1",
        "diff_summary",
        "diff_to_v2",
        "git_patch",
        "whole_new_file",
    ),
    "_fence": ("fenced",),
    "_kernel": (
        "RAW_INPUT",
        "Frame",
        "Json",
        "Losses",
        "batched",
        "copy_meta",
        "invalid_element",
        "read_input",
        "rooted",
    ),
    "_loss": (
        "LOSS_CODES",
        "NO_LOSSES",
        "UNKNOWN_KEY",
        "ConversionError",
        "Converted",
        "Loss",
        "LossReport",
        "key_path",
        "unknown_keys",
    ),
    "_opaque": ("block_to_v1", "block_to_v2"),
    "_patches": ("PatchSection", "apply_section", "read_patch"),
    "_permissions": (
        "DEFAULT_PERMISSION_TITLE",
        "SYNTHETIC_ID_PREFIX",
        "answer_ambiguity",
        "permission_request_to_v1",
        "permission_request_to_v2",
        "permission_response_to_v1",
        "permission_response_to_v2",
        "prompt_items",
        "synthetic_tool_call_id",
    ),
    "_plain": ("plain_fields", "plain_stored_fields", "plain_tool_call_fields"),
    "_session_updates": (
        "V1_PLAN_ID",
        "command_to_v1",
        "config_option_to_v1",
        "config_option_to_v2",
        "prepare_update_checks",
        "session_update_to_v1",
        "session_update_to_v2",
    ),
    "_stateless": ("StatelessV1ToV2", "StatelessV2ToV1"),
    "_unstable": ("session_message_as_text",),
    "_terminal_meta": (
        "EXTENSION_KEYS",
        "TERMINAL_BYTES",
        "TerminalReader",
        "extension_offer",
        "uses_extension",
    ),
    "_tool_calls": (
        "DEFAULT_TOOL_CALL_TITLE",
        "create_defaults",
        "create_values",
        "display_title",
        "tool_call_to_v1",
        "tool_call_to_v2",
        "tool_call_update_to_v1",
        "tool_call_update_to_v2",
        "update_values",
    ),
}
"""Module -> the names this package exports from it (``__all__`` and the helpers)."""

if not TYPE_CHECKING:  # type checkers read the imports above
    from .._lazy import exports

    __getattr__, __dir__ = exports(__name__, _EXPORTS)
