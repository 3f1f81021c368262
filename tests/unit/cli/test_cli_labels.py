"""``taguru-evaluate unjudged`` and ``label-merge``: their command lines and exit codes (2 for
bad input, naming file, line and field; 1 for an output that cannot be written)."""

import json
from pathlib import Path

import pytest

from pytest_taguru.artifact.case import CaseBlock, HitLocator, PassageSearched
from pytest_taguru.artifact.evaluation import Evaluation
from pytest_taguru.artifact.writing import render
from pytest_taguru.cli.dispatch import main

EVAL = (
    '{"taguru_eval":1}\n'
    '{"case_id":"c","query":"q","expected_sources":[{"source":"a.md","paragraphs":[0]}]}\n'
)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "eval.jsonl").write_text(EVAL, encoding="utf-8")
    hits = [HitLocator(source="b.md", paragraph=2, score=1.0)]
    block = CaseBlock(case_id="c", query="q", passage=PassageSearched(hits=hits))
    artifact = render(Evaluation(taguru_evaluation=1, cases=[block]))
    (tmp_path / "run.json").write_text(artifact, encoding="utf-8")
    return tmp_path


def test_unjudged_writes_the_queue(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["unjudged", "run.json", "--eval", "eval.jsonl"]) == 0
    lines = (folder / "label-queue.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[1])["source"] == "b.md"
    assert capsys.readouterr().err == (
        "taguru-evaluate: unjudged: 1 unjudged hit(s) in 1 case(s) of 1 run(s) → "
        "label-queue.jsonl\n"
    )


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["unjudged", "--eval", "eval.jsonl"], 2,
         "unjudged: the following arguments are required: ARTIFACT"),
        (["unjudged", "missing.json", "--eval", "eval.jsonl"], 2,
         "unjudged: cannot read missing.json: No such file or directory (os error 2)"),
        (["unjudged", "eval.jsonl", "--eval", "eval.jsonl"], 2,
         "unjudged: eval.jsonl: not JSON: trailing characters at line 2 column 1"),
        (["unjudged", "run.json", "--eval", "run.json"], 2, "unjudged: run.json: line 1: "),
        (["unjudged", "run.json", "--eval", "eval.jsonl", "--out", "no/such/dir/q.jsonl"], 1,
         "unjudged: cannot write no/such/dir/q.jsonl: No such file or directory (os error 2)"),
        (["unjudged", "run.json", "--eval", "eval.jsonl", "--with-text", "."], 2,
         "unjudged: .: not a recording (no cases/ folder)"),
        (["label-merge", "q.jsonl", "--eval", "eval.jsonl"], 2,
         "label-merge: the following arguments are required: --out"),
    ],
)  # fmt: skip
def test_bad_input_exits_2_and_an_unwritable_output_1(
    folder: Path, capsys: pytest.CaptureFixture[str], args: list[str], code: int, message: str
) -> None:
    assert main(args) == code
    assert capsys.readouterr().err.startswith(f"taguru-evaluate: {message}")


def labelled_queue(folder: Path, relevance: object) -> None:
    assert main(["unjudged", "run.json", "--eval", "eval.jsonl", "--out", "q.jsonl"]) == 0
    header, line = (folder / "q.jsonl").read_text(encoding="utf-8").splitlines()
    filled = {**json.loads(line), "relevance": relevance}
    (folder / "q.jsonl").write_text(f"{header}\n{json.dumps(filled)}\n", encoding="utf-8")


def test_label_merge_writes_the_labelled_eval_set(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labelled_queue(folder, 2)
    assert main(["label-merge", "q.jsonl", "--eval", "eval.jsonl", "--out", "out.jsonl"]) == 0
    assert (folder / "out.jsonl").read_text(encoding="utf-8") == EVAL.replace(
        "[0]}]}", '[0]},{"source":"b.md","paragraphs":[2],"relevance":2}]}'
    )
    assert capsys.readouterr().err.endswith(
        "label-merge: 1 label(s) merged into 1 case(s) (1 relevant, 0 not), 0 line(s) left "
        "unlabelled → out.jsonl\n"
    )


def test_label_merge_refuses_a_bad_relevance_and_writes_nothing(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labelled_queue(folder, 9)
    capsys.readouterr()
    assert main(["label-merge", "q.jsonl", "--eval", "eval.jsonl", "--out", "out.jsonl"]) == 2
    assert capsys.readouterr().err == (
        "taguru-evaluate: label-merge: q.jsonl:2: relevance: must be 0..=3 (or null: not "
        "labelled), got 9\n"
    )
    assert not (folder / "out.jsonl").exists()


def test_label_merge_into_an_unwritable_place_exits_1(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labelled_queue(folder, 1)
    (folder / "taken").mkdir()
    assert main(["label-merge", "q.jsonl", "--eval", "eval.jsonl", "--out", "taken"]) == 1
    assert (
        "label-merge: cannot write taken: Is a directory (os error 21)" in capsys.readouterr().err
    )


def test_label_merge_notes_a_queue_exported_from_another_eval_set(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labelled_queue(folder, 0)
    (folder / "eval.jsonl").write_text(EVAL + "\n", encoding="utf-8")
    assert main(["label-merge", "q.jsonl", "--eval", "eval.jsonl", "--out", "out.jsonl"]) == 0
    assert "was exported against another version of the eval set" in capsys.readouterr().err


def test_help_names_both_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    usage = capsys.readouterr().out
    assert "taguru-evaluate unjudged ARTIFACT... --eval FILE" in usage
    assert "taguru-evaluate label-merge QUEUE --eval FILE --out FILE" in usage
    assert main(["label-merge", "--help"]) == 0
    assert "Fold a labelled queue back into the eval set" in capsys.readouterr().out
