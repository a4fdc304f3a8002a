"""v2 permission requests: subjects, options, outcomes and the request message.

Rules this module owns (D46 (error containment, permissions)):

- A request's ``title``/``description`` are the prompt's own text and never touch the
  subject's state; a ``tool_call`` subject is applied like a ``tool_call_update``, a
  ``command`` subject's ids only associate (a ``null`` id or ``_meta`` reads as omitted, Q7).
- Subjects and outcomes are open unions; an unknown outcome is never approval. Option kinds
  are open strings (``models.PermissionOptionKind`` lists the known ones).
- ``subject`` is not default-on-error: a malformed subject fails the request (``-32602``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, ClassVar, Literal, Union

from msgspec import UNSET, Meta, UnsetType

from ._fields import Int64, Lenient, MetaField, Struct, meta_field, null_is_omitted
from ._v2_tool_calls import ToolCallUpdate
from ._wire import Open, UnknownVariant

__all__ = [
    "CancelledPermissionOutcome",
    "CommandPermissionSubject",
    "PermissionOption",
    "PermissionOutcome",
    "PermissionRequestMessage",
    "PermissionSubject",
    "RequestPermissionRequest",
    "RequestPermissionResponse",
    "SelectedPermissionOutcome",
    "ToolCallPermissionSubject",
    "UnknownPermissionOutcome",
    "UnknownPermissionSubject",
]


class ToolCallPermissionSubject(Struct, kw_only=True, tag_field="type", tag="tool_call"):
    """The request is about a tool call; ``tool_call`` is applied like a ``tool_call_update``."""

    tool_call: ToolCallUpdate
    meta: MetaField = meta_field()


class CommandPermissionSubject(Struct, kw_only=True, tag_field="type", tag="command"):
    """The request is about a command; the ids only associate, they change nothing. A ``null``
    id or ``_meta`` reads as omitted (Q7)."""

    command: str
    cwd: str
    tool_call_id: Lenient[str] = UNSET
    terminal_id: Lenient[str] = UNSET
    meta: MetaField = meta_field()

    def __post_init__(self) -> None:
        null_is_omitted(self, ("tool_call_id", "terminal_id", "meta"))


class UnknownPermissionSubject(UnknownVariant):
    """A subject type this library does not know: show a generic prompt."""

    tag_field: ClassVar[str] = "type"


if TYPE_CHECKING:
    PermissionSubject = Union[
        ToolCallPermissionSubject, CommandPermissionSubject, UnknownPermissionSubject
    ]
else:
    PermissionSubject = Annotated[
        ToolCallPermissionSubject | CommandPermissionSubject,
        Open(UnknownPermissionSubject),
    ]


class PermissionOption(Struct, kw_only=True):
    """One choice; ``kind`` is open."""

    option_id: str
    name: str
    kind: str
    meta: MetaField = meta_field()


class RequestPermissionRequest(Struct, kw_only=True):
    """Params of ``session/request_permission``.

    ``title``/``description`` are the prompt's own text and never touch the subject's state.
    ``subject`` is not default-on-error: a malformed subject fails the request (``-32602``).
    """

    session_id: str
    title: str
    options: Annotated[list[PermissionOption], Meta(min_length=1)]
    description: Lenient[str] = UNSET
    subject: PermissionSubject | UnsetType | None = UNSET
    meta: MetaField = meta_field()


class SelectedPermissionOutcome(Struct, kw_only=True, tag_field="outcome", tag="selected"):
    """The user picked ``option_id``; approval only if it was offered and is an allow kind."""

    option_id: str
    meta: MetaField = meta_field()


class CancelledPermissionOutcome(Struct, kw_only=True, tag_field="outcome", tag="cancelled"):
    """Not approved, no option selected."""

    meta: MetaField = meta_field()


class UnknownPermissionOutcome(UnknownVariant):
    """An outcome this library does not know: never approval."""

    tag_field: ClassVar[str] = "outcome"


if TYPE_CHECKING:
    PermissionOutcome = Union[
        SelectedPermissionOutcome, CancelledPermissionOutcome, UnknownPermissionOutcome
    ]
else:
    PermissionOutcome = Annotated[
        SelectedPermissionOutcome | CancelledPermissionOutcome,
        Open(UnknownPermissionOutcome),
    ]


class RequestPermissionResponse(Struct, kw_only=True):
    """Result of ``session/request_permission``."""

    outcome: PermissionOutcome
    meta: MetaField = meta_field()

    def selected_option(self, options: list[PermissionOption]) -> PermissionOption | None:
        """The offered option the user selected, or ``None`` (cancelled, unknown, not offered).

        Whether the returned option approves is the agent's reading of its ``kind``.
        """
        if not isinstance(self.outcome, SelectedPermissionOutcome):
            return None
        for option in options:
            if option.option_id == self.outcome.option_id:
                return option
        return None


class PermissionRequestMessage(
    Struct, kw_only=True, tag_field="method", tag="session/request_permission"
):
    """A JSON-RPC ``session/request_permission`` request."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: Int64 | str  # v2 `RequestId`: never null
    params: RequestPermissionRequest
