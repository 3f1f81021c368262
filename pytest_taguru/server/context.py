"""One context of the reference server: its metadata, graph, stored passages, BM25 index and
``revision``/``usage`` counters, and the association write that ``Store`` applies to it.

The state only: locking, counting reads and writes, and each HTTP operation's effect belong
to ``store``. Counters follow server-wire §3.10.
"""

from dataclasses import dataclass, field

from pytest_taguru.server.index.bm25 import Bm25Index
from pytest_taguru.server.index.graph import Graph
from pytest_taguru.server.index.passages import StoredPassage
from pytest_taguru.server.options import ContextOptions


@dataclass(frozen=True)
class AssocOp:
    """One association write, as validated from a body or an import line."""

    subject: str
    label: str
    object: str
    weight: float
    source: str | None = None
    paragraph: int | None = None


@dataclass
class Counters:
    """``revision`` lanes and ``usage`` counters of one context (§3.10)."""

    graph: int = 0
    passages: int = 0
    config: int = 0
    reads: int = 0
    empty_reads: int = 0
    writes: int = 0
    last_read_epoch: int = 0
    last_write_epoch: int = 0


@dataclass
class Context:
    """One context: metadata, graph, stored passages, BM25 index and counters."""

    name: str
    options: ContextOptions
    graph: Graph = field(default_factory=Graph)
    passages: dict[str, StoredPassage] = field(default_factory=dict)
    bm25: Bm25Index = field(default_factory=Bm25Index)
    counters: Counters = field(default_factory=Counters)
    _sorted_sources: list[str] | None = None

    def sorted_sources(self) -> list[str]:
        """Stored passage sources in code-point (= UTF-8 byte) order, cached per write."""
        if self._sorted_sources is None:
            self._sorted_sources = sorted(self.passages)
        return self._sorted_sources

    def put_passage(self, source: str, passage: StoredPassage) -> None:
        self.passages[source] = passage
        self.bm25.set_source(source, list(passage.paragraphs), passage.questions)
        self._sorted_sources = None

    def drop_passage(self, source: str) -> bool:
        if self.passages.pop(source, None) is None:
            return False
        self.bm25.remove_source(source)
        self._sorted_sources = None
        return True

    def paragraph_count(self, source: str | None) -> int | None:
        passage = self.passages.get(source) if source is not None else None
        return len(passage.paragraphs) if passage is not None else None
