"""Text inside a GitHub-flavoured Markdown table cell: the one escaping rule of every report.

A cell is one line, so line breaks become spaces, and ``|`` would end it, so it is escaped
(``\\|``, which GFM honours inside code spans too). Plain text must not become markup either:
a ``<`` that could open raw HTML (followed by a letter, ``/``, ``!`` or ``?``) or an autolink
(``<`` then no white space up to a ``>``) is written ``&lt;``, and an ``&`` that could start a
character reference (followed by a letter or ``#``) ``&amp;``. A ``<``, ``>`` or ``&`` that
can do neither is kept as typed, so a reason such as ``0.1 < min 0.5`` stays readable in the
raw text; it renders the same either way. A code span needs no HTML escaping (Markdown shows
its text literally).
"""

import re

_MARKUP = re.compile(r"<(?=[A-Za-z/!?]|[^\s<>]*>)|&(?=[A-Za-z#])")
_ENTITY = {"<": "&lt;", "&": "&amp;"}


def _one_line(text: str) -> str:
    return " ".join(text.splitlines()).replace("|", "\\|")


def cell(text: str) -> str:
    """Plain text as a table cell: one line, pipes escaped, no raw HTML or entity."""
    return _one_line(_MARKUP.sub(lambda found: _ENTITY[found[0]], text))


def code(text: str) -> str:
    """A code span inside a table cell, fenced by more backticks than the text contains."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{_one_line(padded)}{fence}"
