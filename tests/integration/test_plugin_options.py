"""Every ``--taguru-*`` flag and its ini key (evaluate-run.md §1.2-§1.6)."""

import pytest
from e2e import TOKEN, Suite

from pytest_taguru.server.runner import ReferenceServer


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ("--taguru-max-items", "0"),
            "--taguru-max-items needs a positive integer",
            id="max-items-0",
        ),
        pytest.param(
            ("--taguru-max-bytes", "-1"),
            "--taguru-max-bytes needs a positive integer",
            id="max-bytes",
        ),
        pytest.param(
            ("--taguru-max-tokens", "1_000"),
            "--taguru-max-tokens needs a positive integer",
            id="max-tokens",
        ),
        pytest.param(
            ("--taguru-rerank", "m"),
            "--taguru-rerank requires --taguru-assembly",
            id="rerank-alone",
        ),
        pytest.param(
            ("--taguru-max-items", "5", "--taguru-rerank", "m"),
            "--taguru-rerank requires --taguru-assembly",
            id="values-before-support",
        ),
        pytest.param(
            ("--taguru-url", "http://user:pw@127.0.0.1:1"),
            "taguru: evaluate: the URL must not carry credentials (user:password@…) — set "
            "TAGURU_API_TOKEN (or TAGURU_API_TOKENS) instead",
            id="userinfo",
        ),
        pytest.param(
            ("--taguru-url", "127.0.0.1:8248"),
            "the --taguru-url value could not be parsed as a URL",
            id="unparsable-url",
        ),
        pytest.param(
            ("--taguru-serve", "corpus.ndjson", "--taguru-url", "http://127.0.0.1:1"),
            "--taguru-serve cannot be combined with --taguru-url",
            id="serve-and-url",
        ),
        pytest.param(
            ("--taguru-serve", "nope.ndjson"), "cannot read nope.ndjson: *", id="serve-missing"
        ),
    ],
)
def test_bad_values_exit_2_before_the_session(
    suite: Suite, args: tuple[str, ...], message: str
) -> None:
    result = suite.run(*args, serve=False, isolated=True)

    assert result.ret == 2
    pattern = message if message.startswith("taguru: ") else f"taguru: evaluate: {message}"
    result.stderr.fnmatch_lines([pattern])
    assert "pw@" not in result.stderr.str()
    assert not (suite.path / "evaluation.json").exists()


def test_a_malformed_import_file_exits_2(suite: Suite) -> None:
    (suite.path / "broken.ndjson").write_text('{"passage":"orphan"}\n', encoding="utf-8")
    result = suite.run("--taguru-serve", "broken.ndjson", serve=False, isolated=True)

    assert result.ret == 2
    result.stderr.fnmatch_lines(["taguru: evaluate: broken.ndjson: *"])


def test_context_defaults_to_the_eval_header_and_the_flag_overrides_it(suite: Suite) -> None:
    result = suite.run("--taguru-context", "other", "--collect-only", "-q")
    assert result.ret == 0
    (suite.path / "eval.jsonl").write_text(
        '{"taguru_eval":1}\n{"case_id":"a","query":"alpha"}\n', encoding="utf-8"
    )
    missing = suite.run(isolated=True)

    assert missing.ret == 2
    missing.stderr.fnmatch_lines(
        [
            "taguru: evaluate: --taguru-context NAME is required "
            "(or a default_target.context in the eval header)"
        ]
    )


def test_url_and_out(
    suite: Suite, served_corpus: ReferenceServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAGURU_API_TOKEN", TOKEN)
    (suite.path / "reports").mkdir()
    result = suite.run(
        "--taguru-url",
        served_corpus.url + "/some/prefix/../..//",
        "--taguru-out",
        "reports/run.json",
        serve=False,
    )

    assert result.ret == 0
    inputs = suite.artifact("reports/run.json")["inputs"]
    assert inputs["url"] == served_corpus.url
    assert inputs["out"] == "reports/run.json"
    result.stdout.fnmatch_lines(["  wrote reports/run.json"])


def test_config_file_supplies_address_and_token(
    suite: Suite, served_corpus: ReferenceServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (suite.path / "taguru.env").write_text(
        f"# test config\nTAGURU_ADDR={served_corpus.address}\nTAGURU_API_TOKEN={TOKEN}\n"
        "TAGURU_ADRR=typo\n",
        encoding="utf-8",
    )
    flag = suite.run("--taguru-config", "taguru.env", serve=False)

    assert flag.ret == 0
    flag.stderr.fnmatch_lines(
        [
            "taguru: config: TAGURU_ADRR is not a variable taguru reads (typo?)",
            f"evaluate → {served_corpus.url}",
        ]
    )
    monkeypatch.setenv("TAGURU_CONFIG", "taguru.env")
    environment = suite.run(serve=False)
    assert environment.ret == 0


def test_a_malformed_config_file_exits_2(suite: Suite) -> None:
    (suite.path / "taguru.env").write_text("TAGURU_ADDR=127.0.0.1:1\ngarbage\n", encoding="utf-8")
    result = suite.run("--taguru-config", "taguru.env", serve=False, isolated=True)

    assert result.ret == 2
    result.stderr.fnmatch_lines(
        ["taguru: config taguru.env: line 2: expected KEY=VALUE, got 'garbage'"]
    )


def test_a_wrong_token_is_a_run_failure(
    suite: Suite, served_corpus: ReferenceServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAGURU_API_TOKEN", "not-the-token")
    result = suite.run("--taguru-url", served_corpus.url, serve=False)

    assert result.ret == 1
    result.stderr.fnmatch_lines(["taguru: evaluate: *"])
    assert "not-the-token" not in result.stderr.str() + result.stdout.str()


INI_KEYS = """\
taguru_eval = suite/eval.jsonl
taguru_serve = suite/corpus.ndjson
taguru_out = suite/ini.json
taguru_context = mini
taguru_thresholds = suite/thresholds.json
"""


@pytest.mark.parametrize("ini_file", ["pytest.ini", "pyproject.toml"])
def test_ini_keys_are_relative_to_the_ini_file(suite: Suite, ini_file: str) -> None:
    suite_dir = suite.path / "suite"
    suite_dir.mkdir()
    for name in ("eval.jsonl", "corpus.ndjson"):
        (suite.path / name).rename(suite_dir / name)
    suite.write_thresholds({"taguru_evaluate_thresholds": 1}, "suite/thresholds.json")
    if ini_file == "pytest.ini":
        suite.write_ini(INI_KEYS)
    else:
        quoted = "".join(
            f'{key} = "{value}"\n'
            for key, value in (line.split(" = ") for line in INI_KEYS.splitlines())
        )
        suite.pytester.makepyprojecttoml("[tool.pytest.ini_options]\n" + quoted)
    work = suite.path / "work"
    work.mkdir()
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.chdir(work)
    try:
        result = suite.pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--rootdir", str(suite.path), "-c", str(suite.path / ini_file)
        )
    finally:
        monkeypatch.undo()

    assert result.ret == 0
    result.assert_outcomes(passed=5)  # the four cases and the passing [thresholds] result
    artifact = suite.artifact("suite/ini.json")
    assert artifact["inputs"]["eval"]["path"] == "../suite/eval.jsonl"
    assert artifact["thresholds"]["passed"] is True


def test_the_command_line_wins_over_ini(suite: Suite) -> None:
    suite.write_ini("taguru_out = from-ini.json\ntaguru_context = nope\n")
    result = suite.run("--taguru-out", "from-flag.json", "--taguru-context", "mini")

    assert result.ret == 0
    assert (suite.path / "from-flag.json").is_file()
    assert not (suite.path / "from-ini.json").exists()


def test_a_typed_url_replaces_the_ini_embedded_server(
    suite: Suite, served_corpus: ReferenceServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The example suite's pytest.ini serves the corpus; --taguru-url points the same suite at
    # another server without editing the ini.
    monkeypatch.setenv("TAGURU_API_TOKEN", TOKEN)
    suite.write_ini("taguru_serve = corpus.ndjson\n")
    result = suite.run("--taguru-url", served_corpus.url, serve=False)

    assert result.ret == 0
    assert suite.artifact("evaluation.json")["inputs"]["url"] == served_corpus.url


def test_config_notes_are_printed_before_the_error_that_ends_the_run(suite: Suite) -> None:
    (suite.path / "taguru.env").write_text("TAGURU_ADRR=typo\nTAGURU_ADDR=127.0.0.1:0\n")
    result = suite.run("--taguru-config", "taguru.env", serve=False, isolated=True)

    assert result.ret == 2
    result.stderr.fnmatch_lines(
        [
            "taguru: config: TAGURU_ADRR is not a variable taguru reads (typo?)",
            "taguru: evaluate: TAGURU_ADDR (127.0.0.1:0) binds to port 0 *",
        ]
    )
