"""``--taguru-baseline``, ``--taguru-inconclusive``, ``--taguru-tolerance`` and
``--taguru-save-baseline`` end to end: the run judged case by case against an earlier one, as
``eval.jsonl::[baseline]``, plain and under pytest-xdist (``dist``).

The baselines are real runs of the same eval set on the embedded server; the head runs serve
a corpus where decoy sources outrank some cases' own (``paired_suite``): their MRR halves.
"""

import json
import xml.etree.ElementTree as ET

import pytest
from e2e import QUIET_PLUGINS, CountingListener, Suite
from paired_suite import corpus, eval_lines

BASELINE_NODEID = "eval.jsonl::[baseline]"
BASELINE_PATTERN = "eval.jsonl::[[]baseline]"

_baselines: dict[int, str] = {}
"""Baseline artifacts by eval-set size, made once per session (each run takes seconds)."""


class PairedSuite:
    """A pytester directory with ``cases`` paired cases, their baseline and a head corpus."""

    def __init__(self, pytester: pytest.Pytester, cases: int, decoys: list[int]) -> None:
        self.pytester, self.path = pytester, pytester.path
        (self.path / "eval.jsonl").write_text(eval_lines(cases), encoding="utf-8")
        (self.path / "base.ndjson").write_text(corpus(cases), encoding="utf-8")
        (self.path / "head.ndjson").write_text(corpus(cases, decoys), encoding="utf-8")
        if cases not in _baselines:
            made = self.run("--taguru-serve", "base.ndjson", "--taguru-out", "base.json")
            assert made.ret == 0
            _baselines[cases] = (self.path / "base.json").read_text(encoding="utf-8")
        (self.path / "base.json").write_text(_baselines[cases], encoding="utf-8")

    def run(self, *args: str) -> pytest.RunResult:
        base = (*QUIET_PLUGINS, "-p", "no:cacheprovider", "--taguru-eval", "eval.jsonl")
        if "-n" in args:
            return self.pytester.runpytest_subprocess(*base, *args)
        return self.pytester.runpytest_inprocess(*base, *args)

    def head(self, *args: str) -> pytest.RunResult:
        return self.run("--taguru-serve", "head.ndjson", "--taguru-baseline", "base.json", *args)


def junit_case(path: object, nodeid: str) -> ET.Element:
    root = ET.parse(str(path)).getroot()
    cases = {f"{c.get('classname')}::{c.get('name')}": c for c in root.iter("testcase")}
    return cases[nodeid]


def test_a_drop_on_30_percent_of_200_cases_regresses_and_exits_3(
    pytester: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    suite = PairedSuite(pytester, 200, decoys=[i for i in range(200) if i % 10 < 3])
    result = suite.head("--junitxml=junit.xml", *dist)

    assert result.ret == 3
    result.assert_outcomes(passed=200, failed=1)
    result.stdout.fnmatch_lines(
        [
            "  baseline: FAIL — 2 regressed verdict(s) against base.json",
            "  paired statistics: 200 paired case(s), 10,000 resamples, α 0.05 (Holm over *",
            "    recall.mrr * 200  -0.1500  [[]-0.1*, -0.1*]   <0.0001 * regressed",
        ]
    )
    result.stdout.fnmatch_lines([f"FAILED {BASELINE_PATTERN} - recall.mrr [[]all]: Δ -0.1500 *"])
    gate = junit_case(suite.path / "junit.xml", BASELINE_NODEID)
    failure = gate.find("failure")
    assert failure is not None
    assert failure.get("message", "").startswith("recall.mrr [all]: Δ -0.1500 [")
    assert "(+1 more)" in failure.get("message", "")  # nDCG fell with it
    properties = {p.get("name"): p.get("value") for p in gate.iter("property")}
    assert properties["recall.mrr [all]"].endswith("— regressed")
    assert properties["recall.recall_at_k [all]"].endswith("— unchanged")


def test_a_small_drop_over_36_cases_is_inconclusive_with_an_mde_and_exits_0(
    pytester: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    suite = PairedSuite(pytester, 36, decoys=[3, 17, 30])
    result = suite.head("-rA", *dist)

    assert result.ret == 0
    result.assert_outcomes(passed=37, warnings=2)
    result.stdout.fnmatch_lines(
        [
            "  baseline: PASS (2 inconclusive, 2 unchanged) against base.json",
            "    recall.mrr * 36  -0.0417 * inconclusive: the interval contains 0; MDE 0.0* "
            "at n=36",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*TaguruGateWarning: baseline base.json: recall.mrr [[]all]: Δ -0.0417 * — "
            "inconclusive: the interval contains 0; MDE 0.0* at n=36"
        ]
    )
    result.stdout.fnmatch_lines([f"PASSED {BASELINE_PATTERN}"])


def test_inconclusive_fail_turns_the_warning_into_a_failure(
    pytester: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    suite = PairedSuite(pytester, 36, decoys=[3, 17, 30])
    result = suite.head("--taguru-inconclusive=fail", *dist)

    assert result.ret == 3
    result.stdout.fnmatch_lines(
        [f"FAILED {BASELINE_PATTERN} - recall.mrr [[]all]: * (--taguru-inconclusive=fail)"]
    )


def test_a_tolerance_proves_the_small_drop_non_inferior(
    pytester: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    suite = PairedSuite(pytester, 36, decoys=[3, 17, 30])
    result = suite.head("--taguru-inconclusive=fail", "--taguru-tolerance", "0.15", *dist)

    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["*tolerance 0.15", "    recall.mrr * 36  -0.0417 * unchanged, non-inferior"]
    )


def test_a_partial_run_is_not_judged_against_the_baseline(pytester: pytest.Pytester) -> None:
    suite = PairedSuite(pytester, 36, decoys=[3, 17, 30])
    result = suite.head("-k", "p0001 or p0002", "-rs")

    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["SKIPPED * baseline comparison not judged: partial run (2 of 36 cases)"]
    )


def test_an_incomparable_baseline_exits_2_before_any_case_runs(
    suite: Suite, listener: CountingListener, dist: tuple[str, ...]
) -> None:
    made = suite.run("--taguru-out", "base.json")
    assert made.ret == 0
    document = json.loads((suite.path / "base.json").read_text(encoding="utf-8"))
    document["inputs"]["context"] = "other"
    document["inputs"]["mode"] = "assembly"
    (suite.path / "base.json").write_text(json.dumps(document), encoding="utf-8")
    result = suite.run(
        "--taguru-baseline", "base.json", "--taguru-url", listener.url, *dist,
        serve=False, isolated=True,
    )  # fmt: skip

    assert result.ret == 2
    result.stderr.fnmatch_lines(
        [
            "taguru: evaluate: base.json: cannot be compared with this run: context differs "
            "(baseline 'other', this run 'mini'); mode differs (baseline assembly, this run "
            "baseline)"
        ]
    )
    assert listener.connections == 0
    assert not (suite.path / "evaluation.json").exists()


def test_a_baseline_that_is_no_artifact_exits_2_with_its_line(
    suite: Suite, listener: CountingListener
) -> None:
    (suite.path / "base.json").write_text('{"taguru_evaluation": 1,\n "cases": 3}\n')
    result = suite.run(
        "--taguru-baseline", "base.json", "--taguru-url", listener.url, serve=False, isolated=True
    )

    assert result.ret == 2
    result.stderr.fnmatch_lines(
        ["taguru: evaluate: base.json: malformed evaluation.json: invalid type: integer `3`*"]
    )
    assert listener.connections == 0


def test_save_baseline_writes_a_passing_complete_run_only(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    passed = suite.run("--taguru-save-baseline", "saved.json", *dist)
    assert passed.ret == 0
    passed.stdout.fnmatch_lines(["  wrote saved.json (the new baseline)"])
    saved = (suite.path / "saved.json").read_bytes()
    assert saved == (suite.path / "evaluation.json").read_bytes()
    (suite.path / "saved.json").unlink()

    partial = suite.run("--taguru-save-baseline", "saved.json", "-k", "c-alpha", *dist)
    assert partial.ret == 0
    partial.stdout.fnmatch_lines(
        ["  baseline not saved to saved.json: partial run (1 of 4 cases)"]
    )
    failing = suite.write_thresholds(
        {"taguru_evaluate_thresholds": 1, "aggregate": {"recall.mrr": {"min": 0.99}}}
    )
    failed = suite.run(
        "--taguru-save-baseline", "saved.json", "--taguru-thresholds", failing, *dist
    )
    assert failed.ret == 3
    failed.stdout.fnmatch_lines(["  baseline not saved to saved.json: the gate failed"])
    assert not (suite.path / "saved.json").exists()


def test_the_run_becomes_its_own_next_baseline(suite: Suite) -> None:
    first = suite.run("--taguru-save-baseline", "base.json")
    assert first.ret == 0
    again = suite.run("--taguru-baseline", "base.json", "--taguru-save-baseline", "base.json")
    # Four cases: every verdict is inconclusive (fewer than 10 pairs), a warning, not a failure.
    assert again.ret == 0
    again.stdout.fnmatch_lines(
        [
            "  baseline: PASS (* inconclusive) against base.json",
            "    recall.mrr * inconclusive: fewer than 10 pairs; MDE *",
            "  wrote base.json (the new baseline)",
        ]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--taguru-baseline", "base.json", "--taguru-alpha", "2"),
         "--taguru-alpha needs a significance level between 0 and 1: 2 is not between 0 and 1 "
         "(exclusive)"),
        (("--taguru-baseline", "base.json", "--taguru-tolerance", "recall.mr=0.1"),
         "--taguru-tolerance needs a tolerance (0.01, recall.mrr=0.02, or both): 'recall.mr' is "
         "not a metric with paired statistics (did you mean recall.mrr?)"),
        (("--taguru-baseline", "base.json", "--taguru-inconclusive", "error"),
         "--taguru-inconclusive needs warn or fail: got 'error'"),
        (("--taguru-alpha", "0.01",), "--taguru-alpha requires --taguru-baseline"),
        (("--taguru-baseline", "missing.json",),
         "cannot read missing.json: No such file or directory (os error 2)"),
    ],
)  # fmt: skip
def test_bad_baseline_options_exit_2_before_any_request(
    suite: Suite,
    listener: CountingListener,
    dist: tuple[str, ...],
    args: tuple[str, ...],
    message: str,
) -> None:
    (suite.path / "base.json").write_text('{"taguru_evaluation": 1}', encoding="utf-8")
    result = suite.run(*args, "--taguru-url", listener.url, *dist, serve=False, isolated=True)

    assert result.ret == 2
    assert result.stderr.lines[-1] == f"taguru: evaluate: {message}"
    assert listener.connections == 0


def test_the_baseline_options_come_from_the_ini_file_too(suite: Suite) -> None:
    (suite.path / "runs").mkdir()
    assert suite.run("--taguru-out", "runs/base.json").ret == 0
    suite.write_ini(
        "taguru_baseline = runs/base.json\ntaguru_tolerance = 0.5\ntaguru_alpha = 0.01\n"
        "taguru_inconclusive = fail\n"
    )
    result = suite.run()
    # Four cases: fewer than 10 pairs is inconclusive whatever the tolerance, and fails here.
    assert result.ret == 3
    result.stdout.fnmatch_lines(
        [
            "  baseline: FAIL — * inconclusive verdict(s) (--taguru-inconclusive=fail) against "
            "runs/base.json",
            "*α 0.01 (Holm over 0 test(s)), tolerance 0.5",
        ]
    )


def test_the_runs_slices_are_judged_against_the_baseline_each_on_its_own(
    pytester: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    # Decoys only among the first 100 cases: that slice regresses, the other does not move.
    suite = PairedSuite(pytester, 200, decoys=[i for i in range(100) if i % 10 < 3])
    slices = ("--taguru-slices", "first: p00[0-9][0-9]\nsecond: p01[0-9][0-9]")
    result = suite.head(*slices, *dist)

    assert result.ret == 3
    result.stdout.fnmatch_lines(
        [
            "    metric * slice * n * verdict",
            "    recall.mrr * first * 100  -0.1500 * regressed",
            "    recall.mrr * second * 100  +0.0000 * unchanged",
        ]
    )
    result.stdout.fnmatch_lines([f"FAILED {BASELINE_PATTERN} - recall.mrr [[]*]: Δ -0.*"])
