"""The shipped JSON Schemas: current, complete, valid, and exactly as strict as the loaders.

The property tests mutate valid documents at random (a key dropped or added, a value replaced
by one of many wrong or borderline values) and require the schema and the loader to agree:
whatever the loader refuses for its shape the schema refuses, and the other way round. The few
rules JSON Schema cannot state (written in each schema's description) are kept out of the
generated inputs, each with its reason below.
"""

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from paths import EXAMPLE_SUITE, REPO
from pydantic import ValidationError

from pytest_taguru.authoring.json_schemas import BUILDERS, render, shipped
from pytest_taguru.authoring.scaffold import template
from pytest_taguru.errors import UsageError
from pytest_taguru.gate.slice_file import check_slice_thresholds
from pytest_taguru.gate.thresholds import check_thresholds
from pytest_taguru.run.dataset import check_limits, load_eval_set
from pytest_taguru.run.slices import read_slices_file
from pytest_taguru.score.metrics import definitions
from pytest_taguru.server.ingest.import_lines import line_model

VALIDATORS = {name: Draft202012Validator(json.loads(shipped(name))) for name in BUILDERS}


def valid(name: str, document: Any) -> bool:
    return VALIDATORS[name].is_valid(document)


@pytest.mark.parametrize("name", list(BUILDERS))
def test_the_shipped_schema_is_current_and_a_valid_schema(name: str) -> None:
    assert shipped(name) == render(name), "stale schema: run python docs/generate.py"
    Draft202012Validator.check_schema(json.loads(shipped(name)))


def _described(node: Any, where: str) -> list[str]:
    missing = []
    if isinstance(node, dict):
        for field, prop in node.get("properties", {}).items():
            if "description" not in prop:
                missing.append(f"{where}.{field}")
        for key, value in node.items():
            if key != "anyOf":  # alternatives and constraint fragments, described above them
                missing += _described(value, f"{where}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            missing += _described(value, f"{where}[{index}]")
    return missing


@pytest.mark.parametrize("name", list(BUILDERS))
def test_every_object_and_field_is_described(name: str) -> None:
    schema = json.loads(shipped(name))
    assert _described(schema, name) == []
    assert all("description" in node for node in schema.get("$defs", {}).values())
    assert "description" in schema


# --- every example in the repository validates ------------------------------------------------


def jsonl(text: str) -> list[Any]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def eval_examples() -> list[tuple[str, Any]]:
    texts = [
        (EXAMPLE_SUITE / "eval.jsonl").read_text("utf-8"),
        template("eval.jsonl"),
        *_doc_blocks("eval-jsonl.md", "jsonl"),
        *_doc_blocks("getting-started.md", "jsonl"),
    ]
    found = []
    for text in texts:
        for line in jsonl(text):
            found.append(("eval-header" if "taguru_eval" in line else "eval-case", line))
    return found


def _doc_blocks(doc: str, language: str) -> list[str]:
    text = (REPO / "docs" / doc).read_text("utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, re.DOTALL)


def test_every_eval_example_validates() -> None:
    examples = eval_examples()
    assert len(examples) > 40
    assert [line for name, line in examples if not valid(name, line)] == []


def test_every_import_example_validates() -> None:
    texts = [
        (EXAMPLE_SUITE / "corpus" / "sake.ndjson").read_text("utf-8"),
        template("corpus.ndjson"),
        *_doc_blocks("import-ndjson.md", "jsonl"),
    ]
    lines = [line for text in texts for line in jsonl(text)]
    assert len(lines) > 180
    assert [line for line in lines if not valid("import-line", line)] == []


def test_every_thresholds_example_validates() -> None:
    documents = [
        json.loads((EXAMPLE_SUITE / "thresholds.json").read_text("utf-8")),
        json.loads(template("thresholds.json")),
        *(json.loads(block) for block in _doc_blocks("thresholds.md", "json")),
    ]
    assert len(documents) >= 3
    assert [doc for doc in documents if not valid("thresholds", doc)] == []


# --- the property: schema and loader agree -----------------------------------------------------

# Never generated, each a rule JSON Schema cannot state: an integral float for an integer field
# (3.0 is an integer to JSON Schema, not to taguru), floats within 2^-25 of 1 for options.floor
# (taguru compares their 32-bit value), arrays where the thresholds file wants an object (taguru
# reads them positionally), UTF-8 byte caps (JSON Schema counts characters: only short strings
# are generated), and everything spanning lines (duplicate case_ids, batch order).
NEAR: dict[type, list[Any]] = {
    str: ["", " ", "\u3000", "\t\n", "x", None, 1, [], {}],
    int: [-1, 0, 1, 2, 3, 4, 255, 256, 1000, 1001, 2**32 - 1, 2**32, 2**64 - 1, 2**64, 1.5,
          None, "1", True],
    float: [-1000000.5, -999999.5, -0.5, 0, 0.25, 1, 1.5, 999999.5, 1000000.5, None, "0.5"],
    bool: [True, False, 0, 1, None, "true"],
    list: [[], None, ["x"], [""], [1], [{}], {}, "x"],
    dict: [{}, None, [], {"extra": 1}, "x", 1],
}  # fmt: skip
"""Values near each kind of valid value: blank strings, integers at their type's edges, a
weight at its cap, the wrong type."""
ANY = [v for values in NEAR.values() for v in values]


def _paths(document: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(document, dict):
        for key, value in document.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found += _paths(value, (*prefix, index))
    return found


def _replace(document: Any, path: tuple[Any, ...], change: Any) -> Any:
    """``document`` with the value at ``path`` replaced by ``change``."""
    if not path:
        return change
    copy = dict(document) if isinstance(document, dict) else list(document)
    copy[path[0]] = _replace(copy[path[0]], path[1:], change)  # type: ignore[index]
    return copy


def mutate(document: Any, data: st.DataObject, arrays: bool = True) -> Any:
    """``document`` with one to three changes at places drawn uniformly: a key dropped or
    added, or a value replaced by one near it (``NEAR``) or of another kind."""
    allowed = (lambda value: True) if arrays else (lambda value: not isinstance(value, list))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(document)))
        target: Any = document
        for part in path:
            target = target[part]
        actions = ["replace"] + (["drop", "add"] if isinstance(target, dict) and target else [])
        action = data.draw(st.sampled_from(actions))
        if action == "drop":
            dropped = data.draw(st.sampled_from(sorted(target)))
            change: Any = {k: v for k, v in target.items() if k != dropped}
        elif action == "add":
            added = data.draw(st.sampled_from(["extra", "Source", "paragraph", "section"]))
            change = {**target, added: 1}
        else:
            pool = NEAR.get(type(target), ANY) if data.draw(st.booleans()) else ANY
            change = data.draw(st.sampled_from([v for v in pool if allowed(v)]))
        document = _replace(document, path, change)
    return document


CASES = [
    {
        "case_id": "c",
        "query": "q",
        "cues": ["a"],
        "expected_sources": [{"source": "docs/a.md", "paragraphs": [0, 2], "relevance": 3}],
        "expected_concepts": ["a"],
        "options": {"limit": 3, "floor": 0.25, "tags": ["t"], "since": 1, "until": 9},
        "expected_labels": ["l"],
        "expected_associations": [{"subject": "a", "label": "l", "object": "b"}],
        "expected_citations": [
            {"source": "docs/a.md", "paragraph": 1, "section": "S", "quote": "q"},
            {"source": "docs/a.md", "paragraph": 0, "section": None},
        ],
    },
    {"case_id": "minimal", "query": "q"},
]
HEADER = {"taguru_eval": 1, "name": "n", "default_target": {"context": "c"}}


def loads_eval(tmp: Path, header: Any, case: Any) -> bool:
    path = tmp / "eval.jsonl"
    path.write_text(json.dumps(header) + "\n" + json.dumps(case) + "\n", encoding="utf-8")
    try:
        check_limits(load_eval_set(str(path)))
    except UsageError:
        return False
    return True


QUICK = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@QUICK
@given(data=st.data(), base=st.sampled_from(CASES))
def test_the_case_schema_refuses_exactly_what_the_loader_refuses(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, base: dict[str, Any]
) -> None:
    case = mutate(base, data)
    assert loads_eval(tmp_path_factory.getbasetemp(), HEADER, case) == valid("eval-case", case)


@QUICK
@given(data=st.data())
def test_the_header_schema_refuses_exactly_what_the_loader_refuses(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    header = mutate(HEADER, data)
    assume(not (isinstance(header, dict) and "case_id" in header))  # a case line, not a header
    loads = loads_eval(tmp_path_factory.getbasetemp(), header, CASES[1])
    assert loads == valid("eval-header", header)


THRESHOLDS = {
    "taguru_evaluate_thresholds": 1,
    "aggregate": {"recall.mrr": {"min": 0.5}, "latency.passage_ms": {"max": 250}},
    "cases": {
        "default": {"recall.ndcg": {"min": 0.25, "max": 1}},
        "overrides": {"c1": {"citations.recall": {"max": 1}, "diversity.sources": {"min": 1}}},
    },
    "allow_unstable_corpus": False,
}


def _min_above_max(document: Any) -> bool:
    if isinstance(document, dict):
        low, high = document.get("min"), document.get("max")
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (low, high))
        return (numbers and low > high) or any(_min_above_max(v) for v in document.values())
    return False


@QUICK
@given(data=st.data())
def test_the_thresholds_schema_refuses_exactly_what_the_loader_refuses(
    data: st.DataObject,
) -> None:
    document = mutate(THRESHOLDS, data, arrays=False)
    assume(not _min_above_max(document))
    overrides = document.get("cases", {}) if isinstance(document, dict) else {}
    case_ids = overrides.get("overrides", {}) if isinstance(overrides, dict) else {}
    try:
        check_thresholds(
            json.dumps(document).encode(),
            path="t.json",
            metric_names=definitions().keys(),
            case_ids=list(case_ids) if isinstance(case_ids, dict) else [],
        )
        loads = True
    except UsageError:
        loads = False
    assert loads == valid("thresholds", document)


LINES = [
    {"taguru_batch": 1, "context": "c", "source": "s", "create": {"description": "d",
     "pinned": True, "dice_floor": 0.5, "semantic_floor": None}},
    {"taguru_batch": 1, "context": "c", "source": "s"},
    {"passage": "text", "date": 1, "tags": ["a", "b"], "stored_at": 2},
    {"paragraph": 0, "question": "why?"},
    {"paragraph": 1, "section": "S"},
    {"paragraph": 2, "locator": {"kind": "page", "value": "3"}},
    {"subject": "a", "label": "l", "object": "b", "weight": 0.5, "paragraph": 1},
    {"subject": "a", "label": "l", "object": "b", "weight": -3},
    {"alias": "x", "canonical": "a", "kind": "concept"},
]  # fmt: skip


def parses_line(record: Any) -> bool:
    """The importer's per-line step: classification by keys, then the strict line model."""
    model = line_model(record) if isinstance(record, dict) else None
    if model is None:
        return False
    try:
        model.model_validate(record)
    except ValidationError:
        return False
    return True


@QUICK
@given(data=st.data(), base=st.sampled_from(LINES))
def test_the_import_line_schema_refuses_exactly_what_the_importer_refuses(
    data: st.DataObject, base: dict[str, Any]
) -> None:
    line = mutate(base, data)
    assert parses_line(line) == valid("import-line", line)


# --- pytest-taguru's own files: slices and slice thresholds ------------------------------------


def test_every_slices_example_validates() -> None:
    documents = [json.loads(block) for block in _doc_blocks("slices.md", "json")]
    slices = [doc for doc in documents if "taguru_slices" in doc]
    gates = [doc for doc in documents if "taguru_slice_thresholds" in doc]
    assert len(slices) >= 1 and len(gates) >= 1 and len(slices) + len(gates) == len(documents)
    assert [doc for doc in slices if not valid("slices", doc)] == []
    assert [doc for doc in gates if not valid("slice-thresholds", doc)] == []


SLICES_FILE = {"taguru_slices": 1, "slices": {"history": ["history-*"], "a": ["x", "y?"]}}


@QUICK
@given(data=st.data())
def test_the_slices_schema_refuses_exactly_what_the_loader_refuses(data: st.DataObject) -> None:
    document = mutate(SLICES_FILE, data)
    try:
        read_slices_file(json.dumps(document).encode(), "s.json")
        loads = True
    except UsageError:
        loads = False
    assert loads == valid("slices", document)


SLICE_THRESHOLDS = {
    "taguru_slice_thresholds": 1,
    "slices": {
        "history": {"min_cases": 3, "aggregate": {"recall.mrr": {"min": 0.5}}},
        "drinks": {"aggregate": {"latency.passage_ms": {"max": 250}, "recall.ndcg": {"min": 0}}},
    },
}


@QUICK
@given(data=st.data())
def test_the_slice_thresholds_schema_refuses_exactly_what_the_loader_refuses(
    data: st.DataObject,
) -> None:
    document = mutate(SLICE_THRESHOLDS, data, arrays=False)
    assume(not _min_above_max(document))
    slices = document.get("slices") if isinstance(document, dict) else None
    names = list(slices) if isinstance(slices, dict) else []  # the run defines every slice named
    try:
        check_slice_thresholds(json.dumps(document).encode(), path="st.json", slice_names=names)
        loads = True
    except UsageError:
        loads = False
    assert loads == valid("slice-thresholds", document)
