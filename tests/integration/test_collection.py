"""Collection: node ids in file order, item locations, --collect-only, --lf/--ff."""

import pytest
from e2e import CASE_IDS, CASE_LINES, QUIET_PLUGINS, CountingListener, Suite

LOCATION_CONFTEST = """
def pytest_collection_finish(session):
    for item in session.items:
        path, line, domain = item.location
        print(f"location {item.nodeid} {path}:{line + 1} {domain}")
"""


def test_one_item_per_case_in_file_order_at_its_line(suite: Suite) -> None:
    suite.pytester.makeconftest(LOCATION_CONFTEST)
    result = suite.run("-v")

    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            f"location eval.jsonl::{case_id} eval.jsonl:{CASE_LINES[case_id]} taguru case {case_id}"
            for case_id in CASE_IDS
        ]
    )
    result.stdout.fnmatch_lines([f"eval.jsonl::{case_id} PASSED (*" for case_id in CASE_IDS])


def test_collect_only_makes_no_request(suite: Suite, listener: CountingListener) -> None:
    result = suite.run("--collect-only", "-q", "--taguru-url", listener.url, serve=False)

    assert result.ret == 0
    result.stdout.fnmatch_lines([f"eval.jsonl::{case_id}" for case_id in CASE_IDS])
    assert listener.connections == 0
    assert not (suite.path / "evaluation.json").exists()


def test_last_failed_reruns_only_the_regressed_case(suite: Suite) -> None:
    thresholds = suite.write_thresholds(
        {
            "taguru_evaluate_thresholds": 1,
            "cases": {"overrides": {"c-miss": {"recall.mrr": {"min": 1.0}}}},
        }
    )
    # The cache provider is on for these runs (BASE_ARGS turn it off for the others).
    first = suite.run("--taguru-thresholds", thresholds, "-p", "cacheprovider")
    assert first.ret == 3
    rerun = suite.run("--taguru-thresholds", thresholds, "-p", "cacheprovider", "--lf")

    # A partial run: the gate result is skipped, the complete artifact stays.
    assert rerun.ret == 3
    rerun.assert_outcomes(failed=1, skipped=1)
    assert [case["case_id"] for case in suite.artifact("evaluation.partial.json")["cases"]] == [
        "c-miss"
    ]
    assert [case["case_id"] for case in suite.artifact()["cases"]] == CASE_IDS
    failed_first = suite.run("--taguru-thresholds", thresholds, "-p", "cacheprovider", "--ff", "-v")
    failed_first.stdout.fnmatch_lines(["eval.jsonl::c-miss FAILED*", "eval.jsonl::c-alpha PASSED*"])
    failed_first.stdout.fnmatch_lines(["eval.jsonl::[[]thresholds] PASSED*"])
    assert [case["case_id"] for case in suite.artifact()["cases"]] == CASE_IDS


def test_last_failed_after_a_failed_aggregate_reruns_the_whole_dataset(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    thresholds = suite.write_thresholds(
        {"taguru_evaluate_thresholds": 1, "aggregate": {"recall.mrr": {"min": 0.9}}}
    )
    first = suite.run("--taguru-thresholds", thresholds, "-p", "cacheprovider", *dist)
    assert first.ret == 3
    first.assert_outcomes(passed=4, failed=1)
    # Only eval.jsonl::[thresholds] failed; no item has that id, so --lf runs every case and
    # the aggregate bound is judged again.
    rerun = suite.run("--taguru-thresholds", thresholds, "-p", "cacheprovider", "--lf", *dist)

    assert rerun.ret == 3
    rerun.assert_outcomes(passed=4, failed=1)
    assert "aggregate_skipped" not in suite.artifact()["thresholds"]


def test_collect_only_lists_the_cases_not_the_gate_result(suite: Suite) -> None:
    thresholds = suite.write_thresholds({"taguru_evaluate_thresholds": 1})
    result = suite.run("--collect-only", "-q", "--taguru-thresholds", thresholds)

    assert result.ret == 0
    assert "[thresholds]" not in result.stdout.str()
    result.stdout.fnmatch_lines(["4 tests collected in *"])


def test_eval_file_outside_the_given_paths_joins_the_collection(suite: Suite) -> None:
    suite.pytester.makepyfile(test_other="def test_ordinary():\n    pass\n")
    (suite.path / "sub").mkdir()
    suite.pytester.makepyfile(**{"sub/test_sub": "def test_in_sub():\n    pass\n"})
    result = suite.run("sub")

    assert result.ret == 0
    result.assert_outcomes(passed=5)


def test_listing_fixtures_makes_no_request(suite: Suite, listener: CountingListener) -> None:
    result = suite.run("--fixtures", "--taguru-url", listener.url, serve=False)

    assert result.ret == 0
    assert listener.connections == 0


# --- selection narrows the eval set too (the eval file configured in the ini file) -----------


def run_without_flags(suite: Suite, *args: str) -> pytest.RunResult:
    """A run whose only taguru settings come from the ini file."""
    suite.write_ini("taguru_eval = eval.jsonl\ntaguru_serve = corpus.ndjson\n")
    suite.pytester.makepyfile(test_x="def test_ok():\n    pass\n")
    plain = (*QUIET_PLUGINS, "-p", "no:cacheprovider", *args)
    if "-n" in args:
        return suite.pytester.runpytest_subprocess(*plain)
    return suite.pytester.runpytest_inprocess(*plain)


@pytest.mark.parametrize("selection", ["test_x.py", "test_x.py::test_ok"])
def test_naming_other_tests_runs_no_case(
    suite: Suite, selection: str, dist: tuple[str, ...]
) -> None:
    result = run_without_flags(suite, selection, *dist)

    assert result.ret == 0
    result.assert_outcomes(passed=1)
    assert "eval.jsonl" not in result.stdout.str()
    assert "evaluate →" not in result.stderr.str()  # not even a preflight
    assert not (suite.path / "evaluation.json").exists()


@pytest.mark.parametrize(
    ("selection", "passed"),
    [
        pytest.param((), 5, id="no-arguments"),
        pytest.param(("-k", "c-alpha or test_ok"), 2, id="keyword"),
        pytest.param(("eval.jsonl",), 4, id="the-eval-file"),
        pytest.param(("eval.jsonl::c-beta", "test_x.py"), 2, id="a-case-and-a-test"),
        pytest.param(("test_x.py", "--taguru-context", "mini"), 5, id="a-typed-flag"),
    ],
)
def test_selections_that_include_the_eval_set(
    suite: Suite, selection: tuple[str, ...], passed: int, dist: tuple[str, ...]
) -> None:
    result = run_without_flags(suite, *selection, *dist)

    assert result.ret == 0
    result.assert_outcomes(passed=passed)
    result.stderr.fnmatch_lines(["evaluate → http://127.0.0.1:*"])
