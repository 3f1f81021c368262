"""Collection: node ids in file order, item locations, --collect-only, --lf/--ff."""

from e2e import CASE_IDS, CASE_LINES, CountingListener, Suite

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

    assert rerun.ret == 3
    rerun.assert_outcomes(failed=1)
    assert [case["case_id"] for case in suite.artifact()["cases"]] == ["c-miss"]
    failed_first = suite.run("--taguru-thresholds", thresholds, "-p", "cacheprovider", "--ff", "-v")
    failed_first.stdout.fnmatch_lines(["eval.jsonl::c-miss FAILED*", "eval.jsonl::c-alpha PASSED*"])
    assert [case["case_id"] for case in suite.artifact()["cases"]] == CASE_IDS


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
