"""Preflight and the run's own failures: exit 1 or 2, and never an artifact (evaluate-run.md
§1.7, §3.1, §3.3); a file already at ``--taguru-out`` survives."""

import http.server
import json
import subprocess
import sys
import threading
import time

import pytest
from e2e import BASE_ARGS, EVAL, SERVE_ARGS, CountingListener, Suite

PREVIOUS = '{"an earlier": "artifact"}'

# Stops the embedded server after the last case, so re-reading the context after the run fails.
STOP_SERVER_CONFTEST = """
def pytest_runtest_teardown(item):
    if item.name == "c-miss":
        item.config.pluginmanager.get_plugin("taguru-controller").controller.server.stop()
"""


@pytest.fixture
def previous_artifact(suite: Suite) -> str:
    (suite.path / "evaluation.json").write_text(PREVIOUS, encoding="utf-8")
    return PREVIOUS


def assert_untouched(suite: Suite) -> None:
    assert (suite.path / "evaluation.json").read_text(encoding="utf-8") == PREVIOUS


def test_every_missing_expected_source_is_listed_then_exit_2(
    suite: Suite, previous_artifact: str, dist: tuple[str, ...]
) -> None:
    broken = EVAL.replace('"docs/gamma.md"', '"docs/nope.md"').replace(
        '"source":"docs/beta.md","paragraphs":[1]', '"source":"docs/gone.md","relevance":0'
    )
    (suite.path / "eval.jsonl").write_text(broken, encoding="utf-8")
    result = suite.run(*dist, isolated=True)

    assert result.ret == 2
    result.stderr.fnmatch_lines(
        [
            "taguru: evaluate: case 'c-gamma': expected_sources names 'docs/nope.md', "
            "which 'mini' does not carry",
            "taguru: evaluate: case 'c-miss': expected_sources names 'docs/gone.md', "
            "which 'mini' does not carry",
        ]
    )
    assert "passed" not in result.stdout.str()
    assert_untouched(suite)


def test_an_unknown_context_exits_2(suite: Suite, previous_artifact: str) -> None:
    result = suite.run("--taguru-context", "nope", isolated=True)

    assert result.ret == 2
    result.stderr.fnmatch_lines(["evaluate → http://127.0.0.1:*", "taguru: evaluate: *nope*"])
    assert_untouched(suite)


def test_an_unreachable_server_exits_1(
    suite: Suite, previous_artifact: str, listener: CountingListener
) -> None:
    result = suite.run("--taguru-url", listener.url, serve=False, isolated=True)

    assert result.ret == 1
    result.stderr.fnmatch_lines([f"taguru: evaluate: server at {listener.url} is not reachable: *"])
    assert_untouched(suite)


def test_a_failed_reread_after_the_run_exits_1(suite: Suite, previous_artifact: str) -> None:
    suite.pytester.makeconftest(STOP_SERVER_CONFTEST)
    result = suite.run()

    assert result.ret == 1
    result.assert_outcomes(passed=4)
    result.stderr.fnmatch_lines(
        ["taguru: evaluate: mini: could not re-read the context after the run: *"]
    )
    assert "wrote" not in result.stdout.str()
    assert_untouched(suite)


def test_an_unwritable_artifact_exits_1_before_any_case_or_request(
    suite: Suite, listener: CountingListener, dist: tuple[str, ...]
) -> None:
    args = ("--taguru-out", "missing-dir/evaluation.json", "--taguru-url", listener.url)
    result = suite.run(*args, *dist, serve=False, isolated=True)

    assert result.ret == 1
    assert result.stderr.lines == [
        "taguru: evaluate: writing missing-dir/evaluation.json: "
        "No such file or directory (os error 2)"
    ]
    assert result.stdout.str() == ""  # no session: nothing collected, nothing run
    assert listener.connections == 0


def test_an_artifact_path_that_is_a_directory_exits_1(suite: Suite) -> None:
    (suite.path / "taken").mkdir()
    result = suite.run("--taguru-out", "taken", isolated=True)

    assert result.ret == 1
    result.stderr.fnmatch_lines(["taguru: evaluate: writing taken: Is a directory (os error 21)"])


def test_a_failed_reread_fails_the_gate_result_too(suite: Suite, previous_artifact: str) -> None:
    suite.pytester.makeconftest(STOP_SERVER_CONFTEST)
    thresholds = suite.write_thresholds({"taguru_evaluate_thresholds": 1})
    result = suite.run("--taguru-thresholds", thresholds, "--junitxml=junit.xml")

    assert result.ret == 1
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(
        ["FAILED eval.jsonl::[[]thresholds] - not judged: mini: could not re-read the context*"]
    )
    assert_untouched(suite)


@pytest.mark.parametrize(
    ("case_line", "message"),
    [
        pytest.param('{"case_id":"x"', "eval.jsonl: line 7: not JSON: *", id="not-json"),
        pytest.param(
            '{"case_id":"c-beta","query":"again"}',
            "eval.jsonl: line 7: duplicate case_id 'c-beta'",
            id="duplicate",
        ),
        pytest.param(
            '{"case_id":"x","query":"q","options":{"limit":1001}}',
            "case 'x': options.limit must be 1..=1000, got 1001",
            id="limit",
        ),
    ],
)
def test_dataset_errors_exit_2_before_any_request(
    suite: Suite, listener: CountingListener, case_line: str, message: str
) -> None:
    (suite.path / "eval.jsonl").write_text(EVAL + case_line + "\n", encoding="utf-8")
    result = suite.run("--taguru-url", listener.url, serve=False, isolated=True)

    assert result.ret == 2
    result.stderr.fnmatch_lines([f"taguru: evaluate: {message}"])
    assert listener.connections == 0


# --- addresses: taguru's resolution and exit codes, and what to type instead ----------------------


def test_a_scheme_less_url_that_does_not_parse_exits_2_with_a_hint(suite: Suite) -> None:
    result = suite.run("--taguru-url=127.0.0.1:18248", serve=False, isolated=True)

    assert result.ret == 2
    assert result.stderr.lines == [
        "taguru: evaluate: the --taguru-url value could not be parsed as a URL",
        "taguru: evaluate: hint: --taguru-url 127.0.0.1:18248: did you mean http://127.0.0.1:18248?",
    ]


def test_a_host_port_url_parses_as_a_scheme_and_fails_at_health_with_a_hint(
    suite: Suite,
) -> None:
    result = suite.run("--taguru-url=localhost:18248", serve=False, isolated=True)

    assert result.ret == 1
    result.stderr.fnmatch_lines(
        [
            "evaluate → localhost://",
            "taguru: evaluate: server at localhost:// is not reachable: *",
            "taguru: evaluate: hint: --taguru-url localhost:18248: did you mean http://localhost:18248?",
        ]
    )


def test_a_url_in_taguru_addr_fails_at_health_with_a_hint(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAGURU_ADDR", "http://127.0.0.1:18248")
    result = suite.run(serve=False, isolated=True)

    assert result.ret == 1
    result.stderr.fnmatch_lines(
        [
            "taguru: evaluate: server at http://http is not reachable: *",
            "taguru: evaluate: hint: TAGURU_ADDR takes host:port, not a URL — did you mean "
            "TAGURU_ADDR=127.0.0.1:18248 (or --taguru-url http://127.0.0.1:18248)?",
        ]
    )


SLOW_HEALTH_CONFTEST = """
import pytest_taguru.run.waiting

pytest_taguru.run.waiting.NOTICE_AFTER_SECONDS = 0.2
"""


class SlowHealth(http.server.BaseHTTPRequestHandler):
    """``/health`` answers after a while; every context is unknown."""

    def do_GET(self) -> None:
        if self.path == "/health":
            time.sleep(0.8)
            self._answer(200, {"status": "ok", "version": "0.9.3"})
        else:
            self._answer(
                404, {"status": "error", "code": "no_context", "error": "context 'mini' not found"}
            )

    def _answer(self, status: int, body: dict[str, str]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        return None


def test_the_preflight_says_what_it_waits_for(suite: Suite) -> None:
    suite.pytester.makeconftest(SLOW_HEALTH_CONFTEST)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowHealth)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        result = suite.run("--taguru-url", url, serve=False, isolated=True)
    finally:
        server.shutdown()

    assert result.ret == 2
    result.stderr.fnmatch_lines(
        [
            f"evaluate → {url}",
            f"taguru: evaluate: still waiting for GET /health at {url} (0.2 s) …",
            f"taguru: evaluate: {url}/contexts/mini answered 404: context 'mini' not found",
        ]
    )


INTERRUPT_CONFTEST = """
def pytest_runtest_call(item):
    if item.name == "c-gamma":
        raise KeyboardInterrupt
"""


def test_ctrl_c_says_it_was_interrupted(suite: Suite, previous_artifact: str) -> None:
    suite.pytester.makeconftest(INTERRUPT_CONFTEST)
    result = suite.run()

    assert result.ret == 1
    result.stderr.fnmatch_lines(
        [
            "taguru: evaluate: interrupted (Ctrl-C) after 2 of 4 case(s); "
            "evaluation.json was not written"
        ]
    )
    assert_untouched(suite)


def test_taguru_lines_never_glue_onto_the_progress_line(suite: Suite) -> None:
    suite.pytester.makeconftest(STOP_SERVER_CONFTEST)
    thresholds = suite.write_thresholds({"taguru_evaluate_thresholds": 1})
    # One stream, as a terminal shows stdout and stderr.
    command = [sys.executable, "-m", "pytest", *BASE_ARGS, *SERVE_ARGS]
    done = subprocess.run(
        [*command, "--taguru-thresholds", thresholds],
        cwd=suite.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )

    assert done.returncode == 1
    lines = done.stdout.splitlines()
    glued = [line for line in lines if "taguru: " in line and not line.startswith("taguru")]
    assert not glued
    assert any(line.startswith("taguru: evaluate: mini: could not re-read") for line in lines)
