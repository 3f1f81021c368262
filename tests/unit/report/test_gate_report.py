"""Gate rendering: terminal lines, GitHub annotations, the Markdown step summary."""

import io
from pathlib import Path

from gate_examples import (
    A2_CASES,
    A2_LINES,
    A6_CASES,
    GOLDEN,
    load_golden,
    run_a1,
    run_a2,
    run_a4,
    run_a5,
    run_a6,
)

from pytest_taguru.gate.thresholds import GateReport, evaluate_gate
from pytest_taguru.report.gate import (
    error_annotation,
    escape_data,
    escape_property,
    gate_summary_lines,
    github_annotations,
    publish_github,
    step_summary_markdown,
)


def a2_report() -> GateReport:
    return evaluate_gate(load_golden("a2.json", A2_CASES), run_a2())


# --- terminal lines (A.7, worked examples A.8) -----------------------------------------------


def test_a1_lines() -> None:
    report = evaluate_gate(load_golden("a1.json"), run_a1())
    assert gate_summary_lines(report) == [
        "  thresholds: FAIL — 4 violation(s) (sha256 f5e73ba8d267…)",
        "    [aggregate] citations.resolved: 0.750000 > max 0.500000",
        "    [aggregate] coverage.labels: no samples for this metric (n=0)",
        "    [aggregate] latency.passage_ms: 15.000000 > max 10.000000",
        "    [aggregate] rerank.ran: no samples for this metric (n=0)",
    ]


def test_a2_lines_put_the_corpus_before_the_cases() -> None:
    assert gate_summary_lines(a2_report()) == A2_LINES


def test_a4_pass_is_one_line_even_with_skips() -> None:
    report = evaluate_gate(load_golden("a4.json"), run_a4())
    assert report.skipped
    assert gate_summary_lines(report) == ["  thresholds: PASS (sha256 5626119286ab…)"]


def test_a_partial_run_says_its_aggregates_were_not_judged() -> None:
    skipped = "partial run (2 of 36 cases)"
    report = evaluate_gate(load_golden("a4.json"), run_a4(), aggregate_skipped=skipped)
    note = (
        "  thresholds: aggregate bounds not judged: partial run (2 of 36 cases); "
        "--taguru-gate-partial judges them on the subset"
    )
    assert gate_summary_lines(report) == ["  thresholds: PASS (sha256 5626119286ab…)", note]
    failing = evaluate_gate(load_golden("a2.json", A2_CASES), run_a2(), aggregate_skipped=skipped)
    assert not any(v.scope == "aggregate" for v in failing.violations or [])
    assert gate_summary_lines(failing)[-1] == note
    assert failing.to_block()["aggregate_skipped"] == skipped


def test_a5_lines() -> None:
    report = evaluate_gate(load_golden("a5.json"), run_a5())
    assert gate_summary_lines(report) == [
        "  thresholds: FAIL — 1 violation(s) (sha256 aa044dac02d2…)",
        "    [aggregate] recall.recall_at_k: 0.400000 > max 0.400000",
    ]


def test_a6_caps_case_lines_at_ten() -> None:
    lines = gate_summary_lines(evaluate_gate(load_golden("a6.json"), run_a6()))
    assert lines[0].startswith("  thresholds: FAIL — 13 violation(s) (sha256 ")
    assert lines[1] == "    [aggregate] latency.passage_ms: 500.000000 > max 100.000000"
    assert lines[2:12] == [
        f"    [case {case_id}] latency.passage_ms: 500.000000 > max 100.000000"
        for case_id in A6_CASES[:10]
    ]
    assert lines[12:] == ["    ... and 2 more case-scoped violation(s)"]


# --- GitHub workflow commands ----------------------------------------------------------------


def test_escaping_follows_the_workflow_command_rules() -> None:
    assert escape_data("100% a\r\nb: c, d") == "100%25 a%0D%0Ab: c, d"
    assert escape_property("100% a\r\nb: c, d") == "100%25 a%0D%0Ab%3A c%2C d"
    assert escape_data("%0A") == "%250A"


def test_annotation_escapes_properties_and_message() -> None:
    annotation = error_annotation(
        "1.000000 > max 0.950000\nnext", title="case a,b", file="dir:x/e,v.jsonl", line=4
    )
    assert annotation == (
        "::error file=dir%3Ax/e%2Cv.jsonl,line=4,title=case a%2Cb::"
        "1.000000 > max 0.950000%0Anext"
    )


def test_one_annotation_per_failing_case_after_the_run_level_ones() -> None:
    annotations = github_annotations(
        a2_report(), eval_path="evals/eval.jsonl", case_lines={"easy": 2, "hard-case": 3}
    )
    assert annotations == [
        "::error title=taguru thresholds [corpus]::corpus.stable: the context's revision changed "
        "during this run (corpus.revision_before != corpus.revision_after) and "
        "allow_unstable_corpus is false",
        "::error file=evals/eval.jsonl,line=2,title=taguru case easy::"
        "recall.recall_at_k: 1.000000 > max 0.950000",
        "::error file=evals/eval.jsonl,line=3,title=taguru case hard-case::"
        "latency.passage_ms: 250.000000 > max 100.000000",
        "::error file=evals/eval.jsonl,title=taguru case cite-only::"
        "citations.recall: 0.500000 < min 1.000000",
    ]


# --- Markdown step summary -------------------------------------------------------------------


def test_a1_step_summary_golden() -> None:
    loaded = load_golden("a1.json")
    markdown = step_summary_markdown(
        evaluate_gate(loaded, run_a1()),
        loaded.file,
        run_a1(),
        eval_path="eval.jsonl",
        case_lines={},
    )
    assert markdown == (GOLDEN / "a1_summary.md").read_text(encoding="utf-8")


def test_a6_step_summary_lists_top_cases_with_locations() -> None:
    loaded = load_golden("a6.json")
    lines = {case_id: index + 2 for index, case_id in enumerate(A6_CASES)}
    markdown = step_summary_markdown(
        evaluate_gate(loaded, run_a6()),
        loaded.file,
        run_a6(),
        eval_path="eval.jsonl",
        case_lines=lines,
    )
    assert markdown == (GOLDEN / "a6_summary.md").read_text(encoding="utf-8")


def test_step_summary_escapes_table_cells() -> None:
    report = GateReport.model_validate(
        {
            "sha256": "0" * 64,
            "passed": False,
            "violations": [
                {
                    "scope": "case",
                    "case_id": "a|b_*",
                    "metric": "recall.mrr",
                    "actual": 0.1,
                    "reason": "0.100000 < min 0.500000",
                }
            ],
        }
    )
    loaded = load_golden("a5.json")
    markdown = step_summary_markdown(
        report, loaded.file, run_a5(), eval_path="e.jsonl", case_lines={"a|b_*": 7}
    )
    assert "| `a\\|b_*` | `e.jsonl:7` | `recall.mrr`: 0.100000 < min 0.500000 |" in markdown


def test_publish_only_under_github_actions(tmp_path: Path) -> None:
    loaded = load_golden("a2.json", A2_CASES)
    summary = tmp_path / "summary.md"
    out = io.StringIO()

    def publish(environ: dict[str, str]) -> None:
        publish_github(a2_report(), loaded.file, run_a2(), eval_path="e.jsonl", case_lines={},
                       environ=environ, out=out)

    publish({})
    publish({"GITHUB_ACTIONS": "false", "GITHUB_STEP_SUMMARY": str(summary)})
    assert out.getvalue() == "" and not summary.exists()
    summary.write_text("earlier step\n", encoding="utf-8")
    publish({"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert len(out.getvalue().splitlines()) == 4
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n### taguru thresholds: FAIL\n")
