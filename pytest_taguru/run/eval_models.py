"""eval.jsonl's models: the header, a case and its expectations, the loaded set
(evaluate-run.md §2; the loader, ``run/dataset``, decides absent versus null and reads them).
"""

from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, Strict

from pytest_taguru.core.limits import U8, U32, U64
from pytest_taguru.core.text import trim

EVAL_VERSION = 1
DEFAULT_LIMIT = 10
"""Hits asked of passage search when a case declares no ``options.limit``."""
RESOLVE_LIMIT = 5
"""``limit`` of every resolve request (cues and association positions)."""
MAX_LIMIT = 1000
MAX_RELEVANCE = 3

# Strict: 3.0 is not an integer, "3" is not a number, true is not an integer.
_FILE_SHAPE = ConfigDict(strict=True, extra="forbid", frozen=True)

_Entry = TypeVar("_Entry")
Array = Annotated[tuple[_Entry, ...], Strict(False)]
"""A JSON array, held as a tuple: an absent or empty one is Python's one empty tuple, where a
list per field cost each of 100,000 cases several hundred bytes and cycle-collector work.
Strict validation takes no list for a tuple, so only the array itself is lax (JSON gives no
other sequence); its entries stay strict."""


class EvalHeader(BaseModel):
    """The first non-blank line. ``taguru_eval`` must equal 1 (checked by the loader)."""

    model_config = _FILE_SHAPE

    taguru_eval: U64
    name: str | None = None
    default_target: Any = None
    """Any JSON; taguru ignores it. pytest-taguru reads ``default_target.context`` as a fallback."""

    @property
    def default_context(self) -> str | None:
        """``default_target.context`` when it is a string that is not blank, else None."""
        target = self.default_target
        context = target.get("context") if isinstance(target, dict) else None
        return context if isinstance(context, str) and trim(context) else None


class ExpectedSource(BaseModel):
    """One ``expected_sources[]`` entry; ``paragraphs == []`` means any paragraph of the source."""

    model_config = _FILE_SHAPE

    source: str
    paragraphs: Array[U32] = Field(default_factory=tuple)
    relevance: U8 = 1
    """The loader guarantees 0..=3; the wider u8 type is what parses (4-255 is a range error)."""


class ExpectedAssociation(BaseModel):
    """One ``expected_associations[]`` entry; all three positions required and non-blank."""

    model_config = _FILE_SHAPE

    subject: str
    label: str
    object: str


class ExpectedCitation(BaseModel):
    """One ``expected_citations[]`` entry (``paragraph`` is 0-based).

    ``section`` is three-valued: key absent = do not check; ``null`` = assert the paragraph
    lies outside every section; a string = assert exactly that label. pydantic records which
    keys were given (``model_fields_set``), so ``section_declared`` tells absent from null.
    """

    model_config = _FILE_SHAPE

    source: str
    paragraph: U32
    section: str | None = None
    quote: str | None = None

    @property
    def section_declared(self) -> bool:
        """True when the ``section`` key was present (its value may be null)."""
        return "section" in self.model_fields_set


class CaseOptions(BaseModel):
    """``options``; ``floor`` holds the 32-bit float value the file's number converts to."""

    model_config = _FILE_SHAPE

    limit: U64 | None = None
    floor: float | None = None
    tags: Array[str] = Field(default_factory=tuple)
    since: U64 | None = None
    until: U64 | None = None


class EvalCase(BaseModel):
    """One case line. ``line`` is its 1-based physical line number (not a JSON key)."""

    model_config = _FILE_SHAPE

    case_id: str
    query: str
    cues: Array[str] = Field(default_factory=tuple)
    expected_sources: Array[ExpectedSource] = Field(default_factory=tuple)
    expected_concepts: Array[str] = Field(default_factory=tuple)
    options: CaseOptions = Field(default_factory=CaseOptions)
    expected_labels: Array[str] = Field(default_factory=tuple)
    expected_associations: Array[ExpectedAssociation] = Field(default_factory=tuple)
    expected_citations: Array[ExpectedCitation] = Field(default_factory=tuple)
    line: int = Field(default=0, exclude=True)

    @property
    def effective_limit(self) -> int:
        """``options.limit`` when declared, else ``DEFAULT_LIMIT`` (10)."""
        return DEFAULT_LIMIT if self.options.limit is None else self.options.limit


class EvalSet(BaseModel):
    """A loaded eval.jsonl: the path as given, its header, its cases in file order."""

    model_config = ConfigDict(frozen=True)

    path: str
    header: EvalHeader
    cases: list[EvalCase]

    @property
    def name(self) -> str | None:
        """The header's ``name`` (``inputs.eval.name`` in the artifact)."""
        return self.header.name

    @property
    def default_context(self) -> str | None:
        """The header's ``default_target.context`` (a pytest-taguru fallback for the context)."""
        return self.header.default_context
