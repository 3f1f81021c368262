"""``python -m pytest_taguru.server``: the reference server's command (``serve.main``), or, when
the ``server`` extra is not installed, which one to install (exit 2, no traceback)."""

import sys

SERVER_EXTRA = ("starlette", "uvicorn")
"""The packages of ``pip install 'pytest-taguru[server]'``."""


def run(argv: list[str] | None = None) -> int:
    try:
        from pytest_taguru.server.serve import main
    except ModuleNotFoundError as error:
        if error.name not in SERVER_EXTRA:
            raise
        print(
            "python -m pytest_taguru.server needs the reference server's dependencies: "
            f"pip install 'pytest-taguru[server]' (missing: {error.name})",
            file=sys.stderr,
        )
        return 2
    return main(argv)


if __name__ == "__main__":
    sys.exit(run())
