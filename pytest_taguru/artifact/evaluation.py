"""``evaluation.json``: its top-level models and metric values in writer order, and the
range-accepting reader.

Absent versus null is decided here, once: an optional field whose value is ``None`` is left
out of the file, unless its annotation carries ``WRITE_NULL``, in which case it is written as
``null``. Fields marked ``F32_FIELD`` are written as shortest 32-bit decimals (the writer,
``artifact/writing``, applies both). Every model reads leniently (unknown keys ignored, missing
keys defaulted), as taguru's own reader does. A case's block lives in ``artifact/case`` and the
assembly blocks in ``artifact/assembly``. Specification: ``evaluate-run.md`` §6.1, §7.
"""

from typing import Annotated, Any

from pydantic import BaseModel, Field, model_validator

from pytest_taguru.artifact.assembly import BudgetInput
from pytest_taguru.artifact.base import OWN_EXTENSION, ArtifactModel
from pytest_taguru.artifact.case import CaseBlock
from pytest_taguru.core.bulk import collector_paused
from pytest_taguru.core.jsontext import WRITE_NULL
from pytest_taguru.core.serde import SerdeError, read_json

ARTIFACT_VERSION = 1
"""The ``taguru_evaluation`` stamp this tool writes, and the highest version it reads."""


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


class ShardInput(ArtifactModel):
    """pytest-taguru's own ``inputs.shard`` (taguru's readers ignore it): the artifact of one
    shard of a run (``--taguru-shard``, ``run.shard``), for ``taguru-evaluate merge``."""

    index: int = 0
    """1-based."""
    count: int = 0
    eval_sha256: str = ""
    """SHA-256 (lowercase hex) of the eval file's bytes."""
    case_ids: list[str] = Field(default_factory=list)
    """Every case id of the eval set (all shards'), in dataset order."""


class Inputs(ArtifactModel):
    """``inputs`` (§7.3, assembly.md §1.9). ``mode`` is ``assembly`` or ``baseline``, always
    written; ``budget`` (the resolved ceilings) only under ``--assembly`` or a ``--max-*``
    flag; ``rerank`` (the model name) only when ``--rerank`` was given; ``replayed`` (an
    extra key of pytest-taguru's: the recording directory) only on a replayed run; ``shard``
    (another) only in a shard's artifact."""

    eval: EvalInput = Field(default_factory=EvalInput)
    context: str = ""
    url: str = ""
    out: str = "evaluation.json"
    default_limit: int = 10
    resolve_limit: int = 5
    mode: str = "baseline"
    budget: BudgetInput | None = None
    rerank: str | None = None
    replayed: str | None = None
    shard: ShardInput | None = None


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


class SliceCard(ArtifactModel):
    """One slice's scorecard (pytest-taguru's own ``slices`` block): the globs that define it,
    how many of the run's cases it holds, and the per-case metrics over those cases, each the
    distribution the run-level ``metrics`` block holds for the same samples."""

    globs: list[str] = Field(default_factory=list)
    n: int = 0
    metrics: dict[str, Distribution] = Field(default_factory=dict)


def _with_decoded_metrics(data: Any) -> Any:
    """A document's ``metrics``, each decoded as its ``definitions`` entry says (§7.7)."""
    if isinstance(data, dict) and isinstance(data.get("metrics"), dict):
        decoded, _ = decode_metrics(data["metrics"], data.get("definitions"))
        return {**data, "metrics": decoded}
    return data


class ExtraMetrics(ArtifactModel):
    """``extra_metrics``, pytest-taguru's own block (taguru's readers ignore it): the metrics
    outside taguru's 31 (``score.registry.EXTRA_METRICS``), with their own ``definitions``,
    in the shapes and key order of the top-level ``definitions`` and ``metrics``."""

    definitions: dict[str, Definition] = Field(default_factory=dict)
    metrics: dict[str, MetricValue] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _decode_metrics_by_statistic(cls, data: Any) -> Any:
        return _with_decoded_metrics(data)


class Evaluation(ArtifactModel):
    """The whole ``evaluation.json`` (§7.2). ``thresholds`` is the gate's report object.

    ``slices`` (slice name → scorecard, in declaration order) and ``slice_thresholds`` (the
    slice gate's report) are pytest-taguru's own keys, which taguru's readers ignore; both are
    left out of a run that defines no slices, so its file is what it was without them.
    """

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
    extra_metrics: Annotated[ExtraMetrics | None, OWN_EXTENSION] = None
    slices: dict[str, SliceCard] | None = None
    slice_thresholds: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _decode_metrics_by_statistic(cls, data: Any) -> Any:
        return _with_decoded_metrics(data)

    def headline(self, metric: str) -> float | None:
        """The number compared and gated for ``metric``; ``None`` when absent or empty."""
        value = self.metrics.get(metric)
        return None if value is None else value.headline


# --- reading ---------------------------------------------------------------------------------


class ArtifactError(ValueError):
    """An artifact that cannot be read: not JSON, not an object, or out of the version range."""


@collector_paused()  # the whole reading: parsing and typing build the heap the collector walks
def parse_evaluation(
    text: str | bytes,
    *,
    origin: str = "evaluation.json",
    float_roundtrip: bool = False,
    summaries: bool = False,
) -> Evaluation:
    """Read an artifact as taguru does (``core/serde``; bytes are UTF-8), range
    ``1..=ARTIFACT_VERSION``; ``float_roundtrip`` reads every float exactly as written;
    ``summaries`` reads each case as its summary (``artifact.case.case_summary``: the hits and
    the search plan skipped, never typed), all a gate reads of it."""
    try:
        data = read_json(
            text if isinstance(text, str) else text.decode("utf-8"),
            exact_wide_integers=True,
            objects="last_wins",  # the lenient models read any object as a map
            float_roundtrip=float_roundtrip,
        )
    except (UnicodeDecodeError, SerdeError) as error:
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
    if summaries:
        _skip_hits(data.get("cases"))
    try:
        return Evaluation.model_validate(data)
    except ValueError as error:
        raise ArtifactError(f"{origin}: not a readable evaluation artifact: {error}") from error


def _skip_hits(cases: Any) -> None:
    """Drop each case's hits and search plan from a parsed document, before it is typed."""
    for case in cases if isinstance(cases, list) else ():
        passage = case.get("passage") if isinstance(case, dict) else None
        if isinstance(passage, dict):
            passage.pop("hits", None)
            passage.pop("plan", None)
