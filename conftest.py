"""Root conftest: loads the suite's pytest plugin (options --level, --ptxas, --section, ...).

BLAS threads: the reference's matrices are small (at most 256 x 256 x 256); OpenBLAS threads only
spin on them (on a shared or 2-core machine they cost ~3x the oracle's CPU time; docs/execute.md
"Host cost by stage"), so one thread unless the environment says otherwise. Set before numpy loads.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

pytest_plugins = ["conformance.plugin"]
