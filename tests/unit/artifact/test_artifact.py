"""evaluation.json models: writer order, absent vs null, f32 text, lenient range-checked reads."""

import json
import os
from pathlib import Path

import pytest
from paths import SPEC_7_8_EVALUATION

from pytest_taguru.artifact.case import (
    CaseBlock,
    CheckUnresolved,
    HitLocator,
    PassageFailed,
    PassageSearched,
    SectionNotChecked,
)
from pytest_taguru.artifact.evaluation import (
    ArtifactError,
    Distribution,
    Evaluation,
    Ratio,
    decode_metrics,
    parse_evaluation,
)
from pytest_taguru.artifact.writing import render, to_jsonable
from pytest_taguru.core.atomic_file import write_atomic
from pytest_taguru.core.wire import ContextPlan, HitLanes, LanePlan, LaneRank, PlanLanes

GOLDEN = SPEC_7_8_EVALUATION


def test_spec_example_round_trips_byte_for_byte() -> None:
    text = GOLDEN.read_text(encoding="utf-8")
    assert render(parse_evaluation(text)) == text


def test_absent_fields_are_left_out_and_write_null_fields_are_written() -> None:
    block = CaseBlock(
        case_id="c",
        query="q",
        passage=PassageFailed(message="boom", latency_ms=3),
    )
    data = to_jsonable(block)
    assert list(data) == ["case_id", "query", "limit", "passage", "missed", "missed_truncated"]
    check = CheckUnresolved(source="s", paragraph=1, served=False, message="m")
    assert to_jsonable(check)["code"] is None
    assert list(to_jsonable(check)) == [
        "source",
        "paragraph",
        "served",
        "outcome",
        "code",
        "message",
        "latency_ms",
    ]
    assert to_jsonable(SectionNotChecked()) == {"check": "not_checked"}


def test_scores_are_written_as_f32_text() -> None:
    hit = HitLocator(
        source="a",
        paragraph=0,
        score=0.28768212,
        lanes=HitLanes(bm25=LaneRank(rank=1, score=0.28768212)),
    )
    passage = PassageSearched(hits=[hit], latency_ms=1)
    block = CaseBlock(case_id="c", query="q", passage=passage)
    text = render(Evaluation(taguru_evaluation=1, cases=[block]))
    assert '"score": 0.28768212' in text
    assert "0.2876821" + "1" not in text.replace("0.28768212", "")


def test_a_null_score_of_a_non_finite_f32_reads_back_and_is_written_again() -> None:
    # taguru writes a 32-bit score that overflowed to infinity as null (§7.1); reading such an
    # artifact (e.g. for the offline gate) must not fail, and writing it keeps the nulls.
    hit = HitLocator(
        source="a",
        paragraph=0,
        score=float("inf"),
        lanes=HitLanes(bm25=LaneRank(rank=1, score=float("-inf"))),
    )
    plan = ContextPlan(
        context="c",
        lanes=PlanLanes(bm25=LanePlan(ran=True), vector=LanePlan(ran=True, floor=float("inf"))),
    )
    passage = PassageSearched(plan=plan, hits=[hit], latency_ms=1)
    block = CaseBlock(case_id="c", query="q", passage=passage)
    text = render(Evaluation(taguru_evaluation=1, cases=[block]))
    assert text.count('"score": null') == 2
    assert text.count('"floor": null') == 1

    assert render(parse_evaluation(text)) == text


def test_metric_shape_comes_from_definitions_not_from_keys() -> None:
    metrics = {"m": {"value": 0.09, "n": 31, "numerator": 3}, "x": {"n": 0}}
    definitions = {"m": {"statistic": "ratio"}, "x": {"statistic": "histogram"}}
    decoded, skipped = decode_metrics(metrics, definitions)
    assert isinstance(decoded["m"], Ratio) and decoded["m"].headline == 0.09
    assert "x" not in decoded and skipped == [
        "metric 'x' skipped: no definition or an unknown statistic"
    ]
    evaluation = Evaluation.model_validate(
        {"taguru_evaluation": 1, "definitions": definitions, "metrics": metrics}
    )
    assert isinstance(evaluation.metrics["m"], Ratio)
    assert evaluation.headline("m") == 0.09 and evaluation.headline("nope") is None


def test_empty_distribution_keeps_every_key_as_null() -> None:
    assert to_jsonable(Distribution()) == {
        "n": 0,
        "min": None,
        "p50": None,
        "p90": None,
        "p99": None,
        "max": None,
        "mean": None,
        "sum": None,
    }


@pytest.mark.parametrize(
    "text",
    ['{"cases": []}', '{"taguru_evaluation": 2}', '{"taguru_evaluation": "1"}', "[1]", "nope"],
)
def test_reader_refuses_out_of_range_or_malformed(text: str) -> None:
    with pytest.raises(ArtifactError):
        parse_evaluation(text, origin="base.json")


def test_reader_ignores_unknown_keys_and_defaults_missing_ones() -> None:
    evaluation = parse_evaluation('{"taguru_evaluation": 1, "future": {"x": 1}}')
    assert evaluation.cases == [] and evaluation.thresholds is None
    assert "future" not in json.loads(render(evaluation))


def test_atomic_write_leaves_existing_file_on_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "evaluation.json"
    target.write_text("old", encoding="utf-8")

    def disk_full(*args: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr("os.replace", disk_full)
        with pytest.raises(OSError):
            write_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["evaluation.json"]
    write_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "new"


def test_atomic_write_gives_the_file_an_ordinary_mode(tmp_path: Path) -> None:
    mask = os.umask(0o022)
    try:
        write_atomic(tmp_path / "evaluation.json", "{}")
    finally:
        os.umask(mask)
    assert (tmp_path / "evaluation.json").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "evaluation.json").read_bytes() == b"{}"


def test_a_corpus_without_a_stability_verdict_reads_as_unstable() -> None:
    # thresholds-and-compare B.2: a missing corpus.stable is false, never assumed stable.
    assert parse_evaluation('{"taguru_evaluation": 1}').corpus.stable is False
    assert parse_evaluation('{"taguru_evaluation": 1, "corpus": {}}').corpus.stable is False


def test_probe_writable(tmp_path: Path) -> None:
    from pytest_taguru.core.atomic_file import probe_writable

    probe_writable(tmp_path / "evaluation.json")
    assert list(tmp_path.iterdir()) == []  # leaves nothing behind
    with pytest.raises(FileNotFoundError):
        probe_writable(tmp_path / "missing" / "evaluation.json")
    (tmp_path / "taken").mkdir()
    with pytest.raises(IsADirectoryError):
        probe_writable(tmp_path / "taken")
