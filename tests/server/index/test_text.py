"""Paragraph splitting (server-wire.md §3.6) and the passage tokenizer (§3.8)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.core.text import WHITE_SPACE
from pytest_taguru.server.index.text import document_terms, query_terms, split_paragraphs, term_kind

# --- §3.6 paragraph splitting -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "paragraphs"),
    [
        ("", []),
        ("\n\n\n", []),
        (" \t\n\u3000\n\u00a0\u2000\u200a\n", []),
        ("one", ["one"]),
        ("one\ntwo", ["one\ntwo"]),
        ("one\n\ntwo", ["one", "two"]),
        ("# Title\n\nBody", ["# Title", "Body"]),
        # \r\n: interior breaks stay, the final one is excluded, \r\n\r\n separates.
        ("one\r\ntwo\r\n", ["one\r\ntwo"]),
        ("one\r\n\r\ntwo\r\n", ["one", "two"]),
        # A lone \r is not a line break; only one trailing \r is dropped from a line.
        ("one\rtwo", ["one\rtwo"]),
        ("one\r", ["one"]),
        ("one\r\r\n\ntwo", ["one\r", "two"]),
        ("one\n\r\ntwo", ["one", "two"]),
        ("one\n\r\r\ntwo", ["one", "two"]),
        # U+3000 ideographic space and other White_Space lines are blank ...
        ("一\n\u3000\u3000\n二", ["一", "二"]),
        ("a\n\u00a0\nb\n\u2028\nc", ["a", "b", "c"]),
        # ... but U+001C..U+001F are not (unlike str.isspace()).
        ("a\n\x1c\nb", ["a\n\x1c\nb"]),
        ("\x1f", ["\x1f"]),
        # Leading and trailing blank lines belong to no paragraph; nothing is trimmed.
        ("\n \n  indented  \n\n\n", ["  indented  "]),
        ("  a\n b  \n\n\tc\t", ["  a\n b  ", "\tc\t"]),
    ],
)
def test_split_paragraphs(text: str, paragraphs: list[str]) -> None:
    assert split_paragraphs(text) == paragraphs


def _is_blank(content: str) -> bool:
    return all(ch in WHITE_SPACE for ch in content)


def _reference_split(text: str) -> list[str]:
    """Straightforward line-list version of §3.6, to check the offset-based one against."""
    lines = text.split("\n")
    contents = [line[:-1] if line.endswith("\r") else line for line in lines]
    paragraphs: list[str] = []
    run: list[int] = []
    for number, content in enumerate([*contents, ""]):
        if not _is_blank(content):
            run.append(number)
        elif run:
            paragraphs.append("\n".join([*lines[run[0] : run[-1]], contents[run[-1]]]))
            run = []
    return paragraphs


_LINE_TEXT = st.text(
    alphabet=st.sampled_from(["a", "漢", " ", "\t", "\u3000", "\u00a0", "\x1c", "\r", "\n", "\n"]),
    max_size=40,
)


@given(_LINE_TEXT)
def test_split_paragraphs_matches_line_reference(text: str) -> None:
    assert split_paragraphs(text) == _reference_split(text)


@given(_LINE_TEXT)
def test_paragraphs_are_ordered_slices_without_blank_lines(text: str) -> None:
    position = 0
    for paragraph in split_paragraphs(text):
        found = text.find(paragraph, position)
        assert found >= 0
        position = found + len(paragraph)
        for line in paragraph.split("\n"):
            assert not _is_blank(line.removesuffix("\r"))
    kept = sum(not _is_blank(ch) for paragraph in split_paragraphs(text) for ch in paragraph)
    assert kept == sum(not _is_blank(ch) for ch in text)


# --- §3.8 tokenizer ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("青嶺酒造", ["青嶺", "嶺酒", "酒造"]),
        ("杜氏は誰", ["杜氏", "氏は", "は誰"]),
        ("高瀬 1907年", ["高瀬", "1907", "年"]),
        ("1907年に創業", ["1907", "年に", "に創", "創業"]),
        ("データ", ["でー", "ーた"]),
        ("。、", []),
        ("東京タワー", ["東京", "京た", "たわ", "わー"]),
        ("第10篇", ["第", "10", "篇"]),
        ("café", ["caf", "é"]),
        ("Hello, World!", ["hello", "world"]),
        ("ｶﾞｯｺｳ", ["がっ", "っこ", "こう"]),
        ("Ａｐｐｌｅ", ["apple"]),
        ("ΟΔΟΣ δρόμος", ["οδ", "δο", "οσ", "δρ", "ρό", "όμ", "μο", "ος"]),
        ("〇〇", ["〇〇"]),
        ("々", ["々"]),
        # Other_Alphabetic marks are run characters (Devanagari vowel sign AA, U+093E).
        ("x\u0915\u093e", ["x", "\u0915\u093e"]),
        # Emoji and symbols close a run; a run of one character is a lone term.
        ("酒🍶米", ["酒", "米"]),
        # Kana voicing marks are not alphanumeric.
        (" \u3099あ", ["あ"]),
    ],
)
def test_main_stream(text: str, terms: list[str]) -> None:
    assert document_terms(text) == terms


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("AppState", ["appstate", "app", "state"]),
        ("HTTPServer", ["httpserver", "http", "server"]),
        ("U64Max", ["u64max", "u64", "max"]),
        ("iPhone ABC", ["iphone", "abc", "i", "phone"]),
        ("parseJSONValue2x", ["parsejsonvalue2x", "parse", "json", "value2x"]),
        # Full-width letters are NFKC-folded before the camelCase split.
        ("ＡｐｐＳｔａｔｅ", ["appstate", "app", "state"]),
        # Pieces follow the whole main stream, run by run.
        ("fooBar 酒 bazQux", ["foobar", "酒", "bazqux", "foo", "bar", "baz", "qux"]),
        # No case boundary, no pieces.
        ("ALLCAPS lower Title", ["allcaps", "lower", "title"]),
    ],
)
def test_camel_case_pieces(text: str, terms: list[str]) -> None:
    assert document_terms(text) == terms


def test_document_terms_count_every_occurrence_and_queries_deduplicate() -> None:
    assert document_terms("酒造 酒造 sake sake") == ["酒造", "酒造", "sake", "sake"]
    assert query_terms("酒造 酒造 sake sake") == ["酒造", "sake"]
    assert query_terms("AppState app") == ["appstate", "app", "state"]


def test_term_kinds_are_disjoint() -> None:
    assert [term_kind(t) for t in document_terms("高瀬 1907年")] == ["pair", "word", "lone"]
    assert "年" not in document_terms("1907年に創業")


@given(st.text(alphabet=st.sampled_from(list("aB1 酒造米ーア。、éΣ\u093e")), max_size=30))
def test_query_terms_are_the_first_occurrences(text: str) -> None:
    document = document_terms(text)
    query = query_terms(text)
    assert len(query) == len(set(query))
    assert query == sorted(set(document), key=document.index)
    for term in document:
        if term.isascii():
            assert term.isalnum() and term == term.lower()
        else:
            assert 1 <= len(term) <= 2
