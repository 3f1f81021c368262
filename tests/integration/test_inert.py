"""Without ``--taguru-eval`` the plugin does nothing and loads nothing; ``-p no:taguru`` works."""

import pytest
from e2e import QUIET_PLUGINS, Suite

INERT_CHECK = """
import sys


def test_run_machinery_not_imported():
    loaded = sorted(name for name in sys.modules if name.startswith("pytest_taguru"))
    assert loaded == ["pytest_taguru", "pytest_taguru.flags", "pytest_taguru.plugin"]
"""


def test_without_an_eval_file_the_plugin_is_inert(suite: Suite) -> None:
    suite.pytester.makepyfile(test_inert=INERT_CHECK)
    suite.write_ini("taguru_url = http://127.0.0.1:1\ntaguru_out = never.json\n")
    result = suite.pytester.runpytest_subprocess(*QUIET_PLUGINS, "-p", "no:cacheprovider")

    assert result.ret == 0
    result.assert_outcomes(passed=1)
    assert "evaluate" not in result.stdout.str() + result.stderr.str()
    assert not (suite.path / "never.json").exists()


@pytest.mark.parametrize(
    "flag", [("--taguru-context", "mini"), ("--taguru-assembly",), ("--taguru-out", "x.json")]
)
def test_a_typed_flag_without_an_eval_file_exits_2(suite: Suite, flag: tuple[str, ...]) -> None:
    result = suite.pytester.runpytest_subprocess(*QUIET_PLUGINS, *flag)

    assert result.ret == 2
    result.stderr.fnmatch_lines(["taguru: evaluate: --taguru-eval FILE is required"])


def test_disabling_the_plugin(suite: Suite) -> None:
    suite.pytester.makepyfile(test_ordinary="def test_ordinary():\n    pass\n")
    suite.write_ini("taguru_eval = eval.jsonl\ntaguru_serve = corpus.ndjson\n")
    disabled = suite.pytester.runpytest_subprocess(
        *QUIET_PLUGINS, "-p", "no:taguru", "-W", "ignore"
    )

    assert disabled.ret == 0
    disabled.assert_outcomes(passed=1)
    assert not (suite.path / "evaluation.json").exists()
    flagged = suite.pytester.runpytest_subprocess(
        *QUIET_PLUGINS, "-p", "no:taguru", "--taguru-eval", "eval.jsonl"
    )
    assert flagged.ret == 4
