"""pytest hooks for pytest-taguru (inert until ``--taguru-eval`` is given)."""
