"""``evaluation.json``: its models in writer order, the writer and the range-accepting reader.

Absent versus null is decided here, once: an optional field whose value is ``None`` is left
out of the file, unless its annotation carries ``WRITE_NULL``, in which case it is written as
``null``. Fields marked ``F32_FIELD`` are written as shortest 32-bit decimals. Every model reads
leniently (unknown keys ignored, missing keys defaulted), as taguru's own reader does.
Specification: ``evaluate-run.md`` §6.1, §7.
"""

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, model_validator

from .artifact_assembly import BudgetBlock as BudgetBlock
from .artifact_assembly import BudgetInput as BudgetInput
from .artifact_assembly import CitationRefRecord as CitationRefRecord
from .artifact_assembly import Evidence as Evidence
from .artifact_assembly import EvidenceAssembled as EvidenceAssembled
from .artifact_assembly import EvidenceFailed as EvidenceFailed
from .artifact_assembly import EvidenceItemRecord as EvidenceItemRecord
from .artifact_assembly import RerankerRecord as RerankerRecord
from .artifact_assembly import SelectionRecord as SelectionRecord
from .artifact_base import ArtifactModel as ArtifactModel
from .jsonfmt import F32_FIELD, WRITE_NULL, Float32, dumps_pretty, loads_serde
from .wire import F32, ContextPlan, HitLanes

ARTIFACT_VERSION = 1
"""The ``taguru_evaluation`` stamp this tool writes, and the highest version it reads."""


# --- the case block (§7.4, §7.5) -------------------------------------------------------------


class HitLocator(ArtifactModel):
    """A passage hit without its text: where it was and how it scored.

    A non-finite score is written as ``null`` (§7.1); such a ``null`` (hit or lane score) reads
    back as NaN, which is written as ``null`` again.
    """

    source: str
    paragraph: int
    score: F32
    lanes: HitLanes = Field(default_factory=HitLanes)

    @model_validator(mode="before")
    @classmethod
    def _null_scores_are_non_finite(cls, data: Any) -> Any:
        if not isinstance(data, dict):
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


class SectionMismatched(ArtifactModel):
    check: Literal["mismatched"] = "mismatched"
    expected: Annotated[str | None, WRITE_NULL] = None


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


# --- metric values (§6.1) --------------------------------------------------------------------


class Distribution(ArtifactModel):
    """Per-case samples summarized; every statistic is ``null`` when ``n`` is 0."""

    n: int = 0
    min: Annotated[float | None, WRITE_NULL] = None
    p50: Annotated[float | None, WRITE_NULL] = None
    p90: Annotated[float | None, WRITE_NULL] = None
    p99: Annotated[float | None, WRITE_NULL] = None
    max: Annotated[float | None, WRITE_NULL] = None
    mean: Annotated[float | None, WRITE_NULL] = None
    sum: Annotated[float | None, WRITE_NULL] = None

    @property
    def headline(self) -> float | None:
        """The single number compared and gated: the mean."""
        return self.mean


class Ratio(ArtifactModel):
    """``numerator / n`` over a run-level population; ``value`` is ``null`` when ``n`` is 0."""

    value: Annotated[float | None, WRITE_NULL] = None
    n: int = 0
    numerator: Annotated[int | None, WRITE_NULL] = None

    @property
    def headline(self) -> float | None:
        return self.value


class Count(ArtifactModel):
    value: Annotated[float | None, WRITE_NULL] = None
    n: int = 0

    @property
    def headline(self) -> float | None:
        return self.value


MetricValue = Distribution | Ratio | Count
STATISTIC_SHAPES: dict[str, type[Distribution] | type[Ratio] | type[Count]] = {
    "distribution": Distribution,
    "ratio": Ratio,
    "count": Count,
}


def decode_metrics(metrics: dict[str, Any], definitions: Any) -> tuple[dict[str, Any], list[str]]:
    """Decode each metric as the shape its ``definitions[name].statistic`` names (§7.7).

    Never infer the shape from the value: a Ratio would otherwise read silently as a
    Distribution with null statistics. Returns the decoded metrics and one warning per metric
    skipped for want of a definition or for an unknown statistic.
    """
    decoded: dict[str, Any] = {}
    skipped: list[str] = []
    for name, raw in metrics.items():
        if isinstance(raw, Distribution | Ratio | Count):
            decoded[name] = raw
            continue
        definition = definitions.get(name) if isinstance(definitions, dict) else None
        if isinstance(definition, BaseModel):
            definition = definition.model_dump()
        statistic = definition.get("statistic") if isinstance(definition, dict) else None
        shape = STATISTIC_SHAPES.get(statistic) if isinstance(statistic, str) else None
        if shape is None:
            skipped.append(f"metric '{name}' skipped: no definition or an unknown statistic")
            continue
        decoded[name] = shape.model_validate(raw)
    return decoded, skipped


# --- top level (§7.2, §7.3) ------------------------------------------------------------------


class Matching(ArtifactModel):
    normalization: str = "taguru::context::normalize_entry"
    normalized: list[str] = Field(default_factory=lambda: ["expected_concepts", "expected_labels"])
    sources: str = "exact (source, paragraph) match — no normalization"


class EvalInput(ArtifactModel):
    path: str = ""
    name: Annotated[str | None, WRITE_NULL] = None
    cases: int = 0


class Inputs(ArtifactModel):
    """``inputs`` (§7.3, assembly.md §1.9). ``mode`` is ``assembly`` or ``baseline``, always
    written; ``budget`` (the resolved ceilings) only under ``--assembly`` or a ``--max-*``
    flag; ``rerank`` (the model name) only when ``--rerank`` was given."""

    eval: EvalInput = Field(default_factory=EvalInput)
    context: str = ""
    url: str = ""
    out: str = "evaluation.json"
    default_limit: int = 10
    resolve_limit: int = 5
    mode: str = "baseline"
    budget: BudgetInput | None = None
    rerank: str | None = None


class RevisionRecord(ArtifactModel):
    graph: int = 0
    passages: int = 0
    config: int = 0


class EmbeddingsRecord(ArtifactModel):
    provider_model: Annotated[str | None, WRITE_NULL] = None


class Corpus(ArtifactModel):
    revision_before: RevisionRecord = Field(default_factory=RevisionRecord)
    revision_after: RevisionRecord = Field(default_factory=RevisionRecord)
    stable: bool = False  # a reader that finds no verdict must not assume stability
    last_write_epoch_before: int = 0
    last_write_epoch_after: int = 0
    embeddings: EmbeddingsRecord | None = None
    sources_count: int = 0


class Definition(ArtifactModel):
    """What a metric means; readers key only off ``statistic``."""

    unit: str = ""
    statistic: str = ""
    scopes: list[str] = Field(default_factory=list)
    description: str = ""
    source: str = ""
    caveat: Annotated[str | None, WRITE_NULL] = None


class Evaluation(ArtifactModel):
    """The whole ``evaluation.json`` (§7.2). ``thresholds`` is the gate's report object."""

    taguru_evaluation: int = 0
    generated_at: str = ""
    matching: Matching = Field(default_factory=Matching)
    inputs: Inputs = Field(default_factory=Inputs)
    corpus: Corpus = Field(default_factory=Corpus)
    thresholds: Annotated[dict[str, Any] | None, WRITE_NULL] = None
    definitions: dict[str, Definition] = Field(default_factory=dict)
    warnings: list[str] | None = None
    cases: list[CaseBlock] = Field(default_factory=list)
    metrics: dict[str, MetricValue] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _decode_metrics_by_statistic(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("metrics"), dict):
            decoded, _ = decode_metrics(data["metrics"], data.get("definitions"))
            return {**data, "metrics": decoded}
        return data

    def headline(self, metric: str) -> float | None:
        """The number compared and gated for ``metric``; ``None`` when absent or empty."""
        value = self.metrics.get(metric)
        return None if value is None else value.headline


# --- writing and reading ---------------------------------------------------------------------


def to_jsonable(value: Any) -> Any:
    """Plain JSON data in writer order, applying the absent/null and f32 rules of the models."""
    if isinstance(value, BaseModel):
        out: dict[str, Any] = {}
        for name, field in type(value).model_fields.items():
            item = getattr(value, name)
            if item is None:
                if WRITE_NULL in field.metadata:
                    out[name] = None
                continue
            if F32_FIELD in field.metadata and isinstance(item, float):
                out[name] = Float32(item)
            else:
                out[name] = to_jsonable(item)
        return out
    if isinstance(value, dict):
        return {key: to_jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(item) for item in value]
    return value


def render(evaluation: Evaluation) -> str:
    """The exact text of ``evaluation.json`` (no trailing newline)."""
    return dumps_pretty(to_jsonable(evaluation))


def dump_case_block(block: CaseBlock) -> str:
    """A case block as lossless JSON text, for its trip from a worker to the controller.

    Not the artifact's text: there a non-finite 32-bit score becomes ``null`` and reads back
    only as NaN. Here every float keeps its exact value, infinities (``Infinity``) and negative
    zero included; ``None`` fields are left out (each defaults to ``None`` on read).
    """
    return json.dumps(block.model_dump(exclude_none=True), ensure_ascii=False, allow_nan=True)


def load_case_block(text: str) -> CaseBlock:
    """The case block of :func:`dump_case_block` text, exactly as it was built."""
    return CaseBlock.model_validate(json.loads(text))


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename.

    A file already at ``path`` survives any failure. The parent directory must exist.
    """
    target = Path(path)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp creates the file 0600; the artifact gets the mode an ordinary file would.
        os.fchmod(fd, 0o666 & ~_current_umask())
        with os.fdopen(fd, "wb") as handle:  # bytes: no newline translation on any platform
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


class ArtifactError(ValueError):
    """An artifact that cannot be read: not JSON, not an object, or out of the version range."""


def parse_evaluation(text: str | bytes, *, origin: str = "evaluation.json") -> Evaluation:
    """Read an artifact as taguru does: serde floats, range ``1..=ARTIFACT_VERSION``."""
    try:
        data = loads_serde(text)
    except ValueError as error:
        raise ArtifactError(f"{origin}: not JSON: {error}") from error
    if not isinstance(data, dict):
        raise ArtifactError(f"{origin}: not an evaluation artifact (expected a JSON object)")
    stamp = data.get("taguru_evaluation", 0)
    if not isinstance(stamp, int) or isinstance(stamp, bool) or not (
        1 <= stamp <= ARTIFACT_VERSION
    ):
        raise ArtifactError(
            f"{origin}: taguru_evaluation {stamp!r} is outside the readable range "
            f"1..={ARTIFACT_VERSION}"
        )
    try:
        return Evaluation.model_validate(data)
    except ValueError as error:
        raise ArtifactError(f"{origin}: not a readable evaluation artifact: {error}") from error
