"""A case's expectation hash: what pairs a case of one run with the same case of another.

Two runs' cases are paired by ``case_id`` *and* by this hash, so that a case whose labels were
edited between the runs ("relabelled") is never compared with its old self. pytest-taguru writes
it into each case block as ``expectations_sha256`` (an extra key: taguru's readers ignore it).

Canonical form, version 1 — everything the eval line declares except its ``case_id``:

* the case as loaded (``dataset.EvalCase``: the file's JSON after validation), every field with
  its default filled in (``cues: []``, ``relevance: 1``, ``paragraphs: []``, ``options`` with
  ``limit``/``floor``/``since``/``until`` ``null`` and ``tags: []`` when not given), so that
  spelling a default out or leaving it away gives the same hash;
* an expected citation's ``section`` only when the line declared it (absent, ``null`` and a
  label are three different checks); its ``quote`` always (``null`` when not declared);
* ``options.floor`` as the 32-bit value the loader keeps, written as the shortest decimal of that
  double (Python's ``repr``);
* lists in file order (a reordering is a change), strings exactly as written (no folding);
* serialized as compact JSON (``,`` and ``:`` with no spaces), object keys sorted by code point,
  non-ASCII characters raw, encoded as UTF-8; ``expectations_sha256`` is the lowercase hex
  SHA-256 of those bytes.

The query and cues are part of it: a reworded query asks another question.
"""

import hashlib
import json
from typing import Any

from pytest_taguru.run.eval_models import EvalCase


def canonical_expectations(case: EvalCase) -> dict[str, Any]:
    """The case's declared fields, defaults filled in, ``case_id`` and ``line`` left out."""
    declared = case.model_dump(mode="json", exclude={"case_id", "line"})
    entries = zip(declared["expected_citations"], case.expected_citations, strict=True)
    declared["expected_citations"] = [
        {key: value for key, value in entry.items() if key != "section" or cited.section_declared}
        for entry, cited in entries
    ]
    return declared


def expectations_sha256(case: EvalCase) -> str:
    """The hex SHA-256 of the canonical form (module docstring)."""
    text = json.dumps(
        canonical_expectations(case), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()
