"""urls.py: request URLs as taguru builds them (segments, base path, query)."""

from urllib.parse import unquote_to_bytes

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.run.urls import UrlError, form_urlencode, join_segments

# --- URL building ----------------------------------------------------------------------------


class TestJoinSegments:
    def test_plain_base(self) -> None:
        assert join_segments("http://h:8248", ["contexts", "sake"]) == (
            "http://h:8248/contexts/sake"
        )

    def test_base_path_prefix_kept(self) -> None:
        assert join_segments("http://h/api", ["health"]) == "http://h/api/health"

    def test_base_path_with_trailing_slash_doubles_the_slash(self) -> None:
        assert join_segments("http://h/prefix/", ["health"]) == "http://h/prefix//health"

    def test_parser_normalizes_the_base(self) -> None:
        assert join_segments("HTTP://Example.COM:80", ["health"]) == "http://example.com/health"

    def test_base_query_and_fragment_stay(self) -> None:
        assert join_segments("http://h/x?y=1#f", ["contexts"]) == "http://h/x/contexts?y=1#f"

    def test_query_pairs_follow_the_base_query(self) -> None:
        url = join_segments("http://h/x?y=1", ["s"], [("limit", "1000"), ("after", "a")])
        assert url == "http://h/x/s?y=1&limit=1000&after=a"

    def test_query_pairs_after_a_bare_question_mark(self) -> None:
        assert join_segments("http://h/x?", ["s"], [("limit", "1")]) == "http://h/x/s?limit=1"

    def test_query_pairs_without_base_query(self) -> None:
        url = join_segments("http://h", ["contexts", "sake", "sources"], [("limit", "1000")])
        assert url == "http://h/contexts/sake/sources?limit=1000"

    def test_spec_example_cursor(self) -> None:
        url = join_segments(
            "http://localhost:8248",
            ["contexts", "sake", "sources"],
            [("limit", "1000"), ("after", "corpus/products.md")],
        )
        assert url == (
            "http://localhost:8248/contexts/sake/sources?limit=1000&after=corpus%2Fproducts.md"
        )

    def test_non_ascii_segment_is_utf8_escaped(self) -> None:
        assert join_segments("http://h", ["contexts", "酒"]) == "http://h/contexts/%E9%85%92"

    @pytest.mark.parametrize(
        ("segment", "encoded"),
        [
            ("a/b", "a%2Fb"),
            ("100%", "100%25"),
            ("a\\b", "a%5Cb"),
            ("a?b", "a%3Fb"),
            ("a#b", "a%23b"),
            ("a b", "a%20b"),
            ('a"b', "a%22b"),
            ("<>", "%3C%3E"),
            ("`", "%60"),
            ("{}", "%7B%7D"),
            ("\x00\x1f\x7f", "%00%1F%7F"),
            ("a^b|c[d]e'f:g@h;i=j&k+l~m!n$o(p)q*r,s", "a^b|c[d]e'f:g@h;i=j&k+l~m!n$o(p)q*r,s"),
        ],
    )
    def test_segment_escaping(self, segment: str, encoded: str) -> None:
        assert join_segments("http://h", ["c", segment]) == f"http://h/c/{encoded}"

    def test_backslash_kept_for_a_non_special_scheme(self) -> None:
        assert join_segments("foo://h", ["a\\b"]) == "foo://h/a\\b"

    def test_tab_cr_lf_are_removed(self) -> None:
        assert join_segments("http://h", ["a\tb\r\nc"]) == "http://h/abc"

    @pytest.mark.parametrize("dots", [".", ".."])
    def test_dot_segments_are_skipped(self, dots: str) -> None:
        assert join_segments("http://h/p", ["contexts", dots, "x"]) == "http://h/p/contexts/x"

    def test_escaped_dots_are_ordinary_text(self) -> None:
        assert join_segments("http://h", ["%2e"]) == "http://h/%252e"

    def test_dot_after_tab_removal_leaves_an_empty_segment(self) -> None:
        assert join_segments("http://h", ["a", "\t.", "x"]) == "http://h/a//x"

    def test_double_dot_after_tab_removal_pops_a_segment(self) -> None:
        assert join_segments("http://h", ["a", "\t..", "x"]) == "http://h/x"

    def test_opaque_base_cannot_carry_a_path(self) -> None:
        with pytest.raises(UrlError, match=r"^'localhost:8248' cannot carry a path$"):
            join_segments("localhost:8248", ["health"])

    def test_unparsable_base(self) -> None:
        with pytest.raises(UrlError, match=r"^'not a url' is not a usable base URL"):
            join_segments("not a url", ["health"])


class TestFormUrlencode:
    def test_space_plus_and_reserved(self) -> None:
        assert form_urlencode([("after", "a b~*-._/é")]) == "after=a+b%7E*-._%2F%C3%A9"

    def test_pairs_joined(self) -> None:
        assert form_urlencode([("a", "1"), ("b", "&=")]) == "a=1&b=%26%3D"


@given(st.text())
def test_segment_encoding_round_trips(segment: str) -> None:
    cleaned = segment.replace("\t", "").replace("\r", "").replace("\n", "")
    url = join_segments("http://h/base", [segment])
    if segment in (".", "..") or cleaned in (".", ".."):
        return
    encoded = url.removeprefix("http://h/base/")
    assert "/" not in encoded and "?" not in encoded and "#" not in encoded
    assert all(0x20 < ord(ch) < 0x7F for ch in encoded)
    assert unquote_to_bytes(encoded) == cleaned.encode("utf-8", "surrogatepass")


@given(st.lists(st.tuples(st.text(), st.text()), max_size=3))
def test_form_encoding_round_trips(pairs: list[tuple[str, str]]) -> None:
    encoded = form_urlencode(pairs)
    decoded = [
        tuple(unquote_to_bytes(part.replace("+", " ")) for part in item.split("="))
        for item in encoded.split("&")
        if encoded
    ]
    assert decoded == [
        (name.encode("utf-8", "surrogatepass"), value.encode("utf-8", "surrogatepass"))
        for name, value in pairs
    ]
