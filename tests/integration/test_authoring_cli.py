"""``taguru-evaluate init``, ``import-dir``, ``check`` and ``schema`` as a user runs them: the
console script in a subprocess, and the suites they make run by pytest (plain and ``-n 2``)."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e import CountingListener
from test_cli_e2e import read_json, run_cli, run_pytest

from pytest_taguru.authoring.json_schemas import BUILDERS, shipped
from pytest_taguru.authoring.scaffold import TEMPLATES
from pytest_taguru.server.runner import ReferenceServer

DOCS = {
    "hours.md": "# Opening hours\n\nThe shop opens at nine and closes at six.\n\n"
    "## Sundays\n\nOn Sundays the shop is closed, except in December.\n",
    "repairs.md": "---\npage: 7\n---\n# Repairs\n\nA flat tyre is fixed while you wait.\f\n\n"
    "Every repair carries a six-month warranty.\n",
    "guide/rentals.txt": "City bikes rent for fifteen euros a day.\n\n"
    "Electric bikes rent for thirty-five euros a day.\n",
}
EVAL = [
    {"taguru_eval": 1, "default_target": {"context": "shop"}},
    {
        "case_id": "sunday",
        "query": "is the shop closed on Sundays",
        "expected_sources": [{"source": "docs/hours.md", "paragraphs": [3], "relevance": 3}],
        "expected_citations": [
            {"source": "docs/hours.md", "paragraph": 3, "section": "Sundays", "quote": "closed"}
        ],
    },
    {
        "case_id": "warranty",
        "query": "repair warranty months",
        "expected_sources": [{"source": "docs/repairs.md", "paragraphs": [2]}],
        "expected_citations": [{"source": "docs/repairs.md", "paragraph": 2, "section": "Repairs"}],
    },
    {
        "case_id": "ebike",
        "query": "electric bikes rent euros",
        "expected_sources": [{"source": "docs/guide/rentals.txt", "paragraphs": [1]}],
    },
]


def jsonl(records: list[dict[str, object]]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A folder of documents converted by import-dir, and a hand-written eval set."""
    for name, text in DOCS.items():
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    converted = run_cli(
        "import-dir", "docs", "--context", "shop", "--prefix", "docs/", "--out", "corpus.ndjson",
        cwd=tmp_path,
    )  # fmt: skip
    assert converted.returncode == 0, converted.stderr
    assert "3 source(s), 9 paragraph(s), 3 section marker(s), 3 page locator(s)" in (
        converted.stderr
    )
    (tmp_path / "eval.jsonl").write_text(jsonl(EVAL), encoding="utf-8")
    return tmp_path


# --- init -------------------------------------------------------------------------------------


def test_init_makes_a_suite_that_pytest_passes(tmp_path: Path, dist: tuple[str, ...]) -> None:
    made = run_cli("init", "demo", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[-1] == "next: pytest demo"
    assert sorted(p.name for p in (tmp_path / "demo").iterdir()) == sorted(TEMPLATES)

    result = run_pytest("demo", *dist, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout  # three cases and the [thresholds] result
    assert "thresholds: PASS" in result.stdout
    assert read_json(tmp_path / "demo" / "evaluation.json")["thresholds"]["passed"] is True


def test_init_never_overwrites(tmp_path: Path) -> None:
    (tmp_path / "eval.jsonl").write_text("mine\n", encoding="utf-8")
    refused = run_cli("init", cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.startswith("taguru-evaluate: init: eval.jsonl already exists: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval.jsonl"]
    assert (tmp_path / "eval.jsonl").read_text(encoding="utf-8") == "mine\n"


# --- import-dir -------------------------------------------------------------------------------


def test_import_dir_and_a_hand_written_eval_set_give_the_expected_hits(
    shop: Path, dist: tuple[str, ...]
) -> None:
    result = run_pytest(
        "--taguru-eval", "eval.jsonl", "--taguru-serve", "corpus.ndjson", *dist, cwd=shop
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warning" not in result.stderr  # nothing dropped on import
    cases = {case["case_id"]: case for case in read_json(shop / "evaluation.json")["cases"]}
    for case_id in ("sunday", "warranty", "ebike"):
        assert cases[case_id]["recall"]["mrr"] == 1.0, case_id
    assert cases["sunday"]["citations"]["validity"]["value"] == 1.0
    assert cases["warranty"]["citations"]["validity"]["value"] == 1.0


def test_import_dir_writes_to_stdout_by_default_and_refuses_a_missing_folder(
    shop: Path,
) -> None:
    printed = run_cli("import-dir", "docs", "--context", "shop", "--prefix", "docs/", cwd=shop)
    assert printed.stdout == (shop / "corpus.ndjson").read_text(encoding="utf-8")
    missing = run_cli("import-dir", "nope", "--context", "shop", cwd=shop)
    assert (missing.returncode, missing.stderr) == (
        2,
        "taguru-evaluate: import-dir: nope: not a folder\n",
    )


# --- check ------------------------------------------------------------------------------------


def test_check_passes_a_clean_suite(shop: Path) -> None:
    result = run_cli("check", "--eval", "eval.jsonl", "--serve", "corpus.ndjson", cwd=shop)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == ("taguru-evaluate: check: eval.jsonl: 3 case(s) checked: no problems\n")


def test_check_reports_each_mistake_with_its_line_and_exits_2(shop: Path) -> None:
    broken = json.loads(json.dumps(EVAL))
    broken[1]["expected_citations"][0]["quote"] = "open on Sundays"
    broken[2]["expected_sources"][0]["source"] = "docs/repair.md"
    broken[3]["expected_concepts"] = ["bicycle"]
    (shop / "eval.jsonl").write_text(jsonl(broken), encoding="utf-8")
    result = run_cli("check", "--eval", "eval.jsonl", "--serve", "corpus.ndjson", cwd=shop)
    assert result.returncode == 2
    assert result.stdout.splitlines() == [
        "eval.jsonl:2: case 'sunday': expected_citations[0].quote: 'open on Sundays' is not in "
        "'docs/hours.md' paragraph 3 — no paragraph of the corpus contains it",
        "eval.jsonl:3: case 'warranty': expected_sources[0].source: 'docs/repair.md' is not a "
        "source of 'shop' — did you mean 'docs/repairs.md'?",
        "eval.jsonl:4: case 'ebike': expected_concepts[0]: 'bicycle' does not resolve to a concept",
    ]
    assert result.stderr.endswith(": 3 problem(s) in 3 case(s)\n")
    skipped = run_cli(
        "check", "--eval", "eval.jsonl", "--serve", "corpus.ndjson",
        "--skip-case", "sunday", "--skip-case", "warranty", "--skip-case", "ebike", cwd=shop,
    )  # fmt: skip
    assert skipped.returncode == 0, skipped.stdout


@pytest.fixture
def shop_server(shop: Path) -> Iterator[ReferenceServer]:
    with ReferenceServer.from_import_files([shop / "corpus.ndjson"]) as server:
        yield server


def test_check_reads_a_running_server_and_exits_1_when_it_cannot(
    shop: Path, shop_server: ReferenceServer
) -> None:
    served = run_cli("check", "--eval", "eval.jsonl", "--url", shop_server.url, cwd=shop)
    assert served.returncode == 0, served.stdout + served.stderr
    listener = CountingListener()
    try:
        down = run_cli("check", "--eval", "eval.jsonl", "--url", listener.url, cwd=shop)
    finally:
        listener.close()
    assert down.returncode == 1
    assert down.stderr.startswith("taguru-evaluate: check: server at http://127.0.0.1:")
    unknown = run_cli(
        "check", "--eval", "eval.jsonl", "--url", shop_server.url, "--context", "nope", cwd=shop
    )
    assert unknown.returncode == 2 and "nope" in unknown.stderr


def test_check_usage_errors_exit_2(shop: Path) -> None:
    neither = run_cli("check", "--eval", "eval.jsonl", cwd=shop)
    assert neither.returncode == 2
    assert "one of the arguments --serve --url is required" in neither.stderr
    typo = run_cli(
        "check", "--eval", "eval.jsonl", "--serve", "corpus.ndjson", "--skip-case", "sundy",
        cwd=shop,
    )  # fmt: skip
    assert typo.returncode == 2
    assert typo.stderr.strip().endswith("— did you mean 'sunday'?")


# --- schema -----------------------------------------------------------------------------------


def test_schema_prints_the_shipped_schemas(tmp_path: Path) -> None:
    listed = run_cli("schema", cwd=tmp_path)
    assert (listed.returncode, listed.stdout.split()) == (0, list(BUILDERS))
    for name in BUILDERS:
        printed = run_cli("schema", name, cwd=tmp_path)
        assert (printed.returncode, printed.stdout) == (0, shipped(name))
    typo = run_cli("schema", "eval-cases", cwd=tmp_path)
    assert (typo.returncode, typo.stderr) == (
        2,
        "taguru-evaluate: schema: no schema named 'eval-cases' — did you mean 'eval-case'?\n",
    )
