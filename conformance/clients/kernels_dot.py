"""``tl.dot`` kernels: Triton's tcgen05 (MMAv5) code generation for every dense input type.

Three kernel shapes, each compiled under many configurations:

* :func:`dot_ptr_kernel` - pointer loads (Triton's own shared-memory swizzle arithmetic, cp.async
  pipelines for ``num_stages > 1``); the majors of A and B come from the strides (a unit stride is a
  constexpr, as the JIT specialises it) or from loading the transposed tile and ``tl.trans``;
* :func:`dot_tma_kernel` - host TMA tensor descriptors (``a_desc.load``/``c_desc.store``), optionally
  a warp-specialised K loop, or ``tl.make_tensor_descriptor`` built in the kernel;
* :func:`dot_persistent_kernel` - a persistent grid (``tl.range(pid, num_tiles, NUM_SMS)``, fewer
  programs than tiles), TMA or pointer loads, optionally warp-specialised.

Inputs are small integers (exact in every input type, every product and partial sum exact in the
accumulator and the output type), so the expected output is the float64 numpy product converted.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
import triton
import triton.language as tl

from conformance.clients.model import Case, ClientKernel, Desc, In, Out, Scalar


@triton.jit
def dot_ptr_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, TRANS_A: tl.constexpr,
                   TRANS_B: tl.constexpr, MASKED: tl.constexpr, PRECISION: tl.constexpr, ACC: tl.constexpr,
                   OUT: tl.constexpr):
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BN)
    pid_m = pid // num_n
    pid_n = pid % num_n
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in range(0, K, BK):
        ks = k + offs_k
        if TRANS_A:             # the [BK, BM] tile of A^T, transposed in registers/shared memory
            a_ptrs = a_ptr + ks[:, None] * stride_ak + offs_m[None, :] * stride_am
            if MASKED:
                a = tl.trans(tl.load(a_ptrs, mask=(ks[:, None] < K) & (offs_m[None, :] < M), other=0))
            else:
                a = tl.trans(tl.load(a_ptrs))
        else:
            a_ptrs = a_ptr + offs_m[:, None] * stride_am + ks[None, :] * stride_ak
            if MASKED:
                a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0)
            else:
                a = tl.load(a_ptrs)
        if TRANS_B:             # the [BN, BK] tile of B^T (B stored N x K, K contiguous)
            b_ptrs = b_ptr + offs_n[:, None] * stride_bn + ks[None, :] * stride_bk
            if MASKED:
                b = tl.trans(tl.load(b_ptrs, mask=(offs_n[:, None] < N) & (ks[None, :] < K), other=0))
            else:
                b = tl.trans(tl.load(b_ptrs))
        else:
            b_ptrs = b_ptr + ks[:, None] * stride_bk + offs_n[None, :] * stride_bn
            if MASKED:
                b = tl.load(b_ptrs, mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0)
            else:
                b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    if MASKED:
        tl.store(c_ptrs, acc.to(OUT), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
    else:
        tl.store(c_ptrs, acc.to(OUT))


@triton.jit
def dot_tma_kernel(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                   TRANS_A: tl.constexpr, TRANS_B: tl.constexpr, WS: tl.constexpr, PRECISION: tl.constexpr,
                   ACC: tl.constexpr, OUT: tl.constexpr):
    off_m = tl.program_id(0) * BM
    off_n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in tl.range(0, K, BK, warp_specialize=WS):
        if TRANS_A:
            a = a_desc.load([k, off_m]).T
        else:
            a = a_desc.load([off_m, k])
        if TRANS_B:
            b = b_desc.load([off_n, k]).T
        else:
            b = b_desc.load([k, off_n])
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
    c_desc.store([off_m, off_n], acc.to(OUT))


@triton.jit
def dot_device_desc_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                           ACC: tl.constexpr, OUT: tl.constexpr):
    """Tensor descriptors built in the kernel (``tl.make_tensor_descriptor``: tensormaps in global scratch)."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    off_m = tl.program_id(0) * BM
    off_n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in tl.range(0, K, BK):
        acc = tl.dot(a_desc.load([off_m, k]), b_desc.load([k, off_n]), acc, out_dtype=ACC)
    c_desc.store([off_m, off_n], acc.to(OUT))


@triton.jit
def dot_persistent_kernel(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                          NUM_SMS: tl.constexpr, WS: tl.constexpr, FLATTEN: tl.constexpr, ACC: tl.constexpr,
                          OUT: tl.constexpr):
    """tutorials/09-persistent-matmul's descriptor kernel: B given as [N, K] (K-major), tiles strided by
    the grid size."""
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    num_tiles = num_pid_m * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLATTEN, warp_specialize=WS):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        off_m = pid_m * BM
        off_n = pid_n * BN
        acc = tl.zeros((BM, BN), dtype=ACC)
        for ki in range(k_tiles):
            a = a_desc.load([off_m, ki * BK])
            b = b_desc.load([off_n, ki * BK])
            acc = tl.dot(a, b.T, acc, out_dtype=ACC)
        c_desc.store([off_m, off_n], acc.to(OUT))


@triton.jit
def dot_persistent_ptr_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, NUM_SMS: tl.constexpr,
                              WS: tl.constexpr, ACC: tl.constexpr, OUT: tl.constexpr):
    """A persistent grid over pointer loads (A row-major, B row-major: N contiguous)."""
    start_pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_pid_n
    offs_k = tl.arange(0, BK)
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, warp_specialize=WS):
        offs_m = (tile_id // num_pid_n) * BM + tl.arange(0, BM)
        offs_n = (tile_id % num_pid_n) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=ACC)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + offs_m[:, None] * stride_am + (k + offs_k)[None, :])
            b = tl.load(b_ptr + (k + offs_k)[:, None] * stride_bk + offs_n[None, :])
            acc = tl.dot(a, b, acc, out_dtype=ACC)
        tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(OUT))


# ----------------------------------------------------------------------------------------------------
# Input types: Triton pointer type, TMA descriptor element type, how to encode exact small integers.

@dataclass(frozen=True)
class DType:
    ptr: str            # Triton signature element type
    lo: int             # inputs are integers in [lo, hi]
    hi: int
    encode: object      # float64 array -> numpy array holding the element bits

    def values(self, rng: np.random.Generator, shape) -> np.ndarray:
        return rng.integers(self.lo, self.hi + 1, shape).astype(np.float64)


def _fp8(kind):
    return lambda x: x.astype(kind).view(np.uint8)


DTYPES = {
    "f16": DType("fp16", -3, 3, lambda x: x.astype(np.float16)),
    "bf16": DType("bf16", -3, 3, lambda x: x.astype(ml_dtypes.bfloat16).view(np.uint16)),
    "tf32": DType("fp32", -3, 3, lambda x: x.astype(np.float32)),
    "e4m3": DType("fp8e4nv", -3, 3, _fp8(ml_dtypes.float8_e4m3fn)),
    "e5m2": DType("fp8e5", -3, 3, _fp8(ml_dtypes.float8_e5m2)),
    "i8": DType("i8", -3, 3, lambda x: x.astype(np.int8)),
}
#: output element type -> (Triton constexpr, signature type, numpy dtype)
OUTS = {"f32": (tl.float32, "fp32", np.float32), "f16": (tl.float16, "fp16", np.float16),
        "i32": (tl.int32, "i32", np.int32)}


def _expected(a: np.ndarray, b: np.ndarray, out: str) -> np.ndarray:
    c = a @ b
    assert np.all(np.abs(c) < (2048 if out == "f16" else 1 << 24)), "inputs must keep the sums exact"
    return c.astype(OUTS[out][2])


@dataclass(frozen=True)
class Shape:
    M: int
    N: int
    K: int
    BM: int
    BN: int
    BK: int


def _grid(s: Shape) -> int:
    return -(-s.M // s.BM) * -(-s.N // s.BN)


def ptr_config(name: str, dtype: str, s: Shape, *, a_major="K", b_major="MN", trans_a=False, trans_b=False,
               out="f32", acc=None, stages=3, warps=4, masked=False, precision=None) -> ClientKernel:
    """A ``dot_ptr_kernel`` configuration.

    ``a_major``/``b_major`` say which dimension is contiguous in global memory ("K", or "MN": M for A,
    N for B); ``trans_a``/``trans_b`` load that storage as the transposed tile and ``tl.trans`` it."""
    dt = DTYPES[dtype]
    acc = acc or ("i32" if dtype == "i8" else "f32")
    a_kmaj, b_kmaj = a_major == "K", b_major == "K"
    assert trans_a is False or not a_kmaj, "trans_a loads A^T stored K x M"
    assert trans_b is False or b_kmaj, "trans_b loads B^T stored N x K"
    strides = {"stride_am": s.K if a_kmaj else 1, "stride_ak": 1 if a_kmaj else s.M,
               "stride_bk": 1 if b_kmaj else s.N, "stride_bn": s.K if b_kmaj else 1,
               "stride_cm": s.N, "stride_cn": 1}
    sig = {"a_ptr": f"*{dt.ptr}", "b_ptr": f"*{dt.ptr}", "c_ptr": f"*{OUTS[out][1]}", "M": "i32", "N": "i32",
           "K": "i32"}
    sig.update({k: ("constexpr" if v == 1 else "i32") for k, v in strides.items()})
    constexprs = {k: 1 for k, v in strides.items() if v == 1}
    constexprs.update(BM=s.BM, BN=s.BN, BK=s.BK, TRANS_A=trans_a, TRANS_B=trans_b, MASKED=masked,
                      PRECISION=precision, ACC=OUTS[acc][0], OUT=OUTS[out][0])
    divisible = tuple(n for n in ("a_ptr", "b_ptr", "c_ptr") ) + tuple(
        n for n, v in {"M": s.M, "N": s.N, "K": s.K, **strides}.items() if v != 1 and v % 16 == 0)

    def make(rng: np.random.Generator) -> Case:
        a = dt.values(rng, (s.M, s.K))
        b = dt.values(rng, (s.K, s.N))
        a_mem = a if a_kmaj else a.T
        b_mem = b.T if b_kmaj else b
        args = (In(np.ascontiguousarray(dt.encode(a_mem))), In(np.ascontiguousarray(dt.encode(b_mem))),
                Out("c", (s.M, s.N), OUTS[out][2]), Scalar(s.M), Scalar(s.N), Scalar(s.K),
                *(Scalar(v) for v in strides.values() if v != 1))
        return Case(args, (_grid(s), 1, 1), {"c": _expected(a, b, out)})

    families = ("mma", "tmem") if stages < 2 else ("mma", "tmem", "pipeline")
    return ClientKernel(name, "triton", dot_ptr_kernel, sig, constexprs, make, families, num_warps=warps,
                        num_stages=stages, divisible=divisible)


def _desc_type(dtype: str, block) -> str:
    return f"tensordesc<{dtype}[{', '.join(str(b) for b in block)}]>"


def tma_config(name: str, dtype: str, s: Shape, *, trans_a=False, trans_b=False, out="f32", acc=None, stages=3,
               warps=4, ws=False, precision=None) -> ClientKernel:
    """A ``dot_tma_kernel`` configuration: A is [M, K] (``trans_a``: [K, M]), B is [K, N] (``trans_b``:
    [N, K]), C is [M, N]; each loaded/stored through a host tensor descriptor."""
    dt = DTYPES[dtype]
    acc = acc or ("i32" if dtype == "i8" else "f32")
    a_block = (s.BK, s.BM) if trans_a else (s.BM, s.BK)
    b_block = (s.BN, s.BK) if trans_b else (s.BK, s.BN)
    sig = {"a_desc": _desc_type(dt.ptr, a_block), "b_desc": _desc_type(dt.ptr, b_block),
           "c_desc": _desc_type(OUTS[out][1], (s.BM, s.BN)), "K": "i32"}
    constexprs = dict(BM=s.BM, BN=s.BN, BK=s.BK, TRANS_A=trans_a, TRANS_B=trans_b, WS=ws, PRECISION=precision,
                      ACC=OUTS[acc][0], OUT=OUTS[out][0])

    def make(rng: np.random.Generator) -> Case:
        a = dt.values(rng, (s.M, s.K))
        b = dt.values(rng, (s.K, s.N))
        a_mem = np.ascontiguousarray(dt.encode(a.T if trans_a else a))
        b_mem = np.ascontiguousarray(dt.encode(b.T if trans_b else b))
        c = Out("c", (s.M, s.N), OUTS[out][2])
        args = (Desc(a_block, data=a_mem), Desc(b_block, data=b_mem), Desc((s.BM, s.BN), out=c), Scalar(s.K))
        return Case(args, (s.M // s.BM, s.N // s.BN, 1), {"c": _expected(a, b, out)})

    families = ("mma", "tma", "pipeline")
    return ClientKernel(name, "triton", dot_tma_kernel, sig, constexprs, make, families, num_warps=warps,
                        num_stages=stages, divisible=("K",) if s.K % 16 == 0 else ())


def persistent_config(name: str, dtype: str, s: Shape, *, programs: int, ws=False, flatten=False, out="f32",
                      stages=3, warps=4, pointers=False) -> ClientKernel:
    """A persistent grid of ``programs`` programs over ``M/BM * N/BN`` tiles (more tiles than programs)."""
    dt = DTYPES[dtype]
    acc = "i32" if dtype == "i8" else "f32"
    assert _grid(s) > programs, "a persistent case has more tiles than programs"
    if pointers:
        sig = {"a_ptr": f"*{dt.ptr}", "b_ptr": f"*{dt.ptr}", "c_ptr": f"*{OUTS[out][1]}", "M": "i32", "N": "i32",
               "K": "i32", "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}
        constexprs = dict(BM=s.BM, BN=s.BN, BK=s.BK, NUM_SMS=programs, WS=ws, ACC=OUTS[acc][0], OUT=OUTS[out][0])
        fn = dot_persistent_ptr_kernel
        divisible = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")
    else:
        sig = {"a_desc": _desc_type(dt.ptr, (s.BM, s.BK)), "b_desc": _desc_type(dt.ptr, (s.BN, s.BK)),
               "c_desc": _desc_type(OUTS[out][1], (s.BM, s.BN)), "M": "i32", "N": "i32", "K": "i32"}
        constexprs = dict(BM=s.BM, BN=s.BN, BK=s.BK, NUM_SMS=programs, WS=ws, FLATTEN=flatten, ACC=OUTS[acc][0],
                          OUT=OUTS[out][0])
        fn = dot_persistent_kernel
        divisible = ("M", "N", "K")

    def make(rng: np.random.Generator) -> Case:
        a = dt.values(rng, (s.M, s.K))
        b = dt.values(rng, (s.K, s.N))
        c = Out("c", (s.M, s.N), OUTS[out][2])
        if pointers:
            args = (In(dt.encode(a)), In(np.ascontiguousarray(dt.encode(b))), c, Scalar(s.M), Scalar(s.N),
                    Scalar(s.K), Scalar(s.K), Scalar(s.N), Scalar(s.N))
        else:
            args = (Desc((s.BM, s.BK), data=dt.encode(a)), Desc((s.BN, s.BK), data=np.ascontiguousarray(dt.encode(b.T))),
                    Desc((s.BM, s.BN), out=c), Scalar(s.M), Scalar(s.N), Scalar(s.K))
        return Case(args, (programs, 1, 1), {"c": _expected(a, b, out)})

    families = ("mma", "tma", "pipeline") if not pointers else ("mma", "tmem", "pipeline")
    return ClientKernel(name, "triton", fn, sig, constexprs, make, families, num_warps=warps, num_stages=stages,
                        divisible=divisible)


def device_desc_config(name: str, dtype: str, s: Shape, *, stages=3, out="f32") -> ClientKernel:
    dt = DTYPES[dtype]
    sig = {"a_ptr": f"*{dt.ptr}", "b_ptr": f"*{dt.ptr}", "c_ptr": f"*{OUTS[out][1]}", "M": "i32", "N": "i32",
           "K": "i32"}
    constexprs = dict(BM=s.BM, BN=s.BN, BK=s.BK, ACC=tl.float32, OUT=OUTS[out][0])

    def make(rng: np.random.Generator) -> Case:
        a = dt.values(rng, (s.M, s.K))
        b = dt.values(rng, (s.K, s.N))
        args = (In(dt.encode(a)), In(dt.encode(b)), Out("c", (s.M, s.N), OUTS[out][2]), Scalar(s.M), Scalar(s.N),
                Scalar(s.K))
        return Case(args, (s.M // s.BM, s.N // s.BN, 1), {"c": _expected(a, b, out)})

    return ClientKernel(name, "triton", dot_device_desc_kernel, sig, constexprs, make, ("mma", "tma", "pipeline"),
                        num_stages=stages, divisible=("a_ptr", "b_ptr", "c_ptr", "M", "N", "K"))


def configs() -> list[ClientKernel]:
    S = Shape
    return [
        # ---- f16, pointer loads: pipelines, swizzles (BK*2 bytes = 128/64/32), BM 64/128, BN 16..256
        ptr_config("dot.f16_ptr_m128n64k64_s1", "f16", S(128, 64, 128, 128, 64, 64), stages=1),
        ptr_config("dot.f16_ptr_m128n128k64_s2", "f16", S(128, 128, 256, 128, 128, 64), stages=2),
        ptr_config("dot.f16_ptr_m128n64k64_s3", "f16", S(128, 64, 256, 128, 64, 64), stages=3),
        ptr_config("dot.f16_ptr_m128n32k64_s4", "f16", S(128, 32, 256, 128, 32, 64), stages=4),
        ptr_config("dot.f16_ptr_m128n64k32_sw64", "f16", S(128, 64, 128, 128, 64, 32), stages=2),
        ptr_config("dot.f16_ptr_m128n64k16_sw32", "f16", S(128, 64, 64, 128, 64, 16), stages=2),
        ptr_config("dot.f16_ptr_m64n64k64", "f16", S(64, 64, 128, 64, 64, 64), stages=2),
        ptr_config("dot.f16_ptr_m64n16k64", "f16", S(64, 16, 128, 64, 16, 64), stages=2),
        ptr_config("dot.f16_ptr_m64n16k64_s1", "f16", S(64, 16, 128, 64, 16, 64), stages=1),
        ptr_config("dot.f16_ptr_m128n256k64", "f16", S(128, 256, 128, 128, 256, 64), stages=2, warps=8),
        ptr_config("dot.f16_ptr_grid2x2", "f16", S(256, 128, 128, 128, 64, 64), stages=2),
        # majors: A MN-major (strides / tl.trans), B K-major (strides + tl.trans), both
        ptr_config("dot.f16_ptr_amn_strides", "f16", S(128, 64, 128, 128, 64, 64), a_major="MN", stages=2),
        ptr_config("dot.f16_ptr_amn_trans_m64", "f16", S(64, 64, 128, 64, 64, 64), a_major="MN", trans_a=True,
                   stages=2),
        ptr_config("dot.f16_ptr_bk_trans", "f16", S(128, 64, 128, 128, 64, 64), b_major="K", trans_b=True,
                   stages=2),
        ptr_config("dot.f16_ptr_amn_bk_n32", "f16", S(128, 32, 128, 128, 32, 32), a_major="MN", b_major="K",
                   trans_b=True, stages=3),
        ptr_config("dot.f16_ptr_bmn_n16_sw32", "f16", S(128, 16, 128, 128, 16, 64), stages=2),
        ptr_config("dot.f16_ptr_masked_ragged", "f16", S(100, 40, 72, 64, 32, 32), masked=True, stages=2),
        # bf16
        ptr_config("dot.bf16_ptr_m128n64k64", "bf16", S(128, 64, 128, 128, 64, 64), stages=2),
        ptr_config("dot.bf16_ptr_bk_k32_sw64", "bf16", S(128, 128, 128, 128, 128, 32), b_major="K", trans_b=True,
                   stages=3),
        ptr_config("dot.bf16_ptr_amn_m64k16_sw32", "bf16", S(64, 128, 64, 64, 128, 16), a_major="MN", stages=2),
        # tf32 (fp32 inputs, input_precision="tf32"): BK*4 = 128/64 bytes; tf32x3 (three tf32 MMAs)
        ptr_config("dot.tf32_ptr_m128n64k32", "tf32", S(128, 64, 128, 128, 64, 32), precision="tf32", stages=2),
        ptr_config("dot.tf32_ptr_m128n32k16_sw64", "tf32", S(128, 32, 64, 128, 32, 16), precision="tf32", stages=3),
        ptr_config("dot.tf32_ptr_m64n64k32_bk", "tf32", S(64, 64, 64, 64, 64, 32), b_major="K", trans_b=True,
                   precision="tf32", stages=2),
        ptr_config("dot.tf32_ptr_amn", "tf32", S(128, 64, 64, 128, 64, 32), a_major="MN", precision="tf32",
                   stages=2),
        ptr_config("dot.tf32x3_ptr_m128n64k32", "tf32", S(128, 64, 64, 128, 64, 32), precision="tf32x3", stages=2),
        # fp8 e4m3 / e5m2: BK bytes 128/64/32
        ptr_config("dot.e4m3_ptr_m128n64k128", "e4m3", S(128, 64, 256, 128, 64, 128), stages=2),
        ptr_config("dot.e4m3_ptr_m128n64k64_sw64", "e4m3", S(128, 64, 128, 128, 64, 64), stages=3),
        ptr_config("dot.e4m3_ptr_m64n32k32_sw32", "e4m3", S(64, 32, 128, 64, 32, 32), stages=2),
        ptr_config("dot.e4m3_ptr_bk_n128", "e4m3", S(128, 128, 256, 128, 128, 128), b_major="K", trans_b=True,
                   stages=2),
        ptr_config("dot.e5m2_ptr_m128n64k128", "e5m2", S(128, 64, 256, 128, 64, 128), stages=2),
        ptr_config("dot.e5m2_ptr_amn_m64", "e5m2", S(64, 64, 128, 64, 64, 64), a_major="MN", stages=2),
        # int8 -> int32
        ptr_config("dot.i8_ptr_m128n64k64", "i8", S(128, 64, 128, 128, 64, 64), out="i32", stages=2),
        ptr_config("dot.i8_ptr_bk_k128", "i8", S(128, 128, 256, 128, 128, 128), b_major="K", trans_b=True, out="i32",
                   stages=3),
        # f16 accumulation (out_dtype=tl.float16): |sums| < 2048, integers
        ptr_config("dot.f16acc_ptr_m128n64k64", "f16", S(128, 64, 128, 128, 64, 64), acc="f16", out="f16", stages=2),
        ptr_config("dot.f16acc_ptr_m64n128k32_s3", "f16", S(64, 128, 128, 64, 128, 32), acc="f16", out="f16",
                   stages=3),
        # ---- host TMA descriptors
        tma_config("dot.f16_tma_m128n128k64_s3", "f16", S(128, 128, 256, 128, 128, 64), stages=3),
        tma_config("dot.f16_tma_m128n64k64_s1", "f16", S(128, 64, 128, 128, 64, 64), stages=1),
        tma_config("dot.f16_tma_m128n64k64_s4", "f16", S(128, 64, 256, 128, 64, 64), stages=4),
        tma_config("dot.f16_tma_amn_bk", "f16", S(128, 64, 128, 128, 64, 64), trans_a=True, trans_b=True,
                   stages=2),
        tma_config("dot.bf16_tma_m64n64k32_sw64", "bf16", S(64, 64, 128, 64, 64, 32), stages=2),
        tma_config("dot.bf16_tma_m128n32k16_sw32", "bf16", S(128, 32, 64, 128, 32, 16), trans_b=True, stages=2),
        tma_config("dot.tf32_tma_m128n64k32", "tf32", S(128, 64, 128, 128, 64, 32), precision="tf32", stages=2),
        tma_config("dot.e4m3_tma_m128n64k128_bk", "e4m3", S(128, 64, 256, 128, 64, 128), trans_b=True, stages=3),
        tma_config("dot.e5m2_tma_m128n128k64", "e5m2", S(128, 128, 128, 128, 128, 64), stages=2),
        tma_config("dot.i8_tma_m128n64k128", "i8", S(128, 64, 256, 128, 64, 128), out="i32", stages=2),
        tma_config("dot.f16acc_tma_m128n64k64", "f16", S(128, 64, 128, 128, 64, 64), acc="f16", out="f16",
                   stages=2),
        tma_config("dot.f16_tma_ws_m128n128k64", "f16", S(128, 128, 256, 128, 128, 64), trans_b=True, ws=True,
                   stages=3),
        tma_config("dot.f16_tma_grid2x2", "f16", S(256, 128, 128, 128, 64, 64), stages=2),
        # ---- persistent grids (fewer programs than tiles), warp specialisation
        persistent_config("dot.f16_persistent_tma", "f16", S(256, 128, 128, 128, 64, 64), programs=2, stages=3),
        persistent_config("dot.f16_persistent_tma_ws", "f16", S(256, 128, 128, 128, 64, 64), programs=2, ws=True,
                          stages=3),
        persistent_config("dot.f16_persistent_tma_ws_flatten", "f16", S(256, 128, 128, 128, 64, 64), programs=3,
                          ws=True, flatten=True, stages=3),
        persistent_config("dot.e4m3_persistent_tma_ws", "e4m3", S(128, 256, 256, 128, 64, 128), programs=2,
                          ws=True, stages=3),
        persistent_config("dot.f16_persistent_ptr", "f16", S(256, 128, 128, 128, 64, 64), programs=2, stages=2,
                          pointers=True),
        # ---- tl.make_tensor_descriptor (tensormaps written to global scratch by the kernel)
        device_desc_config("dot.f16_device_desc", "f16", S(128, 64, 128, 128, 64, 64), stages=2),
    ]
