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

from conformance.clients.cute_build import CuteProgram
from conformance.clients.model import Case, ClientKernel, In, Out

#: element format -> (CuTe type, accumulator CuTe type, output numpy dtype, PTX-ish signature type)
CUTE_TYPES = {"f16": "cutlass::half_t", "bf16": "cutlass::bfloat16_t", "tf32": "cutlass::tfloat32_t",
              "s8": "int8_t", "u8": "uint8_t", "e4m3": "cutlass::float_e4m3_t", "e5m2": "cutlass::float_e5m2_t",
              "e2m1": "cutlass::float_e2m1_t"}
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


@dataclass(frozen=True)
class Gemm:
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

    @property
    def entry(self) -> str:
        return "cute_" + self.name.replace(".", "_")

    @property
    def acc(self) -> str:
        return "int32_t" if self.ta in ("s8", "u8") else "float"

    def cpp(self) -> str:
        """The configuration struct and its ``extern "C"`` kernel."""
        ta, tb = CUTE_TYPES[self.ta], CUTE_TYPES[self.tb]
        major = {"K": "UMMA::Major::K", "MN": "UMMA::Major::MN"}
        mma = mma_type(_ATOM_KIND[self.ta], "TS" if self.ts else "SS", ta, tb, self.acc, self.m, self.n,
                       major[self.ma], major[self.mb])
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
            f"{{ cts::gemm_1sm<Cfg_{self.entry}>(a, b, c); }}",
        ])

    def make_case(self, rng: np.random.Generator) -> Case:
        va, vb = _VALUES.get(self.ta, _SIGNED), _VALUES.get(self.tb, _SIGNED)
        a = rng.choice(va, (self.m, self.k))
        b = rng.choice(vb, (self.n, self.k))
        out = np.int32 if self.acc == "int32_t" else np.float32
        want = (a.astype(np.float64) @ b.T.astype(np.float64)).astype(out)
        a_mem = a if self.ma == "K" else a.T
        b_mem = b if self.mb == "K" else b.T
        return Case((In(codes(self.ta, np.ascontiguousarray(a_mem))), In(codes(self.tb, np.ascontiguousarray(b_mem))),
                     Out("c", (self.m, self.n), out)), (1, 1, 1), {"c": want})

    def families(self) -> tuple[str, ...]:
        return ("mma", "tmem", "pipeline")


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
    sig = {"a": "*u8", "b": "*u8", "c": "*fp32" if g.acc == "float" else "*i32"}
    return ClientKernel(f"cute.{g.name}", "cute", program.entry(g.entry), sig, {}, g.make_case, g.families(),
                        num_warps=4, num_stages=1)


def _family(name: str, gemms: list[Gemm], arch: int = 100) -> list[ClientKernel]:
    program = CuteProgram(name, HEADER, tuple(g.cpp() for g in gemms), arch)
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
    ]


def configs() -> list[ClientKernel]:
    return _family("cute_ss", ss_gemms()) + _family("cute_ts", ts_gemms())
