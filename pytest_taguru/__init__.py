"""pytest-taguru: taguru's retrieval & citation quality gate, run as a pytest plugin."""

__version__ = "0.1.0"
