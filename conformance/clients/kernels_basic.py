"""Plain Triton kernels (no tensor cores): smoke tests of the launch path and the simulator."""

from __future__ import annotations

import numpy as np
import triton
import triton.language as tl

from conformance.clients.model import Case, ClientKernel, In, Out, Scalar


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def _add_case(n: int, block: int):
    def make(rng: np.random.Generator) -> Case:
        x = rng.integers(-64, 64, n).astype(np.float32)
        y = rng.integers(-64, 64, n).astype(np.float32)
        return Case((In(x), In(y), Out("out", (n,), np.float32), Scalar(n)), ((n + block - 1) // block, 1, 1),
                    {"out": (x.astype(np.float64) + y).astype(np.float32)})
    return make


def configs() -> list[ClientKernel]:
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    return [ClientKernel("basic.add_f32", "triton", add_kernel, sig, {"BLOCK": 256}, _add_case(1000, 256),
                         families=("launch",), num_warps=4, num_stages=1)]
