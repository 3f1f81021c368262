"""The page: one self-contained file, its island intact, nothing it could load from anywhere."""

import json
import re

import pytest
from synthetic_run import SyntheticRun, synthetic_run

from pytest_taguru.report.html.island import ReportInputs, build_island
from pytest_taguru.report.html.page import SCRIPTS, asset, eval_href, render_page, script


@pytest.fixture(scope="module")
def run() -> SyntheticRun:
    return synthetic_run(40)


def page_of(run: SyntheticRun) -> str:
    return render_page(ReportInputs(run.evaluation, "out/evaluation.json", run.eval_set))


def test_the_island_is_the_one_json_script(run: SyntheticRun) -> None:
    page = page_of(run)
    islands = re.findall(
        r'<script type="application/json" id="taguru-data">(.*?)</script>', page, re.S
    )
    assert len(islands) == 1
    inputs = ReportInputs(run.evaluation, "out/evaluation.json", run.eval_set)
    assert json.loads(islands[0]) == build_island(inputs)
    assert page.count("<script") == 2  # the island and the inline code, nothing else


def test_nothing_is_loaded_from_anywhere(run: SyntheticRun) -> None:
    page = page_of(run)
    assert "default-src 'none'" in page
    for pattern in (r"\ssrc=", r"<link", r"<iframe", r"<object", r"<embed", r"url\(", r"@import",
                    r"fetch\(", r"XMLHttpRequest", r"\.src\s*=", r"import\("):  # fmt: skip
        assert not re.search(pattern, page), pattern


def test_assets_cannot_end_their_elements() -> None:
    for name in ("report.css", *SCRIPTS):
        text = asset(name).lower()
        assert "</script" not in text and "</style" not in text and "<!--" not in text, name
    assert script().startswith('(function () {\n"use strict";')


def test_title_and_notices_are_written_as_text(run: SyntheticRun) -> None:
    header = run.eval_set.header.model_copy(update={"name": "<b>suite</b> & co"})
    evaluation = run.evaluation.model_copy(
        update={"inputs": run.evaluation.inputs.model_copy(
            update={"eval": run.evaluation.inputs.eval.model_copy(update={"name": header.name})})}
    )  # fmt: skip
    page = render_page(ReportInputs(evaluation, "e.json"))
    assert "<title>&lt;b&gt;suite&lt;/b&gt; &amp; co — taguru evaluation report</title>" in page
    assert "<b>suite</b>" not in page
    assert '<li class="notice notice-error">The gate failed:' in page


def test_the_same_inputs_give_the_same_bytes(run: SyntheticRun) -> None:
    assert page_of(run) == page_of(run)


def test_the_eval_set_is_linked_relative_to_the_page() -> None:
    assert eval_href("suite/eval.jsonl", "suite/report.html") == "eval.jsonl"
    assert eval_href("suite/eval.jsonl", "out/deep/report.html") == "../../suite/eval.jsonl"
    assert eval_href("my suite/評価.jsonl", "report.html") == "my%20suite/%E8%A9%95%E4%BE%A1.jsonl"
