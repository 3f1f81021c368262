"""The assembly-mode shapes of ``evaluation.json``: a case's ``evidence`` and ``budget`` blocks
and the resolved ceilings (``BudgetInput``) that ``inputs.budget`` records too.

Re-exported by ``artifact``, whose writer applies its absent/null rule to these models too.
Specification: ``assembly.md`` §1.8, §1.9.
"""

from typing import Annotated, Literal

from pydantic import Field, field_validator

from pytest_taguru.artifact.base import ArtifactModel
from pytest_taguru.core.jsontext import WRITE_NULL


class CitationRefRecord(ArtifactModel):
    """A locator an evidence item cites."""

    source: str = ""
    paragraph: int = 0


class EvidenceItemRecord(ArtifactModel):
    """One admitted evidence item, without any payload or text (assembly.md §1.8).

    ``source``/``paragraph`` are the item's own locator, both absent for an association.
    """

    candidate_id: str = ""
    kind: str = ""
    fused_rank: int = 0
    source: str | None = None
    paragraph: int | None = None
    citation_refs: list[CitationRefRecord] = Field(default_factory=list)


class SelectionRecord(ArtifactModel):
    dedup_dropped: int = 0
    contradiction_groups: int = 0
    diversity_tier_width: int = 0


class RerankerRecord(ArtifactModel):
    """``plan.reranker`` verbatim: ``model``/``reason`` only when the server sent them."""

    configured: bool = False
    ran: bool = False
    model: str | None = None
    reason: str | None = None


class EvidenceAssembled(ArtifactModel):
    """A successful evidence call. ``omitted_by_reason`` is absent when nothing was omitted."""

    outcome: Literal["assembled"] = "assembled"
    latency_ms: int = 0
    items: list[EvidenceItemRecord] = Field(default_factory=list)
    omitted_by_reason: dict[str, int] | None = None
    selection: SelectionRecord = Field(default_factory=SelectionRecord)
    reranker: RerankerRecord = Field(default_factory=RerankerRecord)

    @field_validator("omitted_by_reason")
    @classmethod
    def _sorted_and_absent_when_empty(cls, value: dict[str, int] | None) -> dict[str, int] | None:
        return dict(sorted(value.items())) if value else None


class EvidenceFailed(ArtifactModel):
    outcome: Literal["failed"] = "failed"
    message: str = ""
    latency_ms: int = 0


Evidence = Annotated[EvidenceAssembled | EvidenceFailed, Field(discriminator="outcome")]


class BudgetInput(ArtifactModel):
    """Resolved ceilings: ``inputs.budget`` and a budget block's ``limits``."""

    max_items: Annotated[int | None, WRITE_NULL] = None
    max_bytes: Annotated[int | None, WRITE_NULL] = None
    max_tokens: Annotated[int | None, WRITE_NULL] = None


class BudgetBlock(ArtifactModel):
    """A case's budget usage (assembly.md §1.8): the package's, or the baseline truncation's."""

    items_used: int = 0
    bytes_used: int = 0
    tokens_used: int = 0
    limits: BudgetInput = Field(default_factory=BudgetInput)
    omitted_total: int = 0
