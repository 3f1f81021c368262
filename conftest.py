"""Root conftest: shared by the test suite (tests/). The example suite has its own pytest.ini.

pytester (enabled in pyproject's addopts) runs the plugin end to end in temporary directories;
nothing here is needed by users of the plugin.
"""

from hypothesis import HealthCheck, settings

# Machines running the suite are shared and noisy: no hypothesis check may depend on time.
settings.register_profile(
    "shared-machine", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("shared-machine")
