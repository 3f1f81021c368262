"""The tolerant view ``taguru evaluate compare`` reads of one ``evaluation.json`` (Part B, B.2).

Every key is optional and falls back to a default, unknown keys are ignored at every level, but
a key that is present must have the right type, and ``null`` only where B.2's table allows it.
The JSON is read as serde reads it (``serde_read``: numbers per Appendix N.2); a fixed-shape
object may be a positional array and refuses a repeated field, as serde's derived structs do.
Metric values stay raw JSON until ``decode_headline`` reads one through its
``definitions[name].statistic`` shape.

This is local rather than ``artifact.Evaluation`` because Part B's reading rules differ from the
writer's models: a case needs nothing but its id, ``corpus.stable`` defaults to false, a partial
``inputs.budget`` is malformed, and a bad metric value is a warning, not a failed document.
Error texts follow serde's wording without its ``at line L column C`` position.
"""

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from .artifact import ARTIFACT_VERSION, Count, Distribution, Evaluation, Ratio, to_jsonable
from .serde_read import (
    U64_MAX,
    JsonObject,
    SerdeError,
    duplicate_field,
    fields_from_array,
    invalid_type,
    invalid_value,
    load_json,
    whole_text,
)


class RunReadError(ValueError):
    """An input that cannot be compared (exit 2); the text follows ``BASE ``/``HEAD `` (B.2)."""


def _fields_of(model: type[BaseModel], data: Any) -> Any:
    """Apply serde's struct rules before typing: an array fills the fields positionally, in
    declaration order; a field given twice is an error. Other inputs pass through."""
    names = list(model.model_fields)
    if isinstance(data, list):
        return fields_from_array(data, names)
    if isinstance(data, JsonObject):
        for name in names:
            if name in data.repeated:
                raise SerdeError(duplicate_field(name))
    return data


_Text = Annotated[str, AfterValidator(whole_text)]
_U64 = Annotated[int, Field(ge=0, le=U64_MAX)]


# --- the tolerant view (B.2) -------------------------------------------------------------------


class _View(BaseModel):
    """Every key optional, unknown keys ignored, a present key strictly typed (B.2)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _serde_struct(cls, data: Any) -> Any:
        return _fields_of(cls, data)


class ScoreView(_View):
    value: float | None = None


class RecallView(_View):
    recall_at_k: float | None = None
    mrr: float | None = None
    ndcg: float | None = None


class CoverageView(_View):
    concepts: ScoreView | None = None
    labels: ScoreView | None = None
    associations: ScoreView | None = None


class CitationsView(_View):
    recall: ScoreView = ScoreView()
    validity: ScoreView = ScoreView()


class CaseView(_View):
    case_id: _Text = ""
    recall: RecallView | None = None
    coverage: CoverageView | None = None
    citations: CitationsView | None = None
    diversity_sources: float | None = None


class BudgetView(_View):
    """All three ceilings or nothing: a partial budget object is malformed."""

    max_items: _U64
    max_bytes: _U64
    max_tokens: _U64


class InputsView(_View):
    context: _Text = ""
    budget: BudgetView | None = None


class RevisionView(_View):
    graph: _U64 = 0
    passages: _U64 = 0
    config: _U64 = 0


class CorpusView(_View):
    revision_after: RevisionView = RevisionView()
    stable: bool = False


class ThresholdsView(_View):
    sha256: _Text = ""


class DefinitionView(_View):
    statistic: _Text = ""


class EvaluationView(_View):
    """What ``compare`` reads of one ``evaluation.json``; ``metrics`` values stay raw JSON."""

    taguru_evaluation: _U64 = 0
    generated_at: _Text = ""
    inputs: InputsView = InputsView()
    corpus: CorpusView = CorpusView()
    thresholds: ThresholdsView | None = None
    definitions: dict[_Text, DefinitionView] = Field(default_factory=dict)
    metrics: dict[_Text, Any] = Field(default_factory=dict)
    cases: list[CaseView] = Field(default_factory=list)


_EXPECTED = {
    "string_type": "a string",
    "int_type": "u64",
    "float_type": "f64",
    "bool_type": "a boolean",
    "list_type": "a sequence",
    "dict_type": "a map",
}


def serde_message(error: ValidationError) -> str:
    """The first problem, worded as serde does (without its ``at line L column C``)."""
    detail = error.errors(include_url=False)[0]
    kind, value, loc = detail["type"], detail.get("input"), detail["loc"]
    if kind == "value_error":
        return str(detail["ctx"]["error"])
    if kind == "missing":
        return f"missing field `{loc[-1]}`"
    if kind in ("greater_than_equal", "less_than_equal"):
        return invalid_value(value, "u64")
    if kind == "model_type":
        expected = f"struct {detail['ctx']['class_name']}"
    else:
        expected = _EXPECTED.get(kind, detail["msg"])
    return invalid_type(value, expected)


@dataclass(frozen=True)
class LoadedRun:
    """One side of the comparison: the path exactly as typed, and its view."""

    path: str
    view: EvaluationView


def read_run(text: str, path: str) -> LoadedRun:
    """Parse one ``evaluation.json`` (B.2 steps 2–3): the tolerant view, then the stamp range.

    Raises ``RunReadError`` with ``<path>: malformed evaluation.json: <why>`` or
    ``<path>: taguru_evaluation must be within 1..=1, got <n>``.
    """
    try:
        view = EvaluationView.model_validate(load_json(text))
    except ValidationError as error:
        raise RunReadError(f"{path}: malformed evaluation.json: {serde_message(error)}") from None
    except SerdeError as error:
        raise RunReadError(f"{path}: malformed evaluation.json: {error}") from None
    if not 1 <= view.taguru_evaluation <= ARTIFACT_VERSION:
        raise RunReadError(
            f"{path}: taguru_evaluation must be within 1..={ARTIFACT_VERSION}, "
            f"got {view.taguru_evaluation}"
        )
    return LoadedRun(path, view)


def run_of(evaluation: Evaluation, path: str) -> LoadedRun:
    """The view of an in-memory artifact, as if it had been written and read back."""
    return LoadedRun(path, EvaluationView.model_validate(to_jsonable(evaluation), strict=False))


def decode_headline(shape: type[Distribution | Ratio | Count], raw: Any) -> float | None:
    """Decode ``raw`` strictly as ``shape`` (counts must be u64) and return its headline."""
    try:
        value = shape.model_validate(_fields_of(shape, raw), strict=True)
    except ValidationError as error:
        raise ValueError(serde_message(error)) from None
    counts = [value.n, value.numerator if isinstance(value, Ratio) else None]
    for count in counts:
        if count is not None and not 0 <= count <= U64_MAX:
            raise ValueError(invalid_value(count, "u64"))
    return value.headline
