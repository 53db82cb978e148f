"""Gluon kernels that issue tcgen05 operations directly (``triton.experimental.gluon``, Triton 3.9).

Gluon exposes the tcgen05 instructions one to one: ``tcgen05_mma`` (SS and TS forms, ``two_ctas``,
``mbarriers=``, ``multicast=``), ``tcgen05_mma_scaled`` (block-scaled kinds with scale factors in
Tensor Memory), ``tcgen05_copy`` (shared -> Tensor Memory), ``tcgen05_commit`` (optionally
multicast), Tensor Memory loads and stores in every ``instr_variant`` of ``get_reg_layout`` and
the reducing loads ``load_min``/``load_max`` (``tcgen05.ld.red``).  Inputs are small integers (and
power-of-two scale factors), so every product and sum is exact in f32 and the float64 numpy result
is the expected output bit for bit.  Operands are loaded with plain pointer loads into a blocked
layout and stored to shared memory (``fence_async_shared`` before the MMA reads them).
"""

from __future__ import annotations

import numpy as np
from triton._C.libtriton import ir
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (
    TensorMemoryLayout,
    TensorMemoryScalesLayout,
    allocate_tensor_memory,
    fence_async_shared,
    mbarrier,
    tcgen05_commit,
    tcgen05_copy,
    tcgen05_mma,
    tcgen05_mma_barrier_count,
    tcgen05_mma_scaled,
    tma,
)

from conformance.clients.model import Case, ClientKernel, Desc, In, Out

NAN_ALL = ir.PROPAGATE_NAN.ALL
NAN_NONE = ir.PROPAGATE_NAN.NONE


# ----------------------------------------------------------------------------------------------
# helpers (inlined by Gluon)


@gluon.jit
def _load_tile(ptr, R: gl.constexpr, C: gl.constexpr, layout: gl.constexpr):
    r = gl.arange(0, R, layout=gl.SliceLayout(1, layout))
    c = gl.arange(0, C, layout=gl.SliceLayout(0, layout))
    return gl.load(ptr + r[:, None] * C + c[None, :])


@gluon.jit
def _store_tile(ptr, value, R: gl.constexpr, C: gl.constexpr, layout: gl.constexpr):
    r = gl.arange(0, R, layout=gl.SliceLayout(1, layout))
    c = gl.arange(0, C, layout=gl.SliceLayout(0, layout))
    gl.store(ptr + r[:, None] * C + c[None, :], value)


@gluon.jit
def _to_smem(ptr, R: gl.constexpr, C: gl.constexpr, dtype: gl.constexpr):
    """A row-major [R, C] global tile in shared memory (default NVMMA swizzle for its shape)."""
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([R, C], dtype)
    return gl.allocate_shared_memory(dtype, [R, C], layout, _load_tile(ptr, R, C, blk))


@gluon.jit
def _to_smem_fp4_padded(ptr, R: gl.constexpr, C: gl.constexpr):
    """A row-major [R, C] tile of packed e2m1 pairs in the padded shared layout of kind::mxf8f6f4."""
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    layout: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=8, rank=2, fp4_padded=True)
    return gl.allocate_shared_memory(gl.uint8, [R, C], layout, _load_tile(ptr, R, C, blk))


# ----------------------------------------------------------------------------------------------
# tcgen05.mma kind::f16, A and B in shared memory (SS) or A in Tensor Memory (TS)


@gluon.jit
def mma_kernel(a_ptr, b_ptr, c0_ptr, c_ptr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr,
               KSTEP: gl.constexpr, A_KMAJOR: gl.constexpr, B_KMAJOR: gl.constexpr, A_TMEM: gl.constexpr,
               INIT_VARIANT: gl.constexpr, LD_VARIANT: gl.constexpr, BAR_MODE: gl.constexpr):
    """C = A @ B (+ C0).  A is given [M, K] (K-major) or [K, M] (M-major, a permuted view);
    B is given [N, K] (K-major, a permuted view) or [K, N] (N-major).  INIT_VARIANT "" starts from
    use_acc=False, else C0 is stored to Tensor Memory with that tcgen05.st variant first.
    BAR_MODE 0: tcgen05_commit + wait; 1: mbarriers= on each MMA (count KSTEPS)."""
    dtype: gl.constexpr = a_ptr.dtype.element_ty
    if A_TMEM:
        a_tl: gl.constexpr = TensorMemoryLayout([M, K], col_stride=1)
        a_tm = allocate_tensor_memory(dtype, [M, K], a_tl)
        a_reg: gl.constexpr = a_tm.get_reg_layout()
        a_tm.store(_load_tile(a_ptr, M, K, a_reg))
        a_view = a_tm
    elif A_KMAJOR:
        a_view = _to_smem(a_ptr, M, K, dtype)
    else:
        a_view = _to_smem(a_ptr, K, M, dtype).permute((1, 0))
    if B_KMAJOR:
        b_view = _to_smem(b_ptr, N, K, dtype).permute((1, 0))
    else:
        b_view = _to_smem(b_ptr, K, N, dtype)
    fence_async_shared()

    acc_tl: gl.constexpr = TensorMemoryLayout([M, N], col_stride=1)
    acc = allocate_tensor_memory(gl.float32, [M, N], acc_tl)
    if INIT_VARIANT != "":
        st_layout: gl.constexpr = acc.get_reg_layout(instr_variant=INIT_VARIANT)
        acc.store(_load_tile(c0_ptr, M, N, st_layout))
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    NSTEPS: gl.constexpr = K // KSTEP
    if BAR_MODE == 1:
        mbarrier.init(bar, count=NSTEPS)
    else:
        mbarrier.init(bar, count=1)
    for k in gl.static_range(NSTEPS):
        use_acc = INIT_VARIANT != "" or k > 0
        if A_TMEM:
            a_k = a_view.slice(k * KSTEP, KSTEP) if NSTEPS > 1 else a_view
        else:
            a_k = a_view.slice(k * KSTEP, KSTEP, dim=1) if NSTEPS > 1 else a_view
        b_k = b_view.slice(k * KSTEP, KSTEP, dim=0) if NSTEPS > 1 else b_view
        if BAR_MODE == 1:
            tcgen05_mma(a_k, b_k, acc, use_acc=use_acc, mbarriers=[bar])
        else:
            tcgen05_mma(a_k, b_k, acc, use_acc=use_acc)
    if BAR_MODE == 0:
        tcgen05_commit(bar)
    mbarrier.wait(bar, phase=0)
    mbarrier.invalidate(bar)
    out_layout: gl.constexpr = acc.get_reg_layout(instr_variant=LD_VARIANT)
    _store_tile(c_ptr, acc.load(out_layout), M, N, out_layout)




def _as_dtype(x: np.ndarray, dtype: str) -> np.ndarray:
    """Exact small integers as raw fp16/bf16 (bf16 as its uint16 bit pattern)."""
    if dtype == "fp16":
        return x.astype(np.float16)
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _mma_config(name, M, N, K, *, dtype="fp16", kstep=None, a_kmajor=True, b_kmajor=False, a_tmem=False,
                init="", ld="32x32b", bar_mode=0, families=("mma",), num_warps=4):
    kstep = kstep or K

    def make(rng: np.random.Generator) -> Case:
        a = rng.integers(-4, 5, (M, K))
        b = rng.integers(-4, 5, (K, N))
        c0 = rng.integers(-64, 65, (M, N)) if init else np.zeros((M, N))
        want = (a.astype(np.float64) @ b + c0).astype(np.float32)
        a_in = a if (a_kmajor or a_tmem) else a.T
        b_in = b.T if b_kmajor else b
        return Case((In(_as_dtype(np.ascontiguousarray(a_in), dtype)), In(_as_dtype(np.ascontiguousarray(b_in), dtype)),
                     In(c0.astype(np.float32)), Out("c", (M, N), np.float32)), (1, 1, 1), {"c": want})

    sig = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c0_ptr": "*fp32", "c_ptr": "*fp32"}
    const = {"M": M, "N": N, "K": K, "KSTEP": kstep, "A_KMAJOR": a_kmajor, "B_KMAJOR": b_kmajor, "A_TMEM": a_tmem,
             "INIT_VARIANT": init, "LD_VARIANT": ld, "BAR_MODE": bar_mode}
    return ClientKernel(f"gluon.{name}", "gluon", mma_kernel, {**sig, **{k: "constexpr" for k in const}}, const, make,
                        families=families, num_warps=num_warps, num_stages=1)


# ----------------------------------------------------------------------------------------------
# tcgen05.mma block-scaled kinds: scale factors in Tensor Memory (stored, or tcgen05.cp'd)


@gluon.jit
def mma_scaled_kernel(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr,
                      A_FMT: gl.constexpr, B_FMT: gl.constexpr, VEC: gl.constexpr, SCALE_COPY: gl.constexpr):
    """C = (A * SA) @ (B * SB)^T; A [M, K] and B [N, K] K-major (fp4 packed two a byte, low nibble
    first), SA [M, K/VEC], SB [N, K/VEC] scale factors."""
    a_dtype: gl.constexpr = a_ptr.dtype.element_ty
    b_dtype: gl.constexpr = b_ptr.dtype.element_ty
    s_dtype: gl.constexpr = sa_ptr.dtype.element_ty
    KA: gl.constexpr = K // 2 if A_FMT == "e2m1" else K
    KB: gl.constexpr = K // 2 if B_FMT == "e2m1" else K
    if A_FMT == B_FMT:
        a_s = _to_smem(a_ptr, M, KA, a_dtype)
        b_s = _to_smem(b_ptr, N, KB, b_dtype)
    else:                       # kind::mxf8f6f4: an fp4 operand is padded in shared memory (b4x16_p64)
        a_s = _to_smem_fp4_padded(a_ptr, M, KA) if A_FMT == "e2m1" else _to_smem(a_ptr, M, KA, a_dtype)
        b_s = _to_smem_fp4_padded(b_ptr, N, KB) if B_FMT == "e2m1" else _to_smem(b_ptr, N, KB, b_dtype)
    KS: gl.constexpr = K // VEC
    s_layout: gl.constexpr = TensorMemoryScalesLayout()
    sa_tm = allocate_tensor_memory(s_dtype, [M, KS], s_layout)
    sb_tm = allocate_tensor_memory(s_dtype, [N, KS], s_layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    phase = 0
    if SCALE_COPY:
        blk: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [gl.num_warps(), 1], [1, 0])
        # tcgen05.cp.32x128b.warpx4 source: 32 rows of 16 bytes, byte (row // 32) * 4 + k of row % 32
        gl.static_assert(M == 128 and N == 128 and KS == 4)
        ss_layout: gl.constexpr = gl.SharedLinearLayout(
            offset_bases=[[0, 1], [0, 2], [32, 0], [64, 0], [1, 0], [2, 0], [4, 0], [8, 0], [16, 0]])
        sa_s = gl.allocate_shared_memory(s_dtype, [M, KS], ss_layout, _load_tile(sa_ptr, M, KS, blk))
        sb_s = gl.allocate_shared_memory(s_dtype, [N, KS], ss_layout, _load_tile(sb_ptr, N, KS, blk))
        fence_async_shared()
        tcgen05_copy(sa_s, sa_tm)
        tcgen05_copy(sb_s, sb_tm)
    else:
        sa_tm.store(_load_tile(sa_ptr, M, KS, sa_tm.get_reg_layout()))
        sb_tm.store(_load_tile(sb_ptr, N, KS, sb_tm.get_reg_layout()))
        fence_async_shared()
    acc_tl: gl.constexpr = TensorMemoryLayout([M, N], col_stride=1)
    acc = allocate_tensor_memory(gl.float32, [M, N], acc_tl)
    tcgen05_mma_scaled(a_s, b_s.permute((1, 0)), acc, sa_tm, sb_tm, A_FMT, B_FMT, use_acc=False, mbarriers=[bar])
    mbarrier.wait(bar, phase=phase)
    mbarrier.invalidate(bar)
    out_layout: gl.constexpr = acc.get_reg_layout()
    _store_tile(c_ptr, acc.load(out_layout), M, N, out_layout)


def _fp_table(ebits: int, mbits: int, bias: int, finite_top: bool) -> np.ndarray:
    """Values of every code of a small float format (e4m3: finite_top, NaN only at S.1111.111)."""
    codes = np.arange(1 << (1 + ebits + mbits))
    sign = np.where(codes >> (ebits + mbits), -1.0, 1.0)
    e = (codes >> mbits) & ((1 << ebits) - 1)
    m = codes & ((1 << mbits) - 1)
    mag = np.where(e == 0, m / (1 << mbits) * 2.0 ** (1 - bias), (1 + m / (1 << mbits)) * 2.0 ** (e - bias))
    if finite_top:
        mag = np.where((e == (1 << ebits) - 1) & (m == (1 << mbits) - 1), np.nan, mag)
    return sign * mag


E4M3 = _fp_table(4, 3, 7, True)
E2M1 = _fp_table(2, 1, 1, False)


def _encode(values: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Codes of exactly representable values (the non-negative-sign code for 0)."""
    lookup = {}
    for code in range(len(table) - 1, -1, -1):
        if not np.isnan(table[code]):
            lookup[float(table[code])] = code
    return np.vectorize(lambda v: lookup[float(v)])(values).astype(np.uint8)


_FMT = {"e4m3": (E4M3, [-4, -3, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3, 4]),
        "e2m1": (E2M1, [-4, -3, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3, 4, 6])}
_PTR = {"e4m3": "*fp8e4nv", "e2m1": "*u8"}


def _scaled_config(name, M, N, K, a_fmt, b_fmt, *, vec=32, nvfp4=False, copy=False, families=("mma_block_scale",)):
    def operand(rng, rows, fmt):
        table, values = _FMT[fmt]
        x = rng.choice(values, (rows, K))
        codes = _encode(x, table)
        if fmt == "e2m1":
            codes = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
        return x, codes

    def scales(rng, rows):
        e = rng.integers(-2, 3, (rows, K // vec))
        if nvfp4:                                   # ue4m3: 2^e, exponent field e + 7
            return 2.0 ** e, ((e + 7) << 3).astype(np.uint8)
        return 2.0 ** e, (e + 127).astype(np.uint8)  # ue8m0

    def make(rng: np.random.Generator) -> Case:
        a, a_codes = operand(rng, M, a_fmt)
        b, b_codes = operand(rng, N, b_fmt)
        sa, sa_codes = scales(rng, M)
        sb, sb_codes = scales(rng, N)
        want = (a * np.repeat(sa, vec, axis=1)) @ (b * np.repeat(sb, vec, axis=1)).T
        return Case((In(a_codes), In(b_codes), In(sa_codes), In(sb_codes), Out("c", (M, N), np.float32)), (1, 1, 1),
                    {"c": want.astype(np.float32)})

    sig = {"a_ptr": _PTR[a_fmt], "b_ptr": _PTR[b_fmt], "sa_ptr": "*fp8e4nv" if nvfp4 else "*u8",
           "sb_ptr": "*fp8e4nv" if nvfp4 else "*u8", "c_ptr": "*fp32"}
    const = {"M": M, "N": N, "K": K, "A_FMT": a_fmt, "B_FMT": b_fmt, "VEC": vec, "SCALE_COPY": copy}
    return ClientKernel(f"gluon.{name}", "gluon", mma_scaled_kernel, {**sig, **{k: "constexpr" for k in const}}, const,
                        make, families=families, num_warps=4, num_stages=1)


# ----------------------------------------------------------------------------------------------
# tcgen05.ld.red: load_min / load_max (optionally .abs, .NaN) after a tcgen05.st


@gluon.jit
def tmem_red_kernel(x_ptr, v_ptr, r_ptr, M: gl.constexpr, N: gl.constexpr, RED_MAX: gl.constexpr,
                    ABS: gl.constexpr, NAN: gl.constexpr, VARIANT: gl.constexpr):
    """V = X through Tensor Memory; R[m] = min/max over n of X[m, n] (or |X[m, n]|).  tcgen05.ld.red
    exists on sm_103a (sm_103f family), not sm_100a."""
    dtype: gl.constexpr = x_ptr.dtype.element_ty
    t = allocate_tensor_memory(dtype, [M, N], TensorMemoryLayout([M, N], col_stride=1))
    layout: gl.constexpr = t.get_reg_layout(instr_variant=VARIANT)
    t.store(_load_tile(x_ptr, M, N, layout))
    if RED_MAX:
        vals, red = t.load_max(layout, abs=ABS, propagate_nan=NAN)
    else:
        vals, red = t.load_min(layout, abs=ABS, propagate_nan=NAN)
    _store_tile(v_ptr, vals, M, N, layout)
    lin: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    gl.store(r_ptr + gl.arange(0, M, layout=lin), gl.convert_layout(red, lin))


def _red_config(name, M, N, *, red_max, abs_=False, nan=NAN_NONE, nan_rows=0, dtype="fp32", variant="32x32b"):
    np_dtype = {"fp32": np.float32, "i32": np.int32, "u32": np.uint32}[dtype]

    def make(rng: np.random.Generator) -> Case:
        if dtype == "fp32":
            mag = rng.integers(1, 200, (M, N)) / rng.choice([1, 2, 4], (M, N))      # nonzero: no +-0 ties
            x = (mag * rng.choice([-1.0, 1.0], (M, N))).astype(np.float32)
        elif dtype == "i32":
            x = rng.integers(-(1 << 31), 1 << 31, (M, N), dtype=np.int64).astype(np.int32)
        else:
            x = rng.integers(0, 1 << 32, (M, N), dtype=np.uint64).astype(np.uint32)
        rows = rng.choice(M, nan_rows, replace=False) if nan_rows else []
        for r in rows:
            x[r, rng.choice(N, 1 + r % 3, replace=False)] = np.nan
        y = np.abs(x) if abs_ else x
        if dtype == "fp32":
            red = np.nanmax(y, axis=1) if red_max else np.nanmin(y, axis=1)
            if nan == NAN_ALL:                                   # .NaN: a NaN input gives the canonical NaN
                red = np.where(np.isnan(y).any(axis=1), np.uint32(0x7FFFFFFF).view(np.float32), red)
        else:
            red = y.max(axis=1) if red_max else y.min(axis=1)
        return Case((In(x), Out("v", (M, N), np_dtype), Out("r", (M,), np_dtype)), (1, 1, 1),
                    {"v": x, "r": red.astype(np_dtype)})

    sig = {"x_ptr": f"*{dtype}", "v_ptr": f"*{dtype}", "r_ptr": f"*{dtype}"}
    const = {"M": M, "N": N, "RED_MAX": red_max, "ABS": abs_, "NAN": nan, "VARIANT": variant}
    return ClientKernel(f"gluon.{name}", "gluon", tmem_red_kernel, {**sig, **{k: "constexpr" for k in const}}, const,
                        make, families=("tmem_ld_red", "tmem"), num_warps=4, num_stages=1, arch=103)


# ----------------------------------------------------------------------------------------------
# cta_group::2: a CTA pair computes one [M, N] tile; A split along M, B along N (num_ctas=2)


@gluon.jit
def mma_2cta_kernel(a_ptr, b_ptr, c_ptr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr,
                    B_KMAJOR: gl.constexpr, COMMIT: gl.constexpr):
    """C = A @ B on a CTA pair: CTA r holds rows [r M/2, (r+1) M/2) of A and C, and half of B's N.
    COMMIT: tcgen05_commit (cta_group::2 multicast to the pair) instead of mbarriers=."""
    dtype: gl.constexpr = a_ptr.dtype.element_ty
    a_blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0], cga_layout=[[1, 0]])
    a_sl: gl.constexpr = gl.NVMMASharedLayout.get_default_for([M, K], dtype, cga_layout=[[1, 0]])
    a_s = gl.allocate_shared_memory(dtype, [M, K], a_sl, _load_tile(a_ptr, M, K, a_blk))
    if B_KMAJOR:
        b_blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0], cga_layout=[[1, 0]])
        b_sl: gl.constexpr = gl.NVMMASharedLayout.get_default_for([N, K], dtype, cga_layout=[[1, 0]])
        b_view = gl.allocate_shared_memory(dtype, [N, K], b_sl, _load_tile(b_ptr, N, K, b_blk)).permute((1, 0))
    else:
        b_blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0], cga_layout=[[0, 1]])
        b_sl: gl.constexpr = gl.NVMMASharedLayout.get_default_for([K, N], dtype, cga_layout=[[0, 1]])
        b_view = gl.allocate_shared_memory(dtype, [K, N], b_sl, _load_tile(b_ptr, K, N, b_blk))
    fence_async_shared()
    gl.barrier(cluster=True)              # the peer's operands are written before the lead CTA's MMA
    acc_tl: gl.constexpr = TensorMemoryLayout(block=(M // 2, N), col_stride=1, cga_layout=[[1, 0]], two_ctas=True)
    acc = allocate_tensor_memory(gl.float32, [M, N], acc_tl)
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    gl.barrier(cluster=True)
    if COMMIT:
        tcgen05_mma(a_s, b_view, acc, use_acc=False)
        tcgen05_commit(bar)
    else:
        tcgen05_mma(a_s, b_view, acc, use_acc=False, mbarriers=[bar])
    mbarrier.wait(bar, phase=0)
    out_layout: gl.constexpr = acc.get_reg_layout()
    _store_tile(c_ptr, acc.load(out_layout), M, N, out_layout)


def _mma_2cta_config(name, M, N, K, *, dtype="fp16", b_kmajor=False, commit=False):
    def make(rng: np.random.Generator) -> Case:
        a = rng.integers(-4, 5, (M, K))
        b = rng.integers(-4, 5, (K, N))
        want = (a.astype(np.float64) @ b).astype(np.float32)
        b_in = np.ascontiguousarray(b.T) if b_kmajor else b
        return Case((In(_as_dtype(a, dtype)), In(_as_dtype(b_in, dtype)), Out("c", (M, N), np.float32)), (1, 1, 1),
                    {"c": want})

    sig = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": "*fp32"}
    const = {"M": M, "N": N, "K": K, "B_KMAJOR": b_kmajor, "COMMIT": commit}
    return ClientKernel(f"gluon.{name}", "gluon", mma_2cta_kernel, {**sig, **{k: "constexpr" for k in const}}, const,
                        make, families=("mma_cta_pair", "mma"), num_warps=4, num_stages=1, num_ctas=2)


# ----------------------------------------------------------------------------------------------
# multicast commits: two CTAs (cta_group::1 each) share A; the commit arrives on both CTAs' barriers


@gluon.jit
def mma_multicast_kernel(a_ptr, b_ptr, c_ptr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr,
                         VIA_MMA: gl.constexpr):
    """C = A @ B on a cluster of 2: each CTA computes [M, N/2] from the (broadcast) A and its half
    of B.  The MMA completion is multicast (tcgen05_commit(descs=...) or tcgen05_mma(multicast=True,
    mbarriers=...)) to both CTAs, whose barriers each expect two arrivals."""
    dtype: gl.constexpr = a_ptr.dtype.element_ty
    a_blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0], cga_layout=[[0, 0]])
    a_sl: gl.constexpr = gl.NVMMASharedLayout.get_default_for([M, K], dtype, cga_layout=[[0, 0]])
    a_s = gl.allocate_shared_memory(dtype, [M, K], a_sl, _load_tile(a_ptr, M, K, a_blk))
    b_blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0], cga_layout=[[0, 1]])
    b_sl: gl.constexpr = gl.NVMMASharedLayout.get_default_for([K, N], dtype, cga_layout=[[0, 1]])
    b_s = gl.allocate_shared_memory(dtype, [K, N], b_sl, _load_tile(b_ptr, K, N, b_blk))
    fence_async_shared()
    acc_tl: gl.constexpr = TensorMemoryLayout(block=(M, N // 2), col_stride=1, cga_layout=[[0, 1]])
    acc = allocate_tensor_memory(gl.float32, [M, N], acc_tl)
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=tcgen05_mma_barrier_count([a_s, b_s], True, False))
    gl.barrier(cluster=True)              # both barriers initialised before any commit arrives
    if VIA_MMA:
        tcgen05_mma(a_s, b_s, acc, use_acc=False, multicast=True, mbarriers=[bar])
    else:
        tcgen05_mma(a_s, b_s, acc, use_acc=False)
        tcgen05_commit(bar, descs=[a_s, b_s])
    mbarrier.wait(bar, phase=0)
    out_layout: gl.constexpr = acc.get_reg_layout()
    _store_tile(c_ptr, acc.load(out_layout), M, N, out_layout)
    gl.barrier(cluster=True)              # no CTA exits while its peer's commit may still arrive


def _multicast_config(name, M, N, K, *, via_mma=False):
    def make(rng: np.random.Generator) -> Case:
        a = rng.integers(-4, 5, (M, K))
        b = rng.integers(-4, 5, (K, N))
        return Case((In(a.astype(np.float16)), In(b.astype(np.float16)), Out("c", (M, N), np.float32)), (1, 1, 1),
                    {"c": (a.astype(np.float64) @ b).astype(np.float32)})

    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"}
    const = {"M": M, "N": N, "K": K, "VIA_MMA": via_mma}
    return ClientKernel(f"gluon.{name}", "gluon", mma_multicast_kernel, {**sig, **{k: "constexpr" for k in const}},
                        const, make, families=("commit_multicast", "mma"), num_warps=4, num_stages=1, num_ctas=2)


# ----------------------------------------------------------------------------------------------
# TMA operands: cp.async.bulk.tensor into NVMMA-swizzled tiles, K loop with phase-tracked barriers


@gluon.jit
def mma_tma_kernel(a_desc, b_desc, c_ptr, NUM_K: gl.constexpr):
    """C = A @ B with A [M, NUM_K * BK] and B [NUM_K * BK, N] loaded tile by tile with TMA."""
    BM: gl.constexpr = a_desc.block_shape[0]
    BK: gl.constexpr = a_desc.block_shape[1]
    BN: gl.constexpr = b_desc.block_shape[1]
    a_s = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_shape, a_desc.layout)
    b_s = gl.allocate_shared_memory(b_desc.dtype, b_desc.block_shape, b_desc.layout)
    tma_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mma_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(tma_bar, count=1)
    mbarrier.init(mma_bar, count=1)
    acc = allocate_tensor_memory(gl.float32, [BM, BN], TensorMemoryLayout([BM, BN], col_stride=1))
    phase = 0
    for k in gl.static_range(NUM_K):
        mbarrier.expect(tma_bar, a_desc.nbytes_per_cta + b_desc.nbytes_per_cta)
        tma.async_load(a_desc, [0, k * BK], tma_bar, a_s)
        tma.async_load(b_desc, [k * BK, 0], tma_bar, b_s)
        mbarrier.wait(tma_bar, phase=phase)
        tcgen05_mma(a_s, b_s, acc, use_acc=k > 0, mbarriers=[mma_bar])
        mbarrier.wait(mma_bar, phase=phase)
        phase ^= 1
    out_layout: gl.constexpr = acc.get_reg_layout()
    _store_tile(c_ptr, acc.load(out_layout), BM, BN, out_layout)


def _tma_config(name, M, N, BK, num_k, *, dtype="fp16"):
    K = BK * num_k
    gl_dtype = gl.float16 if dtype == "fp16" else gl.bfloat16
    a_layout = gl.NVMMASharedLayout.get_default_for([M, BK], gl_dtype)
    b_layout = gl.NVMMASharedLayout.get_default_for([BK, N], gl_dtype)

    def make(rng: np.random.Generator) -> Case:
        a = rng.integers(-4, 5, (M, K))
        b = rng.integers(-4, 5, (K, N))
        return Case((Desc((M, BK), data=_as_dtype(a, dtype)), Desc((BK, N), data=_as_dtype(b, dtype)),
                     Out("c", (M, N), np.float32)), (1, 1, 1), {"c": (a.astype(np.float64) @ b).astype(np.float32)})

    sig = {"a_desc": f"tensordesc<{dtype}[{M},{BK}],{a_layout!r}>", "b_desc": f"tensordesc<{dtype}[{BK},{N}],{b_layout!r}>",
           "c_ptr": "*fp32", "NUM_K": "constexpr"}
    return ClientKernel(f"gluon.{name}", "gluon", mma_tma_kernel, sig, {"NUM_K": num_k}, make,
                        families=("mma", "tma"), num_warps=4, num_stages=1)


# ----------------------------------------------------------------------------------------------
# Tensor Memory views: a two-buffer allocation (.index), N-halves of B (.slice of shared memory),
# column slices of the accumulator read back piecewise; f16 accumulator (unpacked, col_stride 2)


@gluon.jit
def mma_tmem_views_kernel(a_ptr, b_ptr, c_ptr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr,
                          ACC_F16: gl.constexpr, PIECE: gl.constexpr):
    """C[:, h N/2 : (h+1) N/2] = A @ B[:, h N/2 : ...] into buffer h of a [2, M, N/2] allocation,
    read back PIECE columns at a time through .slice."""
    dtype: gl.constexpr = a_ptr.dtype.element_ty
    acc_dtype: gl.constexpr = gl.float16 if ACC_F16 else gl.float32
    a_s = _to_smem(a_ptr, M, K, dtype)
    b_s = _to_smem(b_ptr, K, N, dtype)
    fence_async_shared()
    HALF: gl.constexpr = N // 2
    acc_tl: gl.constexpr = TensorMemoryLayout([M, HALF], col_stride=2 if ACC_F16 else 1)
    bufs = allocate_tensor_memory(acc_dtype, [2, M, HALF], acc_tl)
    bar = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    for h in gl.static_range(2):
        mbarrier.init(bar.index(h), count=1)
    for h in gl.static_range(2):
        tcgen05_mma(a_s, b_s.slice(h * HALF, HALF, dim=1), bufs.index(h), use_acc=False, mbarriers=[bar.index(h)])
    layout: gl.constexpr = bufs.index(0).slice(0, PIECE).get_reg_layout()
    for h in gl.static_range(2):
        mbarrier.wait(bar.index(h), phase=0)
        for p in gl.static_range(HALF // PIECE):
            piece = bufs.index(h).slice(p * PIECE, PIECE)
            r = gl.arange(0, M, layout=gl.SliceLayout(1, layout))
            c = gl.arange(0, PIECE, layout=gl.SliceLayout(0, layout))
            gl.store(c_ptr + r[:, None] * N + (h * HALF + p * PIECE + c[None, :]), piece.load(layout))


def _views_config(name, M, N, K, *, acc_f16=False, piece=16):
    out = np.float16 if acc_f16 else np.float32

    def make(rng: np.random.Generator) -> Case:
        a = rng.integers(-4, 5, (M, K))
        b = rng.integers(-4, 5, (K, N))
        return Case((In(a.astype(np.float16)), In(b.astype(np.float16)), Out("c", (M, N), out)), (1, 1, 1),
                    {"c": (a.astype(np.float64) @ b).astype(out)})

    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16" if acc_f16 else "*fp32"}
    const = {"M": M, "N": N, "K": K, "ACC_F16": acc_f16, "PIECE": piece}
    return ClientKernel(f"gluon.{name}", "gluon", mma_tmem_views_kernel, {**sig, **{k: "constexpr" for k in const}},
                        const, make, families=("mma", "tmem"), num_warps=4, num_stages=1)


@gluon.jit
def mma_scaled_2cta_kernel(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M: gl.constexpr, N: gl.constexpr,
                           K: gl.constexpr, SB_CGA: gl.constexpr):
    """mxf8 e4m3 x e4m3 on a CTA pair (cta_group::2): A, C and SA split along M; B along N; SB laid
    out by SB_CGA (every CTA holds all N rows of SB when it is [[0, 0]])."""
    dtype: gl.constexpr = a_ptr.dtype.element_ty
    KS: gl.constexpr = K // 32
    a_blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0], cga_layout=[[1, 0]])
    a_sl: gl.constexpr = gl.NVMMASharedLayout.get_default_for([M, K], dtype, cga_layout=[[1, 0]])
    a_s = gl.allocate_shared_memory(dtype, [M, K], a_sl, _load_tile(a_ptr, M, K, a_blk))
    b_sl: gl.constexpr = gl.NVMMASharedLayout.get_default_for([N, K], dtype, cga_layout=[[1, 0]])
    b_s = gl.allocate_shared_memory(dtype, [N, K], b_sl, _load_tile(b_ptr, N, K, a_blk))
    fence_async_shared()
    sa_tm = allocate_tensor_memory(gl.uint8, [M, KS], TensorMemoryScalesLayout(cga_layout=[[1, 0]]))
    sb_tm = allocate_tensor_memory(gl.uint8, [N, KS], TensorMemoryScalesLayout(cga_layout=SB_CGA))
    sa_layout: gl.constexpr = sa_tm.get_reg_layout()
    sb_layout: gl.constexpr = sb_tm.get_reg_layout()
    sa_tm.store(_load_tile(sa_ptr, M, KS, sa_layout))
    sb_tm.store(_load_tile(sb_ptr, N, KS, sb_layout))
    acc_tl: gl.constexpr = TensorMemoryLayout(block=(M // 2, N), col_stride=1, cga_layout=[[1, 0]], two_ctas=True)
    acc = allocate_tensor_memory(gl.float32, [M, N], acc_tl)
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    gl.barrier(cluster=True)
    tcgen05_mma_scaled(a_s, b_s.permute((1, 0)), acc, sa_tm, sb_tm, "e4m3", "e4m3", use_acc=False, mbarriers=[bar])
    mbarrier.wait(bar, phase=0)
    out_layout: gl.constexpr = acc.get_reg_layout()
    _store_tile(c_ptr, acc.load(out_layout), M, N, out_layout)


def _scaled_2cta_config(name, M, N, K, sb_cga):
    def make(rng: np.random.Generator) -> Case:
        table, values = _FMT["e4m3"]
        a, b = rng.choice(values, (M, K)), rng.choice(values, (N, K))
        ea, eb = rng.integers(-2, 3, (M, K // 32)), rng.integers(-2, 3, (N, K // 32))
        want = (a * np.repeat(2.0 ** ea, 32, axis=1)) @ (b * np.repeat(2.0 ** eb, 32, axis=1)).T
        return Case((In(_encode(a, table)), In(_encode(b, table)), In((ea + 127).astype(np.uint8)),
                     In((eb + 127).astype(np.uint8)), Out("c", (M, N), np.float32)), (1, 1, 1),
                    {"c": want.astype(np.float32)})

    sig = {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "sa_ptr": "*u8", "sb_ptr": "*u8", "c_ptr": "*fp32"}
    const = {"M": M, "N": N, "K": K, "SB_CGA": sb_cga}
    return ClientKernel(f"gluon.{name}", "gluon", mma_scaled_2cta_kernel, {**sig, **{k: "constexpr" for k in const}},
                        const, make, families=("mma_block_scale", "mma_cta_pair"), num_warps=4, num_stages=1,
                        num_ctas=2)


def configs() -> list[ClientKernel]:
    return [
        _mma_config("mma_ss_f16_m128n64k32", 128, 64, 32),
        _mma_config("mma_ss_bf16_m128n256k64_bk", 128, 256, 64, dtype="bf16", b_kmajor=True, kstep=32),
        _mma_config("mma_ss_f16_m64n16k32_amn", 64, 16, 32, a_kmajor=False),
        _mma_config("mma_ss_f16_m128n128k32_ld16x128b", 128, 128, 32, ld="16x128b", init="16x128b", families=("mma", "tmem")),
        _mma_config("mma_ss_f16_m128n64k16_ld16x256b", 128, 64, 16, ld="16x256b", init="16x64b", families=("mma", "tmem")),
        _mma_config("mma_ss_f16_m128n64k32_splitn", 128, 64, 32, ld="32x32b_splitn", init="16x256b", families=("mma", "tmem")),
        _mma_config("mma_ss_f16_m64n64k32_init", 64, 64, 32, b_kmajor=True, ld="16x128b", init="32x32b", families=("mma", "tmem")),
        _mma_config("mma_ss_f16_m64n256k16_ld16x256b", 64, 256, 16, ld="16x256b", init="16x64b", families=("mma", "tmem")),
        _mma_config("mma_ss_f16_m64n128k64_amn_bk", 64, 128, 64, a_kmajor=False, b_kmajor=True, ld="16x64b"),
        _mma_config("mma_ss_bf16_m128n32k128_amn", 128, 32, 128, dtype="bf16", a_kmajor=False, bar_mode=1, kstep=64),
        _mma_config("mma_ts_f16_m128n64k32", 128, 64, 32, a_tmem=True, families=("mma", "tmem")),
        _mma_config("mma_ts_bf16_m128n128k64_bk", 128, 128, 64, dtype="bf16", a_tmem=True, b_kmajor=True, kstep=32,
                    bar_mode=1, init="16x256b", families=("mma", "tmem")),
        _mma_config("mma_ts_f16_m64n32k32", 64, 32, 32, a_tmem=True, families=("mma", "tmem")),
        _views_config("mma_tmem_index_slice_m128n128k32", 128, 128, 32),
        _views_config("mma_f16acc_index_slice_m128n64k32", 128, 64, 32, acc_f16=True, piece=8),
        _views_config("mma_tmem_index_slice_m64n64k16", 64, 64, 16, piece=32),
        _mma_2cta_config("mma_2cta_f16_m256n128k32", 256, 128, 32),
        _mma_2cta_config("mma_2cta_bf16_m256n64k64_bk", 256, 64, 64, dtype="bf16", b_kmajor=True, commit=True),
        _mma_2cta_config("mma_2cta_f16_m128n64k32", 128, 64, 32),
        _multicast_config("commit_multicast_descs_m128n128k32", 128, 128, 32),
        _multicast_config("mma_multicast_mbarriers_m128n64k32", 128, 64, 32, via_mma=True),
        _scaled_config("mma_scaled_mxf8_e4m3_m128n128k64", 128, 128, 64, "e4m3", "e4m3"),
        _scaled_config("mma_scaled_mxf4_e2m1_m128n64k128", 128, 64, 128, "e2m1", "e2m1"),
        _scaled_config("mma_scaled_nvf4_e2m1_m128n64k64", 128, 64, 64, "e2m1", "e2m1", vec=16, nvfp4=True),
        _scaled_config("mma_scaled_mixed_e4m3_e2m1_m128n64k128", 128, 64, 128, "e4m3", "e2m1"),
        _scaled_config("mma_scaled_mixed_e2m1_e4m3_m128n128k128", 128, 128, 128, "e2m1", "e4m3"),
        _scaled_config("mma_scaled_mxf8_copy_m128n128k128", 128, 128, 128, "e4m3", "e4m3", copy=True,
                       families=("mma_block_scale", "tcgen05_cp")),
        # SB broadcast to both CTAs of the pair ([[0, 0]]); a split SB ([[1, 0]]) is accepted by Gluon but
        # leaves half of N without scale factors in the issuing CTA (docs/clients-findings-gluon.md, G3)
        _scaled_2cta_config("mma_scaled_2cta_mxf8_m256n128k64", 256, 128, 64, [[0, 0]]),
        _red_config("ld_red_min_f32_m128n64", 128, 64, red_max=False),
        _red_config("ld_red_max_abs_f32_m128n32", 128, 32, red_max=True, abs_=True),
        _red_config("ld_red_min_nan_f32_m128n64", 128, 64, red_max=False, nan=NAN_ALL, nan_rows=20),
        _red_config("ld_red_max_abs_nan_f32_m128n16", 128, 16, red_max=True, abs_=True, nan=NAN_ALL, nan_rows=9),
        _red_config("ld_red_max_nonan_f32_m128n64", 128, 64, red_max=True, nan_rows=30),
        _tma_config("mma_tma_f16_m128n128k128", 128, 128, 64, 2),
        _tma_config("mma_tma_bf16_m128n64k96", 128, 64, 32, 3, dtype="bf16"),
    ]
