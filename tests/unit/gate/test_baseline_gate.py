"""``gate.baseline``: the baseline file, the gate result it becomes, and when a run is saved."""

from pathlib import Path

import pytest
from synthetic_run import synthetic_run

from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.artifact.view import read_run
from pytest_taguru.artifact.writing import ArtifactSource, case_text, render
from pytest_taguru.errors import RunError, UsageError
from pytest_taguru.gate.baseline import BaselineGate, baseline_lines, load_baseline
from pytest_taguru.gate.results import FinishedRun
from pytest_taguru.run.partial import RunCoverage

CASES = 240


@pytest.fixture(scope="module")
def runs() -> tuple[Evaluation, Evaluation]:
    """A run and a later one in which other cases miss their source (MRR moves both ways)."""
    return synthetic_run(CASES).evaluation, synthetic_run(CASES, drift=3).evaluation


def finished(evaluation: Evaluation, ran: int = CASES) -> FinishedRun:
    return FinishedRun(evaluation, RunCoverage(CASES, ran))


def test_a_missing_or_malformed_baseline_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as missing:
        load_baseline(str(tmp_path / "nope.json"))
    assert missing.value.message.endswith("nope.json: No such file or directory (os error 2)")
    bad = tmp_path / "bad.json"
    bad.write_text('{"taguru_evaluation": 1,\n "cases": {}}')
    with pytest.raises(UsageError) as malformed:
        load_baseline(str(bad))
    assert malformed.value.message == (
        f"{bad}: malformed evaluation.json: invalid type: map, expected a sequence"
    )


def test_the_gate_judges_the_run_against_the_baseline(runs: tuple[Evaluation, Evaluation]) -> None:
    base, head = runs
    gate = BaselineGate("base.json", read_run(render(base), "base.json"))
    result = gate.judge(finished(head))
    assert gate.comparison is not None
    statistics = gate.comparison.statistics
    assert statistics.paired_cases > 200
    assert result.name == "baseline"
    assert [name for name, _ in result.properties] == [
        f"{item.metric} [all]" for item in statistics.verdicts
    ]
    if statistics.with_verdict("regressed"):
        assert result.status == "failed"
    else:
        assert result.status == "passed"
        assert len(result.warnings) == len(statistics.with_verdict("inconclusive"))
    lines = gate.summary_lines()
    assert lines[0].startswith("  baseline: ") and lines[0].endswith(" against base.json")
    assert lines[1].startswith("  paired statistics: ")


def with_mrr_drops(evaluation: Evaluation, drops: int) -> Evaluation:
    """``evaluation`` with the MRR of its first ``drops`` recall-scored cases halved."""
    blocks, dropped = list(evaluation.cases), 0
    for index, block in enumerate(blocks):
        if block.recall is not None and dropped < drops:
            recall = block.recall.model_copy(update={"mrr": block.recall.mrr / 2})
            blocks[index] = block.model_copy(update={"recall": recall})
            dropped += block.recall.mrr > 0
    return evaluation.model_copy(update={"cases": blocks})


def test_inconclusive_verdicts_warn_or_fail(runs: tuple[Evaluation, Evaluation]) -> None:
    base, _ = runs
    baseline = read_run(render(base), "base.json")
    same = BaselineGate("base.json", baseline).judge(finished(base))
    assert same.status == "passed" and same.warnings == ()
    head = with_mrr_drops(base, 3)  # three drops in 240: exact p 1/8, the interval reaches 0
    warned = BaselineGate("base.json", baseline).judge(finished(head))
    assert warned.status == "passed" and warned.headline.startswith("no regression against")
    (warning,) = warned.warnings
    assert warning.startswith("baseline base.json: recall.mrr [all]: Δ -0.")
    assert "inconclusive: the interval contains 0; MDE" in warning
    failing = BaselineGate("base.json", baseline, inconclusive="fail").judge(finished(head))
    assert failing.status == "failed"
    assert failing.headline.endswith("(--taguru-inconclusive=fail)")


def test_a_partial_run_is_skipped_unless_asked(runs: tuple[Evaluation, Evaluation]) -> None:
    base, head = runs
    baseline = read_run(render(base), "base.json")
    skipped = BaselineGate("base.json", baseline).judge(finished(head, ran=CASES - 1))
    assert skipped.status == "skipped"
    partial = f"partial run ({CASES - 1} of {CASES} cases)"
    assert skipped.headline == f"baseline comparison not judged: {partial}"
    judged = BaselineGate("base.json", baseline, judge_partial=True)
    assert judged.judge(finished(head, ran=CASES - 1)).status != "skipped"


def test_the_whole_artifact_is_built_from_its_parts(runs: tuple[Evaluation, Evaluation]) -> None:
    head = runs[1]
    texts = [case_text(case) for case in head.cases]
    parts = ArtifactSource(head.model_copy(update={"cases": []}), lambda: iter(texts))
    assert parts.text() == render(head)
    assert parts.text() == render(head)  # the texts are read again each time


def test_save_baseline_writes_only_a_complete_passing_written_run(
    tmp_path: Path, runs: tuple[Evaluation, Evaluation]
) -> None:
    target = str(tmp_path / "saved.json")
    complete, partial = RunCoverage(4, 4), RunCoverage(4, 3)
    artifact = ArtifactSource(runs[0], lambda: ())

    def save(coverage: RunCoverage, written: bool, failed: bool, to: str = target) -> list[str]:
        return baseline_lines(None, to, artifact, coverage, written=written, gate_failed=failed)

    assert save(partial, True, False) == [
        f"  baseline not saved to {target}: partial run (3 of 4 cases)"
    ]
    assert save(complete, False, False)[0].endswith("the session exits 1")
    assert save(complete, True, True)[0].endswith("the gate failed")
    assert not Path(target).exists()
    assert save(complete, True, False) == [f"  wrote {target} (the new baseline)"]
    assert Path(target).read_text() == render(runs[0])
    with pytest.raises(RunError):
        save(complete, True, False, to=str(tmp_path / "missing" / "saved.json"))
    assert baseline_lines(None, None, artifact, complete, written=True, gate_failed=False) == []
