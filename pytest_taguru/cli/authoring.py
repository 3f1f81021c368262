"""``taguru-evaluate`` subcommands for writing a suite: ``init``, ``import-dir``, ``check``,
``schema``, and for growing its labels: ``unjudged``, ``label-merge``.

Each is ``run_<name>(argv) -> exit status`` and raises :class:`UsageError` (2) or
:class:`RunError` (1), printed by the dispatcher as ``taguru-evaluate: <name>: …`` with its
hints. The work itself is in ``authoring/``.
"""

import argparse
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, NoReturn

from pytest_taguru.cli.arguments import PROG
from pytest_taguru.core.suggest import did_you_mean
from pytest_taguru.errors import RunError, TaguruError, UsageError, read_input_text

if TYPE_CHECKING:
    from pytest_taguru.run.eval_models import EvalSet

AUTHORING_SYNOPSES = (
    f"{PROG} init [DIR]",
    f"{PROG} import-dir DOCS --context NAME [--out FILE] [--prefix PREFIX]",
    f"{PROG} check --eval FILE (--serve IMPORT_FILE | --url URL) ...",
    f"{PROG} schema [NAME]",
    f"{PROG} unjudged ARTIFACT... --eval FILE [--out FILE] [--with-text DIR]",
    f"{PROG} label-merge QUEUE --eval FILE --out FILE",
)


class _Parser(argparse.ArgumentParser):
    """argparse whose complaints are usage errors naming the subcommand."""

    def __init__(self, name: str, description: str) -> None:
        super().__init__(prog=f"{PROG} {name}", description=description)
        self.name = name

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.name}: {message} — try '{self.prog} --help'")


def _parse(
    command: Callable[[Sequence[str]], int],
    argv: Sequence[str],
    declare: Callable[[_Parser], object],
) -> argparse.Namespace | None:
    """``command``'s arguments as ``declare`` declares them, or None when ``--help`` was
    printed. The subcommand is named after ``command`` (``run_import_dir``: ``import-dir``) and
    described by its docstring."""
    name = command.__name__.removeprefix("run_").replace("_", "-")
    parser = _Parser(name, " ".join((command.__doc__ or "").split()))
    declare(parser)
    try:
        return parser.parse_args(list(argv))
    except SystemExit as done:  # --help (every error raises UsageError instead)
        if done.code not in (0, None):
            raise
        return None


@contextmanager
def _named(name: str) -> Iterator[None]:
    """Errors of the work inside, with the subcommand's name in front (hints kept)."""
    try:
        yield
    except TaguruError as error:
        named = type(error)(f"{name}: {error.message}")
        named.hints = error.hints
        raise named from None


# --- schema ------------------------------------------------------------------------------------


def run_schema(argv: Sequence[str]) -> int:
    """Print the JSON Schema of one of taguru's input formats (to point an editor at it).
    Without NAME, list the names."""
    from pytest_taguru.authoring.json_schemas import BUILDERS, shipped

    args = _parse(
        run_schema,
        argv,
        lambda parser: parser.add_argument(
            "name", nargs="?", metavar="NAME", help=", ".join(BUILDERS)
        ),
    )
    if args is None:
        return 0
    if args.name is None:
        for name in BUILDERS:
            print(name)
        return 0
    if args.name not in BUILDERS:
        hint = did_you_mean(args.name, BUILDERS) or f"the names: {', '.join(BUILDERS)}"
        raise UsageError(f"schema: no schema named '{args.name}' — {hint}")
    sys.stdout.write(shipped(args.name))
    return 0


# --- init --------------------------------------------------------------------------------------


def run_init(argv: Sequence[str]) -> int:
    """Write a working suite into DIR (default: the current folder): pytest.ini, a small
    corpus, an eval.jsonl with one case of each kind and a thresholds file it passes. Then
    'pytest DIR' runs it on the embedded reference server. Never overwrites a file."""
    from pytest_taguru.authoring.scaffold import init_suite

    args = _parse(
        run_init,
        argv,
        lambda parser: parser.add_argument("folder", nargs="?", default=".", metavar="DIR"),
    )
    if args is None:
        return 0
    with _named("init"):
        written = init_suite(args.folder)
    for path in written:
        print(f"wrote {path}")
    shown = "" if args.folder == "." else f" {args.folder}"
    print(f"next: pytest{shown}")
    return 0


# --- import-dir --------------------------------------------------------------------------------


def _import_dir_arguments(parser: _Parser) -> None:
    parser.add_argument("docs", metavar="DOCS", help="the folder to convert")
    parser.add_argument("--context", required=True, metavar="NAME", help="the context to fill")
    parser.add_argument("--out", metavar="FILE", help="where to write (default: stdout)")
    parser.add_argument(
        "--prefix", default="", metavar="PREFIX", help="put in front of every source name"
    )


def run_import_dir(argv: Sequence[str]) -> int:
    """Turn a folder of Markdown (.md, .markdown) and text (.txt) files into a taguru import
    stream: one source per file, named by its path below DOCS; paragraphs split as taguru
    splits them; Markdown headings as section markers; front-matter 'page:' and form feeds as
    page locators. Deterministic; loads into taguru and the reference server."""
    from pytest_taguru.authoring.import_dir import import_dir
    from pytest_taguru.core.atomic_file import write_atomic
    from pytest_taguru.core.textfile import os_error_text

    args = _parse(run_import_dir, argv, _import_dir_arguments)
    if args is None:
        return 0
    with _named("import-dir"):
        converted = import_dir(args.docs, args.context, args.prefix)
    for note in converted.notes:
        print(f"{PROG}: import-dir: note: {note}", file=sys.stderr)
    if args.out is None:
        sys.stdout.write(converted.text())
    else:
        try:
            write_atomic(args.out, converted.text())
        except OSError as error:
            raise RunError(f"import-dir: cannot write {args.out}: {os_error_text(error)}") from None
    target = "stdout" if args.out is None else args.out
    print(f"{PROG}: import-dir: {converted.summary()} → {target}", file=sys.stderr)
    return 0


# --- check -------------------------------------------------------------------------------------


@contextmanager
def _server_url(serve: str | None, url: str | None) -> Iterator[str]:
    """``url`` as given, or an embedded reference server loaded with ``serve``."""
    if url is not None:
        yield url
        return
    assert serve is not None
    from pytest_taguru.run.embedded_server import start_embedded_server

    with _named("check"):
        server = start_embedded_server(serve, token=None)
    try:
        for note in server.import_notes:
            print(f"{PROG}: check: warning: {note}", file=sys.stderr)
        yield server.url
    finally:
        server.stop()


def _check_arguments(parser: _Parser) -> None:
    parser.add_argument("--eval", required=True, metavar="FILE", dest="eval_path")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument(
        "--serve", metavar="IMPORT_FILE", help="start the embedded reference server with this file"
    )
    target.add_argument("--url", metavar="URL", help="a running taguru server (TAGURU_API_TOKEN)")
    parser.add_argument(
        "--context", metavar="NAME", help="default: the eval header's default_target.context"
    )
    parser.add_argument(
        "--skip-case",
        action="append",
        default=[],
        metavar="CASE_ID",
        help="a case whose mistakes are deliberate (an honest miss kept in the suite); repeatable",
    )


def run_check(argv: Sequence[str]) -> int:
    """Lint eval.jsonl's labels against a corpus without scoring anything: expected sources
    and paragraphs exist, citation quotes occur (folded) in the cited paragraph, declared
    sections match, expected concepts and labels resolve. Exit 0 clean, 2 on problems (one
    line each, with the eval.jsonl line), 1 when the server cannot be read."""
    from pytest_taguru.authoring.label_check import CorpusReader, check_eval_set
    from pytest_taguru.run.client import TaguruClient
    from pytest_taguru.run.dataset import check_limits, load_eval_set
    from pytest_taguru.run.exchange import CallFailed
    from pytest_taguru.run.preflight import read_context_entry
    from pytest_taguru.run.server_access import bearer_token, check_base_url, mask_url

    args = _parse(run_check, argv, _check_arguments)
    if args is None:
        return 0
    with _named("check"):
        eval_set = load_eval_set(args.eval_path)
        check_limits(eval_set)
        if args.url is not None:
            check_base_url(args.url.rstrip("/"))
    context = args.context or eval_set.default_context
    if context is None:
        raise UsageError("check: no --context and no default_target.context in the eval header")
    case_ids = [case.case_id for case in eval_set.cases]
    for case_id in args.skip_case:
        if case_id not in case_ids:
            hint = did_you_mean(case_id, case_ids)
            raise UsageError(
                f"check: --skip-case '{case_id}' is not a case of {args.eval_path}"
                + (f" — {hint}" if hint else "")
            )
    token = bearer_token(os.environ) if args.url is not None else None
    with (
        _server_url(args.serve, None if args.url is None else args.url.rstrip("/")) as url,
        TaguruClient(url, token) as client,
    ):
        try:
            client.health()
        except CallFailed as failure:
            raise RunError(
                f"check: server at {mask_url(url)} is not reachable: {failure.message}"
            ) from None
        with _named("check"):
            read_context_entry(client, context)
            problems = check_eval_set(CorpusReader(client, context), eval_set, args.skip_case)
    for problem in problems:
        print(problem.text(args.eval_path))
    checked = len(eval_set.cases) - len(set(args.skip_case))
    skipped = f", {len(set(args.skip_case))} skipped" if args.skip_case else ""
    cases = {problem.case_id for problem in problems}
    verdict = f"{len(problems)} problem(s) in {len(cases)} case(s)" if problems else "no problems"
    print(
        f"{PROG}: check: {args.eval_path}: {checked} case(s) checked{skipped}: {verdict}",
        file=sys.stderr,
    )
    return 2 if problems else 0


# --- unjudged, label-merge ---------------------------------------------------------------------


def _read_eval(path: str) -> "tuple[str, EvalSet]":
    """An eval set's text, and the set loaded from it (one read: the text is edited later)."""
    from pytest_taguru.run.dataset import parse_eval_set

    text = read_input_text(path)
    return text, parse_eval_set(text, path)


def _write(path: str, text: str) -> None:
    """``text`` to ``path`` (``-``: stdout), atomically; a failed write is exit 1."""
    from pytest_taguru.core.atomic_file import write_atomic
    from pytest_taguru.core.textfile import os_error_text

    if path == "-":
        sys.stdout.write(text)
        return
    try:
        write_atomic(path, text)
    except OSError as error:
        raise RunError(f"cannot write {path}: {os_error_text(error)}") from None


def _unjudged_arguments(parser: _Parser) -> None:
    parser.add_argument("artifacts", nargs="+", metavar="ARTIFACT", help="evaluation.json files")
    parser.add_argument("--eval", required=True, metavar="FILE", dest="eval_path")
    parser.add_argument(
        "--out", default="label-queue.jsonl", metavar="FILE", help="default: %(default)s; -: stdout"
    )
    parser.add_argument(
        "--with-text",
        metavar="DIR",
        help="a --taguru-record recording: add each hit's served text (the queue then holds "
        "corpus text)",
    )


def run_unjudged(argv: Sequence[str]) -> int:
    """Write the label queue of saved runs: every hit no expected_sources entry of the eval set
    labels (relevance 0 included), once per case and locator, ranked by how far labelling it
    alone could move its case's recall@k, MRR and nDCG. Fill in each line's relevance (0-3)
    and fold the queue back with label-merge."""
    from pytest_taguru.artifact.evaluation import ArtifactError, parse_evaluation
    from pytest_taguru.authoring.label_queue import SavedRun, build_queue, file_identity
    from pytest_taguru.authoring.recorded_text import recorded_texts

    args = _parse(run_unjudged, argv, _unjudged_arguments)
    if args is None:
        return 0
    with _named("unjudged"):
        eval_text, eval_set = _read_eval(args.eval_path)
        runs = []
        for path in args.artifacts:
            try:
                runs.append(SavedRun(path, parse_evaluation(read_input_text(path), origin=path)))
            except ArtifactError as error:
                raise UsageError(str(error)) from None
        texts = None if args.with_text is None else recorded_texts(args.with_text)
        queue = build_queue(eval_set, file_identity(args.eval_path, eval_text), runs, texts)
        _write(args.out, queue.text())
    for note in queue.notes:
        print(f"{PROG}: unjudged: note: {note}", file=sys.stderr)
    target = "stdout" if args.out == "-" else args.out
    print(f"{PROG}: unjudged: {queue.summary()} → {target}", file=sys.stderr)
    return 0


def _label_merge_arguments(parser: _Parser) -> None:
    parser.add_argument("queue", metavar="QUEUE", help="a label queue written by unjudged")
    parser.add_argument("--eval", required=True, metavar="FILE", dest="eval_path")
    parser.add_argument("--out", required=True, metavar="FILE", help="the labelled eval set")


def run_label_merge(argv: Sequence[str]) -> int:
    """Fold a labelled queue back into the eval set: each line whose relevance was filled in
    becomes an expected_sources entry of its case ({"source", "paragraphs": [p],
    "relevance"}); every other byte of the eval set is kept. The result is validated by the
    eval.jsonl loader before it is written. Exit 2 for a bad queue (file:line: field), 1 when
    the output cannot be written."""
    from pytest_taguru.authoring.label_merge import load_labelled_queue, merge_labels
    from pytest_taguru.authoring.label_queue import file_identity
    from pytest_taguru.run.dataset import parse_eval_set

    args = _parse(run_label_merge, argv, _label_merge_arguments)
    if args is None:
        return 0
    with _named("label-merge"):
        eval_text, eval_set = _read_eval(args.eval_path)
        queue = load_labelled_queue(args.queue)
        merged = merge_labels(eval_text, eval_set, queue, args.queue)
        parse_eval_set(merged, args.out)
        exported = queue.header.eval
        if exported is not None and exported != file_identity(exported.path, eval_text):
            print(
                f"{PROG}: label-merge: note: {args.queue} was exported against another version "
                f"of the eval set (sha256 {exported.sha256[:12]}…); labels are merged by case_id",
                file=sys.stderr,
            )
        _write(args.out, merged)
    relevant = sum(label.relevance > 0 for label in queue.labels)
    cases = len({label.case_id for label in queue.labels})
    print(
        f"{PROG}: label-merge: {len(queue.labels)} label(s) merged into {cases} case(s) "
        f"({relevant} relevant, {len(queue.labels) - relevant} not), {queue.unlabelled} "
        f"line(s) left unlabelled → {args.out}",
        file=sys.stderr,
    )
    return 0


SUBCOMMANDS = {
    "init": run_init,
    "import-dir": run_import_dir,
    "check": run_check,
    "schema": run_schema,
    "unjudged": run_unjudged,
    "label-merge": run_label_merge,
}
