"""``taguru-evaluate merge``: shard artifacts read, joined, gated and written, with taguru's exit
codes (0, 1 output not written, 2 usage or input error, 3 a bound broken)."""

import json
from pathlib import Path
from typing import Any

import pytest
from shard_runs import shards, whole_run
from synthetic_run import THRESHOLDS

from pytest_taguru.artifact.evaluation import parse_evaluation
from pytest_taguru.artifact.writing import render
from pytest_taguru.cli.dispatch import main
from pytest_taguru.gate.slice_file import load_slice_thresholds
from pytest_taguru.run.slices import SliceDefinitions, Slicing, judge_slices
from pytest_taguru.score.slices import slice_cards

RUN = whole_run(40)
HINT = " — try 'taguru-evaluate --help'"


@pytest.fixture
def shard_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The run's three shard artifacts, written in ``tmp_path`` (the working directory)."""
    monkeypatch.chdir(tmp_path)
    for artifact in shards(RUN):
        (tmp_path / artifact.path).write_text(render(artifact.evaluation), encoding="utf-8")
    return [artifact.path for artifact in shards(RUN)]


def thresholds_file(document: dict[str, object], name: str = "thresholds.json") -> str:
    Path(name).write_text(json.dumps(document), encoding="utf-8")
    return name


def merge(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["merge", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def merged(name: str = "merged.json") -> dict[str, object]:
    loaded: dict[str, object] = json.loads(Path(name).read_text(encoding="utf-8"))
    return loaded


def test_merge_writes_the_whole_run_and_says_so(
    shard_files: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = merge(*shard_files, "--out", "merged.json", capsys=capsys)

    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "merged 3 shard artifact(s): shard-1.json, shard-2.json, shard-3.json"
    assert lines[1] == "taguru evaluate: http://127.0.0.1:8248 / context 'synthetic'"
    assert lines[-1] == "  wrote merged.json"
    # The shards were gated: the merged run is report-only without --thresholds, and says so.
    assert err == (
        "taguru-evaluate: merge: warning: the shards ran with a thresholds file (sha256 "
        f"{(RUN.thresholds or {})['sha256'][:12]}…); without --thresholds the merged run is "
        "not gated by one\n"
    )
    written = parse_evaluation(Path("merged.json").read_text(encoding="utf-8"))
    expected = RUN.model_copy(
        update={
            "thresholds": None,
            "generated_at": written.generated_at,
            "inputs": RUN.inputs.model_copy(update={"out": "merged.json"}),
        }
    )
    assert Path("merged.json").read_text(encoding="utf-8") == render(expected)


def test_the_thresholds_gate_the_merged_run_as_they_gated_the_whole_one(
    shard_files: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    gate = thresholds_file(THRESHOLDS)
    code, out, err = merge(*shard_files, "--out", "m.json", "--thresholds", gate, capsys=capsys)

    assert (code, err) == (3, "")
    assert merged("m.json")["thresholds"] == RUN.thresholds
    assert "  thresholds: FAIL — " in out


def test_a_passing_thresholds_file_exits_0(
    shard_files: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    lenient = thresholds_file(
        {"taguru_evaluate_thresholds": 1, "aggregate": {"recall.mrr": {"min": 0.1}}}
    )
    code, out, err = merge(
        *shard_files, "--out", "merged.json", "--thresholds", lenient, capsys=capsys
    )

    assert code == 0
    assert "  thresholds: PASS (sha256 " in out
    assert "the shards ran with another thresholds file" in err
    assert err.rstrip().endswith(f"the merged run is gated by {lenient}")


@pytest.mark.parametrize(("flag", "status"), [("5", 5), ("+7", 7), ("0", 0)])
def test_the_regression_exit_code_is_the_table_flag(
    shard_files: list[str], capsys: pytest.CaptureFixture[str], flag: str, status: int
) -> None:
    gate = thresholds_file(THRESHOLDS)
    args = (*shard_files, "--out", "m.json", "--thresholds", gate, "--regression-exit-code", flag)

    assert merge(*args, capsys=capsys)[0] == status


def test_a_bad_thresholds_file_is_exit_2_and_nothing_is_written(
    shard_files: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    bad = thresholds_file({"taguru_evaluate_thresholds": 1, "aggregate": {"recall.nope": {}}})
    code, out, err = merge(*shard_files, "--out", "merged.json", "--thresholds", bad, capsys=capsys)

    assert (code, out) == (2, "")
    assert err.startswith(
        "taguru-evaluate: thresholds.json: aggregate: unknown metric name 'recall.nope'"
    )
    assert not Path("merged.json").exists()


def test_a_refused_shard_is_exit_2_naming_it(
    shard_files: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = merge(shard_files[0], shard_files[2], "--out", "merged.json", capsys=capsys)

    assert (code, out) == (2, "")
    assert err.startswith("taguru-evaluate: missing 1 shard artifact(s): shard 2/3 (")
    assert not Path("merged.json").exists()


def test_an_unreadable_shard_is_exit_2(
    shard_files: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    Path("broken.json").write_text('{"taguru_evaluation": 1, "cases": [', encoding="utf-8")

    assert merge("nowhere.json", "--out", "m.json", capsys=capsys) == (
        2,
        "",
        "taguru-evaluate: cannot read nowhere.json: No such file or directory (os error 2)\n",
    )
    code, _, err = merge(*shard_files, "broken.json", "--out", "m.json", capsys=capsys)
    assert code == 2
    assert err.startswith("taguru-evaluate: broken.json: not JSON: EOF while parsing")


def test_an_unwritable_output_is_exit_1(
    shard_files: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = merge(*shard_files, "--out", "no/such/dir.json", capsys=capsys)

    assert (code, out) == (1, "")
    assert err.endswith(
        "taguru-evaluate: writing no/such/dir.json: No such file or directory (os error 2)\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "m.json"], "evaluate merge takes one or more shard artifacts (got none)"),
        (["a.json"], "evaluate merge needs --out FILE"),
        (["a.json", "--out"], "--out needs a file path"),
        (["a.json", "--out", "m", "--out", "n"], "--out given twice"),
        (["a.json", "--out", "m", "--bogus"], "unknown flag '--bogus' for evaluate merge"),
        (["a.json", "--out", "m", "--regression-exit-code", "256", "--bogus"],
         "--regression-exit-code needs an exit status 0..=255"),
    ],
)  # fmt: skip
def test_usage_errors_exit_2_with_the_hint(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert merge(*args, capsys=capsys) == (2, "", f"taguru-evaluate: {message}{HINT}\n")


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = merge("--help", capsys=capsys)

    assert code == 0
    assert out.startswith(
        "usage: taguru-evaluate merge SHARD.json... --out FILE [--thresholds FILE]"
    )
    assert "EXIT CODES: 0 merged" in out


def test_every_float_comes_back_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """serde's own float parser reads 0.09090909090909091 one ulp off; the merge must not."""
    monkeypatch.chdir(tmp_path)
    at, block = next((i, b) for i, b in enumerate(RUN.cases) if b.recall is not None)
    assert block.recall is not None
    exact = block.model_copy(
        update={"recall": block.recall.model_copy(update={"ndcg": 0.09090909090909091})}
    )
    run = RUN.model_copy(update={"cases": [*RUN.cases[:at], exact, *RUN.cases[at + 1 :]]})
    for artifact in shards(run):
        Path(artifact.path).write_text(render(artifact.evaluation), encoding="utf-8")

    args = ("shard-1.json", "shard-2.json", "shard-3.json", "--out", "m.json")
    assert merge(*args, capsys=capsys)[0] == 0
    cases: Any = merged("m.json")["cases"]
    assert cases[at]["recall"]["ndcg"] == 0.09090909090909091


SLICED = RUN.model_copy(update={"slices": slice_cards({"even": ("case-*[02468]",)}, RUN.cases)})


@pytest.mark.parametrize(("bound", "status"), [(0.0, 0), (0.99, 3)])
def test_the_slice_thresholds_gate_the_merged_slices_as_a_live_run_does(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    bound: float,
    status: int,
) -> None:
    monkeypatch.chdir(tmp_path)
    for artifact in shards(SLICED):
        cards = slice_cards({"even": ("case-*[02468]",)}, artifact.evaluation.cases)
        evaluation = artifact.evaluation.model_copy(update={"slices": cards})
        Path(artifact.path).write_text(render(evaluation), encoding="utf-8")
    gate = thresholds_file(
        {"taguru_slice_thresholds": 1,
         "slices": {"even": {"aggregate": {"recall.recall_at_k": {"min": bound}}}}},
        "slices.json",
    )  # fmt: skip
    args = ("shard-1.json", "shard-2.json", "shard-3.json", "--out", "m.json")

    code, out, _ = merge(*args, "--slice-thresholds", gate, capsys=capsys)
    assert code == status
    slicing = Slicing(
        SliceDefinitions({"even": ("case-*[02468]",)}, "x"),
        load_slice_thresholds(gate, slice_names=["even"]),
    )
    expected, lines = judge_slices(slicing, SLICED, aggregate_skipped=None)
    assert merged("m.json")["slice_thresholds"] == expected.slice_thresholds
    assert out.endswith("\n".join(lines) + "\n")


def test_slice_thresholds_need_slices(
    shard_files: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    gate = thresholds_file({"taguru_slice_thresholds": 1, "slices": {}}, "slices.json")
    code, out, err = merge(*shard_files, "--out", "m.json", "--slice-thresholds", gate,
                           capsys=capsys)  # fmt: skip

    assert (code, out) == (2, "")
    assert err.endswith(
        "taguru-evaluate: the shards carry no slices to gate (a run given --taguru-slices or "
        "--taguru-slices-file records them)\n"
    )
