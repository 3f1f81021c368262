"""``evaluation.json``: its top-level models and metric values in writer order, the writer
and the range-accepting reader.

Absent versus null is decided here, once: an optional field whose value is ``None`` is left
out of the file, unless its annotation carries ``WRITE_NULL``, in which case it is written as
``null``. Fields marked ``F32_FIELD`` are written as shortest 32-bit decimals. Every model reads
leniently (unknown keys ignored, missing keys defaulted), as taguru's own reader does. A case's
block lives in ``artifact/case`` and the assembly blocks in ``artifact/assembly``.
Specification: ``evaluate-run.md`` §6.1, §7.
"""

import errno
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, BinaryIO

from pydantic import BaseModel, Field, model_validator

from pytest_taguru.artifact.assembly import BudgetInput
from pytest_taguru.artifact.base import OWN_EXTENSION, ArtifactModel
from pytest_taguru.artifact.case import CaseBlock
from pytest_taguru.core.bulk import collector_paused
from pytest_taguru.core.jsontext import F32_FIELD, WRITE_NULL, Float32, Rendered, write_pretty
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


# --- writing and reading ---------------------------------------------------------------------


_FieldPlan = tuple[tuple[str, bool, bool], ...]
_PLANS: dict[type[BaseModel], _FieldPlan] = {}


def _field_plan(model: type[BaseModel]) -> _FieldPlan:
    """``(name, is_f32, writes_null)`` of each written field of ``model``, in writer order."""
    plan = _PLANS.get(model)
    if plan is None:
        plan = _PLANS[model] = tuple(
            (name, F32_FIELD in field.metadata, WRITE_NULL in field.metadata)
            for name, field in model.model_fields.items()
            if not field.exclude  # in-process only (e.g. a hit's text), never written
        )
    return plan


def written_members(value: Any) -> list[tuple[str, Any]] | None:
    """The written key/value pairs of a model in writer order, applying the absent/null and
    f32 rules of its fields (``None`` for a value that is not a model)."""
    if not isinstance(value, BaseModel):
        return None
    pairs: list[tuple[str, Any]] = []
    fields = value.__dict__
    for name, is_f32, writes_null in _field_plan(type(value)):
        item = fields[name]
        if item is None:
            if writes_null:
                pairs.append((name, None))
        elif is_f32 and isinstance(item, float):
            pairs.append((name, Float32(item)))
        else:
            pairs.append((name, item))
    return pairs


def to_jsonable(value: Any) -> Any:
    """Plain JSON data in writer order, applying the absent/null and f32 rules of the models."""
    pairs = written_members(value)
    if pairs is not None:
        return {name: to_jsonable(item) for name, item in pairs}
    if isinstance(value, dict):
        return {key: to_jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(item) for item in value]
    return value


CASE_PAD = "    "
"""A case block's indentation in ``evaluation.json`` (an item of the top-level ``cases``)."""


def case_text(block: CaseBlock) -> str:
    """A case block's exact text in ``evaluation.json``, for its place in ``cases``."""
    pieces: list[str] = []
    write_pretty(block, pieces.append, CASE_PAD, written_members)
    return "".join(pieces)


def read_case_text(text: str) -> CaseBlock:
    """A case block read back from :func:`case_text` as the artifact reader reads it (a
    ``null`` score is NaN)."""
    return CaseBlock.model_validate(
        read_json(text, exact_wide_integers=True, objects="last_wins")
    )


def render_pieces(
    evaluation: Evaluation, emit: Callable[[str], object], case_texts: Iterable[str] = ()
) -> None:
    """The exact text of ``evaluation.json`` (no trailing newline), handed to ``emit`` piece by
    piece, straight from the models: nothing of the whole document is built in memory.

    ``case_texts``, when given, are the cases' :func:`case_text`, in order, written in place
    of ``evaluation.cases`` (read one at a time, as they are written).
    """
    members = written_members
    if case_texts != ():
        texts = (Rendered(text) for text in case_texts)

        def members(value: Any) -> list[tuple[str, Any]] | None:
            pairs = written_members(value)
            if value is not evaluation or pairs is None:
                return pairs
            return [(key, texts if key == "cases" else item) for key, item in pairs]

    write_pretty(evaluation, emit, members=members)


def render(evaluation: Evaluation) -> str:
    """The exact text of ``evaluation.json`` (no trailing newline)."""
    pieces: list[str] = []
    render_pieces(evaluation, pieces.append)
    return "".join(pieces)


class _Spool:
    """Collects pieces of text and writes them to a binary file as UTF-8 in large blocks."""

    BLOCK = 1 << 16

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.pieces: list[str] = []
        self.size = 0

    def emit(self, piece: str) -> None:
        self.pieces.append(piece)
        self.size += len(piece)
        if self.size >= self.BLOCK:
            self.flush()

    def flush(self) -> None:
        self.handle.write("".join(self.pieces).encode("utf-8"))
        self.pieces.clear()
        self.size = 0


def write_evaluation(
    path: str | os.PathLike[str], evaluation: Evaluation, case_texts: Iterable[str] = ()
) -> None:
    """Write :func:`render_pieces`' text to ``path`` as :func:`write_atomic` does, streamed."""
    write_atomic(path, lambda emit: render_pieces(evaluation, emit, case_texts))


@dataclass(frozen=True)
class ArtifactSource:
    """A finished run's artifact, kept as its parts (the evaluation with its cases' summaries,
    and a way to read the cases' exact texts again) so it is only built whole on demand."""

    evaluation: Evaluation
    case_texts: Callable[[], Iterable[str]]

    def text(self) -> str:
        """The exact text of ``evaluation.json``."""
        pieces: list[str] = []
        render_pieces(self.evaluation, pieces.append, self.case_texts())
        return "".join(pieces)

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write it to ``path``, streamed (:func:`write_evaluation`)."""
        write_evaluation(path, self.evaluation, self.case_texts())


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(
    path: str | os.PathLike[str], text: str | Callable[[Callable[[str], object]], None]
) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename; ``text`` may be a
    writer that hands its pieces to the ``emit`` it is given (see :func:`write_evaluation`).

    A file already at ``path`` survives any failure. The parent directory must exist.
    """
    target = Path(path)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp creates the file 0600; the artifact gets the mode an ordinary file would.
        os.fchmod(fd, 0o666 & ~_current_umask())
        with os.fdopen(fd, "wb") as handle:  # bytes: no newline translation on any platform
            if isinstance(text, str):
                handle.write(text.encode("utf-8"))
            else:
                spool = _Spool(handle)
                text(spool.emit)
                spool.flush()
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def probe_writable(path: str | os.PathLike[str]) -> None:
    """Raise the ``OSError`` :func:`write_atomic` would meet at ``path``, before the run: the
    directory must take a new file and ``path`` must not be a directory. Leaves nothing."""
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target))
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe", dir=target.parent)
    os.close(fd)
    Path(temp).unlink(missing_ok=True)


class ArtifactError(ValueError):
    """An artifact that cannot be read: not JSON, not an object, or out of the version range."""


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
        with collector_paused():
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
        with collector_paused():
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
