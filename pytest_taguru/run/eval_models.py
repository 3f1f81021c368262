"""eval.jsonl's models: the header, a case and its expectations, the loaded set
(evaluate-run.md §2; the loader, ``run/dataset``, decides absent versus null and reads them).
"""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

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
    paragraphs: list[U32] = Field(default_factory=list)
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
    tags: list[str] = Field(default_factory=list)
    since: U64 | None = None
    until: U64 | None = None


class EvalCase(BaseModel):
    """One case line. ``line`` is its 1-based physical line number (not a JSON key)."""

    model_config = _FILE_SHAPE

    case_id: str
    query: str
    cues: list[str] = Field(default_factory=list)
    expected_sources: list[ExpectedSource] = Field(default_factory=list)
    expected_concepts: list[str] = Field(default_factory=list)
    options: CaseOptions = Field(default_factory=CaseOptions)
    expected_labels: list[str] = Field(default_factory=list)
    expected_associations: list[ExpectedAssociation] = Field(default_factory=list)
    expected_citations: list[ExpectedCitation] = Field(default_factory=list)
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
