"""The two ``*/explain`` answers of the reference server, computed on one context.

``POST /contexts/{name}/sources/search/explain`` answers "why did (or didn't) this source come
back for this query": the first verdict that applies — ``not_stored``,
``paragraph_out_of_range``, ``filtered_out``, ``no_query_terms``, then ``served``,
``below_cutoff`` or ``no_term_overlap`` — with the BM25 evidence of the paragraph (each query
term's ``tf``, ``df``, ``idf`` and its contribution to the score) and where it ranks against the
cutoff of the search being explained. ``POST …/resolve/explain`` (and ``resolve_label/explain``)
answers "why didn't this name come back for this cue": ``not_in_vocabulary`` (with the nearest
stored spellings), ``served``, ``cue_resolved_exactly``, ``below_floor``, ``below_cutoff`` or
``semantic_not_run``, with the lexical tier's score, kind and floor.

The verdicts, their order, the field names and the summary sentences are taguru's (its
``api/sources.rs`` and ``api/resolve.rs``); this server has no vector lane and no semantic tier,
so their parts say so, exactly as taguru without an embedding provider does. Pure: the caller
holds the store's lock and counts the read.
"""

from collections.abc import Callable
from typing import Any

from pytest_taguru.core.jsontext import Float32
from pytest_taguru.server.context import Context
from pytest_taguru.server.index.bm25 import LaneHit, TermEvidence
from pytest_taguru.server.index.bm25_score import f32
from pytest_taguru.server.index.resolve import Candidate, EntryIndex
from pytest_taguru.server.index.search import REASON_NO_PROVIDER, SourceFilterSpec
from pytest_taguru.server.index.text import document_terms, query_terms

LEXICAL_CONFIDENCE = 0.5
"""A best lexical score at or above this is confident: the semantic tier would not join."""
NEAREST_SPELLINGS = 5
_EXACT_KINDS = ("exact", "alias")


# --- sources/search/explain ---------------------------------------------------------------------


def _shell(verdict: str, summary: str, source: str) -> dict[str, Any]:
    return {"verdict": verdict, "summary": summary, "source": source}


def explain_search(
    context: Context,
    query: str,
    source: str,
    paragraph: int | None,
    limit: int,
    spec: SourceFilterSpec,
) -> tuple[dict[str, Any], bool]:
    """The explanation, and whether it reached scoring (a read that found something)."""
    passage = context.passages.get(source)
    if passage is None:
        summary = (
            f"source '{source}' has no passages in context '{context.name}' — never stored "
            "here, or stored and later retracted (the store keeps no tombstone history to "
            "tell which)"
        )
        return _shell("not_stored", summary, source), False
    paragraphs = len(passage.paragraphs)
    if (paragraph is not None and paragraph >= paragraphs) or paragraphs == 0:
        summary = (
            f"paragraph {paragraph or 0} is out of range for source '{source}' — it stores "
            f"{paragraphs} paragraph(s), 0-based"
        )
        shell = _shell("paragraph_out_of_range", summary, source)
        if paragraph is not None:
            shell["paragraph"] = paragraph
        return shell | {"paragraphs": paragraphs}, False
    if spec.active and not spec.admits(passage):
        summary = (
            f"source '{source}' is excluded by the request's source filter (tags/since/until) "
            "— the search being explained never considered it"
        )
        return _shell("filtered_out", summary, source), False
    terms = query_terms(query)
    if not terms:
        summary = (
            "the query yields no searchable terms — a search of it answers the empty list "
            "before either lane runs"
        )
        return _shell("no_query_terms", summary, source), False
    eligible: Callable[[str], bool] | None = None
    if spec.active:
        eligible = {s for s, p in context.passages.items() if spec.admits(p)}.__contains__
    # The whole BM25 lane list, unbounded: the served list is its first ``limit`` hits.
    full = context.bm25.search(query, max(context.bm25.slot_count, 1), eligible)
    chosen = paragraph if paragraph is not None else _best_showing(context, query, source, full)
    evidence = context.bm25.term_evidence(query, source, chosen) or []
    rank = next(
        (hit.rank for hit in full if hit.source == source and hit.paragraph == chosen), None
    )
    explanation: dict[str, Any] = {
        "source": source,
        "paragraph": chosen,
        "paragraphs": paragraphs,
        "paragraph_named": paragraph is not None,
        "query_terms": terms,
    }
    if not any(term.tf for term in evidence):
        explanation["paragraph_terms"] = _paragraph_terms(
            passage.paragraphs[chosen], passage.questions.get(chosen, [])
        )
    explanation["bm25"] = _bm25(evidence, rank)
    explanation["vector"] = {"ran": False, "reason": REASON_NO_PROVIDER}
    explanation["ranking"] = _ranking(full, rank, limit)
    verdict, summary = _search_verdict(explanation, source, chosen, limit)
    return {"verdict": verdict, "summary": summary, **explanation}, True


def _best_showing(context: Context, query: str, source: str, full: list[LaneHit]) -> int:
    """The source's best-ranked paragraph, else the first sharing the most query terms."""
    for hit in full:
        if hit.source == source:
            return hit.paragraph
    best, shared_best = 0, 0
    for paragraph in range(len(context.passages[source].paragraphs)):
        evidence = context.bm25.term_evidence(query, source, paragraph) or []
        shared = sum(1 for term in evidence if term.tf)
        if shared > shared_best:
            best, shared_best = paragraph, shared
    return best


def _paragraph_terms(text: str, questions: list[str]) -> list[str]:
    """The paragraph's own terms, its questions' included, each once, in order."""
    terms: dict[str, None] = {}
    for raw in [text, *questions]:
        terms.update(dict.fromkeys(document_terms(raw)))
    return list(terms)


def _bm25(evidence: list[TermEvidence], rank: int | None) -> dict[str, Any]:
    score = 0.0
    for term in evidence:
        if term.tf:
            score = f32(score + term.contribution)
    lane: dict[str, Any] = {} if rank is None else {"rank": rank}
    lane["score"] = Float32(score)
    lane["terms"] = [
        {
            "term": term.term,
            "tf": Float32(float(term.tf)),
            "df": term.df,
            "idf": Float32(term.idf),
            "contribution": Float32(term.contribution),
        }
        for term in evidence
    ]
    return lane


def _ranking(full: list[LaneHit], rank: int | None, limit: int) -> dict[str, Any]:
    served_hits = full[:limit]
    served = rank is not None and rank <= limit
    ranking: dict[str, Any] = {"fused": False, "ranked": len(full)}
    if rank is not None:
        ranking["rank"] = rank
        ranking["score"] = Float32(full[rank - 1].score)
    ranking["limit"] = limit
    ranking["served"] = served
    if served_hits:
        ranking["cutoff_score"] = Float32(served_hits[-1].score)
    if rank is not None:
        # Without fusion the served list is a prefix of the full ranking: its rank reaches it.
        ranking["limit_to_reach"] = limit if served else rank
    return ranking


def _search_verdict(
    explanation: dict[str, Any], source: str, paragraph: int, limit: int
) -> tuple[str, str]:
    ranking = explanation["ranking"]
    where = f"paragraph {paragraph} of '{source}'"
    if ranking["served"]:
        return "served", (
            f"served: {where} ranked {ranking['rank']} of {ranking['ranked']} at limit {limit}"
        )
    if "rank" in ranking:
        cutoff = ranking.get("cutoff_score")
        cutoff_text = "-" if cutoff is None else f"{cutoff:.4f}"
        return "below_cutoff", (
            f"{where} ranked {ranking['rank']} of {ranking['ranked']} — the cutoff at limit "
            f"{limit} was score {cutoff_text}; limit {ranking['limit_to_reach']} reaches it"
        )
    return "no_term_overlap", (
        f"{where} shares no term with the query and the vector lane did not run "
        f"({REASON_NO_PROVIDER})"
    )


# --- resolve/explain, resolve_label/explain ------------------------------------------------------


def _candidate(candidate: Candidate) -> dict[str, Any]:
    return {"name": candidate.name, "score": candidate.score, "kind": candidate.kind}


def explain_resolve(
    index: EntryIndex, namespace: str, cue: str, expected: str, limit: int, dice_floor: float
) -> tuple[dict[str, Any], bool]:
    """The explanation, and whether ``expected`` is in the vocabulary (a non-empty read)."""
    everything = len(index) + 1
    canonical = next(
        (c for c in index.resolve(expected, everything, 1.0) if c.kind in _EXACT_KINDS), None
    )
    head = {"cue": cue, "expected": expected}
    if canonical is None:
        summary = (
            f"'{expected}' is not in this context's {namespace} vocabulary — no entry, no "
            "alias, no canonical spelling; the nearest stored spellings are attached"
        )
        nearest = index.resolve(expected, NEAREST_SPELLINGS, 0.0)
        return {
            "verdict": "not_in_vocabulary",
            "summary": summary,
            **head,
            "in_vocabulary": False,
            "nearest": {
                "lexical": [_candidate(c) for c in nearest],
                "semantic": [],
                "semantic_note": REASON_NO_PROVIDER,
            },
        }, False
    name = canonical.name
    sweep = index.resolve(cue, everything, 0.0)  # every related name, floor or no floor
    full = index.resolve(cue, everything, dice_floor)  # what resolve admits, before its limit
    served = full[:limit]
    served_at = next((i for i, c in enumerate(served) if c.name == name), None)
    full_at = next((i for i, c in enumerate(full) if c.name == name), None)
    target = next((c for c in sweep if c.name == name), None)
    confident = bool(full) and full[0].score >= LEXICAL_CONFIDENCE
    if served_at is not None:
        reach: int | None = limit
    else:
        reach = None if full_at is None else full_at + 1
    verdict, summary = _resolve_verdict(
        name, cue_exact=target is None and bool(sweep) and all(
            c.kind in _EXACT_KINDS for c in sweep
        ),
        first=sweep[0].name if sweep else "", target=target, admitted=full_at is not None,
        confident=confident, served_at=served_at, full_at=full_at, served=len(served),
        ranked=len(full), limit=limit, floor=dice_floor, reach=reach,
    )  # fmt: skip
    lexical: dict[str, Any] = {} if target is None else {
        "score": target.score, "kind": target.kind
    }  # fmt: skip
    semantic = {"entered": not confident, "reason": REASON_NO_PROVIDER}
    ranking: dict[str, Any] = {}
    if full_at is not None:
        ranking |= {"rank": full_at + 1, "tier": "lexical", "score": full[full_at].score}
    ranking |= {"limit": limit, "served": served_at is not None}
    if reach is not None:
        ranking["limit_to_reach"] = reach
    return {
        "verdict": verdict,
        "summary": summary,
        **head,
        "in_vocabulary": True,
        "canonical": name,
        "expected_kind": canonical.kind,
        "lexical": lexical | {"floor": dice_floor, "confident": confident},
        "semantic": semantic,
        "ranking": ranking,
    }, True


def _resolve_verdict(
    name: str,
    *,
    cue_exact: bool,
    first: str,
    target: Candidate | None,
    admitted: bool,
    confident: bool,
    served_at: int | None,
    full_at: int | None,
    served: int,
    ranked: int,
    limit: int,
    floor: float,
    reach: int | None,
) -> tuple[str, str]:
    """taguru's verdict order: served, the cue is exact, below the floor, below the cutoff, the
    semantic tier never joined / could not run."""
    if served_at is not None:
        return "served", (
            f"served: '{name}' ranked {served_at + 1} of {served} at limit {limit} (lexical tier)"
        )
    if cue_exact:
        return "cue_resolved_exactly", (
            f"the cue is an exact spelling of '{first}' — the exact tier answers alone, so "
            f"'{name}' was never scored against it; a reworded cue is the way in"
        )
    if target is not None and not admitted:
        return "below_floor", (
            f"the resolver scored '{name}' {target.score:.4f} ({target.kind}) against "
            f"dice_floor {floor:.4f} — a floor at or under {target.score:.4f} would have shown it"
        )
    if target is not None:
        reach_text = "no limit reaches it" if reach is None else f"limit {reach} reaches it"
        rank = 0 if full_at is None else full_at + 1
        return "below_cutoff", (
            f"'{name}' passed the floor but ranked {rank} of {ranked} — the request served "
            f"{limit}; {reach_text}"
        )
    if confident:
        return "semantic_not_run", (
            f"'{name}' shares no spelling with the cue, and the semantic tier never joined: "
            f"the lexical tier was confident (best score ≥ {LEXICAL_CONFIDENCE})"
        )
    return "semantic_not_run", (
        f"'{name}' shares no spelling with the cue, and the semantic tier could not score it: "
        f"{REASON_NO_PROVIDER}"
    )
