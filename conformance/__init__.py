"""The pytest suite users run (one module per spec section) and its harness (toolchain, device, comparison)."""

import os

# One BLAS thread per process, set before numpy loads (this package is imported before any of
# its modules, the pytest plugin and the CLI included). The suite's matrices are small (at most
# 256 x 256 per case): OpenBLAS's worker threads only spin, and under ``pytest -n N`` every worker
# would start one per core. Measured (docs/execute.md "Simulator cost"): the default execution
# tier spent a third of its CPU time in those threads. A caller's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
