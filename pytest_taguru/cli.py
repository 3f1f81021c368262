"""The ``taguru-evaluate`` console script."""

import sys


def main(argv: list[str] | None = None) -> int:
    print("usage: taguru-evaluate compare BASE.json HEAD.json | --eval FILE --context NAME ...")
    return 0


if __name__ == "__main__":
    sys.exit(main())
