"""Rewrite every generated reference file: ``python docs/generate.py`` (``--check`` to verify).

The metric catalog (``docs/metrics.md``) comes from the metric registry, the options table
(``docs/options.md``) from the option table, the JSON Schemas
(``pytest_taguru/authoring/schemas/*.schema.json``) from the models the loaders use. A test
fails when a committed file differs from what this writes.
"""

import sys
from pathlib import Path

from pytest_taguru.authoring.generated import generated_files

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    stale = []
    for relative, text in generated_files().items():
        path = REPO / relative
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        stale.append(relative)
        if not check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for relative in stale:
        print(f"{'stale' if check else 'wrote'}: {relative}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
