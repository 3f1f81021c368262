"""The failure text of a case that broke case-scoped bounds."""

from typing import Any

from gate_examples import GOLDEN, METRIC_NAMES

from pytest_taguru.artifact.case import CaseBlock
from pytest_taguru.gate.thresholds import CaseViolation, case_violations, check_thresholds
from pytest_taguru.report.drilldown import DrilldownFacts, render_drilldown
from pytest_taguru.report.reproduce import ServerTarget, json_body
from pytest_taguru.run.eval_models import EvalCase

QUOTE = "1897年に創業"

CASE: dict[str, Any] = {
    "case_id": "brand-origin-001",
    "query": "青嶺はどこの蔵の酒か",
    "cues": ["青嶺"],
    "expected_sources": [
        {"source": "corpus/brewery.md", "paragraphs": [0], "relevance": 3},
        {"source": "corpus/history.md"},
        {"source": "corpus/menu.md", "paragraphs": [1, 4], "relevance": 0},
    ],
    "expected_concepts": ["青嶺酒造", "存在しない"],
    "expected_labels": ["合う"],
    "expected_associations": [
        {"subject": "青嶺", "label": "合う", "object": "焼き魚"},
        {"subject": "青嶺", "label": "造る", "object": "蔵"},
    ],
    "expected_citations": [
        {"source": "corpus/brewery.md", "paragraph": 0, "section": "沿革", "quote": QUOTE},
        {"source": "corpus/pairing.md", "paragraph": 5, "section": None},
    ],
    "options": {"limit": 3, "floor": 0.4000000059604645, "tags": ["sake"]},
}

BLOCK: dict[str, Any] = {
    "case_id": "brand-origin-001",
    "query": "青嶺はどこの蔵の酒か",
    "cues": ["青嶺"],
    "limit": 3,
    "passage": {
        "outcome": "searched",
        "hits": [
            {"source": "corpus/products.md", "paragraph": 1, "score": 0.5, "lanes": {}},
            {"source": "corpus/brewery.md", "paragraph": 0, "score": 0.4, "lanes": {}},
            {"source": "corpus/pairing.md", "paragraph": 2, "score": 0.3, "lanes": {}},
        ],
        "latency_ms": 12,
    },
    "structural": {
        "cues": [
            {
                "cue": "青嶺",
                "kind": "concept",
                "resolved_names": ["青嶺酒造"],
                "tier": "lexical",
                "limit": 5,
                "latency_ms": 2,
            },
            {
                "cue": "青嶺",
                "kind": "label",
                "resolved_names": [],
                "limit": 5,
                "latency_ms": 3,
                "error": "POST http://127.0.0.1:8248/contexts/sake/resolve_label: HTTP 503",
            },
        ],
        "associations": [
            {
                "subject_cue": "青嶺",
                "label_cue": "合う",
                "object_cue": "焼き魚",
                "subject": {
                    "outcome": "resolved",
                    "name": "青嶺",
                    "tier": "lexical",
                    "latency_ms": 1,
                },
                "label": {
                    "outcome": "ambiguous",
                    "tier": "lexical",
                    "candidates": ["合う", "合わせる"],
                    "latency_ms": 1,
                },
                "object": {"outcome": "not_found", "latency_ms": 1},
            },
            {
                "subject_cue": "青嶺",
                "label_cue": "造る",
                "object_cue": "蔵",
                "subject": {
                    "outcome": "resolved",
                    "name": "青嶺",
                    "tier": "lexical",
                    "latency_ms": 1,
                },
                "label": {
                    "outcome": "resolved",
                    "name": "造る",
                    "tier": "lexical",
                    "latency_ms": 1,
                },
                "object": {
                    "outcome": "resolved",
                    "name": "青嶺酒造の蔵",
                    "tier": "semantic",
                    "latency_ms": 1,
                },
                "query": {"outcome": "queried", "total": 0, "matches": 0, "latency_ms": 4},
            },
        ],
    },
    "recall": {"recall_at_k": 0.5, "mrr": 0.5, "ndcg": 0.5, "expected_total": 2, "matched": 1},
    "coverage": {
        "concepts": {"expected": 2, "matched": 1, "value": 0.5},
        "labels": {"expected": 1, "matched": 0, "value": 0.0},
        "associations": {"expected": 2, "matched": 0, "value": 0.0},
    },
    "citations": {
        "recall": {"expected_total": 2, "matched": 1, "value": 0.5},
        "validity": {"expected_total": 2, "valid": 0, "value": 0.0},
        "checks": [
            {
                "source": "corpus/brewery.md",
                "paragraph": 0,
                "served": True,
                "outcome": "resolved",
                "section": {"check": "mismatched", "expected": "沿革", "served": {"name": "歴史"}},
                "quote": {"declared": QUOTE, "matched": False},
                "latency_ms": 2,
            },
            {
                "source": "corpus/pairing.md",
                "paragraph": 5,
                "served": False,
                "outcome": "unresolved",
                "code": "no_paragraph",
                "message": "corpus/pairing.md has no paragraph 5",
                "latency_ms": 2,
            },
        ],
    },
    "diversity_sources": 3,
}

THRESHOLDS = (
    b'{"taguru_evaluate_thresholds":1,"cases":{"default":{"recall.recall_at_k":{"min":1},'
    b'"coverage.concepts":{"min":1},"coverage.associations":{"min":0.5},'
    b'"citations.locator_validity":{"min":1},"latency.passage_ms":{"max":1000}},'
    b'"overrides":{"brand-origin-001":{"citations.recall":{"min":1}}}}}'
)


def drilldown(*, origins_known: bool = True) -> str:
    case = EvalCase.model_validate(CASE | {"line": 4})
    block = CaseBlock.model_validate(BLOCK)
    thresholds = check_thresholds(
        THRESHOLDS, path="t.json", metric_names=METRIC_NAMES, case_ids=(case.case_id,)
    )
    violations = case_violations(thresholds, block)
    if not origins_known:
        violations = [CaseViolation(violation=v.violation, origin=None) for v in violations]
    return render_drilldown(
        case=case,
        block=block,
        violations=violations,
        context="sake",
        eval_path="eval.jsonl",
        facts=DrilldownFacts(ServerTarget("http://127.0.0.1:8248", token=True)),
    )


def test_drilldown_golden() -> None:
    expected = (GOLDEN / "drilldown_brand_origin.txt").read_text(encoding="utf-8")
    assert drilldown() == expected.removesuffix("\n")


def test_drilldown_never_echoes_the_declared_quote() -> None:
    assert QUOTE not in drilldown()


def test_failed_passage_and_minimal_case() -> None:
    case = EvalCase.model_validate({"case_id": "c", "query": "q", "line": 2})
    block = CaseBlock.model_validate(
        {
            "case_id": "c",
            "query": "q",
            "passage": {"outcome": "failed", "message": "HTTP 500", "latency_ms": 1500},
        }
    )
    thresholds = check_thresholds(
        b'{"taguru_evaluate_thresholds":1,"cases":{"default":{"latency.passage_ms":{"max":1000}}}}',
        path="t.json",
        metric_names=METRIC_NAMES,
        case_ids=(),
    )
    assert render_drilldown(
        case=case,
        block=block,
        violations=case_violations(thresholds, block),
        context="c x",
        eval_path="e.jsonl",
    ) == "\n".join(
        [
            "taguru case 'c' broke 1 case-scoped threshold(s) at e.jsonl:2",
            "query: q",
            "violated:",
            "  latency.passage_ms: 1500.000000 > max 1000.000000 (bound from cases.default)",
            "passage lane: failed after 1500 ms: HTTP 500",
            "reproduce:",
            '  POST /contexts/c x/sources/search {"query": "q", "limit": 10, '
            '"semantic_floor": null, "tags": [], "since": null, "until": null}',
        ]
    )


def test_json_body_style() -> None:
    assert json_body({"source": 'a"b', "paragraph": 5, "tags": ["x", "y"]}) == (
        '{"source": "a\\"b", "paragraph": 5, "tags": ["x","y"]}'
    )


def miss_case_and_block(text: str | None = None) -> tuple[EvalCase, CaseBlock, Any]:
    case = EvalCase.model_validate(
        {
            "case_id": "m",
            "query": "q",
            "expected_sources": [{"source": "a.md", "paragraphs": [7, 1]}],
            "line": 3,
        }
    )
    hits = [
        {"source": "b.md", "paragraph": 0, "score": 2.5, "text": text},
        {"source": "c.md", "paragraph": 4, "score": 1.25},
    ]
    block = CaseBlock.model_validate(
        {
            "case_id": "m",
            "query": "q",
            "limit": 2,
            "passage": {"outcome": "searched", "hits": hits, "latency_ms": 3},
            "recall": {"recall_at_k": 0.0, "mrr": 0.0, "ndcg": 0.0, "expected_total": 1,
                       "matched": 0},
        }
    )  # fmt: skip
    thresholds = check_thresholds(
        b'{"taguru_evaluate_thresholds":1,"cases":{"default":{"recall.mrr":{"min":0.5}}}}',
        path="t.json",
        metric_names=METRIC_NAMES,
        case_ids=(),
    )
    return case, block, case_violations(thresholds, block)


def test_a_miss_lists_what_outranked_it_and_says_which_paragraphs_do_not_exist() -> None:
    case, block, violations = miss_case_and_block()
    facts = DrilldownFacts(
        ServerTarget("http://h:1", serve_import="corpus.ndjson"),
        absent_paragraphs=frozenset({("a.md", 7)}),
    )
    text = render_drilldown(
        case=case, block=block, violations=violations, context="x", eval_path="e", facts=facts
    )
    lines = text.splitlines()
    assert lines[5:] == [
        "expected sources:",
        "  a.md (paragraphs 7, 1, relevance 1): not in the top 2; paragraph 7 does not exist "
        "in a.md",
        "hits ranked above an expected source:",
        "  1. b.md#0 (score 2.5000)",
        "  2. c.md#4 (score 1.2500)",
        "reproduce (the run's embedded server stopped with the session; serve the same corpus "
        "with 'python -m pytest_taguru.server --import corpus.ndjson', which listens on "
        "TAGURU_ADDR, default 127.0.0.1:8248):",
        '  POST /contexts/x/sources/search {"query": "q", "limit": 10, "semantic_floor": null, '
        '"tags": [], "since": null, "until": null}',
        # No explain call for the paragraph that does not exist.
        '  POST /contexts/x/sources/search/explain {"query": "q", "source": "a.md", '
        '"paragraph": 1, "limit": 10, "semantic_floor": null, "tags": [], "since": null, '
        '"until": null}',
    ]


def test_hit_text_only_with_show_text() -> None:
    case, block, violations = miss_case_and_block(text="served  words\nhere " + "x" * 300)
    plain = render_drilldown(
        case=case, block=block, violations=violations, context="x", eval_path="e"
    )
    assert "served words" not in plain
    shown = render_drilldown(
        case=case,
        block=block,
        violations=violations,
        context="x",
        eval_path="e",
        facts=DrilldownFacts(ServerTarget("http://h:1"), show_text=True),
    )
    line = next(line for line in shown.splitlines() if "served words" in line)
    assert line.startswith("     served words here xxx")
    assert len(line.strip()) == 200 and line.endswith("…")


def test_a_hit_text_is_never_written() -> None:
    _, block, _ = miss_case_and_block(text="secret paragraph")
    from pytest_taguru.artifact.case import dump_case_block
    from pytest_taguru.artifact.writing import to_jsonable

    assert "secret paragraph" not in str(to_jsonable(block))
    assert "secret paragraph" not in dump_case_block(block)
    assert block.passage.hits[0].text == "secret paragraph"  # type: ignore[union-attr]


def test_a_violation_of_unknown_origin_names_no_bound_source() -> None:
    # A report rendered from a saved artifact has the gate's violations but not the thresholds
    # file that says whether a bound came from cases.default or an override.
    text = drilldown(origins_known=False)
    assert "bound from" not in text
    assert "(bound from cases." in drilldown()
    assert [line.split(" (bound from")[0] for line in drilldown().splitlines()] == (
        text.splitlines()
    )
