"""Shared text rules: Rust's str::trim, taguru's normalize_entry, message truncation."""

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.core.text import is_white_space, normalize_entry, trim, truncate_message


def reference_fold(text: str) -> str:
    """The spec's four steps, spelled out one code point at a time (server-wire §3.1)."""
    lowered = "".join(ch.lower() for ch in text)
    lowered = "".join(ch.lower() for ch in unicodedata.normalize("NFKC", lowered))
    return "".join(chr(ord(c) - 0x60) if 0x30A1 <= ord(c) <= 0x30F6 else c for c in lowered)


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("Ａｐｐｌｅ", "apple"),
        ("リンゴ", "りんご"),
        ("ｶﾞｯｺｳ", "がっこう"),
        ("データ", "でーた"),
        ("ΟΔΟΣ", "οδοσ"),  # no final sigma: Σ is always σ
        ("ヴヵヶ", "ゔゕゖ"),
        ("ヷヸヹヺー", "ヷヸヹヺー"),  # outside U+30A1..U+30F6: not folded
        ("①", "1"),
        ("ß", "ß"),  # lowercase, not case folding
        ("  x  ", "  x  "),  # no trimming
    ],
)
def test_normalize_entry_examples(text: str, folded: str) -> None:
    assert normalize_entry(text) == folded


@given(st.text(alphabet=st.characters(codec="utf-8")))
def test_normalize_entry_matches_the_spelled_out_rule_and_is_a_fixed_point(text: str) -> None:
    folded = normalize_entry(text)
    assert folded == reference_fold(text)
    assert normalize_entry(folded) == folded


def test_trim_is_rust_trim_not_python_strip() -> None:
    assert trim("\u3000\t x \u00a0\n") == "x"
    assert trim("\x1c x \x1f") == "\x1c x \x1f"  # Python's strip() would remove these
    assert is_white_space("\u3000") and not is_white_space("\x1c")


def test_truncate_message_cuts_on_a_character_boundary() -> None:
    assert truncate_message("a" * 200) == "a" * 200
    assert truncate_message("a" * 201) == "a" * 200 + "…"
    cut = truncate_message("あ" * 100)  # 3 bytes each: 66 whole characters fit in 200 bytes
    assert cut == "あ" * 66 + "…" and len(cut.encode()) <= 203
