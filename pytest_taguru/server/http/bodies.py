"""Typed request bodies and their decoding into taguru's rejection statuses.

server-wire §1.5 family 1: a missing or non-JSON ``Content-Type`` is 415, broken JSON 400,
valid JSON of the wrong shape 422 — all ``malformed_request``, messages in axum's words.
Unknown top-level members are ignored; ``/query``'s ``after`` cursor is the one strict
object. Integers must be JSON integers (strict mode refuses ``1.0`` and booleans).

Every body is read by the plugin's one JSON reader (``core/serde``), as serde_json reads it:
its refusals are the 400 text ``Failed to parse the request body as JSON: <serde's words>``
(a body nested past serde's 128 levels included), floats are serde's, ``-0`` is a float, and
a lone surrogate escape is refused in every string the body's shape reads. Not reproduced:
the ``<path>: `` prefix ``serde_path_to_error`` puts before a refusal inside an object or
array, and serde's acceptance of any depth inside a member a typed body ignores.
"""

from typing import Any, TypeVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, model_validator

from pytest_taguru.core.limits import U32, U64
from pytest_taguru.core.serde import SerdeError, check_every_string, read_json
from pytest_taguru.server.errors import ApiError

MISSING_JSON_CONTENT_TYPE = "Expected request with `Content-Type: application/json`"
JSON_SYNTAX_PREFIX = "Failed to parse the request body as JSON: "
JSON_DATA_PREFIX = "Failed to deserialize the JSON body into the target type: "

Names = str | list[str]


class RequestBody(BaseModel):
    """Base of typed bodies: strict scalars, unknown members ignored."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class CreateContextBody(RequestBody):
    """``PUT /contexts/{name}`` (read as raw bytes; any parse failure is a 400)."""

    description: str = ""
    pinned: bool = False
    dice_floor: float | None = None
    semantic_floor: float | None = None


class UpdateContextBody(RequestBody):
    """``PATCH /contexts/{name}``: an omitted or ``null`` field means "unchanged"."""

    description: str | None = None
    pinned: bool | None = None
    dice_floor: float | None = None
    semantic_floor: float | None = None


class ResolveBody(RequestBody):
    cue: str
    limit: U64 | None = None
    dice_floor: float | None = None
    semantic_floor: float | None = None


class SearchBody(RequestBody):
    query: str
    limit: U64 | None = None
    semantic_floor: float | None = None
    tags: list[str] = Field(default_factory=list)
    since: U64 | None = None
    until: U64 | None = None


class ExplainSearchBody(SearchBody):
    """``sources/search/explain``: the search being explained, and the source expected in it
    (``paragraph``, alias ``index``: which one; omitted = its best showing)."""

    source: str
    paragraph: U32 | None = Field(
        default=None, validation_alias=AliasChoices("paragraph", "index")
    )


class ExplainResolveBody(ResolveBody):
    """``resolve/explain`` and ``resolve_label/explain``: the call and the name expected."""

    expected: str


class QueryCursorBody(BaseModel):
    """``after``: the previous page's last match; unknown members refused."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    weight: float
    subject: str
    label: str
    object: str


class QueryBody(RequestBody):
    subject: Names | None = None
    label: Names | None = None
    object: Names | None = None
    subject_types: Names | None = None
    object_types: Names | None = None
    limit: U64 | None = None
    after: QueryCursorBody | None = None
    since: U64 | None = None
    until: U64 | None = None


class CitationBody(RequestBody):
    """``paragraph``, or its pre-rename spelling ``index`` — not both."""

    source: str
    paragraph: U32

    @model_validator(mode="before")
    @classmethod
    def _index_alias(cls, data: Any) -> Any:
        if isinstance(data, dict) and "index" in data:
            if "paragraph" in data:
                raise ValueError("duplicate field `paragraph`")
            data = {**data, "paragraph": data["index"]}
        return data


class RetractSourceBody(RequestBody):
    source: str


class RetractAssociationBody(RequestBody):
    subject: str
    label: str
    object: str


class RegisterAliasesBody(RequestBody):
    concepts: dict[str, str] = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)


class RemoveAliasesBody(RequestBody):
    concepts: list[str] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)


Body = TypeVar("Body", bound=BaseModel)


def is_json_content_type(header: str | None) -> bool:
    """``application/json`` or ``application/<anything>+json``, parameters ignored."""
    if not header:
        return False
    mime = header.split(";", 1)[0].strip().lower()
    kind, _, subtype = mime.partition("/")
    return kind == "application" and (subtype == "json" or subtype.endswith("+json"))


def parse_json(raw: bytes, *, check_strings: bool = True) -> Any:
    """A body read by the one JSON reader; whatever serde refuses is 400 ``malformed_request``.

    ``check_strings=False`` for a typed body: :func:`decode_model` then checks only the
    strings its shape reads, as serde skips an ignored member unread.
    """
    try:
        return read_json(raw.decode("utf-8"), check_strings=check_strings)
    except (UnicodeDecodeError, SerdeError) as exc:
        raise ApiError("malformed_request", JSON_SYNTAX_PREFIX + str(exc), status=400) from exc


def json_type_name(value: Any) -> str:
    """The bare JSON type name of a decoded value (``null``, ``boolean``, ``number``…)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def read_members(model: type[BaseModel], value: Any) -> None:
    """Check the strings of the members ``model`` reads (a lone surrogate is serde's 400)."""
    if isinstance(value, dict):
        try:
            check_every_string([item for key, item in value.items() if key in model.model_fields])
        except SerdeError as exc:
            raise ApiError("malformed_request", JSON_SYNTAX_PREFIX + str(exc), status=400) from exc


def decode_model(model: type[Body], value: Any) -> Body:
    """Validate decoded JSON against a body model (its strings read first); a shape error
    is 422."""
    read_members(model, value)
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise ApiError(
            "malformed_request", JSON_DATA_PREFIX + describe_validation(exc, value), status=422
        ) from exc


def describe_validation(exc: ValidationError, value: Any) -> str:
    """The first problem in serde's words: ``missing field `x```, ``x: invalid type: …``."""
    error = exc.errors()[0]
    location = ".".join(str(part) for part in error["loc"])
    if error["type"] == "missing":
        return f"missing field `{error['loc'][-1]}`"
    if error["type"] == "value_error":
        return str(error["msg"]).removeprefix("Value error, ")
    if not location:
        return f"invalid type: {json_type_name(value)}, expected an object"
    if error["type"] == "extra_forbidden":
        return f"unknown field `{error['loc'][-1]}`"
    return f"{location}: {error['msg']}"
