"""The tolerant view ``taguru evaluate compare`` reads of one ``evaluation.json`` (Part B, B.2).

Every key is optional and falls back to a default, unknown keys are ignored at every level, but
a key that is present must have the right type, and ``null`` only where B.2's table allows it.
The JSON is read as serde reads it (``core/serde``: numbers per Appendix N.2); a fixed-shape
object may be a positional array and refuses a repeated field, as serde's derived structs do.
Metric values stay raw JSON (every string in them checked, as a ``serde_json::Value`` reads
them) until ``decode_headline`` decodes one through its ``definitions[name].statistic`` shape,
the way ``serde_json::from_value`` does.

This is local rather than ``artifact.Evaluation`` because Part B's reading rules differ from the
writer's models: a case needs nothing but its id, ``corpus.stable`` defaults to false, a partial
``inputs.budget`` is malformed, and a bad metric value is a warning, not a failed document.
Error texts follow serde's wording, naming the reference's structs; a data error carries no
``at line L column C`` position (a syntax error does, see ``core/serde``).
"""

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    model_validator,
)

from pytest_taguru.artifact.base import OWN_EXTENSION
from pytest_taguru.artifact.evaluation import ARTIFACT_VERSION
from pytest_taguru.artifact.extras import NO_EXTRAS, RunExtras, run_extras
from pytest_taguru.core.bulk import collector_paused
from pytest_taguru.core.limits import U64
from pytest_taguru.core.serde import (
    JsonObject,
    SerdeError,
    as_value,
    check_every_string,
    fields_from_array,
    read_json,
    whole_text,
)
from pytest_taguru.core.serde_wording import duplicate_field, invalid_type, invalid_value


class RunReadError(ValueError):
    """An input that cannot be compared (exit 2); the text follows ``BASE ``/``HEAD `` (B.2)."""


def _fields_of(model: type[BaseModel], data: Any) -> Any:
    """Apply serde's struct rules before typing: an array fills the fields positionally, in
    declaration order; a field given twice is an error. Other inputs pass through. A field of
    our own (``OWN_EXTENSION``) is an unknown key to the reference: it takes no position and
    may repeat."""
    fields = {
        name: field
        for name, field in model.model_fields.items()
        if OWN_EXTENSION not in field.metadata
    }
    if isinstance(data, list):
        required = {name for name, field in fields.items() if field.is_required()}
        return fields_from_array(data, list(fields), struct=model.__name__, required=required)
    if isinstance(data, JsonObject):
        for name in fields:
            if name in data.repeated:
                raise SerdeError(duplicate_field(name))
    return data


def _every_string_read(value: Any) -> Any:
    check_every_string(value)
    return value


_Text = Annotated[str, AfterValidator(whole_text)]
_RawValue = Annotated[Any, AfterValidator(_every_string_read)]
"""A ``serde_json::Value``: not interpreted at load time, but every string in it is read."""


# --- the tolerant view (B.2) -------------------------------------------------------------------


class _View(BaseModel):
    """Every key optional, unknown keys ignored, a present key strictly typed (B.2).

    Class names are the reference's struct names, which serde's messages quote.
    """

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _serde_struct(cls, data: Any) -> Any:
        return _fields_of(cls, data)


class CoverageCountsView(_View):
    value: float | None = None


class CitationScoreView(_View):
    value: float | None = None


class RecallView(_View):
    recall_at_k: float | None = None
    mrr: float | None = None
    ndcg: float | None = None


class CoverageView(_View):
    concepts: CoverageCountsView | None = None
    labels: CoverageCountsView | None = None
    associations: CoverageCountsView | None = None


class CitationsView(_View):
    recall: CitationScoreView = CitationScoreView()
    validity: CitationScoreView = CitationScoreView()


class UnjudgedView(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    source: str
    paragraph: int


class HighView(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    high: float


class LabelCoverageView(BaseModel):
    """What ``compare`` reads of a case's ``label_coverage`` (pytest-taguru's own key): its
    unjudged locators, judged@k and the ranking metrics' greatest values, for the label-gap
    classification."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    judged_at_k: float | None = None
    unjudged: list[UnjudgedView] = Field(default_factory=list)
    recall_at_k: HighView | None = None
    mrr: HighView | None = None
    ndcg: HighView | None = None


class CaseView(_View):
    case_id: _Text = ""
    recall: RecallView | None = None
    coverage: CoverageView | None = None
    citations: CitationsView | None = None
    diversity_sources: float | None = None
    label_coverage: Annotated[LabelCoverageView | None, OWN_EXTENSION] = None
    """Ours: absent in taguru's artifacts, and read as absent when malformed."""


class BudgetLimits(_View):
    """All three ceilings or nothing: a partial budget object is malformed."""

    max_items: U64
    max_bytes: U64
    max_tokens: U64


class InputsView(_View):
    context: _Text = ""
    budget: BudgetLimits | None = None


class ContextRevision(_View):
    graph: U64 = 0
    passages: U64 = 0
    config: U64 = 0


class CorpusView(_View):
    revision_after: ContextRevision = ContextRevision()
    stable: bool = False


class ThresholdIdentityView(_View):
    sha256: _Text = ""


class DefinitionView(_View):
    statistic: _Text = ""


class EvaluationView(_View):
    """What ``compare`` reads of one ``evaluation.json``; ``metrics`` values stay raw JSON."""

    taguru_evaluation: U64 = 0
    generated_at: _Text = ""
    inputs: InputsView = InputsView()
    corpus: CorpusView = CorpusView()
    thresholds: ThresholdIdentityView | None = None
    definitions: dict[_Text, DefinitionView] = Field(default_factory=dict)
    metrics: dict[_Text, _RawValue] = Field(default_factory=dict)
    cases: list[CaseView] = Field(default_factory=list)
    _extras: RunExtras = PrivateAttr(default=NO_EXTRAS)

    @model_validator(mode="wrap")
    @classmethod
    def _read_extras(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        view = handler(data)
        view._extras = run_extras(data, len(view.cases))
        return view

    @property
    def extras(self) -> RunExtras:
        """pytest-taguru's reading beyond taguru's view (``extras``): the run's shape and each
        case's pairing facts, one per case of ``cases``, in its order."""
        return self._extras


_EXPECTED = {
    "string_type": "a string",
    "int_type": "u64",
    "float_type": "f64",
    "bool_type": "a boolean",
    "list_type": "a sequence",
    "dict_type": "a map",
}


def serde_message(error: ValidationError, *, by_key: bool = False) -> str:
    """The first problem, worded as serde does (without its ``at line L column C``).

    ``by_key``: the fields were met in key byte order (a struct decoded from a ``Value``
    map) rather than in declaration order.
    """
    details = error.errors(include_url=False)
    if by_key:
        details.sort(key=lambda detail: str(detail["loc"][0]) if detail["loc"] else "")
    detail = details[0]
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
    slices: Any = None
    """pytest-taguru's own ``slices`` block as raw JSON, outside the view (taguru's reader
    does not know it); ``compare.slices`` decodes it, tolerantly."""


@collector_paused()  # parsing and typing build the heap the collector would walk
def read_run(text: str, path: str) -> LoadedRun:
    """Parse one ``evaluation.json`` (B.2 steps 2–3): the tolerant view, then the stamp range.

    Raises ``RunReadError`` with ``<path>: malformed evaluation.json: <why>`` or
    ``<path>: taguru_evaluation must be within 1..=1, got <n>``.
    """
    try:
        # A skipped, unknown field may hold a lone surrogate: only the strings read are checked.
        document = read_json(text, check_strings=False, objects="pairs_if_repeated")
        view = EvaluationView.model_validate(document)
    except ValidationError as error:
        raise RunReadError(f"{path}: malformed evaluation.json: {serde_message(error)}") from None
    except SerdeError as error:
        raise RunReadError(f"{path}: malformed evaluation.json: {error}") from None
    if not 1 <= view.taguru_evaluation <= ARTIFACT_VERSION:
        raise RunReadError(
            f"{path}: taguru_evaluation must be within 1..={ARTIFACT_VERSION}, "
            f"got {view.taguru_evaluation}"
        )
    return LoadedRun(path, view, document.get("slices") if isinstance(document, dict) else None)


# --- run-level metric values, decoded through their definition's statistic (B.7) -----------


class _MetricShape(BaseModel):
    """A metric value as the reference decodes it: every key optional, unknown keys ignored,
    counts u64. Class names are the reference's (``struct Distribution`` in its messages)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)
    headline_field: ClassVar[str] = "value"
    """The scalar compared: a distribution's ``mean``, a ratio's or count's ``value``."""


class Distribution(_MetricShape):
    headline_field = "mean"
    n: U64 = 0
    min: float | None = None
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    max: float | None = None
    mean: float | None = None
    sum: float | None = None


class Ratio(_MetricShape):
    value: float | None = None
    n: U64 = 0
    numerator: U64 | None = None


class Count(_MetricShape):
    value: float | None = None
    n: U64 = 0


METRIC_SHAPES: dict[str, type[_MetricShape]] = {
    "distribution": Distribution,
    "ratio": Ratio,
    "count": Count,
}
"""``definitions[name].statistic`` → the shape a metric value is decoded as."""


def decode_headline(shape: type[_MetricShape], raw: Any) -> float | None:
    """Decode ``raw`` as ``shape`` the way ``serde_json::from_value`` does, and return its
    headline (a distribution's ``mean``, a ratio's or count's ``value``).

    The value was parsed into a ``Value`` first: a repeated key keeps its last value, fields
    are met in key byte order, and an array longer than the struct is
    ``invalid length <n>, expected fewer elements in array``. Raises ``ValueError`` with
    serde's message.
    """
    value = as_value(raw)
    by_key = isinstance(value, dict)
    if isinstance(value, list):
        names = list(shape.model_fields)
        if len(value) > len(names):
            raise ValueError(f"invalid length {len(value)}, expected fewer elements in array")
        value = dict(zip(names, value, strict=False))
    try:
        decoded = shape.model_validate(value)
    except ValidationError as error:
        raise ValueError(serde_message(error, by_key=by_key)) from None
    headline: float | None = getattr(decoded, shape.headline_field)
    return headline
