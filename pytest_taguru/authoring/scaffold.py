"""``taguru-evaluate init``: a working suite in a folder, from the package's templates.

The templates (``authoring/templates/``) are a complete suite: ``pytest.ini`` wiring the
embedded reference server, a small English corpus, an eval set with one case of each kind and
a thresholds file it passes (tests run it). Nothing is overwritten: when any of the files
already exists, nothing is written at all.
"""

from importlib import resources
from pathlib import Path

from pytest_taguru.errors import UsageError

TEMPLATES = ("pytest.ini", "corpus.ndjson", "eval.jsonl", "thresholds.json", "README.md")


def template(name: str) -> str:
    return (resources.files("pytest_taguru.authoring") / "templates" / name).read_text("utf-8")


def init_suite(folder: str) -> list[Path]:
    """Write the templates into ``folder`` (created if missing); the paths written."""
    root = Path(folder)
    if root.exists() and not root.is_dir():
        raise UsageError(f"{folder}: not a folder")
    targets = [root / name for name in TEMPLATES]
    existing = [str(path) for path in targets if path.exists()]
    if existing:
        raise UsageError(
            f"{', '.join(existing)} already exist{'s' if len(existing) == 1 else ''}: init "
            "writes nothing over an existing file (choose another folder, or move them away)"
        )
    root.mkdir(parents=True, exist_ok=True)
    for path in targets:
        path.write_text(template(path.name), encoding="utf-8")
    return targets
