"""The one Markdown table-cell rule (``report/markdown``), shared by the gate's step summary
and compare's pull-request comment."""

import html
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.report.markdown import cell, code


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("0.100000 < min 0.500000", "0.100000 < min 0.500000"),  # the gate's reasons
        ("500.000000 > max 100.000000", "500.000000 > max 100.000000"),
        ("min 1 must be <= max 0", "min 1 must be <= max 0"),
        ("a|b\nc\r\nd", "a\\|b c d"),
        ("<script>x</script>", "&lt;script>x&lt;/script>"),
        ("<!-- x -->", "&lt;!-- x -->"),
        ("<http://example.com>", "&lt;http://example.com>"),
        ("<1@example.com>", "&lt;1@example.com>"),
        ("R&D", "R&amp;D"),
        ("&#60;", "&amp;#60;"),
        ("a & b", "a & b"),
    ],
)
def test_a_cell_is_one_line_without_markup(text: str, shown: str) -> None:
    assert cell(text) == shown


def test_a_code_span_escapes_only_pipes() -> None:
    assert code("a|b_*") == "`a\\|b_*`"
    assert code("<b>&amp;") == "`<b>&amp;`"
    assert code("`x`") == "`` `x` ``"


_NO_BACKSLASH = st.text(st.characters(exclude_characters="\\"))


@given(_NO_BACKSLASH)
def test_a_cell_opens_no_html_entity_or_autolink_and_reads_back(text: str) -> None:
    shown = cell(text)
    assert "\n" not in shown and "\r" not in shown
    assert re.search(r"(?<!\\)\|", shown) is None
    own_references = re.sub("&(amp|lt);", "", shown)
    assert re.search(r"<[A-Za-z/!?]|<[^\s<>]*>|&[A-Za-z#]", own_references) is None
    assert html.unescape(shown.replace("\\|", "|")) == " ".join(text.splitlines())
