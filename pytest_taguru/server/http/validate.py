"""Hand-validated bodies: ``POST …/associations`` and ``POST …/sources`` (server-wire §1.5).

Both are walked field by field, collecting every problem as an :class:`Issue`; any issue
refuses the whole request (400 ``invalid_argument``, nothing applied). Objects are walked in
sorted key order, as taguru's JSON maps iterate. A present ``null`` on a required field is
``missing``; integers must be JSON integers.
"""

from typing import Any

from pytest_taguru.core.limits import U32_MAX, U64_MAX
from pytest_taguru.server.context import AssocOp
from pytest_taguru.server.errors import ApiError, Issue, collected_refusal
from pytest_taguru.server.http.bodies import json_type_name
from pytest_taguru.server.index.passages import Locator, PassageSubmission

MAX_NAME_BYTES = 1024
MAX_ASSOCIATIONS = 10_000
MAX_PASSAGES = 1000
MAX_WEIGHT = 1e6
MAX_QUESTION_BYTES = 512
MAX_SECTION_BYTES = 512
MAX_QUESTIONS_PER_PARAGRAPH = 8
MAX_LOCATOR_KIND_BYTES = 64
MAX_LOCATOR_VALUE_BYTES = 512
MAX_TAG_BYTES = 128
MAX_TAGS_PER_SOURCE = 32

NON_EMPTY = "a non-empty string"
PARAGRAPH_INDEX = "a non-negative integer paragraph index"
LOCATOR_OBJECT = "an object {kind, value}"


def _type(path: str, expected: str, value: Any) -> Issue:
    return Issue(path, "type", expected, json_type_name(value))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def bounded_ok(text: str, path: str, cap: int, issues: list[Issue]) -> bool:
    """Record an ``empty`` or ``too_long`` issue (bytes, not characters); True when fine."""
    size = len(text.encode())
    if not text:
        issues.append(Issue(path, "empty", NON_EMPTY, "an empty string"))
    elif size > cap:
        issues.append(Issue(path, "too_long", f"at most {cap} bytes", f"{size} bytes"))
    else:
        return True
    return False


def required_text(obj: dict[str, Any], key: str, path: str, cap: int, issues: list[Issue]) -> str:
    full = f"{path}.{key}"
    value = obj.get(key)
    if value is None:
        issues.append(Issue(full, "missing", NON_EMPTY, "absent"))
    elif not isinstance(value, str):
        issues.append(_type(full, NON_EMPTY, value))
    elif bounded_ok(value, full, cap, issues):
        return value
    return ""


def _paragraph(obj: dict[str, Any], path: str, issues: list[Issue], required: bool) -> int | None:
    full = f"{path}.paragraph"
    value = obj.get("paragraph")
    if value is None:
        if required:
            issues.append(Issue(full, "missing", PARAGRAPH_INDEX, "absent"))
        return None
    if _is_int(value) and 0 <= value <= U32_MAX:
        return int(value)
    issues.append(_type(full, PARAGRAPH_INDEX, value))
    return None


def _weight(obj: dict[str, Any], path: str, issues: list[Issue]) -> float:
    full = f"{path}.weight"
    expected = "a finite number with |weight| <= 1000000"
    value = obj.get("weight")
    if value is None:
        issues.append(Issue(full, "missing", expected, "absent"))
    elif isinstance(value, bool) or not isinstance(value, int | float):
        issues.append(_type(full, expected, value))
    elif abs(float(value)) > MAX_WEIGHT:
        issues.append(Issue(full, "range", expected, f"number {value}"))
    else:
        return float(value)
    return 0.0


def parse_associations(body: Any) -> list[AssocOp]:
    """The associations batch: cap first (``over_limit``), then every item's issues."""
    if isinstance(body, list) and len(body) > MAX_ASSOCIATIONS:
        raise ApiError(
            "over_limit",
            f"batch of {len(body)} associations exceeds the per-request limit of "
            f"{MAX_ASSOCIATIONS}; split the ingest",
        )
    if not isinstance(body, list):
        raise collected_refusal("the associations batch", [_type("associations", "an array", body)])
    issues: list[Issue] = []
    ops: list[AssocOp] = []
    for index, item in enumerate(body):
        path = f"associations[{index}]"
        if not isinstance(item, dict):
            issues.append(_type(path, "an object", item))
            continue
        subject = required_text(item, "subject", path, MAX_NAME_BYTES, issues)
        label = required_text(item, "label", path, MAX_NAME_BYTES, issues)
        obj = required_text(item, "object", path, MAX_NAME_BYTES, issues)
        weight = _weight(item, path, issues)
        source = item.get("source")
        if source is not None and not isinstance(source, str):
            issues.append(_type(f"{path}.source", "a string", source))
            source = None
        elif source is not None and not bounded_ok(
            source, f"{path}.source", MAX_NAME_BYTES, issues
        ):
            source = None
        paragraph = _paragraph(item, path, issues, required=False)
        ops.append(AssocOp(subject, label, obj, weight, source, paragraph))
    if issues:
        raise collected_refusal("the associations batch", issues)
    return ops


def _orphan(path: str) -> Issue:
    """The orphan rule: a per-source entry must name a source of the request's own ``passages``."""
    return Issue(
        path,
        "unknown_reference",
        "a source id present in this request's own `passages`",
        "not present in this request",
    )


def _source_lists(
    body: dict[str, Any], key: str, expected: str, passages: dict[str, str], issues: list[Issue]
) -> dict[str, list[Any]]:
    """``key``: source → array, each source also named in ``passages`` (orphan rule)."""
    value = body.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        issues.append(_type(key, expected, value))
        return {}
    lists: dict[str, list[Any]] = {}
    for source in sorted(value):
        path = f"{key}['{source}']"
        items = value[source]
        if not isinstance(items, list):
            issues.append(
                _type(path, "an array of strings" if key == "tags" else "an array", items)
            )
            continue
        if source not in passages:
            issues.append(_orphan(path))
        lists[source] = items
    return lists


def _marker_items(
    lists: dict[str, list[Any]], key: str, text_key: str, cap: int, issues: list[Issue]
) -> dict[str, list[tuple[int, str]]]:
    """``{paragraph, <text_key>}`` items (questions, sections)."""
    result: dict[str, list[tuple[int, str]]] = {}
    for source, items in lists.items():
        per_paragraph: dict[int, int] = {}
        specs: list[tuple[int, str]] = []
        for index, item in enumerate(items):
            path = f"{key}['{source}'][{index}]"
            if not isinstance(item, dict):
                issues.append(_type(path, "an object", item))
                paragraph, text = 0, ""
            else:
                paragraph = _paragraph(item, path, issues, required=True) or 0
                text = required_text(item, text_key, path, cap, issues)
            if key == "questions":
                per_paragraph[paragraph] = per_paragraph.get(paragraph, 0) + 1
                if per_paragraph[paragraph] > MAX_QUESTIONS_PER_PARAGRAPH:
                    issues.append(
                        Issue(
                            f"{path}.paragraph",
                            "over_limit",
                            f"at most {MAX_QUESTIONS_PER_PARAGRAPH} questions per paragraph",
                            f"paragraph {paragraph} carries more than "
                            f"{MAX_QUESTIONS_PER_PARAGRAPH} questions",
                        )
                    )
            specs.append((paragraph, text))
        result[source] = specs
    return result


def _locator_items(
    lists: dict[str, list[Any]], issues: list[Issue]
) -> dict[str, list[tuple[int, Locator]]]:
    result: dict[str, list[tuple[int, Locator]]] = {}
    for source, items in lists.items():
        specs: list[tuple[int, Locator]] = []
        for index, item in enumerate(items):
            path = f"locators['{source}'][{index}]"
            if not isinstance(item, dict):
                issues.append(_type(path, "an object", item))
                continue
            paragraph = _paragraph(item, path, issues, required=True) or 0
            locator_path = f"{path}.locator"
            raw = item.get("locator")
            if raw is None:
                issues.append(Issue(locator_path, "missing", LOCATOR_OBJECT, "absent"))
                continue
            if not isinstance(raw, dict):
                issues.append(_type(locator_path, LOCATOR_OBJECT, raw))
                continue
            kind = required_text(raw, "kind", locator_path, MAX_LOCATOR_KIND_BYTES, issues)
            value = required_text(raw, "value", locator_path, MAX_LOCATOR_VALUE_BYTES, issues)
            specs.append((paragraph, Locator(kind, value)))
        result[source] = specs
    return result


def _tag_items(lists: dict[str, list[Any]], issues: list[Issue]) -> dict[str, list[str]]:
    result: dict[str, list[str]] = {}
    for source, items in lists.items():
        path = f"tags['{source}']"
        if len(items) > MAX_TAGS_PER_SOURCE:
            issues.append(
                Issue(
                    path, "over_limit", f"at most {MAX_TAGS_PER_SOURCE} tags", f"{len(items)} tags"
                )
            )
        tags: list[str] = []
        for index, tag in enumerate(items):
            item_path = f"{path}[{index}]"
            if not isinstance(tag, str):
                issues.append(_type(item_path, NON_EMPTY, tag))
            elif bounded_ok(tag, item_path, MAX_TAG_BYTES, issues):
                tags.append(tag)
        result[source] = tags
    return result


def _dates(body: dict[str, Any], passages: dict[str, str], issues: list[Issue]) -> dict[str, int]:
    value = body.get("dates")
    if value is None:
        return {}
    if not isinstance(value, dict):
        issues.append(_type("dates", "an object of source -> epoch seconds", value))
        return {}
    dates: dict[str, int] = {}
    for source in sorted(value):
        path = f"dates['{source}']"
        if source not in passages:
            issues.append(_orphan(path))
        epoch = value[source]
        if _is_int(epoch) and 0 <= epoch <= U64_MAX:
            dates[source] = int(epoch)
        else:
            issues.append(_type(path, "a non-negative integer (epoch seconds)", epoch))
    return dates


def _passages(body: dict[str, Any], issues: list[Issue]) -> dict[str, str]:
    expected = "an object of source id -> text"
    value = body.get("passages")
    if value is None:
        issues.append(Issue("passages", "missing", expected, "absent"))
        return {}
    if not isinstance(value, dict):
        issues.append(_type("passages", expected, value))
        return {}
    passages: dict[str, str] = {}
    for source in sorted(value):
        path = f"passages['{source}']"
        bounded_ok(source, path, MAX_NAME_BYTES, issues)
        text = value[source]
        if isinstance(text, str):
            passages[source] = text
        else:
            issues.append(_type(path, "a string", text))
    return passages


def parse_store_passages(body: Any) -> dict[str, PassageSubmission]:
    """The passage store body: the 1000-source cap first, then every field's issues."""
    if isinstance(body, dict) and isinstance(body.get("passages"), dict):
        count = len(body["passages"])
        if count > MAX_PASSAGES:
            raise ApiError(
                "over_limit",
                f"batch of {count} passages exceeds the per-request limit of {MAX_PASSAGES}; "
                "split the store",
            )
    if not isinstance(body, dict):
        raise collected_refusal("the passage store", [_type("", "an object", body)])
    issues: list[Issue] = []
    passages = _passages(body, issues)
    questions = _marker_items(
        _source_lists(
            body, "questions", "an object of source -> [{paragraph, question}]", passages, issues
        ),
        "questions",
        "question",
        MAX_QUESTION_BYTES,
        issues,
    )
    sections = _marker_items(
        _source_lists(
            body, "sections", "an object of source -> [{paragraph, section}]", passages, issues
        ),
        "sections",
        "section",
        MAX_SECTION_BYTES,
        issues,
    )
    locators = _locator_items(
        _source_lists(
            body,
            "locators",
            "an object of source -> [{paragraph, locator: {kind, value}}]",
            passages,
            issues,
        ),
        issues,
    )
    tags = _tag_items(
        _source_lists(body, "tags", "an object of source -> [tag]", passages, issues), issues
    )
    dates = _dates(body, passages, issues)
    if issues:
        raise collected_refusal("the passage store", issues)
    return {
        source: PassageSubmission(
            text=text,
            questions=questions.get(source, []),
            sections=sections.get(source, []),
            locators=locators.get(source, []),
            tags=tags.get(source, []),
            date=dates.get(source),
        )
        for source, text in passages.items()
    }
