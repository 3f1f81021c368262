"""How taguru's exit codes combine with ordinary pytest outcomes in one session.

Precedence: usage or input error 2 > the run could not complete, or any ordinary failure 1 >
quality regression 3 (``--taguru-regression-exit-code``) > pytest's "no tests ran" 5 > 0.
"""

import pytest
from e2e import Suite

GATE_FAILS = {"taguru_evaluate_thresholds": 1, "aggregate": {"recall.recall_at_k": {"min": 0.9}}}
GATE_PASSES = {"taguru_evaluate_thresholds": 1}


@pytest.mark.parametrize(
    ("ordinary", "gate", "expected"),
    [
        pytest.param("assert True", GATE_FAILS, 3, id="ordinary-pass+gate-fail"),
        pytest.param("assert False", GATE_PASSES, 1, id="ordinary-fail+gate-pass"),
        pytest.param("assert False", GATE_FAILS, 1, id="ordinary-fail+gate-fail"),
        pytest.param("assert False", None, 1, id="ordinary-fail+report-only"),
    ],
)
def test_ordinary_tests_in_the_same_session(
    suite: Suite, ordinary: str, gate: dict[str, object] | None, expected: int
) -> None:
    suite.pytester.makepyfile(test_ordinary=f"def test_ordinary():\n    {ordinary}\n")
    (suite.path / "evaluation.json").write_text("the previous run", encoding="utf-8")
    args = () if gate is None else ("--taguru-thresholds", suite.write_thresholds(gate))
    result = suite.run(*args)

    assert result.ret == expected
    previous = (suite.path / "evaluation.json").read_text(encoding="utf-8") == "the previous run"
    # taguru writes no artifact on exit 1: a file already there is kept as it was.
    assert previous == (expected == 1)
    if expected == 1:
        result.stdout.fnmatch_lines(
            [
                "  evaluation.json was not written: 1 test(s) or collection error(s) other than "
                "case regressions failed (an ordinary test, an errored case, a crashed worker); "
                "the session exits 1"
            ]
        )


def test_a_collection_error_elsewhere_writes_no_artifact_and_exits_1(suite: Suite) -> None:
    suite.pytester.makepyfile(test_broken="import no_such_module_anywhere\n")
    result = suite.run()

    assert result.ret == 1
    result.stderr.fnmatch_lines(
        [
            "taguru: evaluate: the pytest session did not complete (status 2); "
            "evaluation.json was not written"
        ]
    )
    assert not (suite.path / "evaluation.json").exists()


def test_a_session_stopped_by_pytest_exit_writes_no_artifact(suite: Suite) -> None:
    suite.pytester.makeconftest(
        "import pytest\n\n\ndef pytest_runtest_call(item):\n"
        "    if item.name == 'c-gamma':\n        pytest.exit('stop here')\n"
    )
    result = suite.run()

    assert result.ret == 1
    assert not (suite.path / "evaluation.json").exists()


def test_pytest_usage_errors_keep_pytest_status_4(suite: Suite) -> None:
    # Argument parsing happens before any plugin code runs; pytest reports and exits 4.
    unknown_flag = suite.run("--no-such-flag", serve=False, isolated=True)
    assert unknown_flag.ret == 4
    # A usage error found during collection is re-raised by pytest after the session finished:
    # still 4, and the evaluation, already started, writes nothing.
    missing_path = suite.run("no-such-dir", isolated=True)

    assert missing_path.ret == 4
    missing_path.stderr.fnmatch_lines(
        ["taguru: evaluate: the pytest session did not complete (status 4)*"]
    )
    assert not (suite.path / "evaluation.json").exists()


def test_an_exit_1_session_still_writes_the_html_report_saying_so(suite: Suite) -> None:
    suite.pytester.makepyfile(test_ordinary="def test_ordinary():\n    assert False\n")
    result = suite.run("--taguru-html", "report.html")

    assert result.ret == 1
    assert not (suite.path / "evaluation.json").exists()
    page = (suite.path / "report.html").read_text(encoding="utf-8")
    assert "it exits 1, whatever the gate says, and evaluation.json was not written." in page
