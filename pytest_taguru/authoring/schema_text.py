"""The words of the JSON Schemas: what each object and field means, for an editor's tooltip.

One entry per model (key ``""``) and per field; :mod:`.json_schemas` attaches them and a test
fails when a field of a shipped schema has none. The longer reference is ``docs/``.
"""

NOT_CHECKED_EVAL = (
    " Not expressible in this schema, still refused by taguru: a case_id used twice in the "
    "file; an integer written with a fraction (3.0: JSON Schema counts it as an integer); a "
    "byte-order mark; repeated keys (the last one wins, as in taguru). options.floor is "
    "compared after conversion to a 32-bit float, so a value a hair above 1 (below 1 + 2^-25) "
    "is accepted by taguru and refused here."
)

EVAL_HEADER = {
    "": "The first non-blank line of an eval.jsonl: the format stamp and a name. Every later "
    "non-blank line is a case (eval-case schema)." + NOT_CHECKED_EVAL,
    "taguru_eval": "Format version; must be 1.",
    "name": "A name for the eval set, recorded as inputs.eval.name in evaluation.json.",
    "default_target": "Any JSON; taguru ignores it. pytest-taguru reads default_target.context "
    "as the context when --taguru-context is not given.",
}

EVAL_CASE = {
    "EvalCase": "One case: a query and what a good answer contains. Lines are read one JSON "
    "object per line; blank lines are skipped." + NOT_CHECKED_EVAL,
    "case_id": "Unique id of the case (compared exactly, untrimmed); the pytest node id is "
    "eval.jsonl::<case_id>. Must contain a non-blank character.",
    "query": "The text sent to passage search, verbatim. Must contain a non-blank character.",
    "cues": "Names resolved for the coverage checks; default: the query itself. null is refused.",
    "expected_sources": "Graded sources the passage search should return; scores recall@k, "
    "MRR and nDCG. Every source must exist in the context (else the run exits 2).",
    "expected_concepts": "Concept names some cue should resolve to (compared after folding); "
    "scores coverage.concepts.",
    "options": "Per-case search options.",
    "expected_labels": "Relation labels some cue should resolve to (compared after folding); "
    "scores coverage.labels. null reads as absent.",
    "expected_associations": "Triples a pinned /query should find; scores "
    "coverage.associations. null reads as absent.",
    "expected_citations": "Paragraphs whose locator should resolve, be served, and carry the "
    "declared section and quote; scores citations.recall and citations.locator_validity. null "
    "reads as absent.",
    "ExpectedSource": "One expected source.",
    "ExpectedSource.source": "The source name exactly as stored (no trimming, no folding).",
    "ExpectedSource.paragraphs": "0-based paragraph numbers that count as a match; [] (the "
    "default) means any paragraph of the source.",
    "ExpectedSource.relevance": "Graded relevance 0..3 (default 1); 0 is listed but never scored.",
    "ExpectedAssociation": "One expected association; each position is resolved to exactly one "
    "name before the query.",
    "ExpectedAssociation.subject": "Subject concept (resolved like a cue).",
    "ExpectedAssociation.label": "Relation label (resolved like a label cue).",
    "ExpectedAssociation.object": "Object concept (resolved like a cue).",
    "ExpectedCitation": "One expected citation locator.",
    "ExpectedCitation.source": "The cited source, exactly as stored.",
    "ExpectedCitation.paragraph": "The cited paragraph, 0-based.",
    "ExpectedCitation.section": "Absent: not checked. null: the paragraph lies outside every "
    "section. A string: exactly this section label.",
    "ExpectedCitation.quote": "Text that must occur in the paragraph, compared after folding "
    "(case, width, katakana/hiragana). null reads as absent.",
    "CaseOptions": "Search options of the case.",
    "CaseOptions.limit": "Hits asked of passage search, 1..1000 (default 10). null reads as "
    "absent.",
    "CaseOptions.floor": "Sent to passage search as semantic_floor: the least cosine of the "
    "vector lane, 0..1 (as a 32-bit float). null reads as absent.",
    "CaseOptions.tags": "Only passages carrying one of these tags. null reads as absent.",
    "CaseOptions.since": "Only passages whose date (else store time) is at or after this Unix "
    "time. null reads as absent.",
    "CaseOptions.until": "Only passages whose date (else store time) is before this Unix time. "
    "null reads as absent.",
}

THRESHOLDS = {
    "ThresholdsFile": "The quality gate of a run (--taguru-thresholds): bounds on run-level "
    "metrics and on each case's own scores. Not expressible in this schema, still refused by "
    "taguru: min greater than max; a case_id in cases.overrides that the eval set does not "
    "have; a byte-order mark; a key repeated in a fixed-shape object. taguru also reads an "
    "array in place of an object, positionally; this schema admits objects only.",
    "taguru_evaluate_thresholds": "Format version; must be 1.",
    "aggregate": "Bounds on the run's metrics, by metric name (any of the 31).",
    "cases": "Bounds on each case's own values (the ten case-scoped metrics).",
    "allow_unstable_corpus": "Pass the gate even when the context's revision changed during "
    "the run (default false).",
    "CaseBounds": "Case-scoped bounds: a default for every case, and replacements per case.",
    "CaseBounds.default": "Bounds applied to every case, by case-scoped metric name.",
    "CaseBounds.overrides": "Per case_id, bounds that replace the default's bound for the same "
    "metric (whole bounds, never merged field by field).",
    "Bound": "A bound: min, max or both (null reads as absent). A value equal to a bound "
    "passes; a metric without samples fails an aggregate bound.",
    "Bound.min": "The value must not be below this.",
    "Bound.max": "The value must not be above this.",
}

SLICES = {
    "SlicesFile": "pytest-taguru's slices file (--taguru-slices-file): named subsets of the "
    "eval set's cases, each scored on its own (the artifact's slices block) and gated by a "
    "slice thresholds file. Not expressible in this schema, still refused: a slice name given "
    "twice; a byte-order mark.",
    "taguru_slices": "Format version; must be 1.",
    "slices": "Slice name → globs over case ids, matched as Python's fnmatchcase does (*, ?, "
    "[seq], [!seq]; case-sensitive). A case may be in several slices; a slice that matches no "
    "case is a warning. At least one slice.",
}

SLICE_THRESHOLDS = {
    "SliceThresholdsFile": "pytest-taguru's slice thresholds file (--taguru-slice-thresholds, "
    "taguru-evaluate gate --slice-thresholds): bounds on each slice's per-case metrics, with "
    "the thresholds file's aggregate syntax. A broken bound exits 3 and fails the "
    "eval.jsonl::[slices] result. Not expressible in this schema, still refused: a slice the "
    "run does not define; min greater than max; a slice name given twice; a byte-order mark.",
    "taguru_slice_thresholds": "Format version; must be 1.",
    "slices": "Slice name (as defined by taguru_slices or the slices file) → its gate.",
    "SliceBounds": "One slice's gate.",
    "SliceBounds.min_cases": "The fewest of the run's cases the slice must hold to be judged "
    "(default 1); a smaller slice is reported, not judged.",
    "SliceBounds.aggregate": "Bounds on the slice's per-case metrics (the mean over its "
    "cases), by metric name; as the thresholds file's aggregate section.",
    "Bound": THRESHOLDS["Bound"],
    "Bound.min": THRESHOLDS["Bound.min"],
    "Bound.max": THRESHOLDS["Bound.max"],
}

NOT_CHECKED_IMPORT = (
    " Not expressible in this schema, still refused by taguru: lines in the wrong order (an "
    "operation line before any header, a second passage line in one batch, markers or "
    "paragraph-carrying associations in a batch without a passage line, two batches for one "
    "(context, source)); caps counted in UTF-8 bytes, which this schema counts in characters; "
    "a ninth question on one paragraph; an integer written with a fraction. taguru also reads "
    "taguru_schema and taguru_group records, which the reference server does not."
)

IMPORT_LINE = {
    "": "One line of a taguru import stream (POST /import, taguru import, --taguru-serve): a "
    "batch header, then the lines of that batch. A line is classified by its first key in "
    "the order taguru_batch, subject, alias, passage, question, section, locator."
    + NOT_CHECKED_IMPORT,
    "HeaderLine": "Starts a batch: everything one source asserts, which replaces what that "
    "source asserted before.",
    "HeaderLine.taguru_batch": "Format version; must be 1.",
    "HeaderLine.context": "The context (1..64 bytes).",
    "HeaderLine.source": "The source this batch states, e.g. a document's path (1..1024 bytes).",
    "HeaderLine.create": "Create the context with these settings if it does not exist; "
    "without it a missing context is refused. Ignored when the context exists.",
    "CreateSpec": "Settings of a new context.",
    "CreateSpec.description": "Description of the context (at most 4096 bytes).",
    "CreateSpec.pinned": "Keep the context loaded.",
    "CreateSpec.dice_floor": "Fuzzy-resolve floor, clamped to 0..1 (default 0.3).",
    "CreateSpec.semantic_floor": "Semantic-resolve floor, clamped to 0..1.",
    "PassageLine": "The source's text (at most one per batch), split into paragraphs at blank "
    "lines.",
    "PassageLine.passage": "The text (at most 8 MiB).",
    "PassageLine.date": "The passage's date, Unix seconds (for since/until filters).",
    "PassageLine.tags": "Tags for the tags filter (at most 32, each 1..128 bytes).",
    "PassageLine.stored_at": "Kept verbatim as the store time (else the import time).",
    "QuestionLine": "A question the paragraph answers, indexed with it (doc2query).",
    "QuestionLine.paragraph": "0-based paragraph of this batch's passage.",
    "QuestionLine.question": "The question (1..512 bytes).",
    "SectionLine": "A section marker: the paragraph starts a section that runs to the next "
    "marker. A marker past the last paragraph is dropped (and counted).",
    "SectionLine.paragraph": "0-based paragraph where the section starts.",
    "SectionLine.section": "The section label (1..512 bytes).",
    "LocatorLine": "Where one paragraph sits in the original (a page, a URL). A locator past "
    "the last paragraph is dropped (and counted).",
    "LocatorLine.paragraph": "0-based paragraph the locator belongs to.",
    "LocatorLine.locator": "The locator.",
    "LocatorSpec": "A locator: kind and value.",
    "LocatorSpec.kind": "e.g. page, url (1..64 bytes).",
    "LocatorSpec.value": "e.g. 12 (1..512 bytes).",
    "AssociationLine": "An association subject -label-> object, attributed to the batch's source.",
    "AssociationLine.subject": "Subject concept (1..1024 bytes).",
    "AssociationLine.label": "Relation label (1..1024 bytes).",
    "AssociationLine.object": "Object concept (1..1024 bytes).",
    "AssociationLine.weight": "Weight, |weight| <= 1000000.",
    "AssociationLine.paragraph": "The supporting paragraph of this batch's passage; past the "
    "last paragraph it is stored as null (and counted).",
    "AliasLine": "Another spelling of a concept or label that this context knows or this batch "
    "interns.",
    "AliasLine.alias": "The other spelling (1..1024 bytes).",
    "AliasLine.canonical": "The name it stands for (1..1024 bytes).",
    "AliasLine.kind": "concept or label.",
}
