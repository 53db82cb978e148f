"""Median run time of the MMA models against the issue-5 targets.

    python3 benchmarks/mma_models.py [--repeats N]

Each case times ``reference.mma_semantics.mma`` end to end (decode, model, D codes) on random
operand codes; exits 1 if a median misses its target. BLAS runs single-threaded unless the
environment says otherwise (``OPENBLAS_NUM_THREADS`` etc.): the matrices are small, and on a shared
machine BLAS worker threads spinning for a core cost more than they save.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402  (after the BLAS thread settings)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reference import formats as F  # noqa: E402
from reference.mma_qualifiers import MmaOp  # noqa: E402
from reference.mma_semantics import mma  # noqa: E402


def _case_f16(rng):
    op = MmaOp("f16", "f16", "f16", "f32", 128, 256)
    a = rng.integers(0, 0x7C00, (128, 16)).astype(np.uint16) | (rng.integers(0, 2, (128, 16)) << 15).astype(np.uint16)
    b = rng.integers(0, 0x7C00, (16, 256)).astype(np.uint16)
    c = F.encode("f32", rng.normal(size=(128, 256)))
    return op, (a, b, c), {}


def _case_mxf4(rng):
    op = MmaOp("mxf4", "e2m1", "e2m1", "f32", 128, 256, scale_vec="2X")
    a = rng.integers(0, 16, (128, 64)).astype(np.uint8)
    b = rng.integers(0, 16, (64, 256)).astype(np.uint8)
    c = F.encode("f32", rng.normal(size=(128, 256)))
    scales = dict(scale_a=rng.integers(110, 145, (128, 2)).astype(np.uint8),
                  scale_b=rng.integers(110, 145, (2, 256)).astype(np.uint8))
    return op, (a, b, c), scales


CASES = [
    ("spec     f16  M=128 N=256 K=16", _case_f16, "spec", 2.0),
    ("hardware f16  M=128 N=256 K=16", _case_f16, "hardware", 50.0),
    ("hardware mxf4 M=128 N=256 K=64", _case_mxf4, "hardware", 100.0),
]


def median_ms(fn, repeats: int) -> float:
    fn()                                                       # warm up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    missed = 0
    for name, make, model, target in CASES:
        op, operands, kw = make(rng)
        ms = median_ms(lambda op=op, operands=operands, model=model, kw=kw: mma(op, *operands, model=model, **kw),
                       args.repeats)
        ok = ms <= target
        missed += not ok
        print(f"{name:34s} median {ms:8.2f} ms   target <= {target:6.1f} ms   {'ok' if ok else 'MISSED'}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
