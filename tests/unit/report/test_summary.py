"""The stdout run summary (evaluate-run.md §8.2), including the spec's own example."""

from dataclasses import replace

from paths import SPEC_7_8_EVALUATION

from pytest_taguru.artifact.evaluation import Evaluation, parse_evaluation
from pytest_taguru.report.summary import REPORT_ONLY_NOTICE, summary_lines
from pytest_taguru.score.metrics import build_metrics
from pytest_taguru.score.summary import InvalidLocator, RunSummary, run_summary

GOLDEN = SPEC_7_8_EVALUATION

SPEC_8_2_STDOUT = """\
taguru evaluate: http://localhost:8248 / context 'sake'
  2 case(s) — passage: 2 ok, 0 failed; structural lane ran on 2 case(s) (1 ambiguous, 0 not-found position(s))
  recall over 2 case(s): mean recall@k 0.750, mean MRR 0.750, mean nDCG 0.638
  lane cross-tab over 2 case(s) declaring both a structural and a source expectation (passage lane completed): 1 both, 0 neither
  citations over 2 case(s): mean recall 0.500, mean locator validity 0.500
    invalid locator — reproduce with: POST /contexts/sake/citations {"source": "corpus/pairing.md", "paragraph": 5}
  diversity over 2 case(s): mean 2.5 distinct source(s) in admitted evidence
  wrote evaluation.json"""  # noqa: E501


def golden() -> Evaluation:
    return parse_evaluation(GOLDEN.read_bytes())


def test_spec_example_stdout() -> None:
    evaluation = golden()

    lines = summary_lines(evaluation, run_summary(evaluation.cases))

    assert "\n".join(lines) == SPEC_8_2_STDOUT


def test_unstable_corpus_and_partial_run_warnings_come_before_the_wrote_line() -> None:
    evaluation = golden()
    partial = "1 of 3 dataset case(s) did not run"
    unstable = evaluation.model_copy(
        update={
            "corpus": evaluation.corpus.model_copy(update={"stable": False}),
            "warnings": [partial],
        }
    )

    lines = summary_lines(unstable, run_summary(unstable.cases), partial_run_warning=partial)

    assert lines[-3:] == [
        "  WARNING: the context's revision changed during this run — a write landed mid-run "
        "(corpus.revision_before != corpus.revision_after)",
        "  WARNING: 1 of 3 dataset case(s) did not run",
        "  wrote evaluation.json",
    ]


def test_assembly_filter_warnings_stay_out_of_the_summary() -> None:
    # §8.2 lists every stdout line; the --assembly filter warnings go to stderr at start-up
    # and into the artifact's warnings array only (assembly.md §1.10).
    evaluation = golden()
    warned = evaluation.model_copy(
        update={
            "warnings": [
                "case 'c1': options.tags/since/until are not applied under --assembly "
                "(POST /contexts/{name}/evidence has no such request fields)"
            ]
        }
    )

    assert summary_lines(warned, run_summary(warned.cases)) == SPEC_8_2_STDOUT.splitlines()


def empty_summary() -> RunSummary:
    return run_summary([])


def test_lines_whose_population_is_empty_are_left_out() -> None:
    evaluation = golden().model_copy(update={"cases": [], "metrics": build_metrics([])})

    lines = summary_lines(evaluation, empty_summary())

    assert lines == [
        "taguru evaluate: http://localhost:8248 / context 'sake'",
        "  0 case(s) — passage: 0 ok, 0 failed; structural lane ran on 0 case(s) "
        "(0 ambiguous, 0 not-found position(s))",
        "  wrote evaluation.json",
    ]


def test_at_most_three_reproduction_hints_then_a_count() -> None:
    evaluation = golden()
    hints = tuple(InvalidLocator(source=f"s{n}.md", paragraph=n) for n in range(3))
    summary = replace(
        run_summary(evaluation.cases), invalid_locators=hints, more_invalid_locators=4
    )

    lines = summary_lines(evaluation, summary)

    start = lines.index(
        '    invalid locator — reproduce with: POST /contexts/sake/citations {"source": "s0.md", '
        '"paragraph": 0}'
    )
    assert lines[start + 3] == "    ... and 4 more invalid locator(s)"


def test_report_only_notice_names_the_plugin_flag() -> None:
    assert REPORT_ONLY_NOTICE.startswith("taguru: evaluate: no thresholds file given")
