"""The ``taguru-evaluate`` console script (entry point ``pytest_taguru.cli:main``)."""

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``taguru-evaluate`` with ``argv`` (default: ``sys.argv[1:]``); the exit status."""
    from pytest_taguru.cli.dispatch import main as dispatch

    return dispatch(argv)
