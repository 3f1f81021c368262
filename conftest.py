"""Root conftest: shared by the test suite (tests/). The example suite has its own pytest.ini.

pytester (enabled in pyproject's addopts) runs the plugin end to end in temporary directories;
nothing here is needed by users of the plugin.
"""
