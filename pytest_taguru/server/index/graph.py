"""The association graph of one context: interned names, aliases, edges, attributions.

server-wire §3.3 (aliases), §3.4 (accumulation, attribution, retraction), §3.5 (pinned
query, windows, paging), §3.2.6 (gloss text), §2.4 (stats). Names are stored exactly as
given after alias lookup; no normalization happens on the write path. :meth:`Graph.compact`
is taguru's compaction; the store decides when it runs.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from pytest_taguru.server.index.resolve import EntryIndex

Triple = tuple[str, str, str]

TOP_CONCEPTS = 10
LABEL_SAMPLE = 50
CONCEPT_GLOSS_FACTS = 4
LABEL_GLOSS_FACTS = 3


class Namespace(Enum):
    """The two name spaces: concepts (subjects/objects) and relation labels."""

    CONCEPT = "concept"
    LABEL = "label"


@dataclass
class Attribution:
    """One source's share of an edge: raw cumulative ``total``, ``count``, first paragraph."""

    source: str
    total: float
    count: int
    paragraph: int | None


@dataclass
class Edge:
    """A triple's accumulated assertions; ``seq`` is its creation order."""

    seq: int
    total: float = 0.0
    count: int = 0
    attributions: list[Attribution] = field(default_factory=list)

    @property
    def weight(self) -> float:
        """Served weight: the average ``total ÷ count``, 0.0 for a dead edge."""
        return self.total / self.count if self.count else 0.0


@dataclass(frozen=True)
class MatchRow:
    """One ``/query`` match before decoration with sections and locators."""

    triple: Triple
    weight: float
    count: int
    attributions: tuple[Attribution, ...]


@dataclass(frozen=True)
class QueryCursor:
    """The ``after`` cursor: the previous page's last match."""

    weight: float
    subject: str
    label: str
    object: str


class _Names:
    """One namespace: canonical names in interning order, aliases, and the entry index."""

    def __init__(self) -> None:
        self.canonical: dict[str, None] = {}
        self.aliases: dict[str, str] = {}
        self.index = EntryIndex()

    def lookup(self, spelling: str) -> str | None:
        """Exact raw-string lookup: the canonical name, or the record an alias names."""
        if spelling in self.canonical:
            return spelling
        return self.aliases.get(spelling)

    def intern(self, spelling: str) -> str:
        found = self.lookup(spelling)
        if found is not None:
            return found
        self.canonical[spelling] = None
        self.index.add_canonical(spelling)
        return spelling


class Graph:
    """Edges keyed by triple with per-source attributions, plus both namespaces."""

    def __init__(self) -> None:
        self.concepts = _Names()
        self.labels = _Names()
        self.sources: dict[str, None] = {}
        self.edges: dict[Triple, Edge] = {}
        self._by_concept: dict[str, list[Triple]] = {}
        self._by_label: dict[str, list[Triple]] = {}
        self._by_source: dict[str, list[Triple]] = {}
        self.dead_attributions = 0

    def names(self, namespace: Namespace) -> _Names:
        return self.concepts if namespace is Namespace.CONCEPT else self.labels

    # --- writes ---------------------------------------------------------------------------

    def add(
        self,
        subject: str,
        label: str,
        obj: str,
        weight: float,
        source: str | None,
        paragraph: int | None,
    ) -> None:
        """Accumulate one assertion; a sourced one also updates that source's attribution.

        Interning order is subject, object, then label. The attribution's ``paragraph`` is
        fixed when the attribution is created (first write wins).
        """
        s = self.concepts.intern(subject)
        o = self.concepts.intern(obj)
        lab = self.labels.intern(label)
        triple = (s, lab, o)
        edge = self.edges.get(triple)
        if edge is None:
            edge = Edge(seq=len(self.edges))
            self._link(triple, edge)
        edge.total += weight
        edge.count += 1
        if source is None:
            return
        self.sources.setdefault(source, None)
        for attribution in edge.attributions:
            if attribution.source == source:
                attribution.total += weight
                attribution.count += 1
                return
        edge.attributions.append(Attribution(source, weight, 1, paragraph))
        self._by_source.setdefault(source, []).append(triple)

    def retract_source(self, source: str) -> int:
        """Subtract and unlink ``source``'s attributions; return the number of edges touched."""
        touched = 0
        for triple in self._by_source.pop(source, []):
            edge = self.edges[triple]
            for position, attribution in enumerate(edge.attributions):
                if attribution.source == source:
                    edge.total -= attribution.total
                    edge.count -= attribution.count
                    if edge.count == 0:
                        edge.total = 0.0
                    del edge.attributions[position]
                    self.dead_attributions += 1
                    touched += 1
                    break
        return touched

    def retract_triple(self, subject: str, label: str, obj: str) -> tuple[bool, int]:
        """Zero a live edge outright; return (withdrawn, attributions removed)."""
        triple = self._lookup_triple(subject, label, obj)
        edge = self.edges.get(triple) if triple is not None else None
        if edge is None or edge.count == 0:
            return False, 0
        removed = len(edge.attributions)
        for attribution in edge.attributions:
            sources = self._by_source.get(attribution.source, [])
            if triple in sources:
                sources.remove(triple)
        edge.attributions.clear()
        edge.total = 0.0
        edge.count = 0
        self.dead_attributions += removed
        return True, removed

    def register_alias(self, namespace: Namespace, alias: str, canonical: str) -> str | None:
        """Register ``alias`` for ``canonical``'s record; return the refusal reason, if any."""
        names = self.names(namespace)
        target = names.lookup(canonical)
        if target is None:
            return "the canonical spelling is not interned"
        existing = names.lookup(alias)
        if existing is not None:
            return (
                None if existing == target else "the alias already resolves to a different record"
            )
        names.aliases[alias] = target
        names.index.add_alias(alias, target)
        return None

    def remove_alias(self, namespace: Namespace, alias: str) -> bool:
        """Remove a registered alias; False when ``alias`` is not one (canonicals included)."""
        names = self.names(namespace)
        if alias not in names.aliases:
            return False
        del names.aliases[alias]
        names.index.remove_alias(alias)
        return True

    @property
    def dead_ratio(self) -> float:
        """``dead_edges ÷ associations`` (0 for an empty graph)."""
        dead = sum(1 for edge in self.edges.values() if edge.count == 0)
        return dead / len(self.edges) if self.edges else 0.0

    def compact(self) -> None:
        """Rebuild from live edges only (§3.4): dead edges, and names and sources used only
        by them, are forgotten (aliases of a forgotten name with it); live edges keep their
        weights, attributions and relative order.
        """
        live = {t: e for t, e in self.edges.items() if e.count > 0}
        used_concepts = {name for s, _, o in live for name in (s, o)}
        used_labels = {label for _, label, _ in live}
        for names, used in ((self.concepts, used_concepts), (self.labels, used_labels)):
            for name in [n for n in names.canonical if n not in used]:
                del names.canonical[name]
                names.index.forget(name)
            names.aliases = {a: c for a, c in names.aliases.items() if c in used}
        used_sources = {a.source for e in live.values() for a in e.attributions}
        self.sources = {s: None for s in self.sources if s in used_sources}
        self.edges = {}
        self._by_concept, self._by_label, self._by_source = {}, {}, {}
        for triple, edge in live.items():
            edge.seq = len(self.edges)
            self._link(triple, edge)
            for attribution in edge.attributions:
                self._by_source.setdefault(attribution.source, []).append(triple)
        self.dead_attributions = 0

    def _link(self, triple: Triple, edge: Edge) -> None:
        s, lab, o = triple
        self.edges[triple] = edge
        self._by_concept.setdefault(s, []).append(triple)
        if o != s:
            self._by_concept.setdefault(o, []).append(triple)
        self._by_label.setdefault(lab, []).append(triple)

    def _lookup_triple(self, subject: str, label: str, obj: str) -> Triple | None:
        s = self.concepts.lookup(subject)
        lab = self.labels.lookup(label)
        o = self.concepts.lookup(obj)
        if s is None or lab is None or o is None:
            return None
        return (s, lab, o)

    # --- reads ----------------------------------------------------------------------------

    def query(
        self,
        subjects: list[str],
        labels: list[str],
        objects: list[str],
        window_sources: set[str] | None,
    ) -> list[MatchRow]:
        """Every edge satisfying each pinned (non-empty) position, unsorted.

        Positions are exact raw strings (canonical or alias). Dead edges match unless a
        window is given; a window keeps only attributions of qualifying sources and serves
        the count and weight recomputed from them.
        """
        pinned_s = self._resolve_all(self.concepts, subjects)
        pinned_l = self._resolve_all(self.labels, labels)
        pinned_o = self._resolve_all(self.concepts, objects)
        rows: list[MatchRow] = []
        for triple in self._candidates(pinned_s, pinned_l, pinned_o):
            s, lab, o = triple
            if pinned_s is not None and s not in pinned_s:
                continue
            if pinned_l is not None and lab not in pinned_l:
                continue
            if pinned_o is not None and o not in pinned_o:
                continue
            edge = self.edges[triple]
            if window_sources is None:
                rows.append(MatchRow(triple, edge.weight, edge.count, tuple(edge.attributions)))
                continue
            kept = tuple(a for a in edge.attributions if a.source in window_sources)
            if kept:
                count = sum(a.count for a in kept)
                total = sum(a.total for a in kept)
                rows.append(MatchRow(triple, total / count if count else 0.0, count, kept))
        return rows

    @staticmethod
    def _resolve_all(names: _Names, spellings: list[str]) -> set[str] | None:
        if not spellings:
            return None
        return {c for c in (names.lookup(s) for s in spellings) if c is not None}

    def _candidates(
        self, subjects: set[str] | None, labels: set[str] | None, objects: set[str] | None
    ) -> Iterable[Triple]:
        # Narrow through the smallest pinned index; the caller re-checks every position.
        if subjects is not None:
            return dict.fromkeys(t for s in sorted(subjects) for t in self._by_concept.get(s, []))
        if objects is not None:
            return dict.fromkeys(t for o in sorted(objects) for t in self._by_concept.get(o, []))
        assert labels is not None
        return dict.fromkeys(t for lab in sorted(labels) for t in self._by_label.get(lab, []))

    def concept_gloss(self, name: str) -> str:
        """``name。`` plus up to 4 heaviest live facts it takes part in (§3.2.6)."""
        return self._gloss(name, self._by_concept.get(name, []), CONCEPT_GLOSS_FACTS, name)

    def label_gloss(self, label: str) -> str:
        """``label。`` plus up to 3 heaviest live triples carrying it (§3.2.6)."""
        return self._gloss(label, self._by_label.get(label, []), LABEL_GLOSS_FACTS, None)

    def _gloss(self, head: str, triples: list[Triple], facts: int, own: str | None) -> str:
        live = [t for t in triples if self.edges[t].count > 0]
        live.sort(key=lambda t: (-abs(self.edges[t].total), self.edges[t].seq))
        parts = [head, "。"]
        previous: str | None = None
        for s, lab, o in live[:facts]:
            if s != own and s != previous:
                parts.append(s + "の")
            denial = "ではない" if self.edges[(s, lab, o)].total < 0 else ""
            parts.append(f"{lab}は{o}{denial}。")
            previous = s
        return "".join(parts)

    def stats(self) -> dict[str, object]:
        """The directory entry's ``stats`` object (§2.4)."""
        degree: dict[str, int] = dict.fromkeys(self.concepts.canonical, 0)
        dead = unsourced_edges = 0
        unsourced_weight = 0.0
        for (s, _, o), edge in self.edges.items():
            if edge.count == 0:
                dead += 1
                continue
            degree[s] += 1
            degree[o] += 1
            unsourced = edge.count - sum(a.count for a in edge.attributions)
            if unsourced > 0:
                unsourced_edges += 1
                unsourced_weight += edge.total - sum(a.total for a in edge.attributions)
        order = {name: i for i, name in enumerate(degree)}
        ranked = sorted(degree, key=lambda n: (-degree[n], order[n]))[:TOP_CONCEPTS]
        return {
            "associations": len(self.edges),
            "concepts": len(self.concepts.canonical),
            "labels": len(self.labels.canonical),
            "sources": len(self.sources),
            "footprint_bytes": self._footprint(),
            "dead_edges": dead,
            "dead_attributions": self.dead_attributions,
            "arena_slack": 0,
            "unsourced_edges": unsourced_edges,
            "unsourced_weight": unsourced_weight,
            "top_concepts": [{"label": n, "count": degree[n]} for n in ranked],
            "label_sample": list(self.labels.canonical)[:LABEL_SAMPLE],
        }

    def _footprint(self) -> int:
        # An estimate only (taguru's own figure is implementation-specific).
        names = sum(len(n.encode()) + 32 for n in self.concepts.canonical)
        names += sum(len(n.encode()) + 32 for n in self.labels.canonical)
        return (
            names
            + 48 * len(self.edges)
            + sum(32 * len(e.attributions) for e in self.edges.values())
        )
