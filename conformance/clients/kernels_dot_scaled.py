"""``tl.dot_scaled`` kernels: Triton's block-scaled tcgen05 MMAs (mxfp8, mxf4, nvfp4, mixed mxf8f6f4).

A is ``[M, K]`` (e2m1: ``[M, K/2]`` bytes, two elements per byte, the first in the low nibble,
packed along K); B is ``[K, N]`` (``[K/2, N]``) or, ``b_kmajor``, stored ``[N, K]`` (``[N, K/2]``)
and transposed in the kernel (``.T``), as tutorials/10-block-scaled-matmul does.  Scales are
``[M, K/SB]`` and ``[N, K/SB]`` (never transposed, per the ``tl.dot_scaled`` docstring): e8m0 codes
(uint8) with SB = 32, or e4m3 with SB = 16 (nvfp4).

Exact by construction: element values are small (e2m1: 0, ±0.5 .. ±3; fp8: integers -3..3), scales
are powers of two (e8m0 codes 126..128, e4m3 0.5/1/2), so every product and partial sum is exact
in the fp32 accumulator.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
import triton
import triton.language as tl

from conformance.clients.kernels_dot import Shape
from conformance.clients.model import Case, ClientKernel, Desc, In, Out, Scalar


@triton.jit
def dot_scaled_ptr_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, N, K, stride_a, stride_b, stride_s, stride_c,
                          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, A_FMT: tl.constexpr,
                          B_FMT: tl.constexpr, SB: tl.constexpr, B_KMAJOR: tl.constexpr):
    A_PACK: tl.constexpr = 2 if A_FMT == "e2m1" else 1
    B_PACK: tl.constexpr = 2 if B_FMT == "e2m1" else 1
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_ka = tl.arange(0, BK // A_PACK)
    offs_kb = tl.arange(0, BK // B_PACK)
    offs_ks = tl.arange(0, BK // SB)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + offs_m[:, None] * stride_a + (k // A_PACK + offs_ka)[None, :])
        if B_KMAJOR:
            b = tl.load(b_ptr + offs_n[:, None] * stride_b + (k // B_PACK + offs_kb)[None, :]).T
        else:
            b = tl.load(b_ptr + (k // B_PACK + offs_kb)[:, None] * stride_b + offs_n[None, :])
        sa = tl.load(sa_ptr + offs_m[:, None] * stride_s + (k // SB + offs_ks)[None, :])
        sb = tl.load(sb_ptr + offs_n[:, None] * stride_s + (k // SB + offs_ks)[None, :])
        acc = tl.dot_scaled(a, sa, A_FMT, b, sb, B_FMT, acc)
    tl.store(c_ptr + offs_m[:, None] * stride_c + offs_n[None, :], acc)


@triton.jit
def dot_scaled_tma_kernel(a_desc, sa_ptr, b_desc, sb_ptr, c_desc, K, stride_s, BM: tl.constexpr, BN: tl.constexpr,
                          BK: tl.constexpr, A_FMT: tl.constexpr, B_FMT: tl.constexpr, SB: tl.constexpr):
    """A [M, K] and B [N, K] (K-major, packed bytes for e2m1) through host TMA descriptors; scales by pointer."""
    A_PACK: tl.constexpr = 2 if A_FMT == "e2m1" else 1
    B_PACK: tl.constexpr = 2 if B_FMT == "e2m1" else 1
    off_m = tl.program_id(0) * BM
    off_n = tl.program_id(1) * BN
    offs_m = off_m + tl.arange(0, BM)
    offs_n = off_n + tl.arange(0, BN)
    offs_ks = tl.arange(0, BK // SB)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK):
        a = a_desc.load([off_m, k // A_PACK])
        b = b_desc.load([off_n, k // B_PACK])
        sa = tl.load(sa_ptr + offs_m[:, None] * stride_s + (k // SB + offs_ks)[None, :])
        sb = tl.load(sb_ptr + offs_n[:, None] * stride_s + (k // SB + offs_ks)[None, :])
        acc = tl.dot_scaled(a, sa, A_FMT, b.T, sb, B_FMT, acc)
    c_desc.store([off_m, off_n], acc)


# ----------------------------------------------------------------------------------------------------

#: element format -> (values to draw from, encoder to codes, Triton pointer type, elements per byte)
_E2M1_VALUES = np.array([0, 0.5, 1, 1.5, 2, 3, -0.5, -1, -1.5, -2, -3])
_INT_VALUES = np.arange(-3, 4, dtype=np.float64)


@dataclass(frozen=True)
class Fmt:
    values: np.ndarray
    kind: object
    ptr: str
    pack: int


FORMATS = {"e4m3": Fmt(_INT_VALUES, ml_dtypes.float8_e4m3fn, "fp8e4nv", 1),
           "e5m2": Fmt(_INT_VALUES, ml_dtypes.float8_e5m2, "fp8e5", 1),
           "e2m1": Fmt(_E2M1_VALUES, ml_dtypes.float4_e2m1fn, "u8", 2)}


def _codes(fmt: Fmt, x: np.ndarray) -> np.ndarray:
    """Element codes, packed two per byte along the last axis for e2m1 (first element in the low nibble)."""
    codes = x.astype(fmt.kind).view(np.uint8)
    if fmt.pack == 1:
        return codes
    codes = codes & 0xF
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)


def _scales(rng, shape, nvfp4: bool):
    """(codes, values): e8m0 codes 126..128 (0.5, 1, 2), or e4m3 0.5/1/2 for nvfp4."""
    values = 2.0 ** rng.integers(-1, 2, shape)
    if nvfp4:
        return values.astype(ml_dtypes.float8_e4m3fn).view(np.uint8), values
    return (np.log2(values) + 127).astype(np.uint8), values


def scaled_config(name: str, a_fmt: str, b_fmt: str, s: Shape, *, nvfp4=False, b_kmajor=False, tma=False,
                  stages=3, warps=4) -> ClientKernel:
    fa, fb = FORMATS[a_fmt], FORMATS[b_fmt]
    sb = 16 if nvfp4 else 32
    scale_ptr = "fp8e4nv" if nvfp4 else "u8"
    if tma:
        sig = {"a_desc": f"tensordesc<{fa.ptr}[{s.BM}, {s.BK // fa.pack}]>", "sa_ptr": f"*{scale_ptr}",
               "b_desc": f"tensordesc<{fb.ptr}[{s.BN}, {s.BK // fb.pack}]>", "sb_ptr": f"*{scale_ptr}",
               "c_desc": f"tensordesc<fp32[{s.BM}, {s.BN}]>", "K": "i32", "stride_s": "i32"}
        fn, divisible = dot_scaled_tma_kernel, ("sa_ptr", "sb_ptr", "K")
        b_kmajor = True
    else:
        sig = {"a_ptr": f"*{fa.ptr}", "sa_ptr": f"*{scale_ptr}", "b_ptr": f"*{fb.ptr}", "sb_ptr": f"*{scale_ptr}",
               "c_ptr": "*fp32", "N": "i32", "K": "i32", "stride_a": "i32", "stride_b": "i32", "stride_s": "i32",
               "stride_c": "i32"}
        fn, divisible = dot_scaled_ptr_kernel, ("a_ptr", "sa_ptr", "b_ptr", "sb_ptr", "c_ptr", "N", "K", "stride_a",
                                               "stride_b", "stride_c")
    constexprs = dict(BM=s.BM, BN=s.BN, BK=s.BK, A_FMT=a_fmt, B_FMT=b_fmt, SB=sb)
    if not tma:
        constexprs["B_KMAJOR"] = b_kmajor

    def make(rng: np.random.Generator) -> Case:
        a = rng.choice(fa.values, (s.M, s.K))
        b = rng.choice(fb.values, (s.K, s.N))
        sa_codes, sa = _scales(rng, (s.M, s.K // sb), nvfp4)
        sb_codes, sbv = _scales(rng, (s.N, s.K // sb), nvfp4)
        want = (a * np.repeat(sa, sb, axis=1)) @ (b * np.repeat(sbv, sb, axis=1).T)
        a_mem = _codes(fa, a)
        b_mem = _codes(fb, b.T) if b_kmajor else _codes(fb, b.T).T if fb.pack == 2 else _codes(fb, b)
        b_mem = np.ascontiguousarray(b_mem)
        c = Out("c", (s.M, s.N), np.float32)
        grid = (s.M // s.BM, s.N // s.BN, 1)
        if tma:
            args = (Desc((s.BM, s.BK // fa.pack), data=a_mem), In(sa_codes),
                    Desc((s.BN, s.BK // fb.pack), data=b_mem), In(sb_codes), Desc((s.BM, s.BN), out=c),
                    Scalar(s.K), Scalar(s.K // sb))
        else:
            args = (In(a_mem), In(sa_codes), In(b_mem), In(sb_codes), c, Scalar(s.N), Scalar(s.K),
                    Scalar(s.K // fa.pack), Scalar(b_mem.shape[1]), Scalar(s.K // sb), Scalar(s.N))
        return Case(args, grid, {"c": want.astype(np.float32)})

    divisible = tuple(d for d in divisible if d != "stride_s")
    families = ("mma_block_scale", "tma" if tma else "tmem", "pipeline")
    return ClientKernel(name, "triton", fn, sig, constexprs, make, families, num_warps=warps, num_stages=stages,
                        divisible=divisible)


def configs() -> list[ClientKernel]:
    S = Shape
    return [
        # mxfp8: e4m3/e5m2 elements, e8m0 scales per 32
        scaled_config("dot_scaled.mxfp8_e4m3_ptr_m128n128k128", "e4m3", "e4m3", S(128, 128, 256, 128, 128, 128),
                      b_kmajor=True, stages=2),
        scaled_config("dot_scaled.mxfp8_e5m2_ptr_m128n64k128", "e5m2", "e5m2", S(128, 64, 256, 128, 64, 128),
                      b_kmajor=True, stages=3),
        scaled_config("dot_scaled.mxfp8_e4m3_e5m2_ptr_bmn", "e4m3", "e5m2", S(128, 64, 128, 128, 64, 128), stages=2),
        scaled_config("dot_scaled.mxfp8_e4m3_ptr_m128n64k64_s1", "e4m3", "e4m3", S(128, 64, 128, 128, 64, 64),
                      b_kmajor=True, stages=1),
        scaled_config("dot_scaled.mxfp8_e4m3_tma_m128n128k128", "e4m3", "e4m3", S(128, 128, 256, 128, 128, 128),
                      tma=True, stages=3),
        # mxf4: e2m1 both sides, e8m0 scales per 32
        scaled_config("dot_scaled.mxf4_ptr_m128n128k128", "e2m1", "e2m1", S(128, 128, 256, 128, 128, 128),
                      b_kmajor=True, stages=2),
        scaled_config("dot_scaled.mxf4_ptr_m128n64k256_s3", "e2m1", "e2m1", S(128, 64, 512, 128, 64, 256),
                      b_kmajor=True, stages=3),
        scaled_config("dot_scaled.mxf4_tma_m128n128k256", "e2m1", "e2m1", S(128, 128, 512, 128, 128, 256), tma=True,
                      stages=2),
        # mixed (kind::mxf8f6f4): e4m3 x e2m1
        scaled_config("dot_scaled.mixed_e4m3_e2m1_ptr", "e4m3", "e2m1", S(128, 128, 256, 128, 128, 128),
                      b_kmajor=True, stages=2),
        # nvfp4: e2m1 with e4m3 scales per 16
        scaled_config("dot_scaled.nvfp4_ptr_m128n128k128", "e2m1", "e2m1", S(128, 128, 256, 128, 128, 128),
                      nvfp4=True, b_kmajor=True, stages=2),
        scaled_config("dot_scaled.nvfp4_tma_m128n64k256", "e2m1", "e2m1", S(128, 64, 512, 128, 64, 256),
                      nvfp4=True, tma=True, stages=3),
    ]
