"""Label coverage end to end, as a user runs it: pytest on the mini corpus (plain and ``-n 2``),
``taguru-evaluate unjudged`` and ``label-merge`` in subprocesses, a rerun on the labelled eval
set, and ``compare`` telling a label gap from a regression.

The scenario's hits are known (BM25 on the reference server): "alpha widget" ranks alpha.md#1
above the labelled alpha.md#0; "gadget" finds beta.md#0 (labelled not relevant) then the
unlabelled alpha.md#0; "gamma tools" finds both gamma.md paragraphs, labelled by source.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from e2e import CORPUS
from test_cli_e2e import read_json, run_cli, run_pytest

from pytest_taguru.run.dataset import load_eval_set
from pytest_taguru.score.metrics import definitions

EVAL = [
    {"taguru_eval": 1, "name": "labels", "default_target": {"context": "mini"}},
    {"case_id": "c-judged", "query": "gamma tools",
     "expected_sources": [{"source": "docs/gamma.md"}]},
    {"case_id": "c-partial", "query": "alpha widget",
     "expected_sources": [{"source": "docs/alpha.md", "paragraphs": [0], "relevance": 2}]},
    {"case_id": "c-gadget", "query": "gadget",
     "expected_sources": [{"source": "docs/beta.md", "paragraphs": [0], "relevance": 0}]},
    {"case_id": "c-structural", "query": "alpha widget", "expected_concepts": ["alpha widget"]},
]  # fmt: skip
DELTA = [  # a new source that outranks alpha.md for "alpha widget"
    {"taguru_batch": 1, "context": "mini", "source": "docs/delta.md"},
    {"passage": "The alpha widget, the alpha widget: an alpha widget review."},
]


def jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "corpus.ndjson").write_text(CORPUS, encoding="utf-8")
    (tmp_path / "eval.jsonl").write_text(jsonl(EVAL), encoding="utf-8")
    return tmp_path


def evaluate(
    folder: Path, eval_file: str, out: str, *extra: str, corpus: str = "corpus.ndjson"
) -> dict[str, Any]:
    result = run_pytest(
        "--taguru-eval", eval_file, "--taguru-serve", corpus, "--taguru-out", out, *extra,
        cwd=folder,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return read_json(folder / out)


def coverage_by_case(artifact: dict[str, Any]) -> dict[str, Any]:
    return {case["case_id"]: case.get("label_coverage") for case in artifact["cases"]}


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_judged_at_k_the_queue_and_a_labelled_rerun(folder: Path, dist: tuple[str, ...]) -> None:
    artifact = evaluate(folder, "eval.jsonl", "evaluation.json", *dist)
    coverage = coverage_by_case(artifact)
    assert coverage["c-judged"]["judged_at_k"] == 1.0 and coverage["c-judged"]["unjudged"] == []
    assert coverage["c-partial"]["judged_at_k"] == 0.5
    assert coverage["c-partial"]["unjudged"] == [
        {"rank": 1, "source": "docs/alpha.md", "paragraph": 1}
    ]
    assert coverage["c-partial"]["mrr"] == {"low": 0.5, "high": 1.0}
    assert coverage["c-gadget"]["unjudged"] == [
        {"rank": 2, "source": "docs/alpha.md", "paragraph": 0}
    ]
    assert "mrr" not in coverage["c-gadget"]  # no graded entry: no recall, no bounds
    assert coverage["c-structural"] is None
    assert list(artifact["metrics"]) == list(definitions())  # taguru's 31, nothing more
    judged = artifact["extra_metrics"]["metrics"]["label_coverage.judged_at_k"]
    assert (judged["n"], judged["mean"]) == (3, 2 / 3)

    exported = run_cli(
        "unjudged", "evaluation.json", "--eval", "eval.jsonl", "--out", "queue.jsonl", cwd=folder
    )
    assert exported.returncode == 0, exported.stderr
    assert "2 unjudged hit(s) in 2 case(s) of 1 run(s) → queue.jsonl" in exported.stderr
    header, *lines = json_lines((folder / "queue.jsonl").read_text(encoding="utf-8"))
    assert header["taguru_label_queue"] == 1 and header["hits"] == 2
    # c-gadget's hit would give the case its first graded label: it comes first.
    assert [
        (line["case_id"], line["source"], line["paragraph"], line["rank"]) for line in lines
    ] == [
        ("c-gadget", "docs/alpha.md", 0, 2),
        ("c-partial", "docs/alpha.md", 1, 1),
    ]
    assert all(line["relevance"] is None and "text" not in line for line in lines)

    lines[0]["relevance"], lines[1]["relevance"] = 2, 0
    (folder / "queue.jsonl").write_text(jsonl([header, *lines]), encoding="utf-8")
    merged = run_cli(
        "label-merge", "queue.jsonl", "--eval", "eval.jsonl", "--out", "eval.labelled.jsonl",
        cwd=folder,
    )  # fmt: skip
    assert merged.returncode == 0, merged.stderr
    assert "2 label(s) merged into 2 case(s) (1 relevant, 1 not)" in merged.stderr
    labelled = load_eval_set(str(folder / "eval.labelled.jsonl"))
    assert [case.case_id for case in labelled.cases] == [line["case_id"] for line in EVAL[1:]]

    rerun = evaluate(folder, "eval.labelled.jsonl", "labelled.json", *dist)
    coverage = coverage_by_case(rerun)
    assert [coverage[c]["judged_at_k"] for c in ("c-judged", "c-partial", "c-gadget")] == [1.0] * 3
    gadget = next(case for case in rerun["cases"] if case["case_id"] == "c-gadget")
    assert gadget["recall"]["mrr"] == 0.5  # alpha.md#0, now relevant, at rank 2
    assert rerun["extra_metrics"]["metrics"]["label_coverage.judged_at_k"]["mean"] == 1.0
    again = run_cli(
        "unjudged", "labelled.json", "--eval", "eval.labelled.jsonl", "--out", "-", cwd=folder
    )
    assert again.returncode == 0 and json_lines(again.stdout)[0]["hits"] == 0


def test_compare_tells_a_label_gap_from_a_regression(folder: Path) -> None:
    (folder / "corpus-head.ndjson").write_text(CORPUS + jsonl(DELTA), encoding="utf-8")
    evaluate(folder, "eval.jsonl", "base.json")
    evaluate(folder, "eval.jsonl", "head.json", corpus="corpus-head.ndjson")

    compared = run_cli("compare", "base.json", "head.json", "--fail-on-regression", cwd=folder)
    assert compared.returncode == 0, compared.stderr  # a label gap alone does not fail
    assert (
        "regressed: c-partial (recall.mrr -0.167, recall.ndcg -0.131) — label gap: 1 new "
        "unjudged hit(s) in HEAD's top k" in compared.stdout
    )
    records = json_lines((folder / "changes.jsonl").read_text(encoding="utf-8"))
    assert records[0]["counts"]["regressed"] == 1 and records[0]["label_gaps"] == 1
    partial = next(record for record in records[1:] if record["case_id"] == "c-partial")
    assert partial["kind"] == "regressed"
    assert partial["label_gap"] == {
        "new_unjudged": 1,
        "judged_at_k": {"base": 0.5, "head": 1 / 3},
    }

    markdown = run_cli("compare", "base.json", "head.json", "--format", "markdown", cwd=folder)
    assert "| c-partial | regressed — label gap (1 new unjudged hit(s) in HEAD's top k) |" in (
        markdown.stdout
    )

    # Without label_coverage (as taguru writes its artifacts) the same drop is a regression.
    for name in ("base.json", "head.json"):
        artifact = read_json(folder / name)
        for case in artifact["cases"]:
            case.pop("label_coverage", None)
        (folder / name).write_text(json.dumps(artifact), encoding="utf-8")
    plain = run_cli("compare", "base.json", "head.json", "--fail-on-regression", cwd=folder)
    assert plain.returncode == 3 and "label gap" not in plain.stdout
