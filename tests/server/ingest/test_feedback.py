"""Import feedback: what a start-up import file dropped, by line, agreeing with the reply."""

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_taguru.server.ingest.feedback import dropped_lines, import_notes
from pytest_taguru.server.ingest.importer import apply_import, parse_import
from pytest_taguru.server.runner import ImportFileError, load_import_files
from pytest_taguru.server.store import Store

LOSSY = [
    {"taguru_batch": 1, "context": "bikes", "source": "docs/hours.md", "create": {}},  # 1
    {"passage": "# Hours\n\nWe open at nine.\n\nClosed on Sundays."},  # 2: 3 paragraphs
    {"paragraph": 0, "section": "Hours"},  # 3
    {"paragraph": 7, "section": "Holidays"},  # 4: past the end
    {"paragraph": 1, "locator": {"kind": "page", "value": "1"}},  # 5: replaced by line 6
    {"paragraph": 1, "locator": {"kind": "page", "value": "2"}},  # 6
    {"paragraph": 3, "question": "when do you open?"},  # 7: past the end
    {"subject": "shop", "label": "opens at", "object": "nine", "weight": 1.0, "paragraph": 9},
    {"subject": "shop", "label": "closed on", "object": "Sunday", "weight": 1.0, "paragraph": 2},
    {"taguru_batch": 1, "context": "bikes", "source": "docs/clean.md"},  # 10
    {"passage": "Fine."},
    {"paragraph": 0, "section": "Clean"},
]


def stream(records: list[Any]) -> bytes:
    return "".join(json.dumps(record) + "\n" for record in records).encode()


def test_every_dropped_line_is_found_with_its_reason() -> None:
    found = [
        (d.line, d.kind, d.paragraph, d.reason) for d in dropped_lines(parse_import(stream(LOSSY)))
    ]
    past = "source 'docs/hours.md' has 3 paragraphs (0-2)"
    assert found == [
        (4, "section", 7, past),
        (5, "locator", 1, "the locator on line 6 names the same paragraph"),
        (7, "question", 3, past),
        (8, "association", 9, past),
    ]


def test_the_notes_agree_with_the_servers_own_counts() -> None:
    batches = parse_import(stream(LOSSY))
    outcome = apply_import(Store(), batches)["batches"][0]
    dropped = {
        kind: sum(1 for d in dropped_lines(batches) if d.kind == kind)
        for kind in ("question", "section", "locator", "association")
    }
    assert dropped == {
        "question": outcome["questions_dropped"],
        "section": outcome["sections_dropped"],
        "locator": outcome["locators_dropped"],
        "association": outcome["association_paragraphs_dropped"],
    }
    assert import_notes("corpus.ndjson", batches) == [
        "corpus.ndjson: the import dropped 1 question, 1 section marker, 1 locator, "
        "1 association paragraph (taguru drops and counts them the same way)",
        "corpus.ndjson:4: section marker for paragraph 7 dropped: source 'docs/hours.md' has "
        "3 paragraphs (0-2)",
        "corpus.ndjson:5: locator for paragraph 1 dropped: the locator on line 6 names the same "
        "paragraph",
        "corpus.ndjson:7: question for paragraph 3 dropped: source 'docs/hours.md' has 3 "
        "paragraphs (0-2)",
        "corpus.ndjson:8: association paragraph for paragraph 9 stored as null: source "
        "'docs/hours.md' has 3 paragraphs (0-2)",
    ]


def test_a_clean_file_has_no_notes_and_a_long_list_is_cut() -> None:
    assert import_notes("c", parse_import(stream(LOSSY[9:]))) == []
    many = [*LOSSY[:2], *({"paragraph": 10 + n, "section": f"s{n}"} for n in range(8))]
    notes = import_notes("c", parse_import(stream(many)))
    assert notes[0].startswith("c: the import dropped 8 section markers ")
    assert len(notes) == 1 + 5 + 1 and notes[-1] == "c: … and 3 more"


def test_load_import_files_returns_the_notes(tmp_path: Path) -> None:
    path = tmp_path / "corpus.ndjson"
    path.write_bytes(stream(LOSSY))
    notes = load_import_files(Store(), [path])
    assert notes[0].startswith(f"{path}: the import dropped ")


def test_a_missing_context_without_create_says_what_to_write(tmp_path: Path) -> None:
    path = tmp_path / "corpus.ndjson"
    path.write_bytes(
        stream(
            [
                {"taguru_batch": 1, "context": "bikes", "source": "a.md", "create": {}},
                {"passage": "A."},
                {"taguru_batch": 1, "context": "cars", "source": "b.md"},
                {"passage": "B."},
            ]
        )
    )
    with pytest.raises(ImportFileError) as caught:
        load_import_files(Store(), [path])
    assert str(caught.value) == (
        f"{path}: line 3: batch 2 of 2 (context 'cars', source 'b.md') refused — the 1 "
        "batch(es) before it landed durably; fixing the stream and re-POSTing it whole is exact "
        "(each batch replaces its own source): context 'cars' not found — a batch naming a "
        'context that does not exist yet needs "create" in its header, e.g. {"taguru_batch": 1, '
        '"context": "cars", "source": "b.md", "create": {}}'
    )
