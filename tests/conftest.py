"""Self-test configuration.

Tests that run the suite in-process (``pytester.runpytest``) restore ``sys.modules`` after each
inner session, so a module first imported inside one is imported again by the next.  Triton's
compiled extension (nanobind) aborts the process when it is loaded twice, so import it once here,
outside every inner session, when it is installed (the client tier imports it while collecting).
"""

import importlib.util

if importlib.util.find_spec("triton") is not None:
    import triton  # noqa: F401
