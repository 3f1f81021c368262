"""Store, graph and passage rules (server-wire §2.4, §3.3-§3.5, §3.7, §3.10)."""

import threading
import time

import pytest

from pytest_taguru.server.compaction import CompactionSettings, Compactor
from pytest_taguru.server.context import AssocOp
from pytest_taguru.server.index.graph import Graph, Namespace
from pytest_taguru.server.index.passages import Locator, PassageSubmission, build_passage
from pytest_taguru.server.store import ContextOptions, Store


def test_sections_extend_forward_and_locators_do_not() -> None:
    passage = build_passage(
        PassageSubmission(
            text="p0\n\np1\n\np2\n\np3",
            sections=[(1, "A"), (1, "B"), (3, "C"), (9, "X")],
            locators=[(2, Locator("page", "5")), (7, Locator("page", "9"))],
            questions=[(0, "q"), (5, "lost")],
        ),
        now=42,
    )
    assert [passage.section_of(p) for p in range(4)] == [None, "B", "B", "C"]
    assert [passage.locator_of(p) for p in range(4)] == [None, None, Locator("page", "5"), None]
    counts = passage.counts
    assert (counts.sections_stored, counts.sections_dropped) == (2, 2)
    assert (counts.locators_stored, counts.locators_dropped) == (1, 1)
    assert (counts.questions_stored, counts.questions_dropped) == (1, 1)
    assert passage.stored_at == 42 and passage.effective_time == 42


def test_gloss_ranks_one_list_over_both_directions() -> None:
    graph = Graph()
    graph.add("青嶺酒造", "杜氏", "高瀬", 2.0, None, None)
    graph.add("高瀬", "出身", "南部", 1.0, None, None)
    graph.add("高瀬", "好物", "酒", -3.0, None, None)
    assert (
        graph.concept_gloss("高瀬") == "高瀬。好物は酒ではない。青嶺酒造の杜氏は高瀬。出身は南部。"
    )
    graph.add("甲", "杜氏", "乙", 1.0, None, None)
    assert graph.label_gloss("杜氏") == "杜氏。青嶺酒造の杜氏は高瀬。甲の杜氏は乙。"


def test_gloss_omits_a_repeated_subject_and_keeps_four_facts() -> None:
    graph = Graph()
    for index in range(6):
        graph.add("甲", f"r{index}", "乙", float(6 - index), None, None)
    assert graph.concept_gloss("乙") == "乙。甲のr0は乙。r1は乙。r2は乙。r3は乙。"


def test_top_concepts_degree_self_loops_and_fill() -> None:
    graph = Graph()
    graph.add("a", "r", "a", 1.0, None, None)
    graph.add("b", "r", "c", 1.0, None, None)
    graph.add("d", "r", "e", 1.0, None, None)
    graph.retract_triple("d", "r", "e")
    stats = graph.stats()
    assert stats["top_concepts"] == [
        {"label": "a", "count": 2},
        {"label": "b", "count": 1},
        {"label": "c", "count": 1},
        {"label": "d", "count": 0},
        {"label": "e", "count": 0},
    ]
    assert (stats["dead_edges"], stats["associations"], stats["unsourced_edges"]) == (1, 3, 2)


def test_alias_rules() -> None:
    graph = Graph()
    graph.add("Apple", "is", "fruit", 1.0, None, None)
    assert graph.register_alias(Namespace.CONCEPT, "りんご", "Apple") is None
    assert graph.register_alias(Namespace.CONCEPT, "りんご", "Apple") is None
    assert graph.register_alias(Namespace.CONCEPT, "林檎", "りんご") is None
    assert graph.concepts.aliases["林檎"] == "Apple"
    assert graph.register_alias(Namespace.CONCEPT, "fruit", "Apple") == (
        "the alias already resolves to a different record"
    )
    assert (
        graph.register_alias(Namespace.LABEL, "x", "Apple")
        == "the canonical spelling is not interned"
    )
    graph.add("りんご", "is", "red", 1.0, None, None)
    assert ("Apple", "is", "red") in graph.edges
    assert not graph.remove_alias(Namespace.CONCEPT, "Apple")
    assert graph.remove_alias(Namespace.CONCEPT, "りんご")


def test_retraction_keeps_unsourced_weight_and_fresh_attribution() -> None:
    graph = Graph()
    graph.add("s", "l", "o", 2.0, "a.md", 3)
    graph.add("s", "l", "o", 1.0, None, None)
    assert graph.retract_source("a.md") == 1
    edge = graph.edges[("s", "l", "o")]
    assert (edge.total, edge.count, edge.attributions) == (1.0, 1, [])
    graph.add("s", "l", "o", 5.0, "a.md", 0)
    assert [(a.source, a.paragraph) for a in edge.attributions] == [("a.md", 0)]
    assert "a.md" in graph.sources and graph.dead_attributions == 1


def test_store_is_safe_under_concurrent_writes() -> None:
    store = Store()
    store.create("c", ContextOptions())
    op = AssocOp("s", "l", "o", 1.0, "x.md")

    def write() -> None:
        for _ in range(200):
            store.add_associations("c", [op])

    threads = [threading.Thread(target=write) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    context = store.contexts["c"]
    assert context.counters.graph == 800 and context.counters.writes == 800
    assert context.graph.edges[("s", "l", "o")].attributions[0].count == 800


def test_compaction_forgets_dead_edges_names_and_aliases() -> None:
    store = Store()
    store.create("c", ContextOptions())
    store.add_associations(
        "c",
        [
            AssocOp("a", "r", "b", 1.0, "x.md", 0),
            AssocOp("c", "r", "d", 2.0, "y.md"),
            AssocOp("e", "q", "f", 3.0, "y.md"),
        ],
    )
    store.register_aliases("c", {"C": "c", "A": "a"}, {"Q": "q"})
    store.retract_association("c", "c", "r", "d")
    assert store.compact_worst(0.5) is None
    store.retract_association("c", "e", "q", "f")
    before = store.contexts["c"].counters.graph
    assert store.compact_worst(0.5) == "c"
    graph = store.contexts["c"].graph
    assert list(graph.edges) == [("a", "r", "b")]
    assert list(graph.concepts.canonical) == ["a", "b"]
    assert graph.concepts.aliases == {"A": "a"} and graph.labels.aliases == {}
    assert list(graph.sources) == ["x.md"]
    assert graph.stats()["dead_edges"] == 0 and graph.dead_attributions == 0
    assert [c.name for c in graph.concepts.index.resolve("c", 5)] == []
    assert store.contexts["c"].counters.graph == before
    assert store.retract_source("c", "y.md", dry_run=False)["associations_touched"] == 0
    assert store.contexts["c"].counters.graph == before


def test_compaction_settings_from_environment() -> None:
    assert CompactionSettings.from_environment({}) == CompactionSettings(5.0, 0.5)
    assert CompactionSettings.from_environment({"TAGURU_AUTO_COMPACT": "0"}).interval is None
    custom = {"TAGURU_FLUSH_SECS": "0.5", "TAGURU_AUTO_COMPACT_RATIO": "0.25"}
    assert CompactionSettings.from_environment(custom) == CompactionSettings(0.5, 0.25)
    with pytest.raises(ValueError, match="TAGURU_FLUSH_SECS"):
        CompactionSettings.from_environment({"TAGURU_FLUSH_SECS": "soon"})


def test_compactor_thread_compacts_on_its_tick() -> None:
    store = Store()
    store.create("c", ContextOptions())
    store.add_associations("c", [AssocOp("a", "r", "b", 1.0)])
    store.retract_association("c", "a", "r", "b")
    compactor = Compactor(store, CompactionSettings(interval=0.01))
    compactor.start()
    try:
        for _ in range(500):
            if not store.contexts["c"].graph.edges:
                break
            time.sleep(0.01)
    finally:
        compactor.stop()
    assert store.contexts["c"].graph.edges == {}
