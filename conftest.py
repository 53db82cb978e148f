"""Root conftest: loads the suite's pytest plugin (options --level, --ptxas, --section, ...).

Importing the plugin imports the ``conformance`` package first, which sets one OpenBLAS thread per
process before numpy loads (``conformance/__init__.py``; docs/execute.md "Simulator cost").
"""

pytest_plugins = ["conformance.plugin"]
