"""v2 content blocks: what a message, a tool call's output or a resource carries.

Rules this module owns (D46 (schema markers to field leniency, content items)):

- ``ContentBlock`` is an open union on ``type``: an unknown type becomes an
  ``UnknownContentBlock`` that keeps every key; a known type with a bad payload is an error of
  that item, never the fallback.
- An embedded resource is text or a blob (an untagged union: ``AnyOf``); text resources take
  the fast path, blobs the lenient reader.
- ``audience`` items are open ``Role`` strings; ``priority`` is bounded 0..1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, ClassVar, Union

from msgspec import UNSET

from ._fields import Lenient, LenientList, MetaField, Priority, Struct, UInt64, meta_field
from ._wire import AnyOf, Open, UnknownVariant

__all__ = [
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "Icon",
    "ImageContent",
    "ResourceContents",
    "ResourceLink",
    "TextContent",
    "TextResourceContents",
    "UnknownContentBlock",
]


class Annotations(Struct, kw_only=True):
    """Display hints of a content block. ``audience`` items are open ``Role`` strings."""

    audience: LenientList[str] = UNSET
    last_modified: Lenient[str] = UNSET
    priority: Lenient[Priority] = UNSET
    meta: MetaField = meta_field()


class Icon(Struct, kw_only=True):
    """An icon of a resource link; ``src`` must be an ``https:`` or ``data:`` URI (not enforced)."""

    src: str
    mime_type: Lenient[str] = UNSET
    sizes: LenientList[str] = UNSET
    theme: Lenient[str] = UNSET
    meta: MetaField = meta_field()


class TextContent(Struct, kw_only=True, tag_field="type", tag="text"):
    """Text, rendered as CommonMark."""

    text: str
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = meta_field()


class ImageContent(Struct, kw_only=True, tag_field="type", tag="image"):
    """A base64 image."""

    data: str
    mime_type: str
    uri: Lenient[str] = UNSET
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = meta_field()


class AudioContent(Struct, kw_only=True, tag_field="type", tag="audio"):
    """Base64 audio."""

    data: str
    mime_type: str
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = meta_field()


class ResourceLink(Struct, kw_only=True, tag_field="type", tag="resource_link"):
    """A link to a resource the client may fetch."""

    name: str
    uri: str
    title: Lenient[str] = UNSET
    description: Lenient[str] = UNSET
    icons: LenientList[Icon] = UNSET
    mime_type: Lenient[str] = UNSET
    size: Lenient[UInt64] = UNSET
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = meta_field()


class TextResourceContents(Struct, kw_only=True):
    """Embedded text resource."""

    text: str
    uri: str
    mime_type: Lenient[str] = UNSET
    meta: MetaField = meta_field()


class BlobResourceContents(Struct, kw_only=True):
    """Embedded binary resource (base64 ``blob``)."""

    blob: str
    uri: str
    mime_type: Lenient[str] = UNSET
    meta: MetaField = meta_field()


if TYPE_CHECKING:
    ResourceContents = Union[TextResourceContents, BlobResourceContents]
else:
    # msgspec cannot pick between two untagged objects: text resources take the fast path.
    ResourceContents = Annotated[
        TextResourceContents, AnyOf((TextResourceContents, BlobResourceContents))
    ]


class EmbeddedResource(Struct, kw_only=True, tag_field="type", tag="resource"):
    """A resource embedded in the content."""

    resource: ResourceContents
    annotations: Lenient[Annotations] = UNSET
    meta: MetaField = meta_field()


class UnknownContentBlock(UnknownVariant):
    """A content block of a type this library does not know, kept verbatim."""

    tag_field: ClassVar[str] = "type"


if TYPE_CHECKING:
    ContentBlock = Union[
        TextContent,
        ImageContent,
        AudioContent,
        ResourceLink,
        EmbeddedResource,
        UnknownContentBlock,
    ]
else:
    ContentBlock = Annotated[
        TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource,
        Open(UnknownContentBlock),
    ]
