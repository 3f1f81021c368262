"""Where the test suite's data lives: everything the tests read is inside this repository."""

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
GOLDEN = TESTS / "golden"
DATA = TESTS / "data"
WIRE_FIXTURES = GOLDEN / "wire"
"""taguru's recorded request/response pairs (see its README)."""
SPEC_7_8_EVALUATION = GOLDEN / "spec_7_8_evaluation.json"
EXAMPLE_SUITE = REPO / "example_suite"
