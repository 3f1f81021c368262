"""``compare``: reading (B.2), classification (B.3–B.6), aggregates (B.7), warnings (B.8),
renderers (B.9, B.10, Markdown). Goldens: tests/golden/compare/<example>/."""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import GOLDEN

from pytest_taguru.artifact.evaluation import parse_evaluation
from pytest_taguru.artifact.view import LoadedRun, RunReadError, read_run
from pytest_taguru.artifact.writing import render
from pytest_taguru.compare.classify import ChangeReport, compare, regressions
from pytest_taguru.compare.render import render_jsonl, render_markdown, render_summary
from pytest_taguru.core.jsontext import dumps_compact

GOLDEN = GOLDEN / "compare"
EXAMPLES = ["b1", "b2", "b3", "b4", "taguru_layout"]
NOW = "2026-07-29T12:00:00Z"


def _golden_report(example: str) -> ChangeReport:
    folder = GOLDEN / example
    base = read_run((folder / "base.json").read_text(encoding="utf-8"), "base.json")
    head = read_run((folder / "head.json").read_text(encoding="utf-8"), "head.json")
    return compare(base, head)


def _doc(cases: list[Any] | None = None, **fields: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "taguru_evaluation": 1,
        "inputs": {"context": "sake"},
        "corpus": {"revision_after": {"graph": 1, "passages": 1, "config": 1}, "stable": True},
        "cases": cases or [],
    }
    doc.update(fields)
    return doc


def _run(doc: dict[str, Any], path: str = "run.json") -> LoadedRun:
    return read_run(json.dumps(doc), path)


def _pair(base: dict[str, Any], head: dict[str, Any]) -> ChangeReport:
    return compare(_run(base, "base.json"), _run(head, "head.json"))


# --- goldens (B.11 worked examples, and one artifact in taguru's own layout) -------------------


@pytest.mark.parametrize("example", EXAMPLES)
def test_changes_jsonl_matches_the_golden_file(example: str) -> None:
    expected = (GOLDEN / example / "changes.jsonl").read_text(encoding="utf-8")
    assert render_jsonl(_golden_report(example), NOW) == expected


@pytest.mark.parametrize("example", EXAMPLES)
def test_terminal_summary_matches_the_golden_file(example: str) -> None:
    expected = (GOLDEN / example / "stdout.txt").read_text(encoding="utf-8")
    assert render_summary(_golden_report(example), "changes.jsonl") == expected


@pytest.mark.parametrize("example", EXAMPLES)
def test_markdown_matches_the_golden_file(example: str) -> None:
    expected = (GOLDEN / example / "changes.md").read_text(encoding="utf-8")
    assert render_markdown(_golden_report(example)) == expected


def test_seventeen_digit_input_reads_as_taguru_reads_it() -> None:
    # B-4: serde's fast parser reads 0.09090909090909091 one unit off in the last place.
    record = _golden_report("b4").records[0]
    assert record.metrics[0].base == 0.09090909090909093


def test_an_artifact_read_and_written_again_compares_like_its_file() -> None:
    text = (GOLDEN.parent / "spec_7_8_evaluation.json").read_text(encoding="utf-8")
    from_memory = read_run(render(parse_evaluation(text)), "a.json")
    report = compare(from_memory, read_run(text, "b.json"))
    assert report.records == ()
    assert report.counts.unchanged == 2
    assert all(diff.delta == 0.0 for diff in report.metrics)


# --- classification (B.5, B.6) -----------------------------------------------------------------


def _case(case_id: str, **fields: Any) -> dict[str, Any]:
    return {"case_id": case_id, **fields}


def _recall(r: float, m: float, n: float) -> dict[str, float]:
    return {"recall_at_k": r, "mrr": m, "ndcg": n}


def test_one_regressed_metric_outranks_any_number_of_improvements() -> None:
    base = _doc([_case("x", recall=_recall(0.1, 0.1, 0.9), diversity_sources=1)])
    head = _doc([_case("x", recall=_recall(0.9, 0.9, 0.8), diversity_sources=4)])
    (record,) = _pair(base, head).records
    assert record.kind == "regressed"
    assert [(m.metric, m.direction) for m in record.metrics] == [
        ("recall.recall_at_k", "improved"),
        ("recall.mrr", "improved"),
        ("recall.ndcg", "regressed"),
        ("diversity.sources", "improved"),
    ]


@pytest.mark.parametrize(
    ("base", "head", "kind"),
    [
        (0.0, 1e-9, None),  # |delta| == epsilon is unchanged: the test is strict
        (1e-9, 0.0, None),
        (0.0, 1.0000001e-9, "improved"),
        (1.0000001e-9, 0.0, "regressed"),
    ],
)
def test_the_epsilon_is_strict(base: float, head: float, kind: str | None) -> None:
    report = _pair(
        _doc([_case("x", coverage={"labels": {"value": base}})]),
        _doc([_case("x", coverage={"labels": {"value": head}})]),
    )
    assert [record.kind for record in report.records] == ([kind] if kind else [])


def test_every_one_of_the_nine_metrics_is_read_from_its_path() -> None:
    full = _case(
        "x",
        recall=_recall(0.1, 0.2, 0.3),
        coverage={
            "concepts": {"value": 0.4},
            "labels": {"value": 0.5},
            "associations": {"value": 0.6},
        },
        citations={"recall": {"value": 0.7}, "validity": {"value": 0.8}},
        diversity_sources=2.5,
        latency_ms=12,
    )
    (record,) = _pair(_doc([full]), _doc([])).records
    assert record.kind == "removed"
    assert [(m.metric, m.base, m.head, m.delta) for m in record.metrics] == [
        ("recall.recall_at_k", 0.1, None, None),
        ("recall.mrr", 0.2, None, None),
        ("recall.ndcg", 0.3, None, None),
        ("coverage.concepts", 0.4, None, None),
        ("coverage.labels", 0.5, None, None),
        ("coverage.associations", 0.6, None, None),
        ("citations.recall", 0.7, None, None),
        ("citations.locator_validity", 0.8, None, None),
        ("diversity.sources", 2.5, None, None),
    ]


def test_a_case_without_metrics_is_still_added_with_an_empty_list() -> None:
    (record,) = _pair(_doc([]), _doc([_case("new")])).records
    assert (record.kind, record.metrics) == ("added", ())


def test_a_one_sided_metric_warns_and_does_not_decide_the_verdict() -> None:
    base = _doc([_case("x", coverage={"concepts": {"value": 0.5}})])
    head = _doc([_case("x", coverage={"concepts": None, "labels": {"value": 1.0}})])
    report = _pair(base, head)
    assert report.records == ()
    assert report.counts.unchanged == 1
    assert report.warnings == (
        "case 'x': metric 'coverage.concepts' has a value on only one side — excluded from "
        "classification",
        "case 'x': metric 'coverage.labels' has a value on only one side — excluded from "
        "classification",
    )


def test_duplicates_keep_the_last_occurrence_and_count_distinct_ids() -> None:
    base = _doc([_case("z", diversity_sources=1), _case("a"), _case("z", diversity_sources=5)])
    head = _doc(
        [
            _case("z", diversity_sources=5),
            _case("z", diversity_sources=5),
            _case("z", diversity_sources=5),
        ]
    )
    report = _pair(base, head)
    assert (report.counts.cases_base, report.counts.cases_head) == (2, 1)
    assert [(r.kind, r.case_id) for r in report.records] == [("removed", "a")]
    assert report.warnings == (
        "BASE: duplicate case_id 'z' — using the last occurrence",
        "HEAD: duplicate case_id 'z' — using the last occurrence",
        "HEAD: duplicate case_id 'z' — using the last occurrence",
    )


def test_records_follow_case_id_byte_order_whatever_the_input_order() -> None:
    ids = ["é", "b", "B", "a-1", "a"]
    base = _doc([_case(i, diversity_sources=1) for i in ids])
    head = _doc([_case(i, diversity_sources=2) for i in reversed(ids)])
    assert [r.case_id for r in _pair(base, head).records] == ["B", "a", "a-1", "b", "é"]


# --- aggregates (B.7) --------------------------------------------------------------------------


def _with_metrics(definitions: dict[str, Any], metrics: dict[str, Any]) -> dict[str, Any]:
    return _doc([], definitions=definitions, metrics=metrics)


def test_statistic_comes_from_head_even_when_only_base_has_a_value() -> None:
    base = _with_metrics({"m": {"statistic": "ratio"}}, {"m": {"value": 0.5, "n": 2}})
    head = _with_metrics({"m": {"statistic": "count"}}, {"m": {"value": None, "n": 0}})
    (diff,) = _pair(base, head).metrics
    assert (diff.statistic, diff.base, diff.head, diff.delta) == ("count", 0.5, None, None)


def test_an_empty_definition_is_present_with_an_empty_statistic() -> None:
    base = _with_metrics({"m": {"statistic": "count"}}, {"m": {"value": 2, "n": 1}})
    head = _with_metrics({"m": {}}, {"m": {"value": 3, "n": 1}})
    report = _pair(base, head)
    (diff,) = report.metrics
    assert (diff.statistic, diff.base, diff.head) == ("", 2.0, None)
    assert report.warnings == ("HEAD: metric 'm': definitions names unknown statistic ''",)


def test_the_shape_comes_from_the_definition_never_from_the_value() -> None:
    ratio_value = {"value": 0.09, "n": 31, "numerator": 3}
    base = _with_metrics({"m": {"statistic": "distribution"}}, {"m": ratio_value})
    report = _pair(base, base)
    assert report.metrics == ()  # read as a Distribution: mean is absent, so no value
    assert report.warnings == ()


@pytest.mark.parametrize(
    ("statistic", "raw", "problem"),
    [
        ("ratio", None, "invalid type: null, expected struct Ratio"),
        ("ratio", "0.5", 'invalid type: string "0.5", expected struct Ratio'),
        ("distribution", {"n": -1, "mean": 1.0}, "invalid value: integer `-1`, expected u64"),
        ("distribution", {"n": 1.5}, "invalid type: floating point `1.5`, expected u64"),
        ("count", {"value": True}, "invalid type: boolean `true`, expected f64"),
        (
            "ratio",
            {"value": 0.5, "n": 2, "numerator": -1},
            "invalid value: integer `-1`, expected u64",
        ),
    ],
)
def test_a_bad_metric_value_is_a_warning_not_an_error(
    statistic: str, raw: Any, problem: str
) -> None:
    good = _with_metrics({"m": {"statistic": statistic}}, {"m": {"n": 0}})
    bad = _with_metrics({"m": {"statistic": statistic}}, {"m": raw})
    report = _pair(good, bad)
    assert report.warnings == (f"HEAD: metric 'm': {problem}",)
    assert report.metrics == ()


def test_every_metric_name_counts_and_the_delta_has_no_epsilon() -> None:
    base = _with_metrics(
        {"a": {"statistic": "count"}, "z": {"statistic": "count"}}, {"z": {"value": 1.0, "n": 1}}
    )
    head = _with_metrics(
        {"a": {"statistic": "count"}, "z": {"statistic": "count"}},
        {"a": {"value": 7, "n": 1}, "z": {"value": 1.0 + 2**-52, "n": 1}},
    )
    report = _pair(base, head)
    assert [(d.metric, d.base, d.head, d.delta) for d in report.metrics] == [
        ("a", None, 7.0, None),
        ("z", 1.0, 1.0 + 2**-52, 2**-52),
    ]


# --- mismatch warnings (B.8) -------------------------------------------------------------------


def test_thresholds_identity_null_differs_from_an_empty_sha() -> None:
    report = _pair(_doc(thresholds={"passed": True}), _doc(thresholds=None))
    assert report.warnings == ("thresholds file identity differs: BASE  vs HEAD none",)


def test_a_missing_corpus_stable_is_unstable() -> None:
    base = _doc()
    del base["corpus"]["stable"]
    report = _pair(base, _doc())
    assert report.warnings == ("base.json: corpus.stable is false — a write landed mid-run",)


def test_budgets_are_compared_as_a_triple_and_null_means_absent() -> None:
    budget = {"max_items": 40, "max_bytes": 65536, "max_tokens": 4000}
    same = _pair(_doc(inputs={"budget": budget}), _doc(inputs={"budget": budget}))
    assert same.warnings == ()
    absent = _pair(_doc(inputs={"context": "sake", "budget": None}), _doc())
    assert absent.warnings == ()
    other = _pair(
        _doc(inputs={"context": "sake", "budget": budget}),
        _doc(inputs={"context": "sake", "budget": {**budget, "max_items": 3}}),
    )
    assert other.warnings == (
        "budget differs: BASE max_items=40 max_bytes=65536 max_tokens=4000 vs HEAD "
        "max_items=3 max_bytes=65536 max_tokens=4000 — not an equal-budget comparison",
    )


# --- reading (B.2) -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"taguru_evaluation":2}', "taguru_evaluation must be within 1..=1, got 2"),
        ("{}", "taguru_evaluation must be within 1..=1, got 0"),
        (
            '{"taguru_evaluation":1.0}',
            "malformed evaluation.json: invalid type: floating point `1.0`, expected u64",
        ),
        (
            '{"taguru_evaluation":true}',
            "malformed evaluation.json: invalid type: boolean `true`, expected u64",
        ),
        (
            '{"taguru_evaluation":-1}',
            "malformed evaluation.json: invalid value: integer `-1`, expected u64",
        ),
        (
            '{"taguru_evaluation":1,"cases":null}',
            "malformed evaluation.json: invalid type: null, expected a sequence",
        ),
        (
            '{"taguru_evaluation":1,"inputs":null}',
            "malformed evaluation.json: invalid type: null, expected struct InputsView",
        ),
        (
            '{"taguru_evaluation":1,"inputs":{"budget":{"max_items":1}}}',
            "malformed evaluation.json: missing field `max_bytes`",
        ),
        (
            '{"taguru_evaluation":1,"cases":[{"citations":{"recall":null}}]}',
            "malformed evaluation.json: invalid type: null, expected struct CitationScoreView",
        ),
        (
            '{"taguru_evaluation":1,"corpus":{"stable":1}}',
            "malformed evaluation.json: invalid type: integer `1`, expected a boolean",
        ),
        (
            '{"taguru_evaluation":1,"corpus":{"stable":true,"stable":false}}',
            "malformed evaluation.json: duplicate field `stable`",
        ),
        (
            '{"taguru_evaluation":1,"definitions":{"m":null}}',
            "malformed evaluation.json: invalid type: null, expected struct DefinitionView",
        ),
        (
            '{"taguru_evaluation":1,"cases":[{"diversity_sources":NaN}]}',
            "malformed evaluation.json: expected value at line 1 column 54",
        ),
        (
            '{"taguru_evaluation":1,"cases":[{"diversity_sources":1e400}]}',
            "malformed evaluation.json: number out of range at line 1 column 58",
        ),
        (
            '\ufeff{"taguru_evaluation":1}',
            "malformed evaluation.json: expected value at line 1 column 1",
        ),
        (
            '{"taguru_evaluation":1} x',
            "malformed evaluation.json: trailing characters at line 1 column 25",
        ),
        ("", "malformed evaluation.json: EOF while parsing a value at line 1 column 0"),
        (
            '{"taguru_evaluation":1,"cases":[{"case_id":"\\ud800"}]}',
            "malformed evaluation.json: lone leading surrogate in hex escape",
        ),
        (
            '{"taguru_evaluation":1,"x":' + "[" * 127 + "]" * 127 + "}",
            "malformed evaluation.json: recursion limit exceeded at line 1 column 154",
        ),
        (
            '{"taguru_evaluation":1,"x":' + "[" * 5000 + "]" * 5000 + "}",
            "malformed evaluation.json: recursion limit exceeded at line 1 column 154",
        ),
    ],
)
def test_an_unreadable_document_names_the_reason(text: str, reason: str) -> None:
    with pytest.raises(RunReadError) as caught:
        read_run(text, "in.json")
    assert str(caught.value) == f"in.json: {reason}"


def test_the_reader_is_tolerant_where_the_spec_says_so() -> None:
    text = (
        '{"taguru_evaluation":1,"future":{"x":[1,2]},"thresholds":null,'
        '"inputs":{"budget":null},'
        '"metrics":{"m":1,"m":"anything"},"definitions":{"d":{},"d":{"statistic":"count"}},'
        '"cases":[{"case_id":"a","recall":null,"coverage":{"labels":null},'
        '"citations":null,"diversity_sources":2.5,"query":7}]}'
    )
    view = read_run(text, "in.json").view
    assert view.metrics == {"m": "anything"}  # a name-keyed map keeps the last value
    assert view.definitions["d"].statistic == "count"
    assert view.cases[0].diversity_sources == 2.5
    assert view.corpus.stable is False
    assert view.inputs.budget is None


def test_nesting_up_to_serde_limit_and_negative_zero_integers_are_read() -> None:
    view = read_run('{"taguru_evaluation":1,"x":' + "[" * 126 + "]" * 126 + "}", "in.json").view
    assert view.taguru_evaluation == 1
    case = read_run('{"taguru_evaluation":1,"cases":[{"diversity_sources":-0}]}', "in.json")
    assert str(case.view.cases[0].diversity_sources) == "-0.0"


def test_serde_accepts_a_positional_array_for_a_fixed_shape_object() -> None:
    assert read_run("[1]", "in.json").view.taguru_evaluation == 1
    view = read_run('{"taguru_evaluation":1,"corpus":[[3,5,1],true]}', "in.json").view
    assert (view.corpus.revision_after.graph, view.corpus.stable) == (3, True)


# --- property: a run compared with itself --------------------------------------------------------

# Beyond ~1e300, taguru's own parser may overflow the last step of N.2; not what is tested here.
_finite = st.floats(min_value=-1e300, max_value=1e300)
_maybe = st.one_of(st.none(), _finite)
_score = st.one_of(st.none(), st.fixed_dictionaries({}, optional={"value": _maybe}))
_case_doc = st.fixed_dictionaries(
    {"case_id": st.text(max_size=3)},
    optional={
        "recall": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {}, optional={"recall_at_k": _maybe, "mrr": _maybe, "ndcg": _maybe}
            ),
        ),
        "coverage": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {}, optional={"concepts": _score, "labels": _score, "associations": _score}
            ),
        ),
        "citations": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {},
                optional={
                    "recall": st.fixed_dictionaries({"value": _maybe}),
                    "validity": st.fixed_dictionaries({"value": _maybe}),
                },
            ),
        ),
        "diversity_sources": st.one_of(st.none(), st.integers(0, 50), _finite),
    },
)
_metric_value = st.one_of(
    st.fixed_dictionaries({"n": st.integers(0, 9)}, optional={"mean": _maybe, "value": _maybe}),
    st.none(),
    st.text(max_size=2),
    _finite,
)
_artifact = st.fixed_dictionaries(
    {
        "taguru_evaluation": st.just(1),
        "cases": st.lists(_case_doc, max_size=6),
        "definitions": st.dictionaries(
            st.sampled_from(["a", "b", "c"]),
            st.fixed_dictionaries(
                {},
                optional={
                    "statistic": st.sampled_from(
                        ["distribution", "ratio", "count", "", "histogram"]
                    )
                },
            ),
        ),
        "metrics": st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), _metric_value),
    },
    optional={"corpus": st.fixed_dictionaries({"stable": st.booleans()})},
)


@settings(max_examples=150, deadline=None)
@given(_artifact)
def test_a_run_compared_with_itself_has_nothing_improved_or_regressed(doc: dict[str, Any]) -> None:
    text = dumps_compact(doc)  # taguru's float text, read back through taguru's parser
    report = compare(read_run(text, "a.json"), read_run(text, "a.json"))
    assert all(record.kind not in ("improved", "regressed") for record in report.records)
    assert report.records == ()
    assert report.counts.unchanged == report.counts.cases_base == report.counts.cases_head
    assert all(diff.delta in (0.0, None) for diff in report.metrics)
    assert not any("only one side" in warning for warning in report.warnings)


# --- review: metric values are decoded from a parsed JSON value (serde_json::from_value) ------


def _head_metric(statistic: str, raw_json: str) -> ChangeReport:
    """BASE without metrics, HEAD with one metric ``m`` whose value is ``raw_json`` verbatim."""
    base = _run(_with_metrics({"m": {"statistic": statistic}}, {}), "base.json")
    head_doc = json.dumps(_with_metrics({"m": {"statistic": statistic}}, {"m": "@"}))
    return compare(base, read_run(head_doc.replace('"@"', raw_json), "head.json"))


def test_a_repeated_key_inside_a_metric_value_keeps_the_last_one() -> None:
    # The reference reads `metrics` values into a serde_json Value first (duplicates: last one
    # wins) and decodes the shape from that Value, so a repeat is never "duplicate field".
    report = _head_metric("distribution", '{"n":1,"mean":0.25,"n":2,"mean":0.5}')
    assert report.warnings == ()
    assert [(d.metric, d.head) for d in report.metrics] == [("m", 0.5)]


def test_a_too_long_positional_metric_value_is_an_invalid_length() -> None:
    report = _head_metric("ratio", "[0.5,2,1,9]")
    assert report.warnings == (
        "HEAD: metric 'm': invalid length 4, expected fewer elements in array",
    )
    assert _head_metric("ratio", "[0.5,2]").metrics[0].head == 0.5


@pytest.mark.parametrize(
    ("statistic", "raw_json", "problem"),
    [
        # A Value's map is ordered by key bytes: `max` is looked at before `n`,
        ("distribution", '{"n":1.5,"max":"x"}', 'invalid type: string "x", expected f64'),
        # and `n` before `value`.
        ("ratio", '{"value":"x","n":-1}', "invalid value: integer `-1`, expected u64"),
    ],
)
def test_the_first_bad_field_of_a_metric_value_is_the_first_in_key_byte_order(
    statistic: str, raw_json: str, problem: str
) -> None:
    assert _head_metric(statistic, raw_json).warnings == (f"HEAD: metric 'm': {problem}",)


@pytest.mark.parametrize("raw_json", ['{"mean":"\\ud800"}', '{"future":["\\udc00"]}'])
def test_a_lone_surrogate_anywhere_in_a_metric_value_is_malformed(raw_json: str) -> None:
    # Every string of a Value is read, so serde refuses the whole document.
    head = json.dumps(_with_metrics({"m": {"statistic": "ratio"}}, {"m": "@"}))
    with pytest.raises(RunReadError, match=r"lone leading surrogate in hex escape$"):
        read_run(head.replace('"@"', raw_json), "head.json")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"cases":[{"citations":{"recall":null}}]}', "expected struct CitationScoreView"),
        ('{"cases":[{"coverage":{"labels":7}}]}', "expected struct CoverageCountsView"),
        ('{"corpus":{"revision_after":null}}', "expected struct ContextRevision"),
        ('{"thresholds":7}', "expected struct ThresholdIdentityView"),
        ('{"inputs":{"budget":"x"}}', "expected struct BudgetLimits"),
        ("7", "expected struct EvaluationView"),
    ],
)
def test_type_errors_name_the_references_structs(text: str, reason: str) -> None:
    with pytest.raises(RunReadError) as caught:
        read_run(text, "in.json")
    assert str(caught.value).endswith(reason)


def test_a_short_positional_budget_is_an_invalid_length() -> None:
    # BudgetLimits has no defaults: a short array is serde's invalid length, not a missing field.
    with pytest.raises(RunReadError) as caught:
        read_run('{"taguru_evaluation":1,"inputs":{"budget":[1,2]}}', "in.json")
    assert str(caught.value) == (
        "in.json: malformed evaluation.json: "
        "invalid length 2, expected struct BudgetLimits with 3 elements"
    )


# --- the Markdown's directions and --fail-on-regression ------------------------------------------


def _with_means(**means: float) -> dict[str, Any]:
    definitions = {name.replace("_", ".", 1): {"statistic": "distribution"} for name in means}
    metrics = {name.replace("_", ".", 1): {"n": 1, "mean": value} for name, value in means.items()}
    return _doc(definitions=definitions, metrics=metrics)


def _aggregate_rows(report: ChangeReport) -> dict[str, str]:
    lines = render_markdown(report).splitlines()
    rows = [line for line in lines if line.startswith("| ") and "." in line]
    return {line.split(" | ")[0][2:]: line for line in rows}


def test_aggregate_rows_show_the_direction_and_never_minus_zero() -> None:
    base = _with_means(recall_ndcg=1.0, latency_query_ms=10.0, budget_items_used=3.0,
                       recall_mrr=0.5, coverage_labels=-0.0)  # fmt: skip
    head = _with_means(recall_ndcg=-0.0, latency_query_ms=7.5, budget_items_used=4.0,
                       recall_mrr=0.5 - 1e-12, coverage_labels=0.0004)  # fmt: skip
    rows = _aggregate_rows(_pair(base, head))

    assert rows["recall.ndcg"] == (
        "| recall.ndcg | distribution | 1.000 | 0.000 | -1.000 | ↓ worse |"
    )
    assert rows["latency.query_ms"].endswith("| 10.000 | 7.500 | -2.500 | ↓ better |")
    assert rows["budget.items_used"].endswith("| 3.000 | 4.000 | +1.000 | ↑ |")
    assert rows["recall.mrr"].endswith("| 0.500 | 0.500 | +0.000 | = |")
    assert rows["coverage.labels"].endswith("| 0.000 | 0.000 | +4.0e-04 | ↑ better |")


def test_regressions_are_regressed_cases_and_worse_judged_aggregates() -> None:
    base = _with_means(recall_ndcg=1.0, latency_query_ms=10.0, budget_items_used=3.0)
    head = _with_means(recall_ndcg=0.5, latency_query_ms=99.0, budget_items_used=1.0)
    base["cases"] = [{"case_id": "c", "recall": {"recall_at_k": 1.0, "mrr": 1.0, "ndcg": 1.0}}]
    head["cases"] = [{"case_id": "c", "recall": {"recall_at_k": 1.0, "mrr": 0.5, "ndcg": 1.0}}]

    found = regressions(_pair(base, head))

    assert found.cases == ("c",)
    assert found.aggregates == ("recall.ndcg",)  # latency is noise; budget use has no better
    assert not regressions(_pair(base, base))
