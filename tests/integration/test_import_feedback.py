"""``--taguru-serve`` says what its import file dropped, and what a missing context needs."""

import json

from e2e import CORPUS_RECORDS, Suite


def write_corpus(suite: Suite, records: list[dict[str, object]]) -> None:
    text = "".join(json.dumps(record) + "\n" for record in records)
    (suite.path / "corpus.ndjson").write_text(text, encoding="utf-8")


def test_dropped_lines_are_reported_and_the_run_goes_on(
    suite: Suite, dist: tuple[str, ...]
) -> None:
    # Line 4 of the corpus: a section past docs/alpha.md's two paragraphs.
    records = [*CORPUS_RECORDS[:3], {"paragraph": 2, "section": "Gone"}, *CORPUS_RECORDS[3:]]
    write_corpus(suite, records)
    result = suite.run(*dist)

    assert result.ret == 0
    result.stderr.fnmatch_lines(
        [
            "taguru: evaluate: warning: corpus.ndjson: the import dropped 1 section marker *",
            "taguru: evaluate: warning: corpus.ndjson:4: section marker for paragraph 2 "
            "dropped: source 'docs/alpha.md' has 2 paragraphs (0-1)",
            "evaluate → http://127.0.0.1:*",
        ]
    )


def test_a_context_without_create_is_a_usage_error_saying_what_to_add(suite: Suite) -> None:
    header = {key: value for key, value in CORPUS_RECORDS[0].items() if key != "create"}
    write_corpus(suite, [header, *CORPUS_RECORDS[1:]])
    result = suite.run(isolated=True)

    assert result.ret == 2
    result.stderr.fnmatch_lines(
        [
            "taguru: evaluate: corpus.ndjson: line 1: batch 1 of 3 * context 'mini' not found "
            '— a batch naming a context that does not exist yet needs "create" in its header, '
            'e.g. {"taguru_batch": 1, "context": "mini", "source": "docs/alpha.md", '
            '"create": {}}'
        ]
    )
