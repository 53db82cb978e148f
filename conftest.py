"""Root conftest: loads the suite's pytest plugin (options --level, --ptxas, --section, ...)."""

pytest_plugins = ["conformance.plugin"]
