"""The ``--taguru-thresholds`` gate: the file's loader and validation, the one gate evaluation.

The file model and its strict parser live in :mod:`.thresholds_file`. Loading follows
taguru's order exactly (``thresholds-and-compare.md`` A.3): read the raw bytes, parse strictly,
check the stamp, then collect every semantic problem into one message. Any failure is a
:class:`UsageError` (exit 2) raised before the run touches the network. :func:`evaluate_gate`
is pure and serves both the live run and the offline ``taguru-evaluate gate``; its
:class:`GateReport` is the artifact's ``thresholds`` block.
"""

import hashlib
import math
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict

from pytest_taguru.artifact.case import CaseBlock
from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.artifact.writing import to_jsonable
from pytest_taguru.core.jsontext import WRITE_NULL, format_plain
from pytest_taguru.core.suggest import BOM, bom_hint
from pytest_taguru.core.textfile import os_error_text
from pytest_taguru.errors import UsageError
from pytest_taguru.gate.advice import case_id_hint, name_hint, ratio_warnings, scoped_bounds
from pytest_taguru.gate.file import Bound, ThresholdsFile, ThresholdsParseError, parse_thresholds
from pytest_taguru.score.registry import CASE_SCOPED_METRICS, case_value

THRESHOLDS_VERSION = 1
"""The only ``taguru_evaluate_thresholds`` stamp accepted (equality, not a range)."""

NO_SAMPLES_REASON = "no samples for this metric (n=0)"
UNSTABLE_CORPUS_REASON = (
    "the context's revision changed during this run "
    "(corpus.revision_before != corpus.revision_after) and allow_unstable_corpus is false"
)
Origin = Literal["default", "override"]


@dataclass(frozen=True)
class Thresholds:
    """A validated thresholds file and its identity: SHA-256 (lowercase hex) of the raw bytes."""

    file: ThresholdsFile
    sha256: str
    warnings: tuple[str, ...] = ()
    """Bounds taguru accepts that cannot mean what they say (``gate.advice``), ``<path>: …``."""


# --- semantic validation (A.3 step 4) --------------------------------------------------------


def bound_problem(bound: Bound) -> str | None:
    """The first validity failure of a bound (A.3.3), or ``None``.

    Order: neither side present; ``min`` not finite; ``max`` not finite; ``min > max``.
    ``min == max`` is legal. Numbers print in Rust ``{}`` form (``2``, ``0.9``).
    """
    if bound.min is None and bound.max is None:
        return "needs at least one of min/max"
    if bound.min is not None and not math.isfinite(bound.min):
        return f"min {format_plain(bound.min)} must be finite"
    if bound.max is not None and not math.isfinite(bound.max):
        return f"max {format_plain(bound.max)} must be finite"
    if bound.min is not None and bound.max is not None and bound.min > bound.max:
        return f"min {format_plain(bound.min)} must be <= max {format_plain(bound.max)}"
    return None


def _name_problems(
    file: ThresholdsFile, metric_names: Collection[str], case_ids: Collection[str]
) -> list[tuple[str, str]]:
    """Each unknown name as taguru words it, with our hint, in taguru's order (A.3 step 4)."""
    found = [
        (f"aggregate: unknown metric name '{name}'", name_hint(name, sorted(metric_names)))
        for name in sorted(file.aggregate)
        if name not in metric_names
    ]
    found += [
        (
            f"cases.default: unknown (or not case-scoped) metric name '{name}'",
            name_hint(name, CASE_SCOPED_METRICS),
        )
        for name in sorted(file.cases.default)
        if name not in CASE_SCOPED_METRICS
    ]
    for case_id in sorted(file.cases.overrides):
        if case_id not in case_ids:
            found.append(
                (f"cases.overrides: unknown case_id '{case_id}'", case_id_hint(case_id, case_ids))
            )
        found += [
            (
                f"cases.overrides.{case_id}: unknown (or not case-scoped) metric name '{name}'",
                name_hint(name, CASE_SCOPED_METRICS),
            )
            for name in sorted(file.cases.overrides[case_id])
            if name not in CASE_SCOPED_METRICS
        ]
    return found


def semantic_problems(
    file: ThresholdsFile, *, metric_names: Collection[str], case_ids: Collection[str]
) -> list[str]:
    """Every semantic problem, in taguru's order (A.3 step 4); maps walked in byte order.

    Names first (aggregate names against ``metric_names``, the run's ``definitions`` keys;
    default and override names against the ten case-scoped names; override case_ids against
    ``case_ids``), then bound validity for every bound, flagged names included.
    """
    problems = [problem for problem, _ in _name_problems(file, metric_names, case_ids)]
    for scope, bounds in scoped_bounds(file):
        for name in sorted(bounds):
            problem = bound_problem(bounds[name])
            if problem is not None:
                problems.append(f"{scope}: '{name}': {problem}")
    return problems


def check_thresholds(
    raw: bytes, *, path: str, metric_names: Collection[str], case_ids: Collection[str]
) -> Thresholds:
    """Parse, stamp-check and validate ``raw`` (the file's bytes as read from ``path``).

    Raises :class:`UsageError` with ``<path>: <message>``: a parse error or a wrong stamp
    stops at once; semantic problems are all reported together, joined by ``"; "``.
    """
    try:
        file = parse_thresholds(raw)
    except ThresholdsParseError as error:
        refusal = UsageError(f"{path}: {error}")
        if raw.startswith(BOM.encode()):
            refusal.hints.append(bom_hint(path))
        raise refusal from error
    if file.taguru_evaluate_thresholds != THRESHOLDS_VERSION:
        raise UsageError(
            f"{path}: taguru_evaluate_thresholds must be {THRESHOLDS_VERSION}, "
            f"got {file.taguru_evaluate_thresholds}"
        )
    problems = semantic_problems(file, metric_names=metric_names, case_ids=case_ids)
    if problems:
        refusal = UsageError(f"{path}: " + "; ".join(problems))
        refusal.hints = [
            f"{path}: {hint}" for _, hint in _name_problems(file, metric_names, case_ids)
        ]
        raise refusal
    warnings = tuple(f"{path}: {line}" for line in ratio_warnings(file))
    return Thresholds(file=file, sha256=hashlib.sha256(raw).hexdigest(), warnings=warnings)


def read_input(path: str) -> bytes:
    """The raw bytes of an input file; unreadable is a :class:`UsageError` worded as Rust's
    io errors: ``cannot read <path>: No such file or directory (os error 2)``."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise UsageError(f"cannot read {path}: {os_error_text(error)}") from error


def load_thresholds(
    path: str, *, metric_names: Collection[str], case_ids: Collection[str]
) -> Thresholds:
    """Read ``path`` and :func:`check_thresholds` its raw bytes."""
    raw = read_input(path)
    return check_thresholds(raw, path=path, metric_names=metric_names, case_ids=case_ids)


# --- the report (A.6) ------------------------------------------------------------------------


class Violation(BaseModel):
    """One failed check, in artifact key order; never carries query, URL or corpus text."""

    model_config = ConfigDict(frozen=True)

    scope: Literal["aggregate", "case", "corpus"]
    case_id: str | None = None
    metric: str
    bound: Literal["min", "max"] | None = None
    threshold: float | None = None
    actual: Annotated[float | None, WRITE_NULL] = None
    reason: str


class GateReport(BaseModel):
    """The ``thresholds`` block; empty ``violations``/``skipped`` are ``None`` (left out)."""

    model_config = ConfigDict(frozen=True)

    sha256: str
    passed: bool
    allow_unstable_corpus: bool = False
    violations: list[Violation] | None = None
    skipped: list[str] | None = None
    aggregate_skipped: str | None = None
    """pytest-taguru's own key: why the aggregate bounds were not judged (a partial run,
    ``run.partial``); left out when they were."""

    def to_block(self) -> dict[str, Any]:
        """The JSON object written as ``evaluation.json``'s ``thresholds`` (A.6 key order)."""
        block: dict[str, Any] = to_jsonable(self)
        return block


@dataclass(frozen=True)
class CaseViolation:
    """A case-scoped violation and where its bound came from (for the drill-down); ``None``
    when only the artifact's ``thresholds`` block is at hand, which does not say."""

    violation: Violation
    origin: Origin | None


@dataclass(frozen=True)
class CaseCheck:
    """One case against its effective bounds: violations and skip strings, name order."""

    violations: list[CaseViolation]
    skipped: list[str]


def check_bound(
    value: float, bound: Bound, *, scope: Literal["aggregate", "case"], metric: str,
    case_id: str | None = None,
) -> Violation | None:
    """The bound check shared by both scopes (A.5.1); equality passes.

    ``value < min`` fails first (and ends the check); otherwise ``value > max`` fails.
    The reason is ``"<value:.6f> < min <min:.6f>"`` or ``"<value:.6f> > max <max:.6f>"``.
    """
    if bound.min is not None and value < bound.min:
        side: Literal["min", "max"] = "min"
        threshold, reason = bound.min, f"{value:.6f} < min {bound.min:.6f}"
    elif bound.max is not None and value > bound.max:
        side = "max"
        threshold, reason = bound.max, f"{value:.6f} > max {bound.max:.6f}"
    else:
        return None
    return Violation(
        scope=scope, case_id=case_id, metric=metric, bound=side, threshold=threshold,
        actual=value, reason=reason,
    )


def effective_case_bounds(file: ThresholdsFile, case_id: str) -> dict[str, tuple[Bound, Origin]]:
    """``cases.default`` with this case's override applied per metric, whole bound replaced.

    Never a field-level merge: a default ``{min, max}`` overridden by ``{min}`` has no max.
    Default metrics the override does not name stay in force.
    """
    merged: dict[str, tuple[Bound, Origin]] = {
        name: (bound, "default") for name, bound in file.cases.default.items()
    }
    for name, bound in file.cases.overrides.get(case_id, {}).items():
        merged[name] = (bound, "override")
    return merged


def skip_reason(case_id: str, metric: str) -> str:
    return (
        f"case '{case_id}': '{metric}' not applicable — the case did not declare the "
        "matching expectation, or its lane did not complete"
    )


def check_case(file: ThresholdsFile, block: CaseBlock) -> CaseCheck:
    """Check one case against its effective bounds in byte order of metric name (A.5.2).

    A value that does not apply is a skip, never a violation.
    """
    violations: list[CaseViolation] = []
    skipped: list[str] = []
    bounds = effective_case_bounds(file, block.case_id)
    for metric in sorted(bounds):
        bound, origin = bounds[metric]
        value = case_value(block, metric)
        if value is None:
            skipped.append(skip_reason(block.case_id, metric))
            continue
        violation = check_bound(value, bound, scope="case", metric=metric, case_id=block.case_id)
        if violation is not None:
            violations.append(CaseViolation(violation=violation, origin=origin))
    return CaseCheck(violations=violations, skipped=skipped)


def case_violations(thresholds: Thresholds, block: CaseBlock) -> list[CaseViolation]:
    """The case-scoped violations of one finished case: what fails its pytest item."""
    return check_case(thresholds.file, block).violations


def aggregate_violations(
    bounds: Mapping[str, Bound], headlines: Mapping[str, float | None]
) -> Iterator[Violation]:
    """Aggregate bounds against the headline values, in name order; a missing or null
    headline is an ``n=0`` violation."""
    for metric in sorted(bounds):
        value = headlines.get(metric)
        if value is None:
            yield Violation(scope="aggregate", metric=metric, reason=NO_SAMPLES_REASON)
            continue
        violation = check_bound(value, bounds[metric], scope="aggregate", metric=metric)
        if violation is not None:
            yield violation


def evaluate_gate(
    thresholds: Thresholds,
    evaluation: Evaluation,
    *,
    case_checks: Iterable[CaseCheck] | None = None,
    aggregate_skipped: str | None = None,
) -> GateReport:
    """The gate over a finished run (A.5), pure.

    ``case_checks`` are the cases' :func:`check_case` in run order, when the caller made them
    as the cases went by (default: checked here, from ``evaluation.cases``).
    ``aggregate_skipped`` (the reason, e.g. ``partial run (2 of 36 cases)``) leaves the
    aggregate bounds unjudged; case-scoped bounds and corpus stability are judged as always.

    Order of ``violations``: aggregate (name order; the scalar is the metric's headline — a
    distribution's ``mean``, a ratio's or count's ``value`` — and a null scalar is an ``n=0``
    violation), then each case in run order (name order within), then the corpus violation
    when ``corpus.stable`` is false and ``allow_unstable_corpus`` is not set.
    ``passed`` = no violations; skips never fail the gate.
    """
    file = thresholds.file
    headlines = {name: evaluation.headline(name) for name in file.aggregate}
    violations = [] if aggregate_skipped else list(aggregate_violations(file.aggregate, headlines))
    skipped: list[str] = []
    if case_checks is None:
        case_checks = (check_case(file, block) for block in evaluation.cases)
    for outcome in case_checks:
        violations += [item.violation for item in outcome.violations]
        skipped += outcome.skipped
    if not evaluation.corpus.stable and not file.allow_unstable_corpus:
        violations.append(
            Violation(scope="corpus", metric="corpus.stable", reason=UNSTABLE_CORPUS_REASON)
        )
    return GateReport(
        sha256=thresholds.sha256,
        passed=not violations,
        allow_unstable_corpus=file.allow_unstable_corpus,
        violations=violations or None,
        skipped=skipped or None,
        aggregate_skipped=aggregate_skipped,
    )
