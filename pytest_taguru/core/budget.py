"""Evidence budget accounting: canonical JSON, bytes, estimated tokens and greedy admission.

One implementation serves both sides of the wire: the client's baseline truncation (one
simulated passage item per ``sources/search`` hit) and the reference server's admission of its
evidence units. Everything here is pure. Specification: ``assembly.md`` §1.2, §1.6, §1.7, §3.9.

Counting rules, decided once here:

* an object is measured as its compact canonical JSON text (``jsonfmt.dumps_compact``: no
  whitespace, raw UTF-8, ``\\u0000`` for NUL, ``Float32`` values as shortest 32-bit text,
  other floats as serde's 64-bit text);
* ``bytes`` = UTF-8 length of that text; ``quarters`` = 1 per ASCII scalar, 4 per other
  scalar; tokens = ``ceil(quarters / 4)``, taken once over everything counted together;
* a JSON array of ``n`` measured elements adds ``overhead(n)``: 2 for ``[]``, else ``n + 1``.
"""

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pytest_taguru.core.jsontext import Float32, dumps_compact
from pytest_taguru.core.limits import U64_MAX
from pytest_taguru.core.wire import HitLanes

Payload = TypeVar("Payload")

DEFAULT_MAX_ITEMS = 40
DEFAULT_MAX_BYTES = 65_536
DEFAULT_MAX_TOKENS = 4_000
MAX_ITEMS_CEILING = 1_000
MAX_BYTES_CEILING = 1_048_576
MAX_TOKENS_CEILING = U64_MAX
"""``max_tokens`` has no ceiling of its own beyond the unsigned 64-bit range."""

PAYLOAD_KEYS = ("association", "passage", "community")
"""The evidence item payload keys; ``bytes``/``estimated_tokens`` are written just before."""

COST_KEYS = frozenset({"bytes", "estimated_tokens"})
"""An item's own cost stamps, never part of what is measured."""


# --- limits (§1.2) ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """The resolved ceilings ``(max_items, max_bytes, max_tokens)`` of one package."""

    max_items: int = DEFAULT_MAX_ITEMS
    max_bytes: int = DEFAULT_MAX_BYTES
    max_tokens: int = DEFAULT_MAX_TOKENS

    @classmethod
    def resolve(
        cls,
        max_items: int | None = None,
        max_bytes: int | None = None,
        max_tokens: int | None = None,
    ) -> "Limits":
        """Each field: the given value (0 included) or its default, capped at its ceiling.

        ``max_items ≤ 1000``, ``max_bytes ≤ 1048576``, ``max_tokens ≤ 2^64 − 1``; defaults
        40 / 65536 / 4000. Client flags and a server request's ``budget`` resolve alike.
        """

        def pick(value: int | None, default: int, ceiling: int) -> int:
            return min(default if value is None else value, ceiling)

        return cls(
            max_items=pick(max_items, DEFAULT_MAX_ITEMS, MAX_ITEMS_CEILING),
            max_bytes=pick(max_bytes, DEFAULT_MAX_BYTES, MAX_BYTES_CEILING),
            max_tokens=pick(max_tokens, DEFAULT_MAX_TOKENS, MAX_TOKENS_CEILING),
        )

    def as_json(self) -> dict[str, int]:
        """``{"max_items", "max_bytes", "max_tokens"}``, the shape sent and echoed."""
        return {
            "max_items": self.max_items,
            "max_bytes": self.max_bytes,
            "max_tokens": self.max_tokens,
        }


# --- measuring (§1.7) ------------------------------------------------------------------------


def quarters(text: str) -> int:
    """Σ over the Unicode scalars of ``text``: 1 for U+0000–U+007F, else 4."""
    ascii_count = len(text.encode("ascii", "ignore"))  # C speed: one pass, no Python loop
    return ascii_count + 4 * (len(text) - ascii_count)


def tokens_of(total_quarters: int) -> int:
    """``ceil(total_quarters / 4)``: the token estimate of a whole counted text."""
    return -(-total_quarters // 4)


def array_overhead(count: int) -> int:
    """Bytes (and quarters) of an array's punctuation: ``[]`` is 2, else ``count + 1``."""
    return 2 if count == 0 else count + 1


@dataclass(frozen=True)
class Cost:
    """What one measured JSON value costs: UTF-8 bytes and token quarters."""

    bytes: int = 0
    quarters: int = 0

    @property
    def estimated_tokens(self) -> int:
        """``ceil(quarters / 4)`` of this value alone (an item's ``estimated_tokens``)."""
        return tokens_of(self.quarters)

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(self.bytes + other.bytes, self.quarters + other.quarters)


def canonical_json(value: Any) -> str:
    """The compact canonical JSON text every count is taken over (keys in the order given)."""
    return dumps_compact(value)


def measure(value: Any) -> Cost:
    """The cost of ``value``'s canonical JSON: ``(len(utf8(T)), quarters(T))``."""
    text = canonical_json(value)
    return Cost(len(text.encode("utf-8")), quarters(text))


def _as_f32(value: Any) -> Any:
    """A JSON number held by a 32-bit field, marked so it is written as such."""
    if isinstance(value, float | int) and not isinstance(value, bool | Float32):
        return Float32(value)
    return value


def _with_f32_scores(payload_key: str, payload: Any) -> Any:
    """The payload with its 32-bit fields marked: ``passage.score``,
    ``passage.lanes.{bm25,vector}.score`` and ``community.score``."""
    if not isinstance(payload, Mapping) or payload_key == "association":
        return payload
    marked = {key: _as_f32(value) if key == "score" else value for key, value in payload.items()}
    lanes = marked.get("lanes")
    if payload_key == "passage" and isinstance(lanes, Mapping):
        marked["lanes"] = {
            name: (
                {key: _as_f32(v) if key == "score" else v for key, v in lane.items()}
                if isinstance(lane, Mapping)
                else lane
            )
            for name, lane in lanes.items()
        }
    return marked


def measurable_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """An evidence item as it is measured: without ``bytes``/``estimated_tokens``, its payload's
    32-bit fields marked ``Float32`` (plain floats elsewhere stay 64-bit, e.g. weights)."""
    return {
        key: _with_f32_scores(key, value) if key in PAYLOAD_KEYS else value
        for key, value in item.items()
        if key not in COST_KEYS
    }


def item_cost(item: Mapping[str, Any]) -> Cost:
    """The cost of one evidence item exactly as emitted, minus its own cost stamps (§3.9)."""
    return measure(measurable_item(item))


def stamp_cost(item: Mapping[str, Any]) -> dict[str, Any]:
    """The item with ``bytes`` and ``estimated_tokens`` set from :func:`item_cost`.

    Both keys go just before the payload key (§2.4 order), or last when there is no payload.
    """
    cost = item_cost(item)
    stamps = {"bytes": cost.bytes, "estimated_tokens": cost.estimated_tokens}
    stamped: dict[str, Any] = {}
    for key, value in item.items():
        if key in COST_KEYS:
            continue
        if key in PAYLOAD_KEYS and "bytes" not in stamped:
            stamped.update(stamps)
        stamped[key] = value
    if "bytes" not in stamped:
        stamped.update(stamps)
    return stamped


# --- passage items (§1.6, §3.3) --------------------------------------------------------------


def passage_candidate_id(context: str, source: str, paragraph: int) -> str:
    """``passage`` NUL ``context`` NUL ``source`` NUL ``paragraph`` (decimal)."""
    return f"passage\x00{context}\x00{source}\x00{paragraph}"


def passage_lane_name(lanes: HitLanes) -> str:
    """``passage_fused`` with both sub-lanes, ``passage_vector`` with only vector, else
    ``passage_bm25`` (neither included)."""
    if lanes.bm25 is not None and lanes.vector is not None:
        return "passage_fused"
    return "passage_vector" if lanes.vector is not None else "passage_bm25"


def passage_item(
    context: str,
    *,
    source: str,
    paragraph: int,
    score: float,
    text: str,
    lanes: HitLanes,
    fused_rank: int,
    lane_rank: int,
) -> dict[str, Any]:
    """A passage evidence item without cost stamps, keys in §2.4 order, scores ``Float32``.

    ``passage.lanes`` carries a sub-lane only when the hit had it (``{}`` for neither).
    """
    sub_lanes = {
        name: {"rank": lane.rank, "score": Float32(lane.score)}
        for name, lane in (("bm25", lanes.bm25), ("vector", lanes.vector))
        if lane is not None
    }
    return {
        "candidate_id": passage_candidate_id(context, source, paragraph),
        "kind": "passage",
        "fused_rank": fused_rank,
        "lane_ranks": [{"lane": passage_lane_name(lanes), "rank": lane_rank}],
        "citation_refs": [],
        "passage": {
            "source": source,
            "paragraph": paragraph,
            "score": Float32(score),
            "text": text,
            "lanes": sub_lanes,
        },
    }


# --- admission (§1.6, §3.9) ------------------------------------------------------------------


@dataclass(frozen=True)
class Unit(Generic[Payload]):
    """One admission unit: admitted or omitted whole.

    ``items`` holds the cost of each member item; ``citations`` the citation entries its
    members reference, keyed by locator (a key already in the package costs nothing).
    """

    payload: Payload
    items: tuple[Cost, ...]
    citations: tuple[tuple[Hashable, Cost], ...] = ()


@dataclass(frozen=True)
class Usage:
    """A package's usage: ``bytes_used``/``tokens_used`` include all array punctuation."""

    items_used: int
    bytes_used: int
    tokens_used: int

    def as_json(self, limits: Limits) -> dict[str, Any]:
        """The package's ``budget`` object: usage plus the ``limits`` applied."""
        return {
            "items_used": self.items_used,
            "bytes_used": self.bytes_used,
            "tokens_used": self.tokens_used,
            "limits": limits.as_json(),
        }


@dataclass(frozen=True)
class Admission(Generic[Payload]):
    """Admitted and omitted unit payloads, each in walk order, and the final usage."""

    admitted: list[Payload]
    omitted: list[Payload]
    usage: Usage


@dataclass
class _Totals:
    items: int = 0
    item_cost: Cost = field(default_factory=Cost)
    citations: dict[Hashable, Cost] = field(default_factory=dict)

    def usage(self) -> Usage:
        citation_cost = sum(self.citations.values(), Cost())
        punctuation = array_overhead(self.items) + array_overhead(len(self.citations))
        return Usage(
            items_used=self.items,
            bytes_used=punctuation + self.item_cost.bytes + citation_cost.bytes,
            tokens_used=tokens_of(punctuation + self.item_cost.quarters + citation_cost.quarters),
        )

    def fits(self, limits: Limits) -> bool:
        usage = self.usage()
        return (
            usage.items_used <= limits.max_items
            and usage.bytes_used <= limits.max_bytes
            and usage.tokens_used <= limits.max_tokens
        )


def admit(units: Iterable[Unit[Payload]], limits: Limits) -> Admission[Payload]:
    """Greedy skip-and-continue admission under the three ceilings (§3.9, §1.6).

    With ``I`` items of total cost ``(IB, IQ)`` and ``C`` distinct citations ``(CB, CQ)``::

        bytes_used  = overhead(I) + IB + overhead(C) + CB
        tokens_used = ceil((overhead(I) + IQ + overhead(C) + CQ) / 4)

    Each unit in order is tentatively added (its items, plus its citations not yet in the
    package, each locator once); it is committed when ``I ≤ max_items``, ``bytes_used ≤
    max_bytes`` and ``tokens_used ≤ max_tokens`` all hold, else omitted, and the walk
    continues. Nothing admitted gives ``bytes_used`` 4 and ``tokens_used`` 1 whatever the
    ceilings.
    """
    totals = _Totals()
    admitted: list[Payload] = []
    omitted: list[Payload] = []
    for unit in units:
        candidate = _Totals(
            items=totals.items + len(unit.items),
            item_cost=sum(unit.items, totals.item_cost),
            citations=dict(totals.citations),
        )
        for key, cost in unit.citations:
            candidate.citations.setdefault(key, cost)
        if candidate.fits(limits):
            totals = candidate
            admitted.append(unit.payload)
        else:
            omitted.append(unit.payload)
    return Admission(admitted, omitted, totals.usage())


def admit_items(
    payloads: Sequence[Payload], costs: Sequence[Cost], limits: Limits
) -> Admission[Payload]:
    """:func:`admit` over single-item units without citations (the baseline's hits)."""
    return admit(
        (Unit(payload, (cost,)) for payload, cost in zip(payloads, costs, strict=True)), limits
    )
