"""The thresholds gate: loading, validation and evaluation (thresholds-and-compare.md Part A)."""

import contextlib
import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest
from gate_examples import (
    A2_CASES,
    GOLDEN,
    METRIC_NAMES,
    evaluation,
    golden_bytes,
    load_golden,
    run_a1,
    run_a2,
    run_a4,
    run_a5,
    run_a6,
)
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_taguru.artifact.case import CaseBlock
from pytest_taguru.artifact.evaluation import Distribution, Ratio
from pytest_taguru.core.jsontext import dumps_compact, dumps_pretty
from pytest_taguru.core.serde_numbers import parse_serde_float
from pytest_taguru.errors import UsageError
from pytest_taguru.gate.file import Bound, ThresholdsParseError, parse_thresholds
from pytest_taguru.gate.thresholds import (
    Thresholds,
    bound_problem,
    case_violations,
    check_bound,
    check_thresholds,
    evaluate_gate,
    load_thresholds,
)
from pytest_taguru.score.registry import CASE_SCOPED_METRICS

STAMP = '"taguru_evaluate_thresholds":1'


def check(text: str | bytes, case_ids: tuple[str, ...] = ("c1",)) -> Thresholds:
    raw = text.encode() if isinstance(text, str) else text
    return check_thresholds(raw, path="t.json", metric_names=METRIC_NAMES, case_ids=case_ids)


def refusal(text: str | bytes, case_ids: tuple[str, ...] = ("c1",)) -> str:
    with pytest.raises(UsageError) as caught:
        check(text, case_ids)
    assert caught.value.exit_code == 2
    return caught.value.message


def block_text(thresholds: Thresholds, run: Any) -> str:
    return dumps_compact(evaluate_gate(thresholds, run).to_block())


# --- identity --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "digest"),
    [
        ("a1.json", "f5e73ba8d2677edadd7c0ee8f4e0bb713eafe86fcf0c8b3ca6fc65204adfb26d"),
        ("a2.json", "22c4e4cee3a03c09364692480db8664fdebf41617a294312fd8480c62ac9a774"),
        ("a4.json", "5626119286ab4f4aac9aeeeddeef1821fdef3ef403142436b96358eb94cf0740"),
        ("a5.json", "aa044dac02d250527309ba10a93fcf230433e96a41775ecfc00ed12ad605741c"),
    ],
)
def test_sha256_is_over_the_raw_bytes(name: str, digest: str) -> None:
    assert load_golden(name, A2_CASES).sha256 == digest


def test_sha256_changes_with_whitespace_and_trailing_newline() -> None:
    raw = golden_bytes("a5.json")
    assert check(raw + b"\n").sha256 == hashlib.sha256(raw + b"\n").hexdigest()
    assert check(raw + b"\n").sha256 != check(raw).sha256
    assert check(raw.replace(b":", b": ")).sha256 != check(raw).sha256


def test_unreadable_file_names_path_and_os_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "t.json")
    with pytest.raises(UsageError) as caught:
        load_thresholds(missing, metric_names=METRIC_NAMES, case_ids=())
    assert caught.value.message == (
        f"cannot read {missing}: No such file or directory (os error 2)"
    )


def test_load_reads_the_file(tmp_path: Path) -> None:
    path = tmp_path / "a5.json"
    path.write_bytes(golden_bytes("a5.json"))
    loaded = load_thresholds(str(path), metric_names=METRIC_NAMES, case_ids=())
    assert loaded.file.aggregate == {"recall.recall_at_k": Bound(max=0.4)}


# --- worked examples (A.8) -------------------------------------------------------------------


def test_a1_aggregate_bounds_and_the_n0_rule() -> None:
    assert block_text(load_golden("a1.json"), run_a1()) == (
        '{"sha256":"f5e73ba8d2677edadd7c0ee8f4e0bb713eafe86fcf0c8b3ca6fc65204adfb26d",'
        '"passed":false,"allow_unstable_corpus":false,"violations":['
        '{"scope":"aggregate","metric":"citations.resolved","bound":"max","threshold":0.5,'
        '"actual":0.75,"reason":"0.750000 > max 0.500000"},'
        '{"scope":"aggregate","metric":"coverage.labels","actual":null,'
        '"reason":"no samples for this metric (n=0)"},'
        '{"scope":"aggregate","metric":"latency.passage_ms","bound":"max","threshold":10.0,'
        '"actual":15.0,"reason":"15.000000 > max 10.000000"},'
        '{"scope":"aggregate","metric":"rerank.ran","actual":null,'
        '"reason":"no samples for this metric (n=0)"}]}'
    )


A2_BLOCK = (
    '{"sha256":"22c4e4cee3a03c09364692480db8664fdebf41617a294312fd8480c62ac9a774",'
    '"passed":false,"allow_unstable_corpus":false,"violations":['
    '{"scope":"case","case_id":"easy","metric":"recall.recall_at_k","bound":"max",'
    '"threshold":0.95,"actual":1.0,"reason":"1.000000 > max 0.950000"},'
    '{"scope":"case","case_id":"hard-case","metric":"latency.passage_ms","bound":"max",'
    '"threshold":100.0,"actual":250.0,"reason":"250.000000 > max 100.000000"},'
    '{"scope":"case","case_id":"cite-only","metric":"citations.recall","bound":"min",'
    '"threshold":1.0,"actual":0.5,"reason":"0.500000 < min 1.000000"},'
    '{"scope":"corpus","metric":"corpus.stable","actual":null,"reason":"the context\'s revision '
    "changed during this run (corpus.revision_before != corpus.revision_after) and "
    'allow_unstable_corpus is false"}],"skipped":['
    "\"case 'easy': 'citations.recall' not applicable — the case did not declare the matching "
    'expectation, or its lane did not complete",'
    "\"case 'hard-case': 'citations.recall' not applicable — the case did not declare the "
    'matching expectation, or its lane did not complete",'
    "\"case 'cite-only': 'recall.recall_at_k' not applicable — the case did not declare the "
    'matching expectation, or its lane did not complete"]}'
)


def test_a2_default_override_skips_and_unstable_corpus() -> None:
    assert block_text(load_golden("a2.json", A2_CASES), run_a2()) == A2_BLOCK


def test_a2_block_is_written_pretty_in_artifact_layout() -> None:
    report = evaluate_gate(load_golden("a2.json", A2_CASES), run_a2())
    expected = (GOLDEN / "a2_block.pretty.json").read_text(encoding="utf-8")
    assert dumps_pretty(report.to_block()) == expected


def test_a3_every_load_problem_reported_together() -> None:
    with pytest.raises(UsageError) as caught:
        check_thresholds(
            golden_bytes("t3.json"), path="t3.json", metric_names=METRIC_NAMES, case_ids=("c1",)
        )
    assert caught.value.message == (
        "t3.json: aggregate: unknown metric name 'recall.recal_at_k'; cases.default: unknown "
        "(or not case-scoped) metric name 'latency.query_ms'; cases.overrides: unknown case_id "
        "'ghost'; cases.overrides.ghost: unknown (or not case-scoped) metric name "
        "'coverage.concept'; aggregate: 'citations.recall': min 0.9 must be <= max 0.5; "
        "cases.default: 'recall.mrr': needs at least one of min/max; cases.overrides.c1: "
        "'citations.recall': min 2 must be <= max 1"
    )


def test_a3_stamp_is_reported_alone() -> None:
    text = '{"taguru_evaluate_thresholds":2,"aggregate":{"nope":{"min":1}}}'
    assert refusal(text) == "t.json: taguru_evaluate_thresholds must be 1, got 2"


def test_a3_null_min_is_absent() -> None:
    text = '{"taguru_evaluate_thresholds":1,"aggregate":{"recall.mrr":{"min":null}}}'
    assert refusal(text) == "t.json: aggregate: 'recall.mrr': needs at least one of min/max"


def test_a4_pass_with_skips_and_allowed_unstable_corpus() -> None:
    assert block_text(load_golden("a4.json"), run_a4()) == (
        '{"sha256":"5626119286ab4f4aac9aeeeddeef1821fdef3ef403142436b96358eb94cf0740",'
        '"passed":true,"allow_unstable_corpus":true,"skipped":['
        "\"case 'c1': 'coverage.labels' not applicable — the case did not declare the matching "
        'expectation, or its lane did not complete",'
        "\"case 'c2': 'coverage.labels' not applicable — the case did not declare the matching "
        'expectation, or its lane did not complete",'
        "\"case 'c2': 'diversity.sources' not applicable — the case did not declare the "
        'matching expectation, or its lane did not complete"]}'
    )


def test_a5_the_sorted_sum_mean_decides() -> None:
    assert block_text(load_golden("a5.json"), run_a5()) == (
        '{"sha256":"aa044dac02d250527309ba10a93fcf230433e96a41775ecfc00ed12ad605741c",'
        '"passed":false,"allow_unstable_corpus":false,"violations":['
        '{"scope":"aggregate","metric":"recall.recall_at_k","bound":"max","threshold":0.4,'
        '"actual":0.4000000000000001,"reason":"0.400000 > max 0.400000"}]}'
    )
    as_min = check("{" + STAMP + ',"aggregate":{"recall.recall_at_k":{"min":0.4}}}')
    assert evaluate_gate(as_min, run_a5()).passed


def test_a6_every_violation_is_in_the_block() -> None:
    report = evaluate_gate(load_golden("a6.json"), run_a6())
    violations = report.violations or []
    assert len(violations) == 13
    assert [v.scope for v in violations] == ["aggregate"] + ["case"] * 12


# --- parsing strictness (A.2) ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "\ufeff{" + STAMP + "}",
        "{" + STAMP + "} x",
        "{" + STAMP + "}{}",
        "{}",
        "[]",
        "null",
        "1",
        '{"taguru_evaluate_thresholds":1.0}',
        '{"taguru_evaluate_thresholds":true}',
        '{"taguru_evaluate_thresholds":"1"}',
        '{"taguru_evaluate_thresholds":-1}',
        '{"taguru_evaluate_thresholds":-0}',
        '{"taguru_evaluate_thresholds":18446744073709551616}',
        '{"taguru_evaluate_thresholds":null}',
        "{" + STAMP + ',"aggregates":{}}',
        "{" + STAMP + ',"aggregate":null}',
        "{" + STAMP + ',"aggregate":[]}',
        "{" + STAMP + ',"aggregate":{"recall.mrr":null}}',
        "{" + STAMP + ',"aggregate":{"recall.mrr":{"min":NaN}}}',
        "{" + STAMP + ',"aggregate":{"recall.mrr":{"min":Infinity}}}',
        "{" + STAMP + ',"aggregate":{"recall.mrr":{"min":-Infinity}}}',
        "{" + STAMP + ',"aggregate":{"recall.mrr":{"min":1e400}}}',
        "{" + STAMP + ',"aggregate":{"recall.mrr":{"min":"0.5"}}}',
        "{" + STAMP + ',"aggregate":{"recall.mrr":{"min":true}}}',
        "{" + STAMP + ',"aggregate":{"recall.mrr":{"min":0.5,"min":0.6}}}',
        "{" + STAMP + ',"aggregate":{"recall.mrr":{"min":0.5,"mx":0.6}}}',
        "{" + STAMP + ',"aggregate":{"recall.mrr":[0.1,0.2,0.3]}}',
        "{" + STAMP + ',"cases":null}',
        "{" + STAMP + ',"cases":{"default":null}}',
        "{" + STAMP + ',"cases":{"overrides":null}}',
        "{" + STAMP + ',"cases":{"overrides":{"c1":null}}}',
        "{" + STAMP + ',"cases":{"overrides":{"c1":{"recall.mrr":null}}}}',
        "{" + STAMP + ',"cases":{"default":{},"default":{}}}',
        "{" + STAMP + ',"cases":{"defaults":{}}}',
        "{" + STAMP + ',"cases":{"overrides":{"c1":{"recall.mrr":{"min":1,"x":1}}}}}',
        "{" + STAMP + ',"allow_unstable_corpus":null}',
        "{" + STAMP + ',"allow_unstable_corpus":"true"}',
        "{" + STAMP + ',"allow_unstable_corpus":1}',
        "{" + STAMP + "," + STAMP + "}",
        "{" + STAMP + ',"aggregate":{"\\ud800":{"min":1}}}',
    ],
)
def test_parse_refusals_exit_2_with_path_prefix(text: str) -> None:
    assert refusal(text).startswith("t.json: ")


@pytest.mark.parametrize("depth", [128, 5000])
def test_nesting_beyond_serde_limit_is_a_parse_error(depth: int) -> None:
    assert refusal("[" * depth + "]" * depth) == (
        "t.json: recursion limit exceeded at line 1 column 128"
    )


def test_nesting_within_the_limit_reaches_the_type_check() -> None:
    assert "invalid type: sequence" in refusal("[" * 127 + "]" * 127)


def test_invalid_utf8_is_a_parse_error() -> None:
    assert refusal(b'{"taguru_evaluate_thresholds":1,"aggregate":{"\xff":{"min":1}}}').startswith(
        "t.json: "
    )


def test_unknown_key_wins_over_a_bad_stamp() -> None:
    message = refusal('{"taguru_evaluate_thresholds":7,"aggregates":{}}')
    assert "unknown field `aggregates`" in message
    assert "must be 1" not in message


def test_parse_error_names_the_field_and_the_expected_keys() -> None:
    assert refusal('{"taguru_evaluate_thresholds":1,"aggregates":{}}') == (
        "t.json: unknown field `aggregates`, expected one of `taguru_evaluate_thresholds`, "
        "`aggregate`, `cases`, `allow_unstable_corpus` at the top level"
    )
    assert refusal('{"taguru_evaluate_thresholds":1,"cases":{"default":null}}') == (
        "t.json: invalid type: null, expected an object of metric name → bound at cases.default"
    )


def test_repeated_name_in_a_map_is_last_one_wins() -> None:
    loaded = check(
        "{" + STAMP + ',"aggregate":{"recall.mrr":{"min":2,"max":1},"recall.mrr":{"min":0.5}}}'
    )
    assert loaded.file.aggregate == {"recall.mrr": Bound(min=0.5)}


def test_arrays_read_positionally_like_serde() -> None:
    assert check("[1]").file.taguru_evaluate_thresholds == 1
    loaded = check('[1, {"recall.mrr": [0.5, 0.9]}, [{"recall.mrr": [null, 1]}], true]')
    assert loaded.file.aggregate == {"recall.mrr": Bound(min=0.5, max=0.9)}
    assert loaded.file.cases.default == {"recall.mrr": Bound(max=1.0)}
    assert loaded.file.allow_unstable_corpus


def test_numbers_become_serde_f64() -> None:
    loaded = check(
        "{" + STAMP + ',"aggregate":{"recall.mrr":{"min":-0,"max":0.09090909090909091},'
        '"recall.ndcg":{"max":100}}}'
    )
    mrr = loaded.file.aggregate["recall.mrr"]
    assert mrr.min == 0.0 and math.copysign(1.0, mrr.min) < 0
    assert mrr.max == parse_serde_float("0.09090909090909091")
    assert isinstance(loaded.file.aggregate["recall.ndcg"].max, float)


def test_large_stamp_is_reported_verbatim() -> None:
    text = '{"taguru_evaluate_thresholds":18446744073709551615}'
    assert refusal(text) == (
        "t.json: taguru_evaluate_thresholds must be 1, got 18446744073709551615"
    )


def test_defaults_when_keys_are_absent() -> None:
    file = check("{" + STAMP + "}").file
    assert file.aggregate == {} and file.cases.default == {} and file.cases.overrides == {}
    assert file.allow_unstable_corpus is False


# --- semantic checks (A.3.1–A.3.3) -----------------------------------------------------------


def test_corpus_stable_is_not_a_metric_name() -> None:
    text = "{" + STAMP + ',"aggregate":{"corpus.stable":{"min":1}}}'
    assert refusal(text) == "t.json: aggregate: unknown metric name 'corpus.stable'"


@pytest.mark.parametrize("name", sorted(METRIC_NAMES))
def test_every_definition_name_is_a_legal_aggregate(name: str) -> None:
    check("{" + STAMP + ',"aggregate":{' + json.dumps(name) + ':{"min":0}}}')


@pytest.mark.parametrize("name", CASE_SCOPED_METRICS)
def test_the_ten_case_scoped_names(name: str) -> None:
    check(
        "{" + STAMP + ',"cases":{"default":{' + json.dumps(name) + ':{"min":0}},'
        '"overrides":{"c1":{' + json.dumps(name) + ':{"max":1}}}}}'
    )


@pytest.mark.parametrize(
    "name",
    [
        "latency.resolve_ms",
        "latency.query_ms",
        "latency.citation_ms",
        "rerank.ran",
        "budget.items_used",
        "latency.evidence_ms",
        "citations.resolved",
    ],
)
def test_aggregate_only_names_are_refused_per_case(name: str) -> None:
    text = "{" + STAMP + ',"cases":{"default":{' + json.dumps(name) + ':{"min":0}}}}'
    assert refusal(text) == (
        f"t.json: cases.default: unknown (or not case-scoped) metric name '{name}'"
    )


def test_names_are_walked_in_byte_order_and_override_ids_checked() -> None:
    text = (
        "{" + STAMP + ',"aggregate":{"zz":{"min":0},"aa":{"min":0}},'
        '"cases":{"overrides":{"ö":{},"b":{"x":{"min":0}}}}}'
    )
    assert refusal(text, case_ids=("b",)) == (
        "t.json: aggregate: unknown metric name 'aa'; aggregate: unknown metric name 'zz'; "
        "cases.overrides.b: unknown (or not case-scoped) metric name 'x'; "
        "cases.overrides: unknown case_id 'ö'"
    )


@pytest.mark.parametrize(
    ("bound", "problem"),
    [
        (Bound(), "needs at least one of min/max"),
        (Bound(min=math.inf, max=math.nan), "min inf must be finite"),
        (Bound(min=0.0, max=-math.inf), "max -inf must be finite"),
        (Bound(min=1e21, max=1e-7), "min 1000000000000000000000 must be <= max 0.0000001"),
        (Bound(min=0.5, max=0.5), None),
        (Bound(min=0.0, max=-0.0), None),
        (Bound(max=-3.0), None),
    ],
)
def test_bound_validity(bound: Bound, problem: str | None) -> None:
    assert bound_problem(bound) == problem


# --- evaluation (A.5) ------------------------------------------------------------------------


def test_equality_passes_and_min_is_checked_first() -> None:
    assert check_bound(0.5, Bound(min=0.5, max=0.5), scope="aggregate", metric="m") is None
    inverted = check_bound(3.0, Bound(min=5.0, max=1.0), scope="aggregate", metric="m")
    assert inverted is not None and inverted.bound == "min"


def test_aggregate_scalar_comes_from_the_statistic() -> None:
    run = evaluation(
        metrics={
            "recall.mrr": Distribution(
                n=2, min=0.0, p50=0.0, p90=1.0, p99=1.0, max=1.0, mean=0.5, sum=1.0
            ),
            "citations.resolved": Ratio(value=0.25, n=4, numerator=1),
        }
    )
    loaded = check(
        "{" + STAMP + ',"aggregate":{"recall.mrr":{"min":0.5},"citations.resolved":{"max":0.25}}}'
    )
    assert evaluate_gate(loaded, run).passed


def block(**fields: Any) -> CaseBlock:
    return CaseBlock.model_validate(
        {"case_id": "c1", "query": "q", "passage": {"outcome": "searched", "latency_ms": 12}}
        | fields
    )


def test_override_replaces_per_metric_and_can_add_a_metric() -> None:
    loaded = check(
        "{" + STAMP + ',"cases":{"default":{"latency.passage_ms":{"min":1,"max":5}},'
        '"overrides":{"c1":{"latency.passage_ms":{"max":100},"diversity.sources":{"min":2}}}}}'
    )
    found = case_violations(loaded, block(diversity_sources=1))
    assert [(item.violation.metric, item.origin) for item in found] == [
        ("diversity.sources", "override")
    ]
    other = CaseBlock.model_validate(
        {"case_id": "c2", "query": "q", "passage": {"outcome": "searched", "latency_ms": 12}}
    )
    assert [item.origin for item in case_violations(loaded, other)] == ["default"]


def test_empty_file_fails_an_unstable_run_unless_allowed() -> None:
    report = evaluate_gate(check("{" + STAMP + "}"), evaluation(stable=False))
    assert not report.passed
    assert [v.metric for v in report.violations or []] == ["corpus.stable"]
    allowed = check("{" + STAMP + ',"allow_unstable_corpus":true}')
    assert evaluate_gate(allowed, evaluation(stable=False)).to_block() == {
        "sha256": allowed.sha256,
        "passed": True,
        "allow_unstable_corpus": True,
    }


def test_missing_metric_is_a_no_samples_violation() -> None:
    run = evaluation()
    run = run.model_copy(update={"metrics": {}})
    report = evaluate_gate(check("{" + STAMP + ',"aggregate":{"recall.mrr":{"min":0}}}'), run)
    assert (report.violations or [])[0].reason == "no samples for this metric (n=0)"


# --- properties ------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
STAMPED = {"taguru_evaluate_thresholds": 1}
FIXED_LEVELS = {
    # level: (document with the extra keys placed at that level, the keys legal there)
    "top": (lambda extra: STAMPED | extra,
            {"taguru_evaluate_thresholds", "aggregate", "cases", "allow_unstable_corpus"}),
    "cases": (lambda extra: STAMPED | {"cases": extra}, {"default", "overrides"}),
    "bound": (lambda extra: STAMPED | {"aggregate": {"recall.mrr": {"min": 0} | extra}},
              {"min", "max"}),
    "aggregate": (lambda extra: STAMPED | {"aggregate": extra}, METRIC_NAMES),
    "default": (lambda extra: STAMPED | {"cases": {"default": extra}}, set(CASE_SCOPED_METRICS)),
    "override": (lambda extra: STAMPED | {"cases": {"overrides": {"c1": extra}}},
                 set(CASE_SCOPED_METRICS)),
}
ALL_KEYS = {"taguru_evaluate_thresholds", "aggregate", "cases", "allow_unstable_corpus",
            "default", "overrides", "min", "max"}


@settings(max_examples=200, deadline=None)
@given(
    level=st.sampled_from(sorted(FIXED_LEVELS)),
    extra=st.dictionaries(st.text(max_size=24), json_values, min_size=1, max_size=3),
)
def test_any_unknown_key_is_refused(level: str, extra: dict[str, Any]) -> None:
    build, legal = FIXED_LEVELS[level]
    extra = {key: value for key, value in extra.items() if key not in legal}
    assume(extra)
    with pytest.raises(UsageError):
        check(json.dumps(build(extra)))


@settings(max_examples=300, deadline=None)
@given(document=json_values | st.binary(max_size=40).map(lambda b: b.decode("latin-1")))
def test_validation_raises_only_the_usage_error(document: Any) -> None:
    text = document if isinstance(document, str) else json.dumps(document)
    try:
        check(text)
    except UsageError as error:
        assert error.message.startswith("t.json: ")


@settings(max_examples=200, deadline=None)
@given(document=st.dictionaries(st.sampled_from(sorted(ALL_KEYS)), json_values, max_size=4))
def test_parser_refuses_with_its_own_error_only(document: dict[str, Any]) -> None:
    with contextlib.suppress(ThresholdsParseError):
        parse_thresholds(json.dumps(document).encode())


# --- review: serde's wording and order of parse errors ----------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # serde lists two expected fields as "`a` or `b`", not "one of".
        (
            "{" + STAMP + ',"aggregate":{"recall.mrr":{"mn":1}}}',
            "unknown field `mn`, expected `min` or `max` at aggregate.recall.mrr",
        ),
        (
            "{" + STAMP + ',"cases":{"defaults":{}}}',
            "unknown field `defaults`, expected `default` or `overrides` at cases",
        ),
        # The file's own words where serde names its Rust structs (ours to word).
        (
            "null",
            'invalid type: null, expected a thresholds object ({"taguru_evaluate_thresholds": '
            "1, …}) at the top level",
        ),
        (
            "{" + STAMP + ',"cases":7}',
            'invalid type: integer `7`, expected a cases object ({"default": {…}, "overrides": '
            "{…}}, both optional) at cases",
        ),
        (
            "{" + STAMP + ',"aggregate":{"recall.mrr":0.9}}',
            'invalid type: floating point `0.9`, expected a bound ({"min": …, "max": …}, either '
            'or both, e.g. {"min": 0.8}) at aggregate.recall.mrr',
        ),
        (
            "{" + STAMP + ',"cases":{"overrides":[]}}',
            "invalid type: sequence, expected an object of case_id → (metric name → bound) at "
            "cases.overrides",
        ),
        # A positional array too short for the one field without a default.
        (
            "[]",
            'invalid length 0, expected a thresholds object ({"taguru_evaluate_thresholds": 1, '
            "…}) with 4 elements at the top level",
        ),
    ],
)
def test_parse_errors_use_serdes_words(text: str, message: str) -> None:
    assert refusal(text) == f"t.json: {message}"


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ('{"taguru_evaluate_thresholds":true,"aggregates":{}}', "invalid type: boolean `true`"),
        ('{"aggregates":{},"taguru_evaluate_thresholds":true}', "unknown field `aggregates`"),
        (
            '{"allow_unstable_corpus":1,"aggregate":{"recall.mrr":{"x":1}},'
            '"taguru_evaluate_thresholds":1}',
            "invalid type: integer `1`, expected a boolean",
        ),
        ('{"cases":{"default":7,"default":{}},"taguru_evaluate_thresholds":1}', "invalid type"),
    ],
)
def test_the_first_problem_in_document_order_is_reported(text: str, first: str) -> None:
    # serde reads a struct's keys in document order and stops at the first problem.
    assert refusal(text).startswith(f"t.json: {first}")
