"""Line grammar of taguru's NDJSON import stream (server-wire §2.14), strict per line type.

A line is classified by its keys: ``taguru_batch`` makes a header; otherwise the first key
present in the order ``subject``, ``alias``, ``passage``, ``question``, ``section``,
``locator`` decides. Each line type refuses unknown members.
"""

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from pytest_taguru.core.limits import U32, U64

MAX_CONTEXT_NAME_BYTES = 64
MAX_NAME_BYTES = 1024
MAX_DESCRIPTION_BYTES = 4096
MAX_PASSAGE_BYTES = 8 * 1024 * 1024
MAX_MARKER_BYTES = 512
MAX_LOCATOR_KIND_BYTES = 64
MAX_TAG_BYTES = 128
MAX_TAGS = 32
MAX_WEIGHT = 1e6

LINE_KEYS = ("subject", "alias", "passage", "question", "section", "locator")


def bounded(value: str, what: str, cap: int) -> str:
    """Refuse an empty or over-cap (UTF-8 bytes) string."""
    if not value:
        raise ValueError(f"{what} must not be empty")
    size = len(value.encode())
    if size > cap:
        raise ValueError(f"{what} is {size} bytes, over the {cap}-byte cap")
    return value


class LineModel(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class CreateSpec(LineModel):
    description: str = ""
    pinned: bool = False
    dice_floor: float | None = None
    semantic_floor: float | None = None

    @field_validator("description")
    @classmethod
    def _description(cls, value: str) -> str:
        size = len(value.encode())
        if size > MAX_DESCRIPTION_BYTES:
            raise ValueError(f"the description is {size} bytes, over the 4096-byte cap")
        return value


class HeaderLine(LineModel):
    taguru_batch: int
    context: str
    source: str
    create: CreateSpec | None = None

    @field_validator("taguru_batch")
    @classmethod
    def _version(cls, value: int) -> int:
        if value != 1:
            raise ValueError(f"taguru_batch {value} is not a supported batch format (only 1)")
        return value

    @field_validator("context")
    @classmethod
    def _context(cls, value: str) -> str:
        return bounded(value, "context", MAX_CONTEXT_NAME_BYTES)

    @field_validator("source")
    @classmethod
    def _source(cls, value: str) -> str:
        return bounded(value, "source", MAX_NAME_BYTES)


class PassageLine(LineModel):
    passage: str
    date: U64 | None = None
    tags: list[str] | None = None
    stored_at: U64 | None = None

    @field_validator("passage")
    @classmethod
    def _text(cls, value: str) -> str:
        if len(value.encode()) > MAX_PASSAGE_BYTES:
            raise ValueError("passage text is over the 8 MiB cap")
        return value

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: list[str] | None) -> list[str] | None:
        if value is not None:
            if len(value) > MAX_TAGS:
                raise ValueError(f"{len(value)} tags, at most {MAX_TAGS} allowed")
            for tag in value:
                bounded(tag, "a tag", MAX_TAG_BYTES)
        return value


class QuestionLine(LineModel):
    paragraph: U32
    question: str

    @field_validator("question")
    @classmethod
    def _question(cls, value: str) -> str:
        return bounded(value, "question", MAX_MARKER_BYTES)


class SectionLine(LineModel):
    paragraph: U32
    section: str

    @field_validator("section")
    @classmethod
    def _section(cls, value: str) -> str:
        return bounded(value, "section", MAX_MARKER_BYTES)


class LocatorSpec(LineModel):
    kind: str
    value: str

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        return bounded(value, "locator kind", MAX_LOCATOR_KIND_BYTES)

    @field_validator("value")
    @classmethod
    def _value(cls, value: str) -> str:
        return bounded(value, "locator value", MAX_MARKER_BYTES)


class LocatorLine(LineModel):
    paragraph: U32
    locator: LocatorSpec


class AssociationLine(LineModel):
    subject: str
    label: str
    object: str
    weight: float
    paragraph: U32 | None = None

    @field_validator("subject", "label", "object")
    @classmethod
    def _name(cls, value: str) -> str:
        return bounded(value, "a name", MAX_NAME_BYTES)

    @field_validator("weight")
    @classmethod
    def _weight(cls, value: float) -> float:
        if not math.isfinite(value) or abs(value) > MAX_WEIGHT:
            raise ValueError("weight must be finite with |weight| <= 1000000")
        return value


class AliasLine(LineModel):
    alias: str
    canonical: str
    kind: Literal["concept", "label"]

    @field_validator("alias", "canonical")
    @classmethod
    def _name(cls, value: str) -> str:
        return bounded(value, "an alias or canonical", MAX_NAME_BYTES)


OperationLine = PassageLine | QuestionLine | SectionLine | LocatorLine | AssociationLine | AliasLine

LINE_MODELS: dict[str, type[OperationLine]] = {
    "subject": AssociationLine,
    "alias": AliasLine,
    "passage": PassageLine,
    "question": QuestionLine,
    "section": SectionLine,
    "locator": LocatorLine,
}


def line_model(record: dict[str, Any]) -> type[HeaderLine] | type[OperationLine] | None:
    """The model a decoded line parses with, by its keys; None for an unknown shape."""
    if "taguru_batch" in record:
        return HeaderLine
    for key in LINE_KEYS:
        if key in record:
            return LINE_MODELS[key]
    return None
