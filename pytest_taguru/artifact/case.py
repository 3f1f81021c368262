"""One eval case's block of ``evaluation.json`` (``cases[]``), its sub-models in writer order,
and the lossless text a case block travels in from a worker to the controller.

Re-exported by ``artifact``, whose writer applies its absent/null and f32 rules to these models.
Specification: ``evaluate-run.md`` §7.4, §7.5.
"""

import json
import math
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from pytest_taguru.artifact.assembly import BudgetBlock, Evidence
from pytest_taguru.artifact.base import OWN_EXTENSION, ArtifactModel
from pytest_taguru.core.jsontext import WRITE_NULL
from pytest_taguru.core.wire import F32, ContextPlan, HitLanes


def _null_score(hit: dict[str, Any]) -> bool:
    """Whether a hit read back holds a ``null`` score, its own or a lane's."""
    if "score" in hit and hit["score"] is None:
        return True
    lanes = hit.get("lanes")
    return isinstance(lanes, dict) and any(
        isinstance(lane, dict) and "score" in lane and lane["score"] is None
        for lane in lanes.values()
    )


class HitLocator(ArtifactModel):
    """A passage hit without its text: where it was and how it scored.

    A non-finite score is written as ``null`` (§7.1); such a ``null`` (hit or lane score) reads
    back as NaN, which is written as ``null`` again.
    """

    source: str
    paragraph: int
    score: F32
    lanes: HitLanes = Field(default_factory=HitLanes)
    text: str | None = Field(default=None, exclude=True, repr=False)
    """The served text, kept in the process for ``--taguru-show-text``; never written or sent."""

    @model_validator(mode="before")
    @classmethod
    def _null_scores_are_non_finite(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not _null_score(data):
            return data
        read = dict(data)
        if "score" in read and read["score"] is None:
            read["score"] = math.nan
        lanes = read.get("lanes")
        if isinstance(lanes, dict):
            read["lanes"] = {
                name: {**lane, "score": math.nan}
                if isinstance(lane, dict) and "score" in lane and lane["score"] is None
                else lane
                for name, lane in lanes.items()
            }
        return read


class PassageSearched(ArtifactModel):
    """A searched passage lane. A plan lane's written ``"floor": null`` (a non-finite floor)
    reads back as NaN, so it is written as ``null`` again rather than dropped."""

    outcome: Literal["searched"] = "searched"
    plan: ContextPlan | None = None
    hits: list[HitLocator] = Field(default_factory=list)
    latency_ms: int = 0

    @model_validator(mode="before")
    @classmethod
    def _null_floors_are_non_finite(cls, data: Any) -> Any:
        plan = data.get("plan") if isinstance(data, dict) else None
        lanes = plan.get("lanes") if isinstance(plan, dict) else None
        if not isinstance(plan, dict) or not isinstance(lanes, dict):
            return data
        read_lanes = {
            name: {**lane, "floor": math.nan}
            if isinstance(lane, dict) and "floor" in lane and lane["floor"] is None
            else lane
            for name, lane in lanes.items()
        }
        return {**data, "plan": {**plan, "lanes": read_lanes}}


class PassageFailed(ArtifactModel):
    outcome: Literal["failed"] = "failed"
    message: str = ""
    latency_ms: int = 0


Passage = Annotated[PassageSearched | PassageFailed, Field(discriminator="outcome")]


class CueResolution(ArtifactModel):
    """One coverage-cue resolve (``kind`` concept) or resolve_label (``kind`` label) call."""

    cue: str
    kind: Literal["concept", "label"]
    resolved_names: list[str] = Field(default_factory=list)
    tier: str | None = None
    limit: int = 5
    latency_ms: int = 0
    error: str | None = None


class PositionResolved(ArtifactModel):
    outcome: Literal["resolved"] = "resolved"
    name: str
    tier: str
    latency_ms: int = 0


class PositionNotFound(ArtifactModel):
    outcome: Literal["not_found"] = "not_found"
    latency_ms: int = 0


class PositionAmbiguous(ArtifactModel):
    outcome: Literal["ambiguous"] = "ambiguous"
    tier: str
    candidates: list[str] = Field(default_factory=list)
    latency_ms: int = 0


class PositionErrored(ArtifactModel):
    outcome: Literal["errored"] = "errored"
    message: str = ""
    latency_ms: int = 0


Position = Annotated[
    PositionResolved | PositionNotFound | PositionAmbiguous | PositionErrored,
    Field(discriminator="outcome"),
]


class AttributionLocator(ArtifactModel):
    """An attribution reduced to what the served-locator set needs."""

    source: str
    paragraph: Annotated[int | None, WRITE_NULL] = None


class QueryQueried(ArtifactModel):
    outcome: Literal["queried"] = "queried"
    total: int = 0
    matches: int = 0
    attributions: list[AttributionLocator] | None = None
    latency_ms: int = 0


class QueryErrored(ArtifactModel):
    outcome: Literal["errored"] = "errored"
    message: str = ""
    latency_ms: int = 0


QueryProbe = Annotated[QueryQueried | QueryErrored, Field(discriminator="outcome")]


class AssociationProbe(ArtifactModel):
    """One expected association: its three resolved positions and the pinned query, if run."""

    subject_cue: str
    label_cue: str
    object_cue: str
    subject: Position
    label: Position
    object: Position
    query: QueryProbe | None = None


class Structural(ArtifactModel):
    cues: list[CueResolution] = Field(default_factory=list)
    associations: list[AssociationProbe] = Field(default_factory=list)


class Recall(ArtifactModel):
    recall_at_k: float
    mrr: float
    ndcg: float
    expected_total: int
    matched: int


class CoverageCounts(ArtifactModel):
    expected: int
    matched: int
    value: float


class Coverage(ArtifactModel):
    concepts: CoverageCounts | None = None
    labels: CoverageCounts | None = None
    associations: CoverageCounts | None = None


class LaneCross(ArtifactModel):
    structural_hit: bool
    passage_hit: bool


class CitationRecall(ArtifactModel):
    expected_total: int
    matched: int
    value: float


class CitationValidity(ArtifactModel):
    expected_total: int
    valid: int
    value: float


class SectionNotChecked(ArtifactModel):
    check: Literal["not_checked"] = "not_checked"


class SectionMatched(ArtifactModel):
    check: Literal["matched"] = "matched"
    expected: Annotated[str | None, WRITE_NULL] = None


class ServedSection(ArtifactModel):
    """The section a citation was served in (``None``: outside every section)."""

    name: str | None = None


class SectionMismatched(ArtifactModel):
    check: Literal["mismatched"] = "mismatched"
    expected: Annotated[str | None, WRITE_NULL] = None
    served: ServedSection | None = Field(default=None, exclude=True, repr=False)
    """What was served instead, for the drill-down (in the process only, like a hit's text;
    ``None`` when not known, e.g. read back from an artifact)."""


SectionCheck = Annotated[
    SectionNotChecked | SectionMatched | SectionMismatched, Field(discriminator="check")
]


class QuoteCheck(ArtifactModel):
    declared: str
    matched: bool


class CheckResolved(ArtifactModel):
    source: str
    paragraph: int
    served: bool
    outcome: Literal["resolved"] = "resolved"
    section: SectionCheck = Field(default_factory=SectionNotChecked)
    quote: QuoteCheck | None = None
    latency_ms: int = 0


class CheckUnresolved(ArtifactModel):
    source: str
    paragraph: int
    served: bool
    outcome: Literal["unresolved"] = "unresolved"
    code: Annotated[str | None, WRITE_NULL] = None
    message: str = ""
    latency_ms: int = 0


CitationCheck = Annotated[CheckResolved | CheckUnresolved, Field(discriminator="outcome")]


class Citations(ArtifactModel):
    recall: CitationRecall
    validity: CitationValidity
    checks: list[CitationCheck] = Field(default_factory=list)


class UnjudgedHit(ArtifactModel):
    """A hit no ``expected_sources`` entry satisfies, at its 1-based rank among the hits."""

    rank: int
    source: str
    paragraph: int


class MetricBounds(ArtifactModel):
    """A metric's least and greatest value over every labelling of the unjudged hits."""

    low: float
    high: float


class LabelCoverage(ArtifactModel):
    """pytest-taguru's own (taguru's readers ignore it): how much of the case's hits the labels
    judge, and how far recall@k, MRR and nDCG could move (``score.label_coverage``). Present
    when the passage lane searched and the case declares an ``expected_sources`` entry; the
    bounds only with a ``recall`` block."""

    hits: int
    judged: int
    judged_at_k: float | None = None
    unjudged: list[UnjudgedHit] = Field(default_factory=list)
    recall_at_k: MetricBounds | None = None
    mrr: MetricBounds | None = None
    ndcg: MetricBounds | None = None


class CaseBlock(ArtifactModel):
    """Everything recorded for one eval case, in writer order (§7.4)."""

    case_id: str
    query: str
    cues: list[str] | None = None
    limit: int = 10
    passage: Passage
    structural: Structural | None = None
    recall: Recall | None = None
    coverage: Coverage | None = None
    lane_cross: LaneCross | None = None
    citations: Citations | None = None
    missed: list[str] = Field(default_factory=list)
    missed_truncated: int = 0
    evidence: Evidence | None = None
    budget: BudgetBlock | None = None
    diversity_sources: int | None = None
    retries: int | None = None
    """pytest-taguru's own (taguru's readers ignore it): requests of this case sent again
    (``--taguru-retries``); absent when none was."""
    label_coverage: Annotated[LabelCoverage | None, OWN_EXTENSION] = None
    """pytest-taguru's own: judged@k, the unjudged hits and the metric bounds."""
    expectations_sha256: str | None = None
    """pytest-taguru's own: the hash of what the eval line declares (``run.expectations``),
    which pairs this case with the same, unrelabelled case of another run."""


_TRANSPORT = json.JSONEncoder(ensure_ascii=False, allow_nan=True)
_DECODER = json.JSONDecoder()
_CASE_ID_AT = len('{"case_id": ')
"""Where the case id's string starts in the transport text (``case_id`` is the first field)."""


def dump_case_block(block: CaseBlock) -> str:
    """A case block as lossless JSON text, for its trip from a worker to the controller.

    Not the artifact's text: there a non-finite 32-bit score becomes ``null`` and reads back
    only as NaN. Here every float keeps its exact value, infinities (``Infinity``) and negative
    zero included; ``None`` fields are left out (each defaults to ``None`` on read).
    """
    return _TRANSPORT.encode(block.model_dump(exclude_none=True))


def load_case_block(text: str) -> CaseBlock:
    """The case block of :func:`dump_case_block` text, exactly as it was built."""
    return CaseBlock.model_validate(json.loads(text))


def case_summary(block: CaseBlock) -> CaseBlock:
    """The block without its hits, the search plan and the unjudged hits' locators: everything
    the run-level numbers (metrics, the summary, the gate) read, at a small part of the block's
    size (the controller holds one per case until the run ends)."""
    update: dict[str, object] = {}
    if isinstance(block.passage, PassageSearched):
        update["passage"] = block.passage.model_copy(update={"hits": [], "plan": None})
    if block.label_coverage is not None and block.label_coverage.unjudged:
        update["label_coverage"] = block.label_coverage.model_copy(update={"unjudged": []})
    return block.model_copy(update=update) if update else block


def case_id_of(text: str) -> str:
    """The case id of a :func:`dump_case_block` text, read without reading the rest."""
    case_id, _ = _DECODER.raw_decode(text, _CASE_ID_AT)
    assert isinstance(case_id, str)
    return case_id
