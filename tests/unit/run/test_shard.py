"""Shard selection (``--taguru-shard I/N``): the hash rule, its stability, the flag's parser."""

import hashlib
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_taguru.core.limits import MAX_SHARDS
from pytest_taguru.errors import UsageError
from pytest_taguru.run.flag_values import parse_shard
from pytest_taguru.run.shard import ShardPlan, ShardSpec, shard_of

NEEDS = f"--taguru-shard needs a shard I/N with 1 <= I <= N <= {MAX_SHARDS}, e.g. 2/3"


@dataclass(frozen=True)
class Case:
    case_id: str


case_ids = st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=40, unique=True)
counts = st.integers(min_value=1, max_value=12)


# --- the rule ------------------------------------------------------------------------------------


def test_the_rule_is_the_documented_hash() -> None:
    for case_id, count in [("c-alpha", 3), ("早朝の仕込み", 7), ("x", 1), ("", 10_000)]:
        digest = hashlib.sha256(case_id.encode("utf-8")).digest()
        assert shard_of(case_id, count) == 1 + int.from_bytes(digest[:8], "big") % count


def test_the_rule_is_pinned() -> None:
    """Shards of one run may be selected by different versions on different machines: the
    rule must never change."""
    assert {case_id: shard_of(case_id, 3) for case_id in PINNED} == PINNED
    assert [shard_of(f"case-{n}", 7) for n in range(12)] == [1, 1, 3, 3, 4, 2, 7, 6, 3, 4, 5, 1]


PINNED = {"c-alpha": 3, "c-beta": 2, "c-gamma": 2, "c-miss": 2}


@given(case_ids, counts)
def test_every_case_is_in_exactly_one_shard(ids: list[str], count: int) -> None:
    for case_id in ids:
        holders = [index for index in range(1, count + 1) if ShardSpec(index, count).holds(case_id)]
        assert holders == [shard_of(case_id, count)]
    plans = [ShardPlan.of(ShardSpec(index, count), ids, b"") for index in range(1, count + 1)]
    assert sorted(case_id for plan in plans for case_id in plan.selected) == sorted(ids)


@given(case_ids, counts, st.randoms(use_true_random=False), st.text(min_size=1, max_size=12))
def test_the_selection_ignores_other_lines(
    ids: list[str], count: int, rng: object, inserted: str
) -> None:
    """Reordering the eval set, or inserting another line, moves no case to another shard."""
    spec = ShardSpec(1, count)
    shuffled = list(ids)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    grown = [*shuffled, inserted] if inserted not in ids else shuffled
    before = ShardPlan.of(spec, ids, b"").selected
    assert ShardPlan.of(spec, shuffled, b"").selected == before
    assert ShardPlan.of(spec, grown, b"").selected & set(ids) == before


def test_a_plan_selects_in_dataset_order_and_records_the_set() -> None:
    ids = [f"case-{n}" for n in range(30)]
    plan = ShardPlan.of(ShardSpec(2, 3), ids, b"eval bytes")
    selected = plan.select([Case(case_id) for case_id in ids])

    assert [case.case_id for case in selected] == [i for i in ids if shard_of(i, 3) == 2]
    assert plan.describe() == f"shard 2/3 ({len(selected)} of 30 cases)"
    record = plan.record()
    assert (record.index, record.count, record.case_ids) == (2, 3, ids)
    assert record.eval_sha256 == hashlib.sha256(b"eval bytes").hexdigest()


# --- the flag ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "index", "count"),
    [
        ("1/3", 1, 3),
        ("3/3", 3, 3),
        ("1/1", 1, 1),
        ("+2/03", 2, 3),
        (f"1/{MAX_SHARDS}", 1, MAX_SHARDS),
    ],
)
def test_shards(text: str, index: int, count: int) -> None:
    assert parse_shard(text, "--taguru-shard") == ShardSpec(index, count)


@pytest.mark.parametrize(
    "text",
    [None, "", "0/3", "4/3", "a/b", "1/0", "0/0", "3", "1/", "/3", "1/3/4", " 1/3", "1 / 3",
     "-1/3", "1/-3", "1.0/3", "½/3", "٣/٣", f"1/{MAX_SHARDS + 1}", "1/99999999999999999999999"],
)  # fmt: skip
def test_not_shards(text: str | None) -> None:
    with pytest.raises(UsageError) as refused:
        parse_shard(text, "--taguru-shard")
    assert refused.value.message == NEEDS
    assert refused.value.exit_code == 2


@given(st.text(max_size=12))
def test_the_parser_accepts_exactly_i_of_n(text: str) -> None:
    try:
        spec = parse_shard(text, "--taguru-shard")
    except UsageError as error:
        assert error.message == NEEDS
        return
    assert 1 <= spec.index <= spec.count <= MAX_SHARDS
    index, count = text.split("/")
    assert (int(index), int(count)) == (spec.index, spec.count)


@given(st.integers(1, MAX_SHARDS), st.integers(1, MAX_SHARDS))
def test_every_valid_pair_parses(index: int, count: int) -> None:
    text = f"{index}/{count}"
    if index <= count:
        assert parse_shard(text, "--x") == ShardSpec(index, count)
    else:
        with pytest.raises(UsageError):
            parse_shard(text, "--x")
