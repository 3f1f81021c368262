"""``taguru-evaluate compare --stats`` (and ``--alpha``/``--tolerance``): the paired statistics
in the terminal, the Markdown, ``changes.jsonl`` and ``--fail-on-regression``; without them
every output stays taguru's (the golden tests of ``test_cli_compare``)."""

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_taguru.cli import compare as compare_cli
from pytest_taguru.cli.compare import CompareArgs, parse_compare_args
from pytest_taguru.cli.dispatch import main
from pytest_taguru.compare.significance import Tolerances

HINT = " — try 'taguru-evaluate --help'"


def artifact(mrr: list[float], **inputs: Any) -> dict[str, Any]:
    return {
        "taguru_evaluation": 1,
        "generated_at": "2026-07-29T09:00:00Z",
        "inputs": {"context": "sake", "mode": "baseline", **inputs},
        "corpus": {"revision_after": {"graph": 1, "passages": 1, "config": 1}, "stable": True},
        "cases": [
            {
                "case_id": f"c{index:03d}",
                "expectations_sha256": "h",
                "recall": {"recall_at_k": 1.0, "mrr": value, "ndcg": 1.0},
            }
            for index, value in enumerate(mrr)
        ],
    }


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """base.json; head.json drops MRR on 30 % of 200 cases; same.json is base again."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(compare_cli, "generated_at_now", lambda: "2026-07-29T12:00:00Z")
    (tmp_path / "base.json").write_text(json.dumps(artifact([1.0] * 200)))
    dropped = [0.5 if index % 10 < 3 else 1.0 for index in range(200)]
    (tmp_path / "head.json").write_text(json.dumps(artifact(dropped)))
    (tmp_path / "same.json").write_text(json.dumps(artifact([1.0] * 200)))
    return tmp_path


def test_the_statistics_flags_parse() -> None:
    assert parse_compare_args(["a", "b", "--stats"]).stats
    implied = parse_compare_args(["a", "b", "--tolerance", "recall.mrr=0.1", "--alpha", "0.01"])
    assert implied == CompareArgs(
        "a",
        "b",
        "changes.jsonl",
        stats=True,
        alpha=0.01,
        tolerances=Tolerances(0.0, {"recall.mrr": 0.1}),
    )
    assert not parse_compare_args(["a", "b"]).stats


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--alpha", "2"], "--alpha: 2 is not between 0 and 1 (exclusive)"),
        (["--tolerance", "recall.mr=1"], "--tolerance: 'recall.mr' is not a metric with paired "
         "statistics (did you mean recall.mrr?)"),
        (["--alpha"], "--alpha needs a number between 0 and 1"),
        (["--stats", "--stats"], "--stats given twice"),
    ],
)  # fmt: skip
def test_bad_statistics_flags_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", "a.json", "b.json", *args]) == 2
    assert capsys.readouterr().err == f"taguru-evaluate: {message}{HINT}\n"


def test_stats_print_a_table_after_taguru_summary(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", "base.json", "head.json", "--stats"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("evaluate compare: 200 case(s) in BASE, 200 in HEAD — 0 improved")
    at = out.index("  wrote changes.jsonl")
    table = out[at + 1 :]
    assert table[0] == (
        "  paired statistics: 200 paired case(s), 10,000 resamples, α 0.05 (Holm over 3 "
        "test(s)), tolerance 0"
    )
    mrr = next(line for line in table if line.lstrip().startswith("recall.mrr"))
    assert "-0.1500" in mrr and mrr.endswith("  regressed")
    assert table[-1] == "  excluded: none"


def test_stats_append_one_statistics_record_to_changes_jsonl(runs: Path) -> None:
    assert main(["compare", "base.json", "head.json"]) == 0
    plain = (runs / "changes.jsonl").read_text(encoding="utf-8")
    assert main(["compare", "base.json", "head.json", "--stats", "--tolerance", "0.01"]) == 0
    with_stats = (runs / "changes.jsonl").read_text(encoding="utf-8")
    assert with_stats.startswith(plain)  # taguru's lines, byte for byte, then ours
    extra = with_stats[len(plain) :].splitlines()
    assert len(extra) == 1
    record = json.loads(extra[0])
    assert record["kind"] == "statistics"
    assert (record["alpha"], record["resamples"], record["tolerance"]["default"]) == (
        0.05,
        10000,
        0.01,
    )
    mrr = next(entry for entry in record["metrics"] if entry["metric"] == "recall.mrr")
    assert mrr["slice"] is None and mrr["n"] == 200
    assert mrr["verdict"] == "regressed"
    assert mrr["mean_delta"] == pytest.approx(-0.15)
    assert mrr["p_holm"] < 0.05 and mrr["p_one_sided"] <= mrr["p_holm"]
    assert '"tolerance":0.01,' in extra[0]  # serde float text


def test_markdown_gains_interval_p_and_verdict_columns(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads((runs / "base.json").read_text())
    document["definitions"] = {"recall.mrr": {"statistic": "distribution"}}
    document["metrics"] = {"recall.mrr": {"n": 200, "mean": 1.0}}
    (runs / "base.json").write_text(json.dumps(document))
    assert main(["compare", "base.json", "head.json", "--format", "markdown", "--stats"]) == 0
    text = capsys.readouterr().out
    assert "| metric | statistic | base | head | Δ | change | 95 % interval | p | verdict |" in text
    assert "| recall.mrr | distribution | 1.000 | n/a | n/a |  | [-0.18" in text
    assert "#### Paired statistics" in text
    assert "| recall.mrr | all | 200 | -0.1500 |" in text


def test_fail_on_regression_fails_on_a_regressed_verdict(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--out", "-", "--stats", "--fail-on-regression"]
    assert main(["compare", "base.json", "head.json", *args]) == 3
    assert capsys.readouterr().err.splitlines()[-1].startswith(
        "taguru-evaluate: compare: recall.mrr [all]: Δ -0.1500 ["
    )
    assert main(["compare", "base.json", "same.json", *args]) == 0
    # The drop tolerated: no regressed verdict, though cases regressed.
    assert main(["compare", "base.json", "head.json", *args, "--tolerance", "0.2"]) == 0


def test_runs_that_cannot_be_gated_against_each_other_exit_2_as_a_gate(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (runs / "other.json").write_text(json.dumps(artifact([1.0] * 200, context="other")))
    args = ["compare", "base.json", "other.json", "--out", "-", "--stats"]
    assert main(args) == 0  # a report: a warning, as taguru's
    assert main([*args, "--fail-on-regression"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "taguru-evaluate: BASE and HEAD cannot be gated against each other: context differs "
        "(baseline 'sake', this run 'other')"
    )
