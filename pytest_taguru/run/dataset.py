"""eval.jsonl: the dataset models and the interpret-mode loader (evaluate-run.md §2).

One header line ``{"taguru_eval": 1, ...}``, then one case per non-blank line. Every error is
fatal on first occurrence and raises ``UsageError`` (exit 2) with ``<path>: line <n>: …``,
where ``<path>`` is the path exactly as given.

Absent versus null is decided here, once:

* case level — ``cues``/``expected_sources``/``expected_concepts``/``options``: ``null`` is an
  error; ``expected_labels``/``expected_associations``/``expected_citations``: ``null`` = absent;
* ``options.*``: ``null`` = absent;
* inside ``expected_sources[]``/``expected_associations[]``/``expected_citations[]`` entries
  ``null`` is an error, except ``quote`` (= absent) and ``section`` (three-valued: see
  ``ExpectedCitation``).
"""

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from pytest_taguru.core.bulk import collector_paused, share_fields_set, share_text
from pytest_taguru.core.jsontext import format_plain_f32, to_f32
from pytest_taguru.core.serde import SerdeError, read_json
from pytest_taguru.core.serde_numbers import int_to_f32
from pytest_taguru.core.suggest import BOM, bom_hint
from pytest_taguru.core.text import trim
from pytest_taguru.core.textfile import split_lines
from pytest_taguru.errors import UsageError, read_input_text
from pytest_taguru.run.dataset_errors import describe_error, show, unknown_field
from pytest_taguru.run.eval_models import (
    EVAL_VERSION,
    MAX_LIMIT,
    MAX_RELEVANCE,
    CaseOptions,
    EvalCase,
    EvalHeader,
    EvalSet,
    ExpectedAssociation,
    ExpectedCitation,
)


class _LineError(Exception):
    """A problem with one line; the message excludes the ``<path>: line <n>: `` prefix."""


_CASE_KEYS = tuple(name for name in EvalCase.model_fields if name != "line")
_CASE_KEY_SET = frozenset(_CASE_KEYS)
_NO_OPTIONS = CaseOptions()
_CORE_KEYS = ("case_id", "query", "cues", "expected_sources", "expected_concepts", "options")
_OPTION_EXTENSION_KEYS = ("floor", "tags", "since", "until")


def load_eval_set(path: str) -> EvalSet:
    """Load and validate ``path`` in interpret mode (§2), raising UsageError on the first error."""
    return parse_eval_set(read_input_text(path), path)


def parse_eval_set(text: str, path: str) -> EvalSet:
    """Validate the text of an eval.jsonl in interpret mode (§2); ``path`` names it in errors."""
    with collector_paused():
        header, cases = _read_lines(path, text)
    if header is None:
        raise UsageError(f"{path}: empty file: expected a taguru_eval header line")
    if not cases:
        raise UsageError(f"{path}: no cases: expected at least one case line after the header")
    return EvalSet(path=path, header=header, cases=cases)


def _read_lines(path: str, text: str) -> tuple[EvalHeader | None, list[EvalCase]]:
    header: EvalHeader | None = None
    cases: list[EvalCase] = []
    case_ids: set[str] = set()
    for number, raw_line in enumerate(split_lines(text), start=1):
        line = trim(raw_line)
        if not line:
            continue
        try:
            value = _parse_json(line)
            if header is None:
                header = _read_header(value)
            else:
                cases.append(_read_case(value, number, case_ids))
        except _LineError as error:
            refusal = UsageError(f"{path}: line {number}: {error}")
            if raw_line.startswith(BOM):  # taguru keeps the mark, so line 1 is not JSON
                refusal.hints.append(bom_hint(path))
            raise refusal from None
    return header, cases


def check_limits(eval_set: EvalSet) -> None:
    """§1.3 step 3: every declared ``options.limit`` within 1..=1000, checked in file order."""
    for case in eval_set.cases:
        limit = case.options.limit
        if limit is not None and not 1 <= limit <= MAX_LIMIT:
            raise UsageError(
                f"case '{case.case_id}': options.limit must be 1..={MAX_LIMIT}, got {limit}"
            )


# ---------------------------------------------------------------- JSON syntax (step 1)


def _parse_json(line: str) -> Any:
    """One JSON value read by the one reading rule (``core/serde``), integers past u64 kept
    exact so that their field's range error can name them."""
    try:
        return read_json(line, exact_wide_integers=True, objects="last_wins")
    except SerdeError as error:
        raise _LineError(f"not JSON: {error}") from None


# ---------------------------------------------------------------- header and cases


def _read_header(value: Any) -> EvalHeader:
    try:
        header = EvalHeader.model_validate(value)
    except ValidationError as error:
        raise _LineError(f"not a valid eval header: {describe_error(error, EvalHeader)}") from None
    if header.taguru_eval != EVAL_VERSION:
        raise _LineError(f"taguru_eval must be {EVAL_VERSION}, got {header.taguru_eval}")
    return header


def _read_case(value: Any, line: int, case_ids: set[str]) -> EvalCase:
    """Validation steps 2-7 of §2.4, in order.

    A line is decoded whole, in one pass of pydantic's validator; only a line that fails
    that is decoded again step by step (:func:`_read_case_stepwise`), for the first error in
    the specification's order. A line that decodes whole passes every decoding step, so its
    checks, run in their order, raise what the stepwise reading would.
    """
    case = _decode_whole(value, line)
    if case is None:
        return _read_case_stepwise(value, line, case_ids)
    tag = _check_core(case, case_ids)
    _check_labels(case.expected_labels, tag)
    _check_associations(case.expected_associations, tag)
    _check_citations(case.expected_citations, tag)
    _check_floor(case.options.floor, tag)
    for model in (case, *case.expected_sources):
        share_fields_set(model)
    for expected in case.expected_sources:
        share_text(expected, "source")
    return case


def _decode_whole(value: Any, line: int) -> EvalCase | None:
    """The case in one validation (``None`` when it does not decode): the extension fields
    that read ``null`` as absent are left out, ``options.floor`` decoded by its own rule."""
    if not isinstance(value, dict) or not value.keys() <= _CASE_KEY_SET:  # "line" is no key
        return None
    data = _without_nulls(value, EvalCase)
    options = value.get("options", _NO_OPTIONS)
    if options is _NO_OPTIONS:
        data["options"] = _NO_OPTIONS  # frozen: one instance serves every case without options
    elif isinstance(options, dict):
        try:
            floor = _decode_floor(options.get("floor"), "")
        except _LineError:
            return None
        data["options"] = {**_without_nulls(options, CaseOptions), "floor": floor}
    data["line"] = line
    try:
        return EvalCase.model_validate(data)
    except ValidationError:
        return None


def _without_nulls(container: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """``container`` without the keys of ``model`` where ``null`` reads as absent, when null."""
    absent = NULL_IS_ABSENT[model]
    return {key: item for key, item in container.items() if item is not None or key not in absent}


def _read_case_stepwise(value: Any, line: int, case_ids: set[str]) -> EvalCase:
    """Steps 2-7 one at a time, each failing with its own error."""
    case = _decode_core(value, line)
    tag = _check_core(case, case_ids)
    return _read_extensions(case, value, tag)


def _check_core(case: EvalCase, case_ids: set[str]) -> str:
    """Steps 3-6; returns the case's tag for later messages (``case '<id>'``)."""
    if not trim(case.case_id):
        raise _LineError("case_id must not be empty")
    tag = f"case '{case.case_id}'"
    if not trim(case.query):
        raise _LineError(f"{tag}: query must not be empty")
    if case.case_id in case_ids:  # raw strings: "a" and " a" differ
        raise _LineError(f"duplicate case_id '{case.case_id}'")
    case_ids.add(case.case_id)
    for expected in case.expected_sources:
        if not trim(expected.source):
            raise _LineError(f"{tag}: expected_sources: source must not be empty")
        if expected.relevance > MAX_RELEVANCE:
            raise _LineError(
                f"{tag}: expected_sources relevance must be 0..={MAX_RELEVANCE}, "
                f"got {expected.relevance}"
            )
    return tag


def _decode_core(value: Any, line: int) -> EvalCase:
    """Step 2: the core shape; the extension fields are only checked for being known keys."""
    if not isinstance(value, dict):
        raise _LineError(f"not a valid eval case: expected an object, got {show(value)}")
    for key in value:
        if key not in _CASE_KEYS:
            raise _LineError(f"not a valid eval case: {unknown_field(key, _CASE_KEYS)}")
    core = {key: value[key] for key in _CORE_KEYS if key in value}
    options = core.get("options")
    if isinstance(options, dict):
        core["options"] = {k: v for k, v in options.items() if k not in _OPTION_EXTENSION_KEYS}
    try:
        return EvalCase.model_validate({**core, "line": line})
    except ValidationError as error:
        raise _LineError(f"not a valid eval case: {describe_error(error, EvalCase)}") from None


def _read_extensions(case: EvalCase, value: dict[str, Any], tag: str) -> EvalCase:
    """Step 7: expected_labels, expected_associations, expected_citations, options.floor,
    options.tags, options.since, options.until — decoded and checked in that order."""
    labels = _decode_field(EvalCase, "expected_labels", value, tag)
    _check_labels(labels, tag)
    associations = _decode_field(EvalCase, "expected_associations", value, tag)
    _check_associations(associations, tag)
    citations = _decode_field(EvalCase, "expected_citations", value, tag)
    _check_citations(citations, tag)
    options = value.get("options") or {}
    floor = _decode_floor(options.get("floor"), tag)
    _check_floor(floor, tag)
    extra_options = {
        "floor": floor,
        "tags": _decode_field(CaseOptions, "tags", options, tag, "options."),
        "since": _decode_field(CaseOptions, "since", options, tag, "options."),
        "until": _decode_field(CaseOptions, "until", options, tag, "options."),
    }
    return case.model_copy(
        update={
            "expected_labels": labels,
            "expected_associations": associations,
            "expected_citations": citations,
            "options": case.options.model_copy(update=extra_options),
        }
    )


def _check_labels(labels: Sequence[str], tag: str) -> None:
    if any(not trim(label) for label in labels):
        raise _LineError(f"{tag}: expected_labels: entries must not be empty")


def _check_associations(associations: Sequence[ExpectedAssociation], tag: str) -> None:
    for association in associations:
        if not all(trim(p) for p in (association.subject, association.label, association.object)):
            raise _LineError(
                f"{tag}: expected_associations: subject/label/object must not be empty"
            )


def _check_citations(citations: Sequence[ExpectedCitation], tag: str) -> None:
    for citation in citations:
        if not trim(citation.source):
            raise _LineError(f"{tag}: expected_citations: source must not be empty")
        if citation.quote is not None and not trim(citation.quote):
            raise _LineError(f"{tag}: expected_citations: quote must not be empty")


def _check_floor(floor: float | None, tag: str) -> None:
    if floor is not None and not 0.0 <= floor <= 1.0:
        raise _LineError(f"{tag}: options.floor must be 0.0..=1.0, got {format_plain_f32(floor)}")


def _field_type(model: type[BaseModel], name: str) -> Any:
    field = model.model_fields[name]
    return Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation


NULL_IS_ABSENT: dict[type[BaseModel], tuple[str, ...]] = {
    EvalCase: ("expected_labels", "expected_associations", "expected_citations"),
    CaseOptions: ("tags", "since", "until"),
}
"""The extension fields (§2.5), decoded one by one, where ``null`` reads as the key absent
(``options.floor`` too: its own decoder below). The JSON Schemas derive their nulls from it."""

_ADAPTERS: dict[tuple[type[BaseModel], str], TypeAdapter[Any]] = {
    (model, name): TypeAdapter(_field_type(model, name), config=ConfigDict(strict=True))
    for model, names in NULL_IS_ABSENT.items()
    for name in names
}


def _decode_field(
    model: type[BaseModel], name: str, container: dict[str, Any], tag: str, prefix: str = ""
) -> Any:
    """``container[name]`` typed as ``model``'s field; absent or null gives the field default."""
    raw = container.get(name)
    if raw is None:
        return model.model_fields[name].get_default(call_default_factory=True)
    try:
        return _ADAPTERS[(model, name)].validate_python(raw)
    except ValidationError as error:
        detail = describe_error(error, _field_type(model, name))
        raise _LineError(f"{tag}: {prefix}{name}: {detail}") from None


def _decode_floor(raw: Any, tag: str) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise _LineError(f"{tag}: options.floor: expected a number, got {show(raw)}")
    return int_to_f32(raw) if isinstance(raw, int) else to_f32(raw)
