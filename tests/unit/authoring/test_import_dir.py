"""``import-dir``: documents to an import stream, split as taguru splits, loading cleanly."""

import json
from pathlib import Path

import httpx
import pytest
from taguru import Taguru

from pytest_taguru.authoring.import_dir import import_dir
from pytest_taguru.errors import UsageError
from pytest_taguru.server.index.text import split_paragraphs
from pytest_taguru.server.ingest.feedback import import_notes
from pytest_taguru.server.ingest.importer import apply_import, parse_import
from pytest_taguru.server.runner import ReferenceServer
from pytest_taguru.server.store import Store

HOURS = (
    "---\npage: 3\ntags: [shop, hours]\ntitle: ignored\n---\n"
    "# Opening hours\n\nWe open at nine.\n\n## Holidays ##\n\nClosed on Sundays.\fPage four.\n\n"
    "```sh\n# a shell comment, not a heading\n```\n"
)


def write(folder: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return folder


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return write(
        tmp_path / "docs",
        {
            "hours.md": HOURS,
            "guide/repairs.markdown": "Repairs\n=======\n\nFlat tyres fixed in an hour.\r\n",
            "notes.txt": "\ufeffplain # not a heading\n\nsecond\n",
            "empty.md": "\n \n",
            "logo.png": b"\x89PNG",
            ".hidden.md": "# hidden",
            ".git/config.md": "# hidden too",
        },
    )


def records(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def test_one_batch_per_file_in_path_order_with_sections_and_pages(docs: Path) -> None:
    converted = import_dir(str(docs), "bikes")
    lines = records(converted.text())
    headers = [line for line in lines if "taguru_batch" in line]
    assert [h["source"] for h in headers] == ["guide/repairs.markdown", "hours.md", "notes.txt"]
    assert headers[0]["create"] == {} and all("create" not in h for h in headers[1:])
    start = lines.index(headers[1])
    assert lines[start + 1] == {
        "passage": HOURS[HOURS.index("# Opening") :],
        "tags": ["shop", "hours"],
    }
    assert lines[start + 2 : start + 4] == [
        {"paragraph": 0, "section": "Opening hours"},
        {"paragraph": 2, "section": "Holidays"},
    ]
    pages = [line["locator"]["value"] for line in lines[start + 4 :] if "locator" in line]
    assert pages == ["3", "3", "3", "3", "4"]  # the form feed is inside paragraph 3
    notes = lines[lines.index(headers[2]) :]
    assert notes == [headers[2], {"passage": "plain # not a heading\n\nsecond\n"}]
    empty = docs / "empty.md"
    assert converted.notes == [f"{empty}: no paragraph (only blank lines); not imported"]
    assert converted.ignored == 1
    assert converted.summary() == (
        "3 source(s), 9 paragraph(s), 3 section marker(s), 5 page locator(s) for context "
        "'bikes'; 1 other file(s) ignored"
    )


def test_paragraphs_are_the_servers_and_the_output_is_deterministic(docs: Path) -> None:
    first = import_dir(str(docs), "bikes", prefix="docs/")
    assert first.text() == import_dir(str(docs), "bikes", prefix="docs/").text()
    for batch in first.batches:
        assert batch.source.startswith("docs/")
        assert batch.paragraphs == len(split_paragraphs(batch.passage))
        assert all(p < batch.paragraphs for p, _ in [*batch.sections, *batch.pages])


def test_the_stream_loads_into_the_reference_server_without_a_drop(docs: Path) -> None:
    batches = parse_import(import_dir(str(docs), "bikes").text().encode())
    outcomes = apply_import(Store(), batches)["batches"]
    assert import_notes("x", batches) == []
    assert [o["sections_stored"] for o in outcomes] == [1, 2, 0]
    assert [o["locators_stored"] for o in outcomes] == [0, 5, 0]


def test_the_stream_loads_through_taguru_s_own_sdk(docs: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.ndjson"
    corpus.write_text(import_dir(str(docs), "bikes").text(), encoding="utf-8")
    with ReferenceServer(token="t") as server, Taguru(server.url, api_key="t", retries=0) as sdk:
        result = sdk.import_file(corpus)
        assert [batch.source for batch in result.batches] == [
            "guide/repairs.markdown",
            "hours.md",
            "notes.txt",
        ]
        cited = httpx.post(
            f"{server.url}/contexts/bikes/citations",
            json={"source": "hours.md", "paragraph": 4},
            headers={"authorization": "Bearer t"},
        ).json()["result"]
        assert (cited["section"], cited["locator"]) == ("Holidays", {"kind": "page", "value": "4"})


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"a.md": b"\xff\xfe"}, "a.md: not UTF-8 text (invalid start byte at byte 0)"),
        ({"a.md": "---\npage: iv\n---\ntext"}, "a.md: front matter page 'iv' is not a page number"),
        ({"a.png": b"x"}, "no Markdown (.md, .markdown) or text (.txt) document"),
    ],
)
def test_bad_documents_are_usage_errors_naming_the_file(
    tmp_path: Path, files: dict[str, str | bytes], message: str
) -> None:
    write(tmp_path, files)
    with pytest.raises(UsageError) as caught:
        import_dir(str(tmp_path), "bikes")
    assert caught.value.message.endswith(message)


def test_a_long_heading_is_cut_to_taguru_s_cap(tmp_path: Path) -> None:
    write(tmp_path, {"a.md": "# " + "é" * 300 + "\n\nbody\n"})
    converted = import_dir(str(tmp_path), "bikes")
    (label,) = [label for _, label in converted.batches[0].sections]
    assert label == "é" * 256 and len(converted.notes) == 1
