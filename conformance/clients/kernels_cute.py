"""CuTe kernels (CUTLASS 4.2.0.0, the second real client): one-CTA GEMM tiles from CuTe's SM100 UMMA atoms.

Each configuration instantiates ``cts::gemm_1sm<Cfg>`` (``cute/gemm_1sm.cuh``, this project's own
kernel code over CuTe's public API) with one MMA atom (``SM100_MMA_{F16BF16,TF32,S8,F8F6F4}_{SS,TS}``,
``cute/arch/mma_sm100_umma.hpp``), the shared-memory layout atoms of A and B (``UMMA::Layout_{K,MN}_
{INTER,SW32,SW64,SW128}_Atom`` and ``Layout_MN_SW128_32B_Atom``, ``cute/atom/mma_traits_sm100.hpp``)
and a TMEM load atom for the epilogue (``SM100_TMEM_LOAD_*``, ``cute/arch/copy_sm100.hpp``); the TS
form writes A to Tensor Memory with a ``SM100_TMEM_STORE_*`` atom.  CuTe builds every descriptor
(instruction, shared memory), every swizzled address and every TMEM address; nvcc compiles the family
to one sm_100a PTX module.  Inputs are small integers, so the float64 numpy product is exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conformance.clients.cute_build import CUTLASS_PIN as CUTLASS_VERSION
from conformance.clients.cute_build import CuteProgram
from conformance.clients.model import Case, ClientKernel, In, Out

#: element format -> (CuTe type, accumulator CuTe type, output numpy dtype, PTX-ish signature type)
CUTE_TYPES = {"f16": "cutlass::half_t", "bf16": "cutlass::bfloat16_t", "tf32": "cutlass::tfloat32_t",
              "s8": "int8_t", "u8": "uint8_t", "e4m3": "cutlass::float_e4m3_t", "e5m2": "cutlass::float_e5m2_t",
              "e2m1": "cutlass::float_e2m1_t"}
#: CuTe scale-factor element types of the block-scaled kernels
CUTE_SF_TYPES = {"ue8m0": "cutlass::float_ue8m0_t", "ue4m3": "cutlass::float_ue4m3_t"}
_ATOM_KIND = {"f16": "F16BF16", "bf16": "F16BF16", "tf32": "TF32", "s8": "S8", "u8": "S8", "e4m3": "F8F6F4",
              "e5m2": "F8F6F4"}
#: values every element format holds exactly (kept small: K-long sums stay exact in f32 and s32)
_VALUES = {"u8": np.arange(0, 4)}
_SIGNED = np.arange(-3, 4)


def codes(fmt: str, x: np.ndarray) -> np.ndarray:
    """Raw element codes of exactly representable values (e2m1 packed two a byte, low nibble first)."""
    from reference.formats import encode

    c = encode(fmt, x.astype(np.float64))
    if fmt == "e2m1":
        c = (c[..., 0::2] & 0xF) | ((c[..., 1::2] & 0xF) << 4)
        return c.astype(np.uint8)
    return c


class _CuteEntry:
    """The ``extern "C"`` entry name of a corpus configuration: ``cute_`` + its name, dots as underscores."""

    name: str

    @property
    def entry(self) -> str:
        return "cute_" + self.name.replace(".", "_")


@dataclass(frozen=True)
class Gemm(_CuteEntry):
    """One ``gemm_1sm`` configuration: C[M,N] = A[M,K] B[N,K]^T."""

    name: str
    ta: str
    tb: str
    m: int
    n: int
    k: int
    ma: str = "K"                # "K" | "MN"
    mb: str = "K"
    swa: str = "SW128"           # INTER | SW32 | SW64 | SW128 | SW128_32B (MN only)
    swb: str = "SW128"
    load: str = "32dp32b8x"      # SM100_TMEM_LOAD_<load>
    ts: bool = False             # A in Tensor Memory
    store: str = "32dp32b8x"     # SM100_TMEM_STORE_<store> (TS: writes A)
    pair: bool = False           # cta_group::2 (the 2x1SM atom, a cluster of 2 CTAs; gemm_2sm)
    acc16: bool = False          # f16 accumulator (read with a _16b TMEM load atom)
    scale_c: int | None = None   # SM100_MMA_F16BF16_SS_SCALED: D = A*B + D * 2^-scale_c (scale-input-d)

    @property
    def acc(self) -> str:
        return "int32_t" if self.ta in ("s8", "u8") else "cutlass::half_t" if self.acc16 else "float"

    @property
    def out_dtype(self):
        return {"int32_t": np.int32, "float": np.float32}.get(self.acc, np.float16)

    def cpp(self) -> str:
        """The configuration struct and its ``extern "C"`` kernel."""
        ta, tb = CUTE_TYPES[self.ta], CUTE_TYPES[self.tb]
        major = {"K": "UMMA::Major::K", "MN": "UMMA::Major::MN"}
        form = ("2x1SM_" if self.pair else "") + ("TS" if self.ts else "SS")
        mma = mma_type(_ATOM_KIND[self.ta], form, ta, tb, self.acc, self.m, self.n, major[self.ma], major[self.mb])
        if self.scale_c is not None:
            mma = mma.replace(f"_{form}<", f"_{form}_SCALED<").replace(">", f", {self.scale_c}>")
        body = "gemm_2sm" if self.pair else "gemm_1sm"
        acc_cols = self.n
        return "\n".join([
            f"struct Cfg_{self.entry} {{",
            f"  using TA = {ta}; using TB = {tb}; using TC = {self.acc};",
            f"  static constexpr int M = {self.m}, N = {self.n}, K = {self.k}, A_COL = {acc_cols};",
            f"  static constexpr UMMA::Major MA = {major[self.ma]}, MB = {major[self.mb]};",
            f"  static constexpr bool A_TMEM = {'true' if self.ts else 'false'};",
            f"  using Mma = {mma};",
            f"  using AtomA = UMMA::Layout_{self.ma}_{self.swa}_Atom<TA>;",
            f"  using AtomB = UMMA::Layout_{self.mb}_{self.swb}_Atom<TB>;",
            f"  using Load = SM100_TMEM_LOAD_{self.load};",
            f"  using StoreA = SM100_TMEM_STORE_{self.store};",
            "};",
            f'extern "C" __global__ void __launch_bounds__(128) {self.entry}(void const* a, void const* b, void* c) '
            f"{{ cts::{body}<Cfg_{self.entry}>(a, b, c); }}",
        ])

    def make_case(self, rng: np.random.Generator) -> Case:
        va, vb = _VALUES.get(self.ta, _SIGNED), _VALUES.get(self.tb, _SIGNED)
        a = rng.choice(va, (self.m, self.k))
        b = rng.choice(vb, (self.n, self.k))
        want = _product(a, b, self.scale_c, 256 // _BITS[self.ta]).astype(self.out_dtype)
        a_mem = a if self.ma == "K" else a.T
        b_mem = b if self.mb == "K" else b.T
        return Case((In(codes(self.ta, np.ascontiguousarray(a_mem))), In(codes(self.tb, np.ascontiguousarray(b_mem))),
                     Out("c", (self.m, self.n), self.out_dtype)), (1, 1, 1), {"c": want})

    def families(self) -> tuple[str, ...]:
        return ("mma_cta_pair", "mma", "tmem", "pipeline") if self.pair else ("mma", "tmem", "pipeline")


_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8}


def _product(a: np.ndarray, b: np.ndarray, scale_c: int | None, kmma: int) -> np.ndarray:
    """float64 A B^T; with scale-input-d, per MMA of ``kmma`` K: D = A_k B_k^T + D * 2^-scale_c (§9.7.16.10.9.1)."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    if scale_c is None:
        return a @ b.T
    d = np.zeros((a.shape[0], b.shape[0]))
    for k0 in range(0, a.shape[1], kmma):
        d = a[:, k0:k0 + kmma] @ b[:, k0:k0 + kmma].T + d * 2.0 ** -scale_c
    return d


HEADER = "gemm_1sm.cuh"


def mma_type(kind: str, form: str, ta: str, tb: str, tc: str, m: int, n: int, ma: str, mb: str) -> str:
    """The MMA atom as ``make_tiled_mma`` takes it.  CuTe 4.2.0 declares ``SM100_MMA_F8F6F4_SS`` and
    ``SM100_MMA_F8F6F4_2x1SM_SS`` without template parameters: their types ride on ``MMA_Traits``."""
    if kind == "F8F6F4" and form in ("SS", "2x1SM_SS"):
        one = "integral_constant<UMMA::ScaleIn, UMMA::ScaleIn::One>"
        return (f"MMA_Atom<MMA_Traits<SM100_MMA_F8F6F4_{form}, {ta}, {tb}, {tc}, C<{m}>, C<{n}>, "
                f"integral_constant<UMMA::Major, {ma}>, integral_constant<UMMA::Major, {mb}>, {one}, {one}>>")
    return f"SM100_MMA_{kind}_{form}<{ta}, {tb}, {tc}, {m}, {n}, {ma}, {mb}>"


def _kernel(g: Gemm, program: CuteProgram) -> ClientKernel:
    sig = {"a": "*u8", "b": "*u8", "c": {"float": "*fp32", "int32_t": "*i32"}.get(g.acc, "*fp16")}
    return ClientKernel(f"cute.{g.name}", "cute", program.entry(g.entry), sig, {}, g.make_case, g.families(),
                        num_warps=4, num_stages=1, num_ctas=2 if g.pair else 1)


def _family(name: str, gemms: list[Gemm], arch: int = 100, header: str = HEADER) -> list[ClientKernel]:
    program = CuteProgram(name, header, tuple(g.cpp() for g in gemms), arch)
    return [_kernel(g, program) for g in gemms]


def ss_gemms() -> list[Gemm]:
    G = Gemm
    return [
        # kind::f16: every K-major swizzle, MN-major A and B, M 64/128, TMEM load shapes
        G("f16_ss_m128n64k64_k_sw128", "f16", "f16", 128, 64, 64),
        G("f16_ss_m128n64k64_k_inter", "f16", "f16", 128, 64, 64, swa="INTER", swb="INTER"),
        G("f16_ss_m128n64k64_k_sw32", "f16", "f16", 128, 64, 64, swa="SW32", swb="SW32"),
        G("f16_ss_m128n64k64_k_sw64", "f16", "f16", 128, 64, 64, swa="SW64", swb="SW64"),
        G("f16_ss_m128n64k32_mn_inter", "f16", "f16", 128, 64, 32, ma="MN", mb="MN", swa="INTER", swb="INTER"),
        G("f16_ss_m128n64k32_mn_sw32", "f16", "f16", 128, 64, 32, ma="MN", mb="MN", swa="SW32", swb="SW32"),
        G("f16_ss_m128n64k32_mn_sw64", "f16", "f16", 128, 64, 32, ma="MN", mb="MN", swa="SW64", swb="SW64"),
        G("f16_ss_m128n64k32_mn_sw128", "f16", "f16", 128, 64, 32, ma="MN", mb="MN"),
        # (16-bit MN-major with Layout_MN_SW128_32B_Atom compiles, but Table 52 forbids it: finding K1)
        G("bf16_ss_m128n128k64_amn_bk", "bf16", "bf16", 128, 128, 64, ma="MN", load="32dp32b16x"),
        G("bf16_ss_m128n256k64", "bf16", "bf16", 128, 256, 64, load="32dp32b32x"),
        G("f16_ss_m64n64k64", "f16", "f16", 64, 64, 64, load="16dp256b1x"),
        G("f16_ss_m64n128k64_16dp128b", "f16", "f16", 64, 128, 64, load="16dp128b2x"),
        G("f16_ss_m64n64k64_16dp64b", "f16", "f16", 64, 64, 64, load="16dp64b4x"),
        G("f16_ss_m64n32k64_16dp32b", "f16", "f16", 64, 32, 64, load="16dp32b4x"),
        # kind::tf32
        G("tf32_ss_m128n64k32", "tf32", "tf32", 128, 64, 32),
        G("tf32_ss_m128n64k16_mn_sw128_32b", "tf32", "tf32", 128, 64, 16, ma="MN", mb="MN", swa="SW128_32B",
          swb="SW128_32B"),
        G("tf32_ss_m64n32k16_k_sw32", "tf32", "tf32", 64, 32, 16, swa="SW32", swb="SW32", load="16dp256b1x"),
        # kind::i8 (s8/u8 -> s32), MN-major
        G("s8_ss_m128n64k128", "s8", "s8", 128, 64, 128),
        G("u8_s8_ss_m128n64k64_mn_sw64", "u8", "s8", 128, 64, 64, ma="MN", mb="MN", swa="SW64", swb="SW64"),
        # kind::f8f6f4 (e4m3, e5m2), MN-major
        G("e4m3_ss_m128n64k128", "e4m3", "e4m3", 128, 64, 128),
        G("e5m2_e4m3_ss_m128n128k64_mn", "e5m2", "e4m3", 128, 128, 64, ma="MN", mb="MN", load="32dp32b4x"),
    ]


def ts_gemms() -> list[Gemm]:
    G = Gemm
    return [
        G("f16_ts_m128n64k64", "f16", "f16", 128, 64, 64, ts=True),
        G("bf16_ts_m128n128k64_bmn", "bf16", "bf16", 128, 128, 64, ts=True, mb="MN", store="32dp32b4x"),
        G("tf32_ts_m128n64k32", "tf32", "tf32", 128, 64, 32, ts=True),
        G("s8_ts_m128n64k128", "s8", "s8", 128, 64, 128, ts=True),
        G("e4m3_ts_m128n64k128", "e4m3", "e4m3", 128, 64, 128, ts=True),
        # f16 accumulators read with 16-bit loads (.pack::16b), and scale-input-d (the _SCALED atom)
        G("f16acc_ss_m128n64k64_32dp32b8x_16b", "f16", "f16", 128, 64, 64, acc16=True, load="32dp32b8x_16b"),
        G("f16acc_ss_m64n64k64_16dp256b1x_16b", "f16", "f16", 64, 64, 64, acc16=True, load="16dp256b1x_16b"),
        G("f16_ss_scaled2_m128n64k64", "f16", "f16", 128, 64, 64, scale_c=2),
        G("bf16_ss_scaled1_m128n64k64", "bf16", "bf16", 128, 64, 64, scale_c=1),
    ]




# ----------------------------------------------------------------------------------------------
# block-scaled kinds: scale factors tcgen05.cp'd by CuTe UTCCP atoms (cute/gemm_bs.cuh)

#: UTCCP atom -> its source rows; source row i lands in lanes i (and its broadcast copies), and holds
#: the 32-row scale-factor image's row i % 32 (every lane quarter must hold the same factors, §9.7.16.10.7)
UTCCP_ROWS = {"128dp128bit": 128, "4x32dp128bit": 32, "2x64dp128bitlw0213": 64, "2x64dp128bitlw0123": 64,
              "128dp256bit": 128}
#: bytes a source row holds (256-bit shapes: 32; N > 128 needs the scale factors of 8 columns)
UTCCP_WIDTH = {"128dp256bit": 32}


@dataclass(frozen=True)
class Scaled(_CuteEntry):
    """One ``gemm_bs`` configuration: C[128,N] = (A*SFA)(B*SFB)^T, A and B K-major."""

    name: str
    ta: str
    tb: str
    n: int
    k: int
    vs: int = 32                 # scale vector size (block32 / block16)
    sf: str = "ue8m0"            # ue8m0 | ue4m3
    cpa: str = "128dp128bit"     # SM100_UTCCP_<cpa>_1cta copies SFA
    cpb: str = "128dp128bit"
    swa: str = "SW128"
    swb: str = "SW128"
    load: str = "32dp32b8x"
    m: int = 128
    pair: bool = False           # cta_group::2 (2x1SM atoms, UTCCP _2cta; cute/gemm_bs2.cuh), M = 256

    @property
    def fp4(self) -> bool:
        return self.ta == "e2m1" and self.tb == "e2m1"

    @property
    def kblock(self) -> int:
        return 64 if self.fp4 else 32

    def cpp(self) -> str:
        ta, tb = CUTE_TYPES[self.ta], CUTE_TYPES[self.tb]
        tsf = CUTE_SF_TYPES[self.sf]
        k = "UMMA::Major::K"
        form = "2x1SM_SS" if self.pair else "SS"
        if self.fp4:
            mma = f"SM100_MMA_MXF4_{form}<{ta}, {tb}, float, {tsf}, {self.m}, {self.n}, {self.vs}, {k}, {k}>"
        else:
            mma = f"SM100_MMA_MXF8F6F4_{form}<{ta}, {tb}, float, {tsf}, {self.m}, {self.n}, {k}, {k}>"
        body = "gemm_bs2" if self.pair else "gemm_bs"
        return "\n".join([
            f"struct Cfg_{self.entry} {{",
            f"  using TA = {ta}; using TB = {tb}; using TSF = {tsf};",
            f"  static constexpr int M = {self.m}, N = {self.n}, K = {self.k}, SPB = {self.kblock // self.vs};",
            f"  static constexpr int SFA_ROWS = {UTCCP_ROWS[self.cpa]}, SFB_ROWS = {UTCCP_ROWS[self.cpb]};",
            f"  static constexpr int SFA_W = {UTCCP_WIDTH.get(self.cpa, 16)}, SFB_W = {UTCCP_WIDTH.get(self.cpb, 16)};",
            f"  using Mma = {mma};",
            f"  using AtomA = UMMA::Layout_K_{self.swa}_Atom<TA>;",
            f"  using AtomB = UMMA::Layout_K_{self.swb}_Atom<TB>;",
            f"  using CpA = SM100_UTCCP_{self.cpa}_1cta;",
            f"  using CpB = SM100_UTCCP_{self.cpb}_1cta;",
            f"  using Load = SM100_TMEM_LOAD_{self.load};",
            "};",
            f'extern "C" __global__ void __launch_bounds__(128) {self.entry}(void const* a, void const* b, '
            f"void const* sfa, void const* sfb, void* c) {{ cts::{body}<Cfg_{self.entry}>(a, b, sfa, sfb, c); }}",
        ])

    def _scales(self, rng, rows: int, cp: str):
        """(scale values [rows, K // vs], the UTCCP source bytes [source rows, 16]): row r's factor t is
        byte t of column r // 32 at lane r % 32, i.e. byte 4 * (r // 32) + t of 32-row image row r % 32."""
        per_row = self.k // self.vs
        if per_row > 4:
            raise ValueError(f"{self.name}: K / vs expects at most 4 scale factors a row (one column), but got {per_row}")
        e = rng.integers(-1, 2, (rows, per_row))
        code = (e + 127) if self.sf == "ue8m0" else ((e + 7) << 3)
        image = np.zeros((32, UTCCP_WIDTH.get(cp, 16)), dtype=np.uint8)
        for r in range(rows):
            image[r % 32, 4 * (r // 32):4 * (r // 32) + per_row] = code[r]
        src = image[np.arange(UTCCP_ROWS[cp]) % 32]
        return 2.0 ** e, src

    def make_case(self, rng: np.random.Generator) -> Case:
        a = rng.integers(-3, 4, (self.m, self.k))
        b = rng.integers(-3, 4, (self.n, self.k))
        if self.pair:       # each CTA: the factors of its M/2 rows of A (32-row images one after the other)
            parts = [self._scales(rng, self.m // 2, self.cpa) for _ in range(2)]
            sa, sa_src = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
        else:
            sa, sa_src = self._scales(rng, self.m, self.cpa)
        sb, sb_src = self._scales(rng, self.n, self.cpb)
        a_s = a * np.repeat(sa, self.vs, axis=1)
        b_s = b * np.repeat(sb, self.vs, axis=1)
        want = (a_s @ b_s.T).astype(np.float32)
        return Case((In(codes(self.ta, a)), In(codes(self.tb, b)), In(sa_src), In(sb_src),
                     Out("c", (self.m, self.n), np.float32)), (1, 1, 1), {"c": want})

    def families(self) -> tuple[str, ...]:
        pair = ("mma_cta_pair",) if self.pair else ()
        return ("mma_block_scale", *pair, "tcgen05_cp", "tmem", "pipeline")


def _scaled_kernel(g: Scaled, program: CuteProgram) -> ClientKernel:
    sig = {"a": "*u8", "b": "*u8", "sfa": "*u8", "sfb": "*u8", "c": "*fp32"}
    return ClientKernel(f"cute.{g.name}", "cute", program.entry(g.entry), sig, {}, g.make_case, g.families(),
                        num_warps=4, num_stages=1, num_ctas=2 if g.pair else 1)


def pair_scaled_gemms() -> list[Scaled]:
    """cta_group::2 block scaling: SFB holds all N rows in both CTAs (CUTLASS's MMA_ScaleFactor; K5)."""
    S = Scaled
    w4 = dict(cpa="4x32dp128bit", cpb="4x32dp128bit", pair=True, m=256)
    return [
        S("mxf8_e4m3_2sm_m256n128k64", "e4m3", "e4m3", 128, 64, swa="SW64", swb="SW64", **w4),
        S("mxf8_e5m2_e4m3_2sm_m256n64k128", "e5m2", "e4m3", 64, 128, **w4),
        S("mxf4_2sm_m256n128k128", "e2m1", "e2m1", 128, 128, swa="SW64", swb="SW64", **w4),
        S("nvf4_ue4m3_2sm_m256n64k64", "e2m1", "e2m1", 64, 64, vs=16, sf="ue4m3", swa="SW32", swb="SW32", **w4),
    ]


def scaled_gemms() -> list[Scaled]:
    S = Scaled
    return [
        S("mxf8_e4m3_m128n128k32_cp128x128b", "e4m3", "e4m3", 128, 32, swa="SW32", swb="SW32"),
        S("mxf8_e4m3_e5m2_m128n64k128_cp128x128b", "e4m3", "e5m2", 64, 128),
        S("mxf8_e4m3_m128n128k128_cp32x128b_warpx4", "e4m3", "e4m3", 128, 128, cpa="4x32dp128bit",
          cpb="4x32dp128bit"),
        S("mxf8_e4m3_m128n128k64_cp32x128b_warpx4", "e4m3", "e4m3", 128, 64, cpa="4x32dp128bit",
          cpb="4x32dp128bit", swa="SW64", swb="SW64"),
        S("mxf8_e5m2_m128n128k64_cp64x128b_02_13", "e5m2", "e5m2", 128, 64, cpa="2x64dp128bitlw0213",
          cpb="2x64dp128bitlw0213", swa="SW64", swb="SW64"),
        S("mxf8_e4m3_m128n128k64_cp64x128b_01_23", "e4m3", "e4m3", 128, 64, cpa="2x64dp128bitlw0123",
          cpb="2x64dp128bitlw0123", swa="SW64", swb="SW64"),
        S("mxf4_m128n128k128_cp128x128b", "e2m1", "e2m1", 128, 128, swa="SW64", swb="SW64"),
        S("mxf4_m128n64k128_cp32x128b_warpx4", "e2m1", "e2m1", 64, 128, cpb="4x32dp128bit", swa="SW64",
          swb="SW64"),
        S("nvf4_ue4m3_m128n128k64_cp128x128b", "e2m1", "e2m1", 128, 64, vs=16, sf="ue4m3", swa="SW32", swb="SW32"),
        S("nvf4_ue8m0_m128n64k64_cp64x128b_01_23", "e2m1", "e2m1", 64, 64, vs=16, cpa="2x64dp128bitlw0123",
          swa="SW32", swb="SW32"),
        # N = 256: SFB spans 8 columns, copied by one 128x256b UTCCP
        S("mxf8_e4m3_m128n256k64_cp128x256b", "e4m3", "e4m3", 256, 64, cpb="128dp256bit", swa="SW64", swb="SW64",
          load="32dp32b32x"),
        S("mxf4_m128n256k128_cp128x256b", "e2m1", "e2m1", 256, 128, cpa="128dp256bit", cpb="128dp256bit",
          swa="SW64", swb="SW64", load="32dp32b32x"),
    ]


def ld_gemms() -> list[Gemm]:
    """TMEM load atoms of every shape and several .num, over one f16 tile (no-swizzle operands)."""
    G = Gemm
    m128 = [("32dp32b1x", 64), ("32dp32b2x", 64), ("32dp32b16x", 64), ("32dp32b64x", 64), ("32dp32b128x", 128)]
    m64 = [("16dp256b4x", 64), ("16dp128b8x", 64), ("16dp64b16x", 64), ("16dp32b2x", 64), ("16dp256b2x", 128)]
    return ([G(f"f16_ld_m128n{n}k32_{ld}", "f16", "f16", 128, n, 32, swa="INTER", swb="INTER", load=ld) for ld, n in m128]
            + [G(f"f16_ld_m64n{n}k32_{ld}", "f16", "f16", 64, n, 32, swa="INTER", swb="INTER", load=ld) for ld, n in m64])


def pair_gemms() -> list[Gemm]:
    """cta_group::2 (``SM100_MMA_*_2x1SM_SS``) for the kinds Triton reaches only with f16."""
    G = Gemm
    return [
        G("tf32_2sm_m256n128k32", "tf32", "tf32", 256, 128, 32, pair=True),
        G("f16_2sm_m256n64k64", "f16", "f16", 256, 64, 64, pair=True),
        G("s8_2sm_m256n128k128", "s8", "s8", 256, 128, 128, pair=True),
        G("e4m3_2sm_m256n64k128", "e4m3", "e4m3", 256, 64, 128, pair=True),
        G("f16_2sm_m128n64k64", "f16", "f16", 128, 64, 64, pair=True, load="16dp256b1x"),
        # TS with cta_group::2: each CTA stores its M/2 rows of A to its own Tensor Memory
        G("f16_2sm_ts_m256n64k64", "f16", "f16", 256, 64, 64, pair=True, ts=True),
        G("tf32_2sm_ts_m256n128k32", "tf32", "tf32", 256, 128, 32, pair=True, ts=True),
    ]


# ----------------------------------------------------------------------------------------------
# structured-sparse kinds: metadata permuted by CUTLASS's Sm1xxGemmSparseConfig, UTCCP'd to TMEM (cute/gemm_sp.cuh)

#: the 2:4 pairs (idx0 < idx1) a tcgen05 metadata nibble names, and the 1:2 nibbles (§9.7.16.10.8.1-.2)
_PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
_TF32_NIBBLE = (0b0100, 0b1110)
_SP_ATOM = {"f16": "F16BF16", "bf16": "F16BF16", "tf32": "TF32", "s8": "S8", "e4m3": "F8F6F4"}


@dataclass(frozen=True)
class SparseGemm(_CuteEntry):
    """One ``gemm_sp`` configuration: C[128,N] = A[128,K] B[N,K]^T, A structured-sparse, K-major."""

    name: str
    ta: str
    n: int
    sw: str = "SW128"            # layout atom of A (dense and Sp) and B
    load: str = "32dp32b8x"
    m: int = 128
    pair: bool = False           # cta_group::2 (2x1SM_SS_SPARSE, gemm_sp2), M = 256
    tb: str = ""                 # B's format when it differs from A's
    scaled: bool = False         # block-scaled (MXF8F6F4_SS_SPARSE, ue8m0 block32 scale factors)
    vs: int = 64                 # logical K per scale factor (CuTe's SFVecSize: mxf8f6f4 .sp 64, one per MMA,
    #                              Table 54 1X over the logical K, reference.block_scaling, mma_traits_sm100.hpp:2804;
    #                              fp4: 64 = kind::mxf4 .block32, 32 = kind::mxf4nvf4 .block16)
    sf: str = "ue8m0"

    @property
    def fp4(self) -> bool:
        return self.ta == "e2m1"

    @property
    def mma_k(self) -> int:
        """Logical K of one sparse MMA (Table 39)."""
        return {"tf32": 16, "f16": 32, "bf16": 32, "e2m1": 128}.get(self.ta, 64)

    @property
    def k(self) -> int:
        """K of one CUTLASS metadata atom (Sm1xxGemmSparseConfig::TensorEAtomK)."""
        return 64 if self.ta == "tf32" else 256 if self.fp4 else 128

    @property
    def acc(self) -> str:
        return "int32_t" if self.ta == "s8" else "float"

    @property
    def b_image(self) -> bool:
        """B is 4-bit under kind::mxf8f6f4: unpacked (16 elements + 8 bytes of padding a 16-byte unit), passed as
        its shared-memory bytes (CUTLASS: float_e2m1_unpacksmem_t, TMA's 16U4_ALIGN16B; docs/clients-cute.md CU4)."""
        return self.tb == "e2m1" and not self.fp4

    def cpp(self) -> str:
        t, tb = CUTE_TYPES[self.ta], CUTE_TYPES[self.tb or self.ta]
        if self.b_image:
            tb = "cutlass::detail::float_e2m1_unpacksmem_t"
        k = "UMMA::Major::K"
        form = "2x1SM_SS" if self.pair else "SS"
        tsf = CUTE_SF_TYPES[self.sf]
        kind, sf = ("MXF8F6F4", f"{tsf}, ") if self.scaled else (_SP_ATOM[self.ta], "")
        mn = f"{self.m}, {self.n}"
        if self.fp4:            # VS = 64: kind::mxf4 .block32; VS = 32: kind::mxf4nvf4 .block16 (stored elements)
            kind, mn = "MXF4NVF4", f"{mn}, {self.vs}"
        mma = f"SM100_MMA_{kind}_{form}_SPARSE<{t}, {tb}, {self.acc}, {sf}{mn}, {k}, {k}>"
        ta_smem, kc = ("uint8_t", self.k // 4) if self.fp4 else ("TA", self.k // 2)   # fp4: packed bytes
        body = "gemm_sp2" if self.pair else "gemm_sp"
        sfp = ", sfa, sfb" if self.scaled else ""
        return "\n".join([
            f"struct Cfg_{self.entry} {{",
            f"  using TA = {t}; using TB = {tb}; using TC = {self.acc}; using TSF = {tsf};",
            f"  static constexpr int M = {self.m}, N = {self.n}, K = {self.k}, E_COL = 256, SF_COL = 264, "
            f"SPB = {self.mma_k // self.vs}, SF_GROUPS = {max(1, self.k // self.vs // 4)};",
            f"  static constexpr bool SCALED = {'true' if self.scaled else 'false'};",
            f"  static constexpr int KC = {kc};",
            f"  using TAS = {ta_smem};      // compressed A's element in shared memory",
            f"  using Mma = {mma};",
            f"  using AtomA = UMMA::Layout_K_{self.sw}_Atom<{ta_smem}>;",
            f"  using SpAtomA = UMMA::Layout_K_{self.sw}_SpAtom<{ta_smem}, {4 if self.fp4 else 2}>;",
            f"  using AtomB = UMMA::Layout_K_{self.sw}_Atom<{'uint8_t' if self.b_image else 'TB'}>;",
            f"  static constexpr bool B_IMAGE = {'true' if self.b_image else 'false'};",
            f"  using Load = SM100_TMEM_LOAD_{self.load};",
            "};",
            f'extern "C" __global__ void __launch_bounds__(128) {self.entry}(void const* a, void const* b, '
            f"void const* e, {'void const* sfa, void const* sfb, ' if self.scaled else ''}void* c) "
            f"{{ cts::{body}<Cfg_{self.entry}>(a, b, e, c{sfp}); }}",
        ])

    def make_case(self, rng: np.random.Generator) -> Case:
        """Dense A from compressed values and metadata nibbles (expanded here, by the §9.7.16.10.8 rule)."""
        m, k = self.m, self.k
        vals = np.arange(1, 4) if self.ta == "u8" else np.array([-3, -2, -1, 1, 2, 3])
        comp = rng.choice(vals, (m, k // 2))
        dense = np.zeros((m, k), dtype=np.int64)
        if self.ta == "tf32":                       # 1:2: one kept element per pair
            pos = rng.integers(0, 2, (m, k // 2))
            nib = np.array(_TF32_NIBBLE)[pos]
            rows, j = np.indices(pos.shape)
            dense[rows, 2 * j + pos] = comp
        elif self.fp4:                              # 4:8: two kept pairs per 8
            pick = rng.integers(0, len(_PAIRS), (m, k // 8))
            pairs = np.array(_PAIRS)[pick]
            nib = pairs[..., 0] | (pairs[..., 1] << 2)
            rows, j = np.indices(pick.shape)
            for t in range(4):                      # stored element t of the chunk -> pair t // 2, half t % 2
                dense[rows, 8 * j + 2 * pairs[..., t // 2] + t % 2] = comp[:, t::4]
        else:                                       # 2:4: two kept elements per 4
            pick = rng.integers(0, len(_PAIRS), (m, k // 4))
            pairs = np.array(_PAIRS)[pick]
            nib = pairs[..., 0] | (pairs[..., 1] << 2)
            rows, j = np.indices(pick.shape)
            dense[rows, 4 * j + pairs[..., 0]] = comp[:, 0::2]
            dense[rows, 4 * j + pairs[..., 1]] = comp[:, 1::2]
        meta = (nib[:, 0::2] | (nib[:, 1::2] << 4)).astype(np.uint8)
        b = rng.integers(-3, 4, (self.n, k))
        out = np.int32 if self.acc == "int32_t" else np.float32
        b_in = _unpacked_image(b) if self.b_image else codes(self.tb or self.ta, b)
        ins = [In(codes(self.ta, comp)), In(b_in), In(meta)]
        if self.scaled:         # a factor per vs logical K (SFVecSize), sets of 4 a row as 32-row images (Scaled)
            if self.pair:       # each CTA: the factors of its 128 rows of A (its sets of images one after the other)
                parts = [self._scale_sets(rng, m // 2) for _ in range(2)]
                sa, sa_src = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
            else:
                sa, sa_src = self._scale_sets(rng, m)
            sb, sb_src = self._scale_sets(rng, self.n)
            dense = dense * np.repeat(sa, self.vs, axis=1)
            b = b * np.repeat(sb, self.vs, axis=1)
            ins += [In(sa_src), In(sb_src)]
        want = (dense.astype(np.float64) @ b.T.astype(np.float64)).astype(out)
        return Case((*ins, Out("c", (m, self.n), out)), (1, 1, 1), {"c": want})

    def _scale_sets(self, rng, rows: int):
        """(scale values [rows, K / vs], the 32-row UTCCP images of each set of 4 factors, stacked)."""
        s = Scaled(self.name, self.ta, self.tb or self.ta, self.n, min(self.k, 4 * self.vs), vs=self.vs, sf=self.sf)
        sets = [s._scales(rng, rows, "4x32dp128bit") for _ in range(max(1, self.k // self.vs // 4))]
        return np.concatenate([v for v, _ in sets], axis=1), np.concatenate([img for _, img in sets], axis=0)

    def families(self) -> tuple[str, ...]:
        pair = ("mma_cta_pair",) if self.pair else ()
        scaled = ("mma_block_scale",) if self.scaled else ()
        return ("mma_sp", *pair, *scaled, "tcgen05_cp", "tmem", "pipeline")


def _unpacked_image(x: np.ndarray) -> np.ndarray:
    """Shared-memory bytes [rows, K] of e2m1 values under kind::f8f6f4 / mxf8f6f4 (§9.7.16.10.4.4, reference
    ``element_storage``: element i of a 16-element unit at bits 4i..4i+3, i.e. 8 packed bytes, then 8 of padding)."""
    packed = codes("e2m1", x).reshape(x.shape[0], -1, 8)                 # [rows, units, 8]
    return np.concatenate([packed, np.zeros_like(packed)], axis=2).reshape(x.shape[0], -1)


def _sparse_kernel(g: SparseGemm, program: CuteProgram) -> ClientKernel:
    sf = {"sfa": "*u8", "sfb": "*u8"} if g.scaled else {}
    sig = {"a": "*u8", "b": "*u8", "e": "*u8", **sf, "c": "*fp32" if g.acc == "float" else "*i32"}
    return ClientKernel(f"cute.{g.name}", "cute", program.entry(g.entry), sig, {}, g.make_case, g.families(),
                        num_warps=4, num_stages=1, num_ctas=2 if g.pair else 1)


def sparse_gemms() -> list[SparseGemm]:
    S = SparseGemm
    return [
        S("f16_sp_m128n64k128", "f16", 64),
        S("bf16_sp_m128n128k128", "bf16", 128, load="32dp32b16x"),
        S("tf32_sp_m128n64k64", "tf32", 64),
        S("s8_sp_m128n64k128", "s8", 64, sw="SW64"),
        S("e4m3_sp_m128n64k128", "e4m3", 64, sw="SW64"),
        # cta_group::2: 128 rows of A and metadata per CTA (interleaved per CTA for f16/tf32, Q-META-TMEM)
        S("f16_sp_2sm_m256n64k128", "f16", 64, m=256, pair=True),
        S("tf32_sp_2sm_m256n64k64", "tf32", 64, m=256, pair=True),
        S("s8_sp_2sm_m256n64k128", "s8", 64, sw="SW64", m=256, pair=True),
        S("e4m3_sp_2sm_m256n64k128", "e4m3", 64, sw="SW64", m=256, pair=True),
        # block-scaled sparse (kind::mxf8f6f4 .sp): ue8m0, one factor per MMA (ids 0 and 1)
        S("mxf8_e4m3_sp_m128n64k128", "e4m3", 64, sw="SW64", scaled=True),
        S("mxf8_e5m2_e4m3_sp_m128n128k128", "e5m2", 128, sw="SW64", scaled=True, tb="e4m3", load="32dp32b16x"),
        S("mxf4_sp_m128n64k256", "e2m1", 64, sw="SW64", scaled=True),
        S("nvf4_ue4m3_sp_m128n64k256", "e2m1", 64, sw="SW64", scaled=True, vs=32, sf="ue4m3"),
        # cta_group::2 block-scaled sparse: CUTLASS example 84a (nvfp4: SM100_MMA_MXF4NVF4_2x1SM_SS_SPARSE, VS = 32,
        # kind::mxf4nvf4 .block16, ue4m3) and 84b (mx_float8 A x mx_float4 B: SM100_MMA_MXF8F6F4_2x1SM_SS_SPARSE,
        # ue8m0, B unpacked); MmaTileShape 256x128x256, cluster 2x1
        S("nvf4_ue4m3_sp_2sm_m256n128k256", "e2m1", 128, sw="SW64", m=256, pair=True, scaled=True, vs=32, sf="ue4m3",
          load="32dp32b16x"),
        S("mxf8_e4m3_e2m1_sp_2sm_m256n128k128", "e4m3", 128, sw="SW64", m=256, pair=True, scaled=True, tb="e2m1",
          load="32dp32b16x"),
        S("mxf8_e4m3_sp_2sm_m256n128k128", "e4m3", 128, sw="SW64", m=256, pair=True, scaled=True, load="32dp32b16x"),
    ]


# ----------------------------------------------------------------------------------------------
# sm_103a K = 96 ("fp4 ultra"): CUTLASS example 89's mainloop pieces (cute/gemm_k96.cuh)

#: the K of one CUTLASS sm103 k-tile (3 shared-memory buffers of 256 e2m1 a row, 8 MMAs of K = 96)
K96_TILE = 768


@dataclass(frozen=True)
class UltraK96(_CuteEntry):
    """One ``gemm_k96`` configuration: C[M,N] = (A*SFA)(B*SFB)^T over one k-tile of K = 768, e2m1, K-major,
    8 MMAs of K = 96 (``SM103_MXF4_ULTRA_SS_VS`` / ``_2x1SM_SS_VS``).  ``vs`` = 16: ue4m3 factors, the atom issues
    ``kind::mxf4nvf4.block_scale.block16``; ``vs`` = 32: ue8m0, ``kind::mxf4nvf4.block_scale.block32``."""

    name: str
    n: int
    vs: int = 16
    sf: str = "ue4m3"
    m: int = 128
    pair: bool = False           # cta_group::2 (SM103_MXF4_ULTRA_2x1SM_SS_VS, a cluster of 2 CTAs)
    load: str = "32dp32b16x"

    @property
    def ctas(self) -> int:
        return 2 if self.pair else 1

    @property
    def dynamic_shared(self) -> int:
        """Bytes of the kernel's dynamic shared memory: A, B, SFA, SFB stages, barrier and TMEM address, 1024 slack."""
        rows_a, rows_b = self.m // self.ctas, self.n // self.ctas
        sf_rows_b = -(-self.n // 128) * 128
        return 1024 + (rows_a + rows_b) * K96_TILE // 2 + (max(rows_a, 128) + sf_rows_b) * K96_TILE // self.vs + 16

    def cpp(self) -> str:
        e2m1 = CUTE_TYPES["e2m1"]
        tsf = CUTE_SF_TYPES[self.sf]
        k = "UMMA::Major::K"
        atom = "SM103_MXF4_ULTRA_2x1SM_SS_VS" if self.pair else "SM103_MXF4_ULTRA_SS_VS"
        return "\n".join([
            f"struct Cfg_{self.entry} {{",
            f"  using TSF = {tsf};",
            f"  static constexpr int M = {self.m}, N = {self.n}, VS = {self.vs};",
            f"  using Mma = SM103::{atom}<{e2m1}, {e2m1}, float, {tsf}, {self.m}, {self.n}, {self.vs}, {k}, {k}>;",
            f"  using Load = SM100_TMEM_LOAD_{self.load};",
            "};",
            f'extern "C" __global__ void __launch_bounds__(128) {self.entry}(void const* a, void const* b, '
            f"void const* sfa, void const* sfb, void* c) {{ cts::gemm_k96<Cfg_{self.entry}>(a, b, sfa, sfb, c); }}",
        ])

    def make_case(self, rng: np.random.Generator) -> Case:
        """Small integers times powers of two: every product and partial sum is exact in f32."""
        k, per_row = K96_TILE, K96_TILE // self.vs
        a = rng.integers(-3, 4, (self.m, k))
        b = rng.integers(-3, 4, (self.n, k))
        ea = rng.integers(-1, 2, (self.m, per_row))
        eb = rng.integers(-1, 2, (self.n, per_row))
        sa, sb = _scale_codes(ea, self.sf), _scale_codes(eb, self.sf)
        a_s = a * np.repeat(2.0 ** ea, self.vs, axis=1)
        b_s = b * np.repeat(2.0 ** eb, self.vs, axis=1)
        want = (a_s @ b_s.T).astype(np.float32)
        return Case((In(codes("e2m1", a)), In(codes("e2m1", b)), In(sa), In(sb),
                     Out("c", (self.m, self.n), np.float32)), (1, 1, 1), {"c": want})

    def families(self) -> tuple[str, ...]:
        pair = ("mma_cta_pair",) if self.pair else ()
        return ("mma_block_scale", *pair, "tcgen05_cp", "tmem", "pipeline")


def _scale_codes(e: np.ndarray, sf: str) -> np.ndarray:
    """Raw codes of the scale factors 2**e (ue8m0: bias 127; ue4m3: exponent field, bias 7)."""
    return ((e + 127) if sf == "ue8m0" else ((e + 7) << 3)).astype(np.uint8)


def k96_gemms() -> list[UltraK96]:
    """Example 89's configuration (cta_group::1, M = 128, N = 128, ue4m3 block16) and its block32 ue8m0 sibling;
    the cta_group::2 atom at M = 256 (Table 39's 256xNxK1 row); the collective's CTA N = 256 and 192."""
    U = UltraK96
    return [
        U("k96_nvf4_ue4m3_m128n128", 128),
        U("k96_mxf4_ue8m0_m128n128", 128, vs=32, sf="ue8m0"),
        U("k96_nvf4_ue4m3_2sm_m256n128", 128, m=256, pair=True),
        # CTA N 256 and 192 (the collective's other tiles): SFB over 256 rows (SfKMajorAtom256); at N = 192 the
        # block16 MMAs with id 2 read factors 4-5 from the next set of 4 columns, 8 columns on (Q-K96-SFW group-of-4)
        U("k96_nvf4_ue4m3_m128n256", 256, load="32dp32b32x"),
        U("k96_nvf4_ue4m3_m128n192", 192),
    ]


def _k96_kernel(g: UltraK96, program: CuteProgram) -> ClientKernel:
    sig = {"a": "*u8", "b": "*u8", "sfa": "*u8", "sfb": "*u8", "c": "*fp32"}
    return ClientKernel(f"cute.{g.name}", "cute", program.entry(g.entry), sig, {}, g.make_case, g.families(),
                        num_warps=4, num_stages=1, num_ctas=g.ctas, arch=103,
                        options={"dynamic_shared": g.dynamic_shared})


#: Provenance of the issue-25 kernels (docs/clients-cute.md "Issue 25"): the package, the NVIDIA source whose atoms
#: and collective pieces each kernel calls (paths inside the wheel's ``cutlass_library/source``), and what is known
#: of upstream coverage.  ``tests/test_cute_k96.py`` checks every path exists in the installed wheel.
_EX89 = "examples/89_sm103_fp4_ultra_gemm/89_sm103_fp4_ultra_gemm.cu"
_EX84A = "examples/84_blackwell_narrow_precision_sparse_gemm/84a_blackwell_nvfp4_bf16_sparse_gemm.cu"
_EX84B = "examples/84_blackwell_narrow_precision_sparse_gemm/84b_blackwell_mixed_mxfp8_bf16_sparse_gemm.cu"
_K96_SOURCES = (_EX89, "include/cute/arch/mma_sm100_umma.hpp", "include/cute/atom/mma_traits_sm100.hpp",
                "include/cutlass/gemm/collective/sm103_blockscaled_mma_warpspecialized.hpp",
                "include/cutlass/gemm/collective/builders/sm103_blockscaled_umma_builder.inl",
                "include/cutlass/detail/sm103_blockscaled_layout.hpp")
_SP_SOURCES = ("include/cute/arch/mma_sm100_umma.hpp", "include/cute/atom/mma_traits_sm100.hpp",
               "include/cutlass/gemm/collective/builders/sm1xx_sparse_config.inl")
_UPSTREAM = ("NVIDIA's example for Blackwell ({}); it verifies against a host reference and prints 'Disposition: "
             "Passed'; the wheel ships no unit tests and no public log of a hardware run is known to us")
PROVENANCE: dict[str, dict[str, object]] = {
    **{f"cute.{g.name}": {"package": "nvidia-cutlass", "version": CUTLASS_VERSION, "sources": _K96_SOURCES,
                          "atom": "SM103_MXF4_ULTRA_2x1SM_SS_VS" if g.pair else "SM103_MXF4_ULTRA_SS_VS",
                          "upstream": _UPSTREAM.format("sm_103a, example 89")} for g in k96_gemms()},
    "cute.nvf4_ue4m3_sp_2sm_m256n128k256": {"package": "nvidia-cutlass", "version": CUTLASS_VERSION,
                                            "sources": (_EX84A, *_SP_SOURCES), "atom": "SM100_MMA_MXF4NVF4_2x1SM_SS_SPARSE",
                                            "upstream": _UPSTREAM.format("sm_100a, example 84a")},
    **{name: {"package": "nvidia-cutlass", "version": CUTLASS_VERSION, "sources": (_EX84B, *_SP_SOURCES),
              "atom": "SM100_MMA_MXF8F6F4_2x1SM_SS_SPARSE", "upstream": _UPSTREAM.format("sm_100a, example 84b")}
       for name in ("cute.mxf8_e4m3_e2m1_sp_2sm_m256n128k128", "cute.mxf8_e4m3_sp_2sm_m256n128k128")},
}


def configs() -> list[ClientKernel]:
    scaled = CuteProgram("cute_bs", "gemm_bs.cuh", tuple(g.cpp() for g in scaled_gemms()))
    sparse = CuteProgram("cute_sp", "gemm_sp.cuh", tuple(g.cpp() for g in sparse_gemms()))
    scaled2 = CuteProgram("cute_bs2", "gemm_bs2.cuh", tuple(g.cpp() for g in pair_scaled_gemms()))
    k96 = CuteProgram("cute_k96", "gemm_k96.cuh", tuple(g.cpp() for g in k96_gemms()), arch=103)
    return (_family("cute_ss", ss_gemms()) + _family("cute_ts", ts_gemms()) + _family("cute_ld", ld_gemms())
            + _family("cute_2sm", pair_gemms(), header="gemm_2sm.cuh")
            + [_scaled_kernel(g, scaled) for g in scaled_gemms()]
            + [_sparse_kernel(g, sparse) for g in sparse_gemms()]
            + [_scaled_kernel(g, scaled2) for g in pair_scaled_gemms()]
            + [_k96_kernel(g, k96) for g in k96_gemms()])
