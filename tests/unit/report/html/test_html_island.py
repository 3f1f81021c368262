"""The data island: what the page is given, built from the artifact, eval set and baseline."""

import json
import math
from typing import Any

import pytest
from html_report import HOSTILE_ID, NOT_RUN_ID, island_details, loaded, with_case_not_run
from synthetic_run import SyntheticRun, synthetic_run
from test_html_compact import unpack

from pytest_taguru.artifact.case import CaseBlock, PassageFailed, PassageSearched
from pytest_taguru.artifact.evaluation import Definition, Evaluation, Ratio
from pytest_taguru.compare.classify import compare
from pytest_taguru.compare.verdicts import paired_statistics
from pytest_taguru.gate.thresholds import CaseViolation, GateReport
from pytest_taguru.report.drilldown import render_drilldown
from pytest_taguru.report.html.cards import FAMILIES, HISTOGRAM_METRICS, histogram
from pytest_taguru.report.html.cases import (
    BROKE_BOUND,
    IMPROVED,
    LANE_FAILED,
    MISSED,
    NOT_RUN,
    REGRESSED,
)
from pytest_taguru.report.html.compact import figure
from pytest_taguru.report.html.island import ReportInputs, build_island, island_text
from pytest_taguru.report.summary import REPORT_ONLY_NOTICE
from pytest_taguru.score.case import satisfies
from pytest_taguru.score.registry import CASE_SCOPED_METRICS, METRICS, case_value

CASES = 60


@pytest.fixture(scope="module")
def run() -> SyntheticRun:
    return synthetic_run(CASES)


def island_of(run: SyntheticRun, **inputs: Any) -> dict[str, Any]:
    return build_island(ReportInputs(run.evaluation, "evaluation.json", run.eval_set, **inputs))


def gate_of(evaluation: Evaluation) -> GateReport:
    assert evaluation.thresholds is not None
    return GateReport.model_validate(evaluation.thresholds)


def column(island: dict[str, Any], metric: str) -> list[float | None]:
    cases = island["cases"]
    index = cases["columns"].index(metric)
    scale = cases["scales"][index]
    return [None if value < 0 else value / scale for value in unpack(cases["values"][index])]


# --- the table ---------------------------------------------------------------------------------


def test_a_row_per_case_in_run_order_with_its_eval_line(run: SyntheticRun) -> None:
    cases = island_of(run)["cases"]
    assert cases["id"] == [block.case_id for block in run.evaluation.cases]
    assert cases["query"] == [block.query for block in run.evaluation.cases]
    assert cases["line"] == [case.line for case in run.eval_set.cases]
    assert cases["columns"] == [*CASE_SCOPED_METRICS, "label_coverage.judged_at_k"]
    assert cases["labels"][-1] == "judged@k"


def test_the_judged_at_k_column_is_each_cases_own(run: SyntheticRun) -> None:
    expected = [
        None if block.label_coverage is None or block.label_coverage.judged_at_k is None
        else round(block.label_coverage.judged_at_k, 4)
        for block in run.evaluation.cases
    ]  # fmt: skip
    assert column(island_of(run), "label_coverage.judged_at_k") == expected
    assert any(value is not None and value < 1 for value in expected)


def test_values_are_each_cases_own_rounded_to_four_decimals(run: SyntheticRun) -> None:
    island = island_of(run)
    for metric in CASE_SCOPED_METRICS:
        expected = [case_value(block, metric) for block in run.evaluation.cases]
        rounded = [None if value is None else round(value, 4) for value in expected]
        assert column(island, metric) == rounded


def test_flags_follow_the_gate_the_lanes_and_missed(run: SyntheticRun) -> None:
    cases = island_of(run)["cases"]
    failing = {v.case_id for v in gate_of(run.evaluation).violations or [] if v.scope == "case"}
    recall_bit = 1 << list(CASE_SCOPED_METRICS).index("recall.recall_at_k")
    for flags, violated, block in zip(
        cases["flags"], cases["violated"], run.evaluation.cases, strict=True
    ):
        assert bool(flags & BROKE_BOUND) == (block.case_id in failing)
        assert violated == (recall_bit if block.case_id in failing else 0)
        assert bool(flags & LANE_FAILED) == isinstance(block.passage, PassageFailed)
        assert bool(flags & MISSED) == bool(block.missed)
    assert failing and any(flags & LANE_FAILED for flags in cases["flags"])
    assert cases["flag_bits"]["broke_bound"] == BROKE_BOUND


def test_dataset_cases_that_did_not_run_are_rows_too(run: SyntheticRun) -> None:
    island = island_of(with_case_not_run(run))
    cases = island["cases"]
    assert cases["id"][-1] == NOT_RUN_ID
    assert cases["flags"][-1] == NOT_RUN
    assert all(column(island, metric)[-1] is None for metric in cases["columns"])
    assert island_details(island)[-1] == {}


# --- a case's detail ---------------------------------------------------------------------------


def hits_of(detail: dict[str, Any], sources: list[str]) -> list[tuple[str, int, float | None]]:
    """The hits of a packed passage, as (source, paragraph, score) triples."""
    _plan, lanes, exponent, *flat = detail["p"]
    width = 5 if lanes else 3
    hits = []
    for at in range(0, len(flat), width):
        mantissa = flat[at + 2]
        shown = None if mantissa is None else mantissa * 10.0**exponent
        hits.append((sources[flat[at]], flat[at + 1], shown))
    return hits


def test_hits_keep_rank_locator_and_score(run: SyntheticRun) -> None:
    island = island_of(run)
    for block, detail in zip(run.evaluation.cases, island_details(island), strict=True):
        passage = block.passage
        if isinstance(passage, PassageFailed):
            assert detail["pf"] == passage.message and "p" not in detail
            continue
        assert isinstance(passage, PassageSearched)
        decoded = hits_of(detail, island["sources"])
        assert [(source, paragraph) for source, paragraph, _ in decoded] == [
            (hit.source, hit.paragraph) for hit in passage.hits
        ]
        unit = 10.0 ** detail["p"][2]  # the case's largest score has four digits
        assert max(shown or 0 for _, _, shown in decoded) >= 1000 * unit
        for (_, _, shown), hit in zip(decoded, passage.hits, strict=True):
            assert shown == pytest.approx(hit.score, abs=unit / 2 + 1e-12)
        assert detail["p"][1] == 1  # the synthetic hits carry vector ranks
        assert island["plans"][detail["p"][0]]["lanes"]["vector"]["ran"] is True


def test_bm25_only_hits_at_their_own_rank_carry_no_lanes() -> None:
    block = CaseBlock.model_validate({
        "case_id": "c", "query": "q",
        "passage": {"outcome": "searched", "latency_ms": 1, "hits": [
            {"source": "a", "paragraph": 0, "score": 2.5,
             "lanes": {"bm25": {"rank": 1, "score": 2.5}}},
            {"source": "b", "paragraph": 3, "score": None,
             "lanes": {"bm25": {"rank": 2, "score": 1.0}}},
        ]},
    })  # fmt: skip
    evaluation = Evaluation(taguru_evaluation=1, cases=[block], inputs={"eval": {"cases": 1}})
    island = build_island(ReportInputs(evaluation, "e.json"))
    assert island_details(island) == [{"p": [-1, 0, -3, 0, 0, 2500, 1, 3, None]}]
    assert island["sources"] == ["a", "b"]


def test_expectations_say_where_each_source_was_served(run: SyntheticRun) -> None:
    island = island_of(run)
    sources = island["sources"]
    for case, block, detail in zip(
        run.eval_set.cases, run.evaluation.cases, island_details(island), strict=True
    ):
        hits = block.passage.hits if isinstance(block.passage, PassageSearched) else []
        expected = [
            [entry.source, list(entry.paragraphs), entry.relevance,
             [rank for rank, hit in enumerate(hits) if satisfies(hit, entry)]]
            for entry in case.expected_sources
        ]  # fmt: skip
        assert [[sources[x[0]], *x[1:]] for x in detail["xs"]] == expected
        if case.expected_concepts:
            assert [name for name, _ in detail["xc"]] == list(case.expected_concepts)


def test_a_failing_case_carries_its_drill_down(run: SyntheticRun) -> None:
    island = island_of(run)
    gate = gate_of(run.evaluation)
    by_id = {case.case_id: case for case in run.eval_set.cases}
    for block, detail in zip(run.evaluation.cases, island_details(island), strict=True):
        violations = [v for v in gate.violations or [] if v.case_id == block.case_id]
        if violations:
            assert detail["dd"] == render_drilldown(
                case=by_id[block.case_id],
                block=block,
                violations=[CaseViolation(violation=v, origin=None) for v in violations],
                context="synthetic",
                eval_path="synthetic.jsonl",
            )
            assert detail["v"] == [
                [v.metric, v.bound, figure(v.threshold), figure(v.actual), v.reason]
                for v in violations
            ]
            assert "rp" not in detail
        elif block.missed or isinstance(block.passage, PassageFailed):
            assert detail["rp"][0].startswith("POST /contexts/synthetic/")
        else:
            assert "rp" not in detail and "dd" not in detail


def test_without_the_eval_set_there_are_no_lines_expectations_or_drill_downs(
    run: SyntheticRun,
) -> None:
    island = build_island(ReportInputs(run.evaluation, "evaluation.json"))
    assert island["cases"]["line"] is None and island["eval"] is None
    keys = {key for detail in island_details(island) for key in detail}
    assert not keys & {"xs", "xc", "xl", "xo", "dd", "rp"}
    assert "v" in keys and "m" in keys


def test_the_declared_quote_is_never_copied(run: SyntheticRun) -> None:
    island = island_of(run)
    quoted = [detail for detail in island_details(island) if "ck" in detail]
    assert quoted
    text = island_text(island) + json.dumps(island_details(island), ensure_ascii=False)
    assert "ten crowns" not in text


# --- header, cards, charts -----------------------------------------------------------------------


def notices_of(evaluation: Evaluation, **inputs: Any) -> list[list[str]]:
    island = build_island(ReportInputs(evaluation, "e.json", **inputs))
    notices: list[list[str]] = [list(notice) for notice in island["header"]["notices"]]
    return notices


def test_notices_say_how_the_run_ended(run: SyntheticRun) -> None:
    evaluation = run.evaluation
    assert notices_of(evaluation)[0][0] == "error"
    assert "gate failed" in notices_of(evaluation)[0][1]
    passed = dict(evaluation.thresholds or {}, passed=True, violations=None)
    assert notices_of(evaluation.model_copy(update={"thresholds": passed})) == [
        ["ok", "The gate passed: every bound of the thresholds file held."]
    ]
    report_only = evaluation.model_copy(update={"thresholds": None})
    assert notices_of(report_only) == [
        ["info", "No thresholds file given — this run is report-only: no quality bound can "
                 "fail it."]
    ]  # fmt: skip
    assert REPORT_ONLY_NOTICE.endswith("no quality bound can fail it")


def test_a_partial_run_an_unstable_corpus_and_session_notes_come_first(run: SyntheticRun) -> None:
    evaluation = run.evaluation.model_copy(
        update={
            "thresholds": None,
            "cases": run.evaluation.cases[:10],
            "corpus": run.evaluation.corpus.model_copy(update={"stable": False}),
        }
    )
    notices = notices_of(evaluation, session_notes=("2 other test(s) failed in this session.",))
    assert [level for level, _ in notices] == ["error", "warning", "info", "warning"]
    assert notices[1][1] == f"Partial run: 10 of {CASES} case(s) ran; the report shows those."
    assert "corpus changed" in notices[3][1]


def test_an_unreadable_thresholds_block_is_said_not_guessed(run: SyntheticRun) -> None:
    evaluation = run.evaluation.model_copy(update={"thresholds": {"passed": "maybe"}})
    island = build_island(ReportInputs(evaluation, "e.json"))
    assert island["header"]["gate"] is None
    assert island["header"]["notices"][0][0] == "warning"
    assert "thresholds block is not readable" in island["header"]["notices"][0][1]


def test_header_reports_the_run(run: SyntheticRun) -> None:
    header = island_of(run)["header"]
    gate = gate_of(run.evaluation)
    case_violations = [v for v in gate.violations or [] if v.scope == "case"]
    assert header["url"] == "http://127.0.0.1:8248" and header["context"] == "synthetic"
    assert header["corpus"]["before"] == [4, 9, 1] and header["corpus"]["stable"] is True
    assert header["gate"]["case_violations"] == len(case_violations)
    assert header["gate"]["failing_cases"] == len({v.case_id for v in case_violations})
    assert header["gate"]["violations"] == [
        [v.scope, v.metric, v.bound, figure(v.threshold), figure(v.actual), v.reason]
        for v in gate.violations or []
        if v.scope != "case"
    ]
    assert header["gate"]["skipped"] == len(gate.skipped or [])


def test_a_card_per_registry_metric_with_its_definition(run: SyntheticRun) -> None:
    families = island_of(run)["families"]
    assert [family["family"] for family in families] == [title for title, _ in FAMILIES]
    cards = [card for family in families for card in family["cards"]]
    assert [card["name"] for card in cards] == [metric.name for metric in METRICS]
    for card, metric in zip(cards, METRICS, strict=True):
        assert card["description"] == metric.description
        assert card["statistic"] == metric.statistic
        assert card["value"] == figure(run.evaluation.headline(metric.name))
    violated = {card["name"] for card in cards if card["violated"]}
    assert violated == {"recall.mrr"}  # the aggregate bound the synthetic run breaks


def test_a_metric_this_version_does_not_know_gets_a_card_of_its_own(run: SyntheticRun) -> None:
    evaluation = run.evaluation.model_copy(
        update={
            "metrics": {**run.evaluation.metrics,
                        "future.rate": Ratio(value=0.25, n=4, numerator=1)},
            "definitions": {**run.evaluation.definitions, "future.rate": Definition(
                unit="ratio", statistic="ratio", description="Later.")},
        }
    )  # fmt: skip
    families = build_island(ReportInputs(evaluation, "e.json"))["families"]
    assert families[-1]["family"] == "Other metrics in the artifact"
    assert [(c["name"], c["value"], c["description"]) for c in families[-1]["cards"]] == [
        ("future.rate", 0.25, "Later.")
    ]


def test_histogram_bins_are_tenths_with_one_in_the_last() -> None:
    assert histogram([0.0, 0.09999, 0.1, 0.5, 0.95, 1.0]) == [2, 1, 0, 0, 0, 1, 0, 0, 0, 2]
    assert histogram([]) == [0] * 10


def test_histograms_count_each_cases_exact_value(run: SyntheticRun) -> None:
    histograms = island_of(run)["histograms"]
    assert [item["metric"] for item in histograms] == list(HISTOGRAM_METRICS)
    for item in histograms:
        samples = (case_value(block, item["metric"]) for block in run.evaluation.cases)
        values = [value for value in samples if value is not None]
        assert item["n"] == len(values) == sum(item["counts"])
        assert item["counts"] == histogram(values)


# --- baseline ------------------------------------------------------------------------------------


def test_baseline_moves_come_from_compare(run: SyntheticRun) -> None:
    base = synthetic_run(CASES, drift=3)
    changes = compare(loaded(base.evaluation, "base.json"), loaded(run.evaluation, "head.json"))
    island = island_of(run, baseline=changes)
    section = island["baseline"]
    assert section["path"] == "base.json" and section["paired"] is None
    assert section["counts"]["regressed"] == changes.counts.regressed > 0
    rows = island["cases"]["id"]
    for record, moved in zip(changes.records, section["moved"], strict=True):
        assert moved[:3] == [record.kind, record.case_id, rows.index(record.case_id)]
        assert [change[0] for change in moved[3]] == [change.metric for change in record.metrics]
        flag = REGRESSED if record.kind == "regressed" else IMPROVED
        assert island["cases"]["flags"][rows.index(record.case_id)] & flag
    assert island_of(run)["baseline"] is None


def test_the_paired_statistics_join_the_baseline_section(run: SyntheticRun) -> None:
    base = synthetic_run(CASES, drift=3)
    runs = loaded(base.evaluation, "base.json"), loaded(run.evaluation, "head.json")
    statistics = paired_statistics(*runs)
    paired = island_of(run, baseline=compare(*runs), statistics=statistics)["baseline"]["paired"]
    assert (paired["alpha"], paired["resamples"], paired["tolerance"]) == (0.05, 10_000, "0")
    assert paired["family"] == statistics.family
    assert len(paired["rows"]) == len(statistics.verdicts)
    for row, item in zip(paired["rows"], statistics.verdicts, strict=True):
        assert row[:3] == [item.metric, None, item.n]
        assert row[3:6] == [figure(item.mean_delta), *map(figure, item.interval)]
        assert row[8:] == [item.verdict, item.non_inferior, item.reason, figure(item.mde)]
    assert paired["notes"] == list(statistics.notes)


# --- the text of the island ---------------------------------------------------------------------


def test_the_island_text_cannot_end_its_script_element(run: SyntheticRun) -> None:
    blocks = [block.model_copy(update={"case_id": HOSTILE_ID}) if index == 2 else block
              for index, block in enumerate(run.evaluation.cases)]  # fmt: skip
    island = build_island(ReportInputs(run.evaluation.model_copy(update={"cases": blocks}), "e"))
    text = island_text(island)
    assert "<" not in text
    assert json.loads(text) == island
    assert json.loads(text)["cases"]["id"][2] == HOSTILE_ID


def test_the_island_is_plain_json(run: SyntheticRun) -> None:
    text = island_text(island_of(run))
    assert "NaN" not in text and "Infinity" not in text
    assert not math.isnan(json.loads(text)["families"][0]["cards"][0]["value"])
