"""``--taguru-record DIR`` / ``--taguru-replay DIR`` end to end, each with and without
pytest-xdist: a replay writes the recorded artifact without any server, a case its recording
cannot answer fails loudly, a recording for another eval set or context is refused, and no
recorded file holds the token."""

import json
import re
from pathlib import Path
from typing import Any

import pytest
from e2e import QUIET_PLUGINS, TOKEN, CountingListener, Suite, strip_volatile
from fault_proxy import FaultProxy, reset, status
from paths import EXAMPLE_SUITE

from pytest_taguru.server.runner import ReferenceServer

CASE_VIOLATION = {
    "taguru_evaluate_thresholds": 1,
    "cases": {"overrides": {"c-miss": {"recall.recall_at_k": {"min": 1.0}}}},
}


def comparable(artifact: dict[str, Any]) -> Any:
    """An artifact without what a replay may change: latencies, time stamp, output path and
    the ``replayed`` note."""
    artifact["inputs"].pop("replayed", None)
    return strip_volatile(artifact)


def recorded_files(directory: Path) -> dict[str, str]:
    return {
        str(path.relative_to(directory)): path.read_text(encoding="utf-8")
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def failure_section(result: pytest.RunResult) -> str:
    """The failure texts, latencies and the pytest-xdist worker that ran the case blanked."""
    text = result.stdout.str()
    section = text[text.index("= FAILURES =") : text.index("- taguru evaluate -")]
    section = re.sub(r"^\[gw\d+\] ", "[gw…] ", section, flags=re.M)
    return re.sub(r"\(\d+ ms\)", "(… ms)", section)


def test_a_replay_of_the_example_suite_writes_the_recorded_artifact(
    pytester: pytest.Pytester, dist: tuple[str, ...]
) -> None:
    def run(*args: str) -> pytest.RunResult:
        # The suite's pytest.ini serves its corpus (taguru_serve) and gates it: a typed
        # --taguru-replay replaces the server.
        return pytester.runpytest_subprocess(
            *QUIET_PLUGINS, "-p", "no:cacheprovider", str(EXAMPLE_SUITE), *args, *dist
        )

    recorded = run("--taguru-record", "rec", "--taguru-out", "recorded.json")
    assert recorded.ret == 0, recorded.stdout.str() + recorded.stderr.str()
    recorded.stdout.fnmatch_lines(["  recorded every answer in rec (corpus data: *)"])
    files = recorded_files(pytester.path / "rec")
    assert len([name for name in files if name.startswith("cases/")]) == 36
    assert {"README.md", "preflight.json", "after-run.json"} <= set(files)

    replayed = run("--taguru-replay", "rec", "--taguru-out", "replayed.json")
    assert replayed.ret == 0, replayed.stdout.str() + replayed.stderr.str()
    artifact = json.loads((pytester.path / "replayed.json").read_text(encoding="utf-8"))
    original = json.loads((pytester.path / "recorded.json").read_text(encoding="utf-8"))
    assert artifact["inputs"]["replayed"] == "rec"
    assert artifact["inputs"]["url"] == original["inputs"]["url"]
    assert comparable(artifact) == comparable(original)
    replayed.stdout.fnmatch_lines(
        ["  replayed from rec: no request reached a server", "  thresholds: PASS *"]
    )
    replayed.stderr.fnmatch_lines([f"evaluate → {original['inputs']['url']} (replayed from rec)"])
    assert "embedded server" not in replayed.stderr.str()


def test_a_recording_holds_no_token_and_replays_a_failing_case_without_any_server(
    suite: Suite,
    dist: tuple[str, ...],
    monkeypatch: pytest.MonkeyPatch,
    listener: CountingListener,
) -> None:
    thresholds = suite.write_thresholds(CASE_VIOLATION)
    monkeypatch.setenv("TAGURU_API_TOKEN", TOKEN)  # the embedded server requires it
    recorded = suite.run(
        "--taguru-thresholds", thresholds, "--taguru-record", "rec", "--taguru-out", "a.json", *dist
    )
    assert recorded.ret == 3

    for name, text in recorded_files(suite.path / "rec").items():
        assert TOKEN not in text, name
        assert "authorization" not in text.lower(), name
    # The drill-down's extra call for the failed case is recorded with its lanes' calls.
    cases = recorded_files(suite.path / "rec" / "cases")
    [miss] = [text for name, text in cases.items() if name.startswith("c-miss-")]
    assert "/contexts/mini/citations" in miss

    # Nothing to reach: the recorded server is gone with its session, TAGURU_ADDR points at a
    # port that counts connections, and the token is unset.
    monkeypatch.delenv("TAGURU_API_TOKEN")
    monkeypatch.setenv("TAGURU_ADDR", listener.url.removeprefix("http://"))
    replayed = suite.run(
        "--taguru-thresholds",
        thresholds,
        "--taguru-replay",
        "rec",
        "--taguru-out",
        "b.json",
        *dist,
        serve=False,
    )
    assert replayed.ret == 3
    replayed.assert_outcomes(passed=4, failed=1)
    assert comparable(suite.artifact("b.json")) == comparable(suite.artifact("a.json"))
    assert listener.connections == 0
    replayed_text, recorded_text = failure_section(replayed), failure_section(recorded)
    assert replayed_text.split("reproduce (")[0] == recorded_text.split("reproduce (")[0]
    replayed.stdout.fnmatch_lines(["FAILED eval.jsonl::c-miss - recall.recall_at_k 0 < min 1"])


def test_what_retries_and_faults_made_of_a_call_replays_as_it_was(
    suite: Suite,
    dist: tuple[str, ...],
    served_corpus: ReferenceServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The final outcome of each call is recorded (what the case used): a search answered after
    a retried 503, a citation still 429 when the retries ran out, a resolve whose connection was
    reset each time. The replay sends nothing again and counts the recorded retries."""
    monkeypatch.setenv("TAGURU_API_TOKEN", TOKEN)
    with FaultProxy(served_corpus.url) as proxy:
        proxy.add(status(503, b"busy", {"Retry-After": "0"}), "sources/search")
        slow = b'{"status":"error","code":"rate_limited","error":"slow down"}'
        proxy.add(status(429, slow, {"Retry-After": "0"}), "/citations", times=2)
        proxy.add(reset(), "/resolve", times=2)
        args = ("--taguru-url", proxy.url, "--taguru-retries", "1")
        recorded = suite.run(
            *args, "--taguru-record", "rec", "--taguru-out", "a.json", *dist, serve=False
        )
        assert recorded.ret == 0
    monkeypatch.delenv("TAGURU_API_TOKEN")

    replayed = suite.run("--taguru-replay", "rec", "--taguru-out", "b.json", *dist, serve=False)

    assert replayed.ret == 0
    original = suite.artifact("a.json")
    assert comparable(suite.artifact("b.json")) == comparable(original)
    cases = {case["case_id"]: case for case in original["cases"]}
    assert sum(case.get("retries", 0) for case in cases.values()) == 3
    citation = json.dumps(cases["c-alpha"]["citations"])
    assert "answered 429: slow down (Retry-After: 0)" in citation
    assert "Connection reset by peer" in json.dumps(cases["c-alpha"])


def test_a_changed_eval_line_replays_as_a_loud_failure_of_that_case(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    assert suite.run("--taguru-record", "rec", *dist).ret == 0
    eval_file = suite.path / "eval.jsonl"
    eval_file.write_text(
        eval_file.read_text(encoding="utf-8").replace("beta gizmo blue", "beta gizmo red"),
        encoding="utf-8",
    )

    result = suite.run(
        "--taguru-replay", "rec", "--taguru-out", "replayed.json", *dist, serve=False
    )

    assert result.ret == 1
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ taguru case c-beta _*",
            "replay: 1 request(s) of case 'c-beta' not recorded:",
            '  no recorded answer to POST /contexts/mini/sources/search {"limit":10,'
            '"query":"beta gizmo red",*}: rec/cases/c-beta-*.json holds no answer to it',
            "*replayed.json was not written: *",
            "FAILED eval.jsonl::c-beta - replay: 1 request(s) of case 'c-beta' not recorded",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert not (suite.path / "replayed.json").exists()


def test_cases_left_from_another_recording_are_never_served(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    assert suite.run("--taguru-record", "rec", *dist).ret == 0
    # Recorded again, one case only, against a new server (the embedded one on another port):
    # the other cases' files belong to the first recording.
    assert suite.run("--taguru-record", "rec", "-k", "c-alpha", *dist).ret == 0

    result = suite.run("--taguru-replay", "rec", *dist, serve=False)

    assert result.ret == 1
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(["*rec/cases/c-beta-*.json was recorded against *"])
    assert "it is left from another recording" in result.stdout.str()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            {"name": "renamed"},
            "rec/preflight.json: the recording was made for eval set 'mini' of 4 case(s), not "
            "for eval.jsonl's eval set 'renamed' of 4 case(s); record it again with "
            "--taguru-record",
            id="other-eval-set",
        ),
        pytest.param(
            {"default_target": {"context": "maxi"}},
            "rec/preflight.json: the recording was made for context 'mini', not 'maxi'",
            id="other-context",
        ),
    ],
)
def test_a_recording_for_another_eval_set_or_context_is_refused_before_any_case(
    suite: Suite, dist: tuple[str, ...], change: dict[str, Any], message: str
) -> None:
    assert suite.run("--taguru-record", "rec", *dist).ret == 0
    eval_file = suite.path / "eval.jsonl"
    header, rest = eval_file.read_text(encoding="utf-8").split("\n", 1)
    eval_file.write_text(json.dumps({**json.loads(header), **change}) + "\n" + rest, "utf-8")

    result = suite.run(
        "--taguru-replay", "rec", "--taguru-out", "r.json", *dist, serve=False, isolated=True
    )

    assert result.ret == 2
    result.stderr.fnmatch_lines([f"taguru: evaluate: {message}"])
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()
    assert not (suite.path / "r.json").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ("--taguru-replay", "rec", "--taguru-url", "http://127.0.0.1:1"),
            "--taguru-replay cannot be combined with --taguru-url",
            id="replay-and-url",
        ),
        pytest.param(
            ("--taguru-replay", "rec", "--taguru-serve", "corpus.ndjson"),
            "--taguru-replay cannot be combined with --taguru-serve",
            id="replay-and-serve",
        ),
        pytest.param(
            ("--taguru-replay", "rec", "--taguru-record", "rec2"),
            "--taguru-replay cannot be combined with --taguru-record",
            id="replay-and-record",
        ),
        pytest.param(
            ("--taguru-replay", ""), "--taguru-replay needs a directory path", id="empty-path"
        ),
        pytest.param(
            ("--taguru-replay", "nowhere"),
            "--taguru-replay: nowhere/preflight.json: No such file or directory (os error 2)",
            id="no-recording",
        ),
    ],
)
def test_replay_usage_errors_exit_2(
    suite: Suite, dist: tuple[str, ...], args: tuple[str, ...], message: str
) -> None:
    result = suite.run(*args, *dist, serve=False, isolated=True)

    assert result.ret == 2
    result.stderr.fnmatch_lines([f"taguru: evaluate: {message}"])


def test_a_replay_configured_in_the_ini_file_gives_way_to_a_typed_server(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    assert suite.run("--taguru-record", "rec", *dist).ret == 0
    suite.write_ini("taguru_eval = eval.jsonl\ntaguru_replay = rec\n")
    replayed = suite.run(*dist, serve=False)
    assert replayed.ret == 0
    replayed.stdout.fnmatch_lines(["  replayed from rec: *"])

    live = suite.run(*dist)  # --taguru-serve typed: the run is live again

    assert live.ret == 0
    assert "replayed" not in live.stdout.str()
