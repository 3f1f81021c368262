"""Lexical resolve over an entry index (server-wire.md §3.2.1–§3.2.3)."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_taguru.core.text import normalize_entry
from pytest_taguru.server.index.resolve import Candidate, EntryIndex


def _index(*names: str, aliases: dict[str, str] | None = None) -> EntryIndex:
    index = EntryIndex()
    for name in names:
        index.add_canonical(name)
    for alias, canonical in (aliases or {}).items():
        index.add_alias(alias, canonical)
    return index


def _listing(candidates: list[Candidate]) -> list[tuple[str, float, str]]:
    return [(c.name, c.score, c.kind) for c in candidates]


def reference_resolve(
    spellings: list[tuple[str, str]], cue: str, limit: int, floor: float = 0.3
) -> list[tuple[str, float, str]]:
    """§3.2.2 by brute force over ``(spelling, canonical)`` pairs, in index order."""
    n = normalize_entry(cue)
    if not n:
        return []
    entries = [(normalize_entry(s), record) for s, record in spellings]
    best: dict[str, tuple[float, str]] = {}

    def keep(record: str, score: float, kind: str) -> None:
        if record not in best or score > best[record][0]:
            best[record] = (score, kind)

    matched = set()
    exact = False
    for number, (s, record) in enumerate(entries):
        if s and s == n:
            keep(record, 1.0, "exact")
            matched.add(number)
            exact = True
        elif s and (s in n or n in s):
            keep(record, min(len(s), len(n)) / max(len(s), len(n)), "containment")
            matched.add(number)
    if not exact:
        threshold = max(len(entries) // 20, 64)

        def grams(text: str) -> set[str]:
            return {text[i : i + 2] for i in range(len(text) - 1)}

        holders: dict[str, int] = {}
        for s, _ in entries:
            for gram in grams(s):
                holders[gram] = holders.get(gram, 0) + 1

        def stop(gram: str) -> bool:
            return holders.get(gram, 0) > threshold

        q = {g for g in grams(n) if not stop(g)}
        for number, (s, record) in enumerate(entries):
            p = {g for g in grams(s) if not stop(g)}
            common = len(q & p)
            if number not in matched and common >= 1 and p:
                dice = 2 * common / (len(q) + len(p))
                if dice >= floor:
                    keep(record, dice, "fuzzy")
    canonical_text = {record: normalize_entry(record) for _, record in spellings}
    rows = [
        (name, score, "alias" if kind == "exact" and canonical_text[name] != n else kind)
        for name, (score, kind) in best.items()
    ]
    return sorted(rows, key=lambda row: (-row[1], row[0]))[:limit]


def test_short_cue_pulls_in_every_name_containing_it() -> None:
    index = _index("10大脅威選考会", "脅威候補", "脅威", "無関係")
    assert _listing(index.resolve("脅威", 10)) == [
        ("脅威", 1.0, "exact"),
        ("脅威候補", 0.5, "containment"),
        ("10大脅威選考会", 0.25, "containment"),
    ]


def test_exact_match_skips_only_the_fuzzy_pass() -> None:
    index = _index("apple", "applf", "apple pie")
    assert _listing(index.resolve("Apple", 10)) == [
        ("apple", 1.0, "exact"),
        ("apple pie", 5 / 9, "containment"),
    ]
    # applx: {ap, pp, pl, lx}; apple pie shares 3 of its 8 bigrams → 6/12.
    assert _listing(index.resolve("applx", 10)) == [
        ("apple", 0.75, "fuzzy"),
        ("applf", 0.75, "fuzzy"),
        ("apple pie", 0.5, "fuzzy"),
    ]


def test_long_cue_containing_a_name_and_one_character_names() -> None:
    index = _index("青嶺酒造", "酒", "abcdefgh")
    assert _listing(index.resolve("青嶺酒造の杜氏", 10)) == [
        ("青嶺酒造", 4 / 7, "containment"),
        ("酒", 1 / 7, "containment"),
    ]
    assert _listing(index.resolve("abc", 10)) == [("abcdefgh", 0.375, "containment")]


def test_case_variants_are_two_records_both_exact() -> None:
    index = _index("apple", "Apple", "ＡＰＰＬＥ")
    assert _listing(index.resolve("APPLE", 10)) == [
        ("Apple", 1.0, "exact"),
        ("apple", 1.0, "exact"),
        ("ＡＰＰＬＥ", 1.0, "exact"),
    ]
    assert len(index) == 3


def test_dice_in_64_bit_and_the_floor_is_inclusive() -> None:
    index = _index("abcx")
    assert _listing(index.resolve("abcd", 10)) == [("abcx", 0.6666666666666666, "fuzzy")]
    assert _listing(index.resolve("abcd", 10, dice_floor=4 / 6)) == [("abcx", 4 / 6, "fuzzy")]
    assert index.resolve("abcd", 10, dice_floor=0.6666666666666667) == []
    # The floor never gates containment; it is clamped to [0, 1].
    assert _listing(_index("abcdefgh").resolve("abc", 10, dice_floor=5.0)) == [
        ("abcdefgh", 0.375, "containment")
    ]


def test_bigrams_keep_spaces_and_punctuation() -> None:
    index = _index("aomine brewery")
    (candidate,) = index.resolve("mine bre!", 10)
    # cue bigrams: mi in ne e_ _b br re e! → 7 of 8 shared with the name's 13 bigrams.
    assert (candidate.kind, candidate.score) == ("fuzzy", 2 * 7 / (8 + 13))


def test_alias_refinement() -> None:
    index = _index("青嶺酒造", "Apple", aliases={"Aomine Brewery": "青嶺酒造", "APPLE": "Apple"})
    assert _listing(index.resolve("aomine brewery", 10)) == [("青嶺酒造", 1.0, "alias")]
    # An alias normalizing like its canonical reports exact.
    assert _listing(index.resolve("apple", 10)) == [("Apple", 1.0, "exact")]
    # Containment through an alias stays containment; results carry the canonical name.
    assert _listing(index.resolve("aomine", 10)) == [("青嶺酒造", 6 / 14, "containment")]


def test_per_record_best_and_containment_wins_ties_with_fuzzy() -> None:
    # canonical: containment 4/8; alias "abvbcw": Dice 2·2/(3+5) = 0.5 → containment kept.
    tie = _index("abcdefgh", aliases={"abvbcw": "abcdefgh"})
    assert _listing(tie.resolve("abcd", 10)) == [("abcdefgh", 0.5, "containment")]
    # A better fuzzy score of another spelling wins.
    better = _index("abcdefghijkl", aliases={"abcx": "abcdefghijkl"})
    assert _listing(better.resolve("abcd", 10)) == [("abcdefghijkl", 4 / 6, "fuzzy")]


def _stop_gram_names(count: int) -> list[str]:
    # Every name holds the bigram "aa"; the rest of each name is unique to it.
    return [f"aa{chr(0x4E00 + 2 * i)}{chr(0x4E01 + 2 * i)}" for i in range(count)]


def test_a_bigram_in_more_than_64_spellings_is_a_stop_gram() -> None:
    at_limit = _index(*_stop_gram_names(64))
    assert len(at_limit.resolve("aab", 1000)) == 64  # Dice 2·1/(2+3) = 0.4 each
    assert {c.score for c in at_limit.resolve("aab", 1000)} == {0.4}
    over_limit = _index(*_stop_gram_names(65))
    assert over_limit.resolve("aab", 1000) == []
    # Stop-grams leave P as well: 'aa一丁' keeps {a一, 一丁} → 2·1/(2+2).
    assert _listing(over_limit.resolve("x一丁", 1)) == [("aa一丁", 0.5, "fuzzy")]


def test_stop_gram_limit_grows_with_the_index() -> None:
    names = _stop_gram_names(90) + [f"filler{i:04d}" for i in range(1910)]
    index = _index(*names)  # S = 2000 → a stop-gram needs more than 100 spellings
    assert len(index.resolve("aab", 1000)) == 90


def test_removal_of_aliases_and_records() -> None:
    index = _index("青嶺酒造", "高瀬", aliases={"Aomine Brewery": "青嶺酒造", "蔵元": "青嶺酒造"})
    assert len(index) == 4
    index.remove_alias("Aomine Brewery")
    index.remove_alias("never registered")
    assert index.resolve("aomine brewery", 10) == []
    index.forget("青嶺酒造")
    assert len(index) == 1
    assert index.resolve("蔵元", 10) == []
    assert index.record_of("高瀬") == "高瀬"


def test_alias_of_an_alias_and_conflicts() -> None:
    index = _index("青嶺酒造", "高瀬", aliases={"Aomine": "青嶺酒造"})
    index.add_alias("Aomine Brewery", "Aomine")
    assert index.record_of("Aomine Brewery") == "青嶺酒造"
    index.add_alias("Aomine", "青嶺酒造")  # same record: no-op
    assert len(index) == 4
    with pytest.raises(ValueError):
        index.add_alias("Aomine", "高瀬")
    with pytest.raises(KeyError):
        index.add_alias("x", "unknown")


def test_empty_cue_and_limit() -> None:
    index = _index("a", "ab", "abc")
    assert index.resolve("", 10) == []
    assert index.resolve("abc", 0) == []
    assert _listing(index.resolve("abc", 2)) == [
        ("abc", 1.0, "exact"),
        ("ab", 2 / 3, "containment"),
    ]


_NAME = st.text(alphabet=st.sampled_from(list("abAＢ 酒造ア")), max_size=5)


@settings(max_examples=150)
@given(
    st.lists(_NAME, max_size=12),
    st.dictionaries(_NAME, st.integers(min_value=0, max_value=11), max_size=4),
    _NAME,
    st.sampled_from([0.0, 0.3, 0.5, 1.0]),
)
def test_matches_brute_force_reference(
    names: list[str], aliases: dict[str, int], cue: str, floor: float
) -> None:
    index = _index(*names)
    spellings = [(name, name) for name in dict.fromkeys(names)]
    for alias, target in aliases.items():
        if names and index.record_of(alias) is None:
            record = names[target % len(names)]
            index.add_alias(alias, record)
            spellings.append((alias, record))
    assert len(index) == len(spellings)
    assert _listing(index.resolve(cue, 1000, floor)) == reference_resolve(
        spellings, cue, 1000, floor
    )


def test_matches_reference_with_stop_grams() -> None:
    rng = random.Random(7)
    names = list(
        dict.fromkeys("".join(rng.choices("abcd酒造", k=rng.randint(1, 6))) for _ in range(400))
    )
    index = _index(*names)
    spellings = [(name, name) for name in names]
    for _ in range(60):
        cue = "".join(rng.choices("abcde酒造", k=rng.randint(1, 7)))
        assert _listing(index.resolve(cue, 1000)) == reference_resolve(spellings, cue, 1000), cue
