"""The report page: one self-contained HTML file (inline CSS and JavaScript, the data island,
no external resource of any kind), and where it links the eval set.

The title and the notices at the top are written here, so a page viewed without JavaScript
still says whether the run passed, failed or was partial; everything else is drawn by
``assets/report.js`` from the island. A Content-Security-Policy of ``default-src 'none'``
keeps the page from loading anything, even if some data were ever to look like a URL.
"""

import html
import os
import re
from functools import cache
from importlib.resources import files
from pathlib import Path
from urllib.parse import quote

from pytest_taguru import __version__
from pytest_taguru.core.atomic_file import write_atomic
from pytest_taguru.report.html.header import Notice
from pytest_taguru.report.html.island import ReportInputs, build_island, island_text

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
SCRIPTS = ("util.js", "sections.js", "slices.js", "cases.js", "detail.js", "main.js")
"""The page's script, in order: one strict-mode scope, so the files share their names."""


@cache
def asset(name: str) -> str:
    """An asset shipped with the package (``assets/``), as text."""
    return (files("pytest_taguru.report.html") / "assets" / name).read_text(encoding="utf-8")


def script() -> str:
    """The page's JavaScript: ``SCRIPTS`` in one function scope."""
    body = "\n".join(asset(name) for name in SCRIPTS)
    return f'(function () {{\n"use strict";\n{body}\n}})();'


def eval_href(eval_path: str, report_path: str) -> str:
    """The eval.jsonl relative to the page's directory, as a URL path (both paths as given,
    relative to the same working directory)."""
    start = Path(os.path.abspath(report_path)).parent
    return quote(Path(os.path.relpath(os.path.abspath(eval_path), start)).as_posix(), safe="/")


def _notice(notice: Notice) -> str:
    level, text = notice
    return f'<li class="notice notice-{level}">{html.escape(text)}</li>'


def render_page(inputs: ReportInputs) -> str:
    """The whole page for ``inputs``."""
    island = build_island(inputs)
    header = island["header"]
    title = f"{header['title']} — taguru evaluation report"
    fields = {
        "version": __version__,
        "title": html.escape(title),
        "heading": html.escape(header["title"]),
        "notices": "".join(_notice(notice) for notice in header["notices"]),
        "artifact": html.escape(inputs.artifact_path),
        "css": asset("report.css"),
        "js": script(),
        "data": island_text(island),
    }
    # One pass: text substituted for one placeholder is never searched for another.
    return _PLACEHOLDER.sub(lambda match: fields[match.group(1)], asset("page.html"))


def write_page(path: str, text: str) -> None:
    """Write the page atomically (the parent directory must exist)."""
    write_atomic(path, text)
