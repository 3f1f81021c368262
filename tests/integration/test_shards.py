"""Shards end to end: ``pytest --taguru-shard I/N`` runs one shard of the eval set, and
``taguru-evaluate merge`` joins the shards' artifacts into the single complete run's artifact,
gated with the single run's exit code; a missing, foreign or partial shard is refused by name.

The example suite (36 cases) runs in 3 shards, plain and with pytest-xdist; the refusals use the
pytester suite of ``e2e`` (4 cases: shard 1/2 holds c-alpha, c-beta and c-gamma, 2/2 c-miss; of
3 shards, 1/3 holds none, 2/3 c-beta, c-gamma and c-miss, 3/3 c-alpha).
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e import Suite, strip_volatile
from paths import EXAMPLE_SUITE

from pytest_taguru.run.shard import shard_of

CLI = Path(sys.executable).with_name("taguru-evaluate")
AGGREGATE_FAILS = {
    "taguru_evaluate_thresholds": 1,
    "aggregate": {"recall.recall_at_k": {"min": 0.99}},
}
QUIET = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:anyio")
URL = re.compile(r"http://127\.0\.0\.1:[0-9]+")
NEEDS = "taguru: evaluate: --taguru-shard needs a shard I/N with 1 <= I <= N <= 10000, e.g. 2/3"


def comparable(path: Path) -> Any:
    """An artifact without what two equal runs differ in (``strip_volatile``), each embedded
    server's URL (also inside recorded error messages) replaced."""
    text = URL.sub("<url>", path.read_text(encoding="utf-8"))
    return strip_volatile(json.loads(text))


def suite_copy(directory: Path) -> None:
    """The example suite at ``directory/example_suite`` and a thresholds file it fails."""
    shutil.copytree(EXAMPLE_SUITE, directory / "example_suite", ignore=shutil.ignore_patterns(
        "evaluation.json", "report.html"))  # fmt: skip
    (directory / "fails.json").write_text(json.dumps(AGGREGATE_FAILS), encoding="utf-8")


@pytest.fixture(scope="module")
def single_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example suite run whole, once: ``single.json`` gated by its own thresholds (exit 0),
    ``failed.json`` gated by ``fails.json`` (exit 3)."""
    directory = tmp_path_factory.mktemp("single")
    suite_copy(directory)
    runs = [("single.json", (), 0), ("failed.json", ("--taguru-thresholds", "fails.json"), 3)]
    for out, extra, status in runs:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *QUIET, "example_suite", "--taguru-out", out, *extra],
            cwd=directory, capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
        assert done.returncode == status, done.stdout + done.stderr
    return directory


def merge(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.run(str(CLI), "merge", *args)


def test_the_example_suite_in_three_shards_merges_into_the_single_run(
    pytester: pytest.Pytester, dist: tuple[str, ...], single_run: Path
) -> None:
    suite_copy(pytester.path)
    lines = (EXAMPLE_SUITE / "eval.jsonl").read_text("utf-8").splitlines()[1:]
    ids = [json.loads(line)["case_id"] for line in lines if line.strip()]
    for index in (1, 2, 3):
        run = pytester.runpytest_subprocess(
            *QUIET, "example_suite", f"--taguru-shard={index}/3", "--taguru-out",
            f"shard-{index}.json", *dist,
        )  # fmt: skip
        assert run.ret == 0, run.stdout.str() + run.stderr.str()
        own = [case_id for case_id in ids if shard_of(case_id, 3) == index]
        # Only the shard's cases are items; the aggregate bounds are left to the merge.
        run.assert_outcomes(passed=len(own), skipped=1)
        artifact = json.loads((pytester.path / f"shard-{index}.json").read_text("utf-8"))
        assert [case["case_id"] for case in artifact["cases"]] == own
        assert artifact["inputs"]["shard"]["case_ids"] == ids
        assert artifact["thresholds"]["aggregate_skipped"].startswith(f"shard {index}/3 (")

    shards = ["shard-3.json", "shard-1.json", "shard-2.json"]  # any order
    passed = merge(pytester, *shards, "--out", "merged.json",
                   "--thresholds", "example_suite/thresholds.json")  # fmt: skip
    assert passed.ret == 0, passed.stderr.str()
    assert comparable(pytester.path / "merged.json") == comparable(single_run / "single.json")
    assert "  thresholds: PASS (sha256 " in passed.stdout.str()

    failed = merge(pytester, *shards, "--out", "failed.json", "--thresholds", "fails.json")
    assert failed.ret == 3, failed.stderr.str()
    assert comparable(pytester.path / "failed.json") == comparable(single_run / "failed.json")
    assert "the shards ran with another thresholds file" in failed.stderr.str()


def test_a_shard_spreads_over_hosts_with_xdists_tx(pytester: pytest.Pytester) -> None:
    """What the README shows for several hosts, on one: ``--tx …//chdir=DIR`` is a worker
    elsewhere, given a copy of the suite (``--rsyncdir``); the workers run the shard's cases and
    the controller writes the artifact."""
    suite_copy(pytester.path)
    suite, host = pytester.path / "example_suite", pytester.path / "host"
    run = pytester.runpytest_subprocess(
        *QUIET, str(suite), "--taguru-shard=3/3", "--taguru-out", "tx.json", "--dist", "load",
        "--rsyncdir", str(suite), "--tx", f"2*popen//chdir={host}",
    )  # fmt: skip

    assert run.ret == 0, run.stdout.str() + run.stderr.str()
    assert (host / "example_suite" / "eval.jsonl").is_file()
    artifact = json.loads((pytester.path / "tx.json").read_text("utf-8"))
    own = [i for i in artifact["inputs"]["shard"]["case_ids"] if shard_of(i, 3) == 3]
    assert [case["case_id"] for case in artifact["cases"]] == own
    outcomes = run.parseoutcomes()  # with pytest-xdist's warnings that --rsyncdir is deprecated
    assert (outcomes["passed"], outcomes["skipped"]) == (len(own), 1)


def test_sliced_and_gated_shards_merge_into_the_single_run(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    """Slices and their gate: the shards leave the slice bounds to the merge, which judges them
    on the whole set as a single run does (here ``rest``'s mean MRR 0.5 < 0.9: exit 3)."""
    suite.write_ini("taguru_slices =\n    ab: c-a* c-b*\n    rest: c-g* c-m*\n")
    gate = "slices.json"
    (suite.path / gate).write_text(json.dumps({
        "taguru_slice_thresholds": 1,
        "slices": {"ab": {"aggregate": {"recall.mrr": {"min": 0.5}}},
                   "rest": {"aggregate": {"recall.mrr": {"min": 0.9}}}},
    }), encoding="utf-8")  # fmt: skip
    sliced = ("--taguru-slice-thresholds", gate, *dist)
    assert suite.run("--taguru-out", "single.json", *sliced).ret == 3
    for index in (1, 2):
        shard = suite.run(f"--taguru-shard={index}/2", "--taguru-out", f"s{index}.json", *sliced)
        assert shard.ret == 0

    merged = merge(suite.pytester, "s1.json", "s2.json", "--out", "merged.json",
                   "--slice-thresholds", gate)  # fmt: skip
    assert merged.ret == 3, merged.stderr.str()
    assert comparable(suite.path / "merged.json") == comparable(suite.path / "single.json")


def test_a_missing_or_foreign_shard_is_refused_with_its_name(suite: Suite) -> None:
    for index in (1, 2):
        assert suite.run(f"--taguru-shard={index}/2", "--taguru-out", f"s{index}.json").ret == 0
    other = suite.run("--taguru-shard=2/2", "--taguru-max-items=3", "--taguru-out", "other.json")
    assert other.ret == 0

    missing = merge(suite.pytester, "s1.json", "--out", "merged.json")
    assert missing.ret == 2
    assert missing.stderr.lines == [
        "taguru-evaluate: missing 1 shard artifact(s): shard 2/2 (1 case(s): 'c-miss')"
    ]
    foreign = merge(suite.pytester, "s1.json", "other.json", "--out", "merged.json")
    assert foreign.ret == 2
    assert foreign.stderr.lines == [
        "taguru-evaluate: other.json is not a shard of the same run as s1.json: the budget is "
        '{"max_items": 3, "max_bytes": 65536, "max_tokens": 4000} there, none in s1.json'
    ]
    twice = merge(suite.pytester, "s1.json", "s2.json", "s2.json", "--out", "merged.json")
    assert twice.stderr.lines == ["taguru-evaluate: s2.json and s2.json are both shard 2/2"]
    assert not (suite.path / "merged.json").exists()
    assert merge(suite.pytester, "s2.json", "s1.json", "--out", "merged.json").ret == 0


def test_a_shard_that_left_cases_out_is_partial_and_refused(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    run = suite.run("--taguru-shard", "1/2", "-k", "not c-beta", *dist)
    assert run.ret == 0
    # A partial shard is a partial run: beside the configured artifact, never in its place.
    assert not (suite.path / "evaluation.json").exists()
    assert suite.run("--taguru-shard", "2/2", "--taguru-out", "s2.json", *dist).ret == 0

    refused = merge(suite.pytester, "evaluation.partial.json", "s2.json", "--out", "m.json")
    assert refused.ret == 2
    assert refused.stderr.lines == [
        "taguru-evaluate: evaluation.partial.json: shard 1/2 is partial: 1 of its 3 case(s) "
        "did not run ('c-beta'); run the shard again without -k, node ids, --lf or -x"
    ]


def test_case_bounds_fail_in_their_shard(suite: Suite, dist: tuple[str, ...]) -> None:
    """A shard judges its own cases' bounds (exit 3) and its corpus; the aggregates wait."""
    suite.write_thresholds(
        {"taguru_evaluate_thresholds": 1, "aggregate": {"recall.mrr": {"min": 0.99}},
         "cases": {"default": {"recall.recall_at_k": {"min": 1.0}}}}
    )  # fmt: skip
    held = suite.run("--taguru-shard=1/2", "--taguru-thresholds=thresholds.json", *dist)
    assert held.ret == 0
    held.assert_outcomes(passed=3, skipped=1)
    broke = suite.run("--taguru-shard=2/2", "--taguru-thresholds=thresholds.json", *dist)
    assert broke.ret == 3
    broke.assert_outcomes(failed=1, skipped=1)  # c-miss; the aggregate bound is not judged


def test_a_shard_holding_no_case_exits_5_and_writes_nothing(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    result = suite.run("--taguru-shard", "1/3", *dist)

    assert result.ret == 5
    assert "no case ran (0 of 0 cases) of shard 1/3 (0 of 4 cases)" in result.stdout.str()
    assert not list(suite.path.glob("evaluation*.json"))


def test_collect_only_lists_the_shard(suite: Suite) -> None:
    result = suite.run("--collect-only", "-q", "--taguru-shard", "2/3")

    assert result.ret == 0
    assert [line for line in result.stdout.lines if "::" in line] == [
        "eval.jsonl::c-beta",
        "eval.jsonl::c-gamma",
        "eval.jsonl::c-miss",
    ]
    assert "shard 2/3: 3 of them" in suite.run("--collect-only", "--taguru-shard=2/3").stdout.str()


def test_the_ini_key_selects_a_shard(suite: Suite, dist: tuple[str, ...]) -> None:
    suite.write_ini("taguru_shard = 3/3\n")
    result = suite.run(*dist)

    assert result.ret == 0
    result.assert_outcomes(passed=1)
    assert [case["case_id"] for case in suite.artifact()["cases"]] == ["c-alpha"]
    assert suite.artifact()["inputs"]["shard"]["index"] == 3


@pytest.mark.parametrize("value", ["0/3", "4/3", "a/b"])
def test_a_bad_shard_exits_2_before_anything_runs(
    suite: Suite, dist: tuple[str, ...], value: str
) -> None:
    result = suite.run(f"--taguru-shard={value}", *dist, isolated=True)

    assert result.ret == 2
    assert result.stderr.lines[-1] == NEEDS
    assert not list(suite.path.glob("evaluation*.json"))


def test_a_bad_shard_in_the_ini_file_exits_2(suite: Suite) -> None:
    suite.write_ini("taguru_shard = 4/3\n")

    result = suite.run(isolated=True)
    assert result.ret == 2
    assert result.stderr.lines[-1] == NEEDS
