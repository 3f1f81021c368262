"""JSON Schemas (draft 2020-12) of taguru's strict input formats, generated from their models.

pydantic writes each schema from the model the loader itself uses (``run.dataset``,
``gate.file``, ``server.ingest.import_lines``); the loader's rules that live in code rather than
in the model's types are then stated on it, each derived from its own declaration: which fields
read ``null`` as absent (``dataset.NULL_IS_ABSENT``), which strings must hold a non-blank
character (taguru's ``trim``, over ``core.text.WHITE_SPACE``), the version stamps, ranges and
caps (the loaders' constants), the metric names (the registry). The words are
:mod:`.schema_text`'s. What JSON Schema cannot say is said in each schema's description.

The shipped files (``authoring/schemas/*.schema.json``, printed by ``taguru-evaluate schema
NAME``) are this module's output; a test fails when they are stale, and ``python
docs/generate.py`` rewrites them.
"""

import json
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema

from pytest_taguru.authoring import schema_text
from pytest_taguru.core.limits import MAX_SLICE_NAME_CHARS, MAX_SLICES, U32_MAX
from pytest_taguru.core.text import WHITE_SPACE
from pytest_taguru.gate.file import ThresholdsFile
from pytest_taguru.gate.slice_file import SLICE_THRESHOLDS_VERSION, SliceThresholdsFile
from pytest_taguru.gate.thresholds import THRESHOLDS_VERSION
from pytest_taguru.run.dataset import NULL_IS_ABSENT
from pytest_taguru.run.eval_models import (
    EVAL_VERSION,
    MAX_LIMIT,
    MAX_RELEVANCE,
    EvalCase,
    EvalHeader,
)
from pytest_taguru.run.slices import SLICES_VERSION, SlicesFile
from pytest_taguru.score.registry import CASE_SCOPED_METRICS, METRICS
from pytest_taguru.score.slices import PER_CASE_NAMES
from pytest_taguru.server.ingest import import_lines as lines

DIALECT = "https://json-schema.org/draft/2020-12/schema"
Schema = dict[str, Any]

NON_BLANK = "[^" + "".join(f"\\u{ord(ch):04x}" for ch in sorted(WHITE_SPACE)) + "]"
"""A character taguru's ``trim`` keeps: a string matching it is not blank."""


class _Generator(GenerateJsonSchema):
    """pydantic's generator without its per-field titles (``"title": "Case Id"``)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def _generate(target: type[BaseModel] | TypeAdapter[Any]) -> Schema:
    if isinstance(target, TypeAdapter):
        return target.json_schema(schema_generator=_Generator)
    return target.model_json_schema(schema_generator=_Generator)


def _objects(schema: Schema) -> dict[str, Schema]:
    """Every object schema by its model name (the root too)."""
    found = dict(schema.get("$defs", {}))
    if "title" in schema:
        found[schema["title"]] = schema
    return found


def _describe(schema: Schema, words: Mapping[str, str], root: str) -> None:
    """Attach ``words``: ``"Model"`` and ``"Model.field"`` keys (bare ``"field"`` for ``root``);
    pydantic's docstring descriptions are the developers', never shipped."""
    for name, node in _objects(schema).items():
        node.pop("description", None)
        if name in words:
            node["description"] = words[name]
        for field, prop in node.get("properties", {}).items():
            key = field if name == root and field in words else f"{name}.{field}"
            if key in words:
                prop["description"] = words[key]
    if "" in words:
        schema["description"] = words[""]


def _nullable(prop: Schema) -> Schema:
    """``prop`` that also admits ``null`` (keeping its default and description outside)."""
    if {"type": "null"} in prop.get("anyOf", []):
        return prop
    kept: Schema = {key: prop.pop(key) for key in ("default", "description") if key in prop}
    return {"anyOf": [prop, {"type": "null"}], **kept}


def _string_rule(prop: Schema, **rule: Any) -> None:
    """Add ``rule`` to the string branch of ``prop`` (itself, or its non-null alternative)."""
    for branch in prop.get("anyOf", [prop]):
        if branch.get("type") == "string":
            branch.update(rule)
        elif branch.get("type") == "array":
            branch["items"].update(rule)


def _finish(schema: Schema, title: str) -> Schema:
    return {"$schema": DIALECT, "title": title, **{k: v for k, v in schema.items() if k != "title"}}


# --- eval.jsonl -------------------------------------------------------------------------------


def eval_header_schema() -> Schema:
    schema = _generate(EvalHeader)
    schema["properties"]["taguru_eval"] = {"const": EVAL_VERSION}
    _describe(schema, schema_text.EVAL_HEADER, "EvalHeader")
    return _finish(schema, "taguru eval.jsonl header line")


def eval_case_schema() -> Schema:
    schema = _generate(EvalCase)
    objects = _objects(schema)
    del schema["properties"]["line"]
    schema["required"] = [name for name in schema["required"] if name != "line"]
    for model, names in NULL_IS_ABSENT.items():
        props = objects[model.__name__]["properties"]
        for name in names:
            props[name] = _nullable(props[name])
    case = objects["EvalCase"]["properties"]
    for name in ("case_id", "query", "expected_labels"):
        _string_rule(case[name], pattern=NON_BLANK)
    for owner, field in (
        ("ExpectedSource", "source"),
        ("ExpectedCitation", "source"),
        ("ExpectedCitation", "quote"),
        ("ExpectedAssociation", "subject"),
        ("ExpectedAssociation", "label"),
        ("ExpectedAssociation", "object"),
    ):
        _string_rule(objects[owner]["properties"][field], pattern=NON_BLANK)
    objects["ExpectedSource"]["properties"]["relevance"]["maximum"] = MAX_RELEVANCE
    options = objects["CaseOptions"]["properties"]
    options["limit"]["anyOf"][0].update(minimum=1, maximum=MAX_LIMIT)
    options["floor"]["anyOf"][0].update(minimum=0, maximum=1)
    _describe(schema, schema_text.EVAL_CASE, "EvalCase")
    return _finish(schema, "taguru eval.jsonl case line")


# --- thresholds -------------------------------------------------------------------------------


def thresholds_schema() -> Schema:
    schema = _generate(ThresholdsFile)
    objects = _objects(schema)
    top = objects["ThresholdsFile"]["properties"]
    top["taguru_evaluate_thresholds"] = {"const": THRESHOLDS_VERSION}
    top["aggregate"]["propertyNames"] = {"enum": sorted(metric.name for metric in METRICS)}
    scoped = {"enum": sorted(CASE_SCOPED_METRICS)}
    cases = objects["CaseBounds"]["properties"]
    cases["default"]["propertyNames"] = scoped
    cases["overrides"]["additionalProperties"]["propertyNames"] = scoped
    _bound_rule(objects)
    _describe(schema, schema_text.THRESHOLDS, "ThresholdsFile")
    return _finish(schema, "taguru evaluate thresholds file")


def _bound_rule(objects: dict[str, Schema]) -> None:
    """A bound has a number on at least one side."""
    objects["Bound"]["anyOf"] = [
        {"required": [side], "properties": {side: {"type": "number"}}} for side in ("min", "max")
    ]


# --- slices and slice thresholds (pytest-taguru's own files) ----------------------------------

SLICE_NAME = {
    "pattern": "^[^:" + NON_BLANK[2:-1] + "]+$",
    "minLength": 1,
    "maxLength": MAX_SLICE_NAME_CHARS,
}
"""A slice name: 1..64 characters, no white space, no ``:`` (``run.slices.name_problem``)."""


def slices_schema() -> Schema:
    schema = _generate(SlicesFile)
    top = schema["properties"]
    top["taguru_slices"] = {"const": SLICES_VERSION}
    top["slices"].update(propertyNames=SLICE_NAME, minProperties=1, maxProperties=MAX_SLICES)
    top["slices"]["additionalProperties"].update(minItems=1)
    top["slices"]["additionalProperties"]["items"].update(minLength=1)
    _describe(schema, schema_text.SLICES, "SlicesFile")
    return _finish(schema, "pytest-taguru slices file")


def slice_thresholds_schema() -> Schema:
    schema = _generate(SliceThresholdsFile)
    objects = _objects(schema)
    top = objects["SliceThresholdsFile"]["properties"]
    top["taguru_slice_thresholds"] = {"const": SLICE_THRESHOLDS_VERSION}
    top["slices"]["propertyNames"] = SLICE_NAME
    gate = objects["SliceBounds"]["properties"]
    gate["min_cases"].update(minimum=0, maximum=U32_MAX)
    gate["aggregate"]["propertyNames"] = {"enum": sorted(PER_CASE_NAMES)}
    _bound_rule(objects)
    _describe(schema, schema_text.SLICE_THRESHOLDS, "SliceThresholdsFile")
    return _finish(schema, "pytest-taguru slice thresholds file")


# --- the import stream ------------------------------------------------------------------------

_CAPS: dict[tuple[str, str], int] = {
    ("HeaderLine", "context"): lines.MAX_CONTEXT_NAME_BYTES,
    ("HeaderLine", "source"): lines.MAX_NAME_BYTES,
    ("QuestionLine", "question"): lines.MAX_MARKER_BYTES,
    ("SectionLine", "section"): lines.MAX_MARKER_BYTES,
    ("LocatorSpec", "kind"): lines.MAX_LOCATOR_KIND_BYTES,
    ("LocatorSpec", "value"): lines.MAX_MARKER_BYTES,
    ("AssociationLine", "subject"): lines.MAX_NAME_BYTES,
    ("AssociationLine", "label"): lines.MAX_NAME_BYTES,
    ("AssociationLine", "object"): lines.MAX_NAME_BYTES,
    ("AliasLine", "alias"): lines.MAX_NAME_BYTES,
    ("AliasLine", "canonical"): lines.MAX_NAME_BYTES,
    ("PassageLine", "tags"): lines.MAX_TAG_BYTES,
}
"""Non-empty strings with a UTF-8 byte cap (``import_lines.bounded``); JSON Schema counts
characters, so ``maxLength`` is the byte cap, an upper bound of what taguru accepts."""


def import_line_schema() -> Schema:
    union = TypeAdapter(lines.HeaderLine | lines.OperationLine)
    schema = _generate(union)
    objects = _objects(schema)
    for (model, field), cap in _CAPS.items():
        _string_rule(objects[model]["properties"][field], minLength=1, maxLength=cap)
    objects["HeaderLine"]["properties"]["taguru_batch"] = {"const": 1}
    objects["CreateSpec"]["properties"]["description"]["maxLength"] = lines.MAX_DESCRIPTION_BYTES
    objects["PassageLine"]["properties"]["passage"]["maxLength"] = lines.MAX_PASSAGE_BYTES
    objects["PassageLine"]["properties"]["tags"]["anyOf"][0]["maxItems"] = lines.MAX_TAGS
    weight = objects["AssociationLine"]["properties"]["weight"]
    weight.update(minimum=-lines.MAX_WEIGHT, maximum=lines.MAX_WEIGHT)
    _describe(schema, schema_text.IMPORT_LINE, "")
    return _finish(schema, "taguru import stream line")


BUILDERS: dict[str, Callable[[], Schema]] = {
    "eval-header": eval_header_schema,
    "eval-case": eval_case_schema,
    "thresholds": thresholds_schema,
    "import-line": import_line_schema,
    "slices": slices_schema,
    "slice-thresholds": slice_thresholds_schema,
}
"""Every shipped schema by its name (``taguru-evaluate schema NAME``)."""


def render(name: str) -> str:
    """The schema as its shipped file holds it: 2-space indent, non-ASCII kept, final newline."""
    return json.dumps(BUILDERS[name](), indent=2, ensure_ascii=False) + "\n"


def file_name(name: str) -> str:
    return f"{name}.schema.json"


def shipped(name: str) -> str:
    """The shipped file's text (package data)."""
    return (resources.files("pytest_taguru.authoring") / "schemas" / file_name(name)).read_text(
        encoding="utf-8"
    )
