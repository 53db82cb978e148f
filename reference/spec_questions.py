"""Spec questions: points where the PTX ISA text is ambiguous, contradicts itself or public code,
with the candidate readings, their sources and the suite's current pick (docs/spec-questions.md).

Each :class:`Question` has a stable ID (``Q-ZCM-SPAN``), the sections it concerns, two or more
:class:`Reading` s precise enough to compute an outcome, and ``pick`` (the reading the suite's
expected values follow unless told otherwise). The reference functions that depend on a question
take an explicit ``reading=`` argument; left at ``None`` it resolves through :func:`reading`:

* the readings in force inside :func:`following` (innermost first; ``exact=True`` ignores the
  process defaults), else
* the process defaults (:func:`set_defaults`, the ``--reading Q=R`` option), else
* the question's ``pick``.

The simulated device follows its own ``readings={...}`` exactly (``ptxsim.SimDevice``), so a run
with ``--sim-reading Q=R`` (the device) and ``--reading Q=R`` (the expectation) can differ.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Iterator, Mapping

from reference.errors import SpecError, expects_but_got

NONE_OF_THEM = "none of the known readings"
NO_PROBE = "none: "      # a question's ``probe`` text when no legal kernel's outcome differs between its readings


@dataclass(frozen=True)
class Reading:
    """One candidate reading: ``id`` (short word), what it computes, and where it comes from."""

    id: str
    summary: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Question:
    """One open point of the spec text; ``probe`` says which kernel tells the readings apart, or
    starts with ``"none: "`` and says why no legal kernel can (:attr:`no_probe_reason`)."""

    id: str
    title: str
    sections: tuple[str, ...]
    readings: tuple[Reading, ...]
    pick: str
    probe: str
    listed_in: tuple[str, ...]

    def reading_ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.readings)

    @property
    def no_probe_reason(self) -> str:
        """Why no kernel tells the readings apart ("" when one does)."""
        return self.probe[len(NO_PROBE):] if self.probe.startswith(NO_PROBE) else ""

    def reading(self, rid: str) -> Reading:
        for r in self.readings:
            if r.id == rid:
                return r
        raise SpecError(self.sections[0], f"spec question {self.id}",
                        expects_but_got(f"reading of {self.id}", "one of " + ", ".join(self.reading_ids()), rid))


def _q(qid, title, sections, readings, pick, probe, listed_in) -> Question:
    return Question(qid, title, tuple(sections), tuple(Reading(i, s, tuple(src)) for i, s, src in readings), pick,
                    probe, tuple(listed_in))


QUESTIONS: dict[str, Question] = {q.id: q for q in (
    _q("Q-ZCM-SPAN", "Zero-column mask: which span field counts the zeroed columns", ["9.7.16.4.3"], [
        ("examples", "runs of 1-bits (columns read as zero) are skip_span+1 long, runs of 0-bits use_span+1",
         ["§9.7.16.4.3 worked examples 1-4", "NOTES.md item 1", "CUTLASS zero-column mask builder"]),
        ("table-prose", "Table 45's prose: runs of 1-bits are use_span+1 long, runs of 0-bits skip_span+1",
         ["§9.7.16.4.3 Table 45 bits 40-47 / 48-55 descriptions"]),
     ], "examples", "mma.ws kind::f16 M=32 N=64 with the mask of example 2 (skip 2, use 3): which D columns are A*B",
       ["NOTES.md item 1", "docs/mma.md", "README decisions"]),
    _q("Q-ZCM-SHIFT", "Zero-column mask with a column shift: does mask bit j name D column j or B column j",
       ["9.7.16.4.3"], [
        ("used-columns", "bit j zeroes the B column D column j uses (B column j + shift)",
         ["§9.7.16.4.3 example 4 ('columns from 2 to 129 will be used')", "reference/mma_semantics.py", "docs/mma.md"]),
        ("b-columns", "bit j zeroes B column j of the shared-memory matrix: D column j is zeroed by bit j + shift "
                      "(no bit past N-1)", ["§9.7.16.4.3 Table 45 'Shifts column by specified amount' (order unstated)"]),
     ], "used-columns", "tcgen05.mma.ws kind::f16 M=32 N=64 with the mask of example 4 (column shift 2)",
       ["docs/mma.md (zero-column mask vs column shift)"]),
    _q("Q-LBO-KSW", "K-major swizzled layouts: leading byte offset 'assumed 1' or honoured", ["9.7.16.4.1", "9.7.16.3.3"], [
        ("assumed-16", "the LBO field is ignored: the 16-byte units along K are 16 bytes apart (pre-swizzle)",
         ["§9.7.16.4.1 Table 40 'not used, assumed to be 1'", "CUTLASS make_umma_desc (writes 1)", "NOTES.md item 5"]),
        ("honoured", "16-byte unit u along K of a core-matrix row starts u * LBO bytes from the first (pre-swizzle)",
         ["a compiler comment saying the value is honoured (NOTES.md item 5)"]),
     ], "assumed-16", "kind::f16 MMA, K-major swizzled A and B placed with descriptor LBO = 32..1008 bytes (lbo_mode relative_lbo_set)",
       ["NOTES.md item 5", "docs/layouts.md item 3"]),
    _q("Q-LAYOUT-C", "Data-path Layout C (M=128, cta_group::2, sparse): 4x1 half datapath or CUTLASS's 2x2",
       ["9.7.16.10.5.3", "9.7.16.10.5"], [
        ("text-4x1-half", "per CTA, row i at lane 32*(i//16) + i%16 (+ alignment 0 or 16), column j (as Layout F)",
         ["§9.7.16.10.5 table: 4x1, 1/2 datapath utilized, alignment 0 or 16", "reference/datapath_layouts.py"]),
        ("cutlass-2x2", "per CTA, row i at lane i + 64*(j // (N/2)), column j % (N/2) (as Layout B), alignment 0",
         ["CUTLASS mma_traits_sm100_frag.hpp tmem_frg 2-SM atom (the sparse M=128 accumulator uses the dense 2x2)"]),
     ], "text-4x1-half", "tcgen05.mma.sp kind::f16 cta_group::2 M=128 N=64 (Layout C), D read back from all 128 lanes",
       ["docs/tmem.md (Layout C)", "reference/datapath_layouts.py"]),
    _q("Q-BASE-OFFSET", "Shared memory descriptor base offset: where the swizzle pattern's row phase is counted from",
       ["9.7.16.4.1", "9.7.16.3.2"], [
        ("pattern-anchor", "the row bits come from address - 128 * base_offset: the pattern starts at 128 * base_offset "
                           "modulo 1024 (base offset 0: the absolute-address swizzle)",
         ["§9.7.16.4.1 Table 41 'base offset = (pattern start addr >> 0x7) & 0x7'", "CUTLASS make_umma_desc",
          "docs/layouts.md item 4"]),
        ("start-phase", "the row phase is counted from the start address's 128-byte row plus the base offset",
         ["docs/layouts.md item 4 (the other reading)"]),
     ], "pattern-anchor", "a smoke MMA whose swizzled tile has its pattern (and start) at block + 128*j, base offset j != 0",
       ["docs/layouts.md item 4"]),
    _q("Q-META-0110", "2:4 / 4:8 metadata 0b0110 (indices 2 then 1) in tcgen05.mma.sp", ["9.7.16.10.8"], [
        ("as-listed", "0b0110 keeps chunk elements 2 and 1: the first stored element goes to position 2, the second to 1",
         ["§9.7.16.10.8.2/.3 list of meaningful values (seven, 0b0110 included)", "NOTES.md item 4"]),
        ("as-ordered", "0b0110 acts as 0b1001: the first stored element goes to position 1, the second to 2",
         ["warp-level mma.sp::ordered_metadata lists six ordered pairs only (§9.7.14.6.1)"]),
     ], "as-listed", "kind::f16 mma.sp M=128 N=8 with every metadata nibble 0b0110",
       ["NOTES.md item 4", "docs/mma.md", "docs/execute.md"]),
    _q("Q-META-TMEM", "Sparsity metadata of kind::f16/tf32 with 128 rows per CTA: which lane holds a row's chunks",
       ["9.7.16.10.8.4"], [
        ("cutlass-interleaved", "per 16 rows, row 8h+r: chunks 0-3 in bits 16h.. of lane r, chunks 4-7 of lane r+8",
         ["CUTLASS UMMA::tmem_e_frg (cute/atom/mma_traits_sm100.hpp:607-635)",
          "CUTLASS Sm1xxGemmSparseConfig::TensorEAtom_MMA_F16/TF32 (sm1xx_sparse_config.inl:115-122)",
          "docs/clients.md K4 (CuTe sparse kernels)"]),
        ("row-per-lane", "row i's word (chunk j at bits 4j) in lane i, as the 8-bit kinds' two words",
         ["Figures 262-265 missing; the earlier decision of reference/tmem_mma_operands.py"]),
     ], "cutlass-interleaved", "kind::f16 mma.sp cta_group::1 M=128 with random metadata",
       ["docs/clients.md K4", "reference/tmem_mma_operands.py"]),
    _q("Q-WS-A-LANES", ".ws M=32/64 with A in Tensor Memory: which lanes each data-path quarter reads A's rows from",
       ["9.7.16.10.5.5", "9.7.16.10.5.7", "9.7.16.10.4"], [
        ("own-quarter", "the lane quarters that compute D column block b (Layout E: b = j // (N/2), lanes 64b..; "
                        "Layout G: b = j // (N/4), lanes 32b..) read A's row i from their own lane i + 64b / 32b",
         ["FlashInfer 0.7.2.post1 cake_vsa_blk64_persistent_ws_m64n256.cu (P of KV rows 128..255 in lanes 64-127, "
          "summed with lanes 0-63 in its epilogue)", "flashinfer tests/attention/test_cake_vsa.py "
          "test_cake_vsa_blk64_full_group_rows_use_weight_stationary_profile (SM100/SM103)", "docs/clients.md F1"]),
        ("first-quarter", "every column block reads A's row i from lane i (the lanes of D[i][0])",
         ["the earlier decision of reference/tmem_mma_operands.py (CUTLASS tmem_frg_ws A atoms; Figures 209-212, "
          "216-218 missing)"]),
     ], "own-quarter", "tcgen05.mma.ws kind::f16 M=32 N=64, A in Tensor Memory: a different A in each lane quarter",
       ["docs/clients.md F1", "reference/tmem_mma_operands.py"]),
    _q("Q-ASHIFT-ROW0", ".ashift: what row 0 of A is", ["9.7.16.10.9.1"], [
        ("keeps-a0", "row 0 keeps A[0] (nothing moves into it)", ["reference.mma_semantics decision", "docs/mma.md"]),
        ("zero", "row 0 is zero (D row 0 = C, or 0 without enable-input-d)", ["docs/mma.md 'D row 0: A[0]*B or 0'"]),
     ], "keeps-a0", "kind::f16 MMA with .ashift, M=128: D row 0",
       ["docs/mma.md", "reference/mma_semantics.py"]),
    _q("Q-SHIFT-ROW0", "tcgen05.shift.down: what row 0 of the 32-row matrix holds afterwards", ["9.7.16.9.3"], [
        ("keeps", "row 0 keeps its content (rows 0..30 are copied to 1..31; nothing is written to row 0)",
         ["reference/tmem_shift.py decision", "docs/tmem.md (tcgen05.shift)"]),
        ("zero", "row 0 is cleared to zero (a shift that fills with zeros, as .ashift's row-0 alternative)",
         ["§9.7.16.9.3 'shifting ... downwards across all the rows, except the last' (says nothing of row 0)"]),
     ], "keeps", "tcgen05.shift.cta_group::1.down on random Tensor Memory, then read row 0 back",
       ["docs/tmem.md", "reference/tmem_shift.py"]),
    _q("Q-LDRED-ZERO", "tcgen05.ld.red .min/.max .f32: does -0.0 order below +0.0", ["9.7.16.8.3"], [
        ("neg-below", "-0.0 < +0.0: min of {+0, -0} is -0, max is +0, whatever the register order",
         ["IEEE 754-2019 §9.6 minimum/maximum and minimumNumber/maximumNumber (-0 < +0)",
          "reference/tmem_fragments.py reduce_lane", "docs/tmem.md (ld.red f32 decisions)"]),
        ("zeros-equal", "-0.0 == +0.0: the first of the equal extremes in register order is the result",
         ["IEEE 754-2008 §5.3.1 minNum/maxNum (which zero is returned is not specified)",
          "§9.7.16.8.3 defines .redOp, .abs and .NaN only (ptx-9.7.16-tcgen05.md:1213-1229)"]),
     ], "neg-below", "tcgen05.ld.red.32x32b.x2.min.f32 with register 0 = +0 and register 1 = -0 in every lane: "
                     "redval -0 (neg-below) or +0 (zeros-equal)",
       ["docs/tmem.md (ld.red NaN/abs/-0 order)", "reference/tmem_fragments.py"]),
    _q("Q-UNPACK-UPPER", "tcgen05.st .unpack::16b: what bits 16-31 of each written cell hold", ["9.7.16.8.2", "9.7.16.8.4"], [
        ("zero", "each 16-bit half is written zero-extended: bits 16-31 of the cell become 0",
         ["§9.7.16.10.4.1 'a Tensor Memory word would contain a single 16-bit element in its lower 16 bits' "
          "(ptx-9.7.16-tcgen05.md:1917-1919)", "reference/tmem_fragments.py", "docs/tmem.md (pack/unpack, Figure 193)"]),
        ("preserved", "only bits 0-15 of the cell are written; bits 16-31 keep what the cell held before the store",
         ["§9.7.16.8.2 'unpacked into two 16-bit chunks' (ptx-9.7.16-tcgen05.md:1169, 1425-1427: says nothing of the "
          "upper half)", "CUTLASS *_16b tcgen05.st atoms (ValID covers bits 0-15 of each column only)"]),
     ], "zero", "tcgen05.st .unpack::16b over preloaded random Tensor Memory, then read the cells back (bits 16-31: "
                "0 or the preloaded bits)",
       ["docs/tmem.md (.unpack::16b upper bits)", "reference/tmem_fragments.py"]),
    _q("Q-DOL-2CTA", "disable-output-lane under cta_group::2: which bits name which CTA's lanes", ["9.7.16.10.9.1"], [
        ("cta-halves", "bit b (bit b % 32 of element b // 32) is lane b % 128 of CTA b // 128 of the pair "
                       "(CTA 0 holds D rows 0..M/2-1)", ["the vector size 8 for ::2 (2 x 128 lanes)", "docs/mma.md"]),
        ("lanes-shared", "bit l < 128 is lane l of both CTAs; elements 4-7 are not used",
         ["§9.7.16.10.9.1 'each bit corresponds to a lane of the Tensor Memory' (128 lanes)"]),
     ], "cta-halves", "tcgen05.mma cta_group::2 M=256 with only element 7 of the vector set: CTA 1 lanes 96-127 kept, "
                      "or every lane written",
       ["docs/mma.md (disable-output-lane, cta_group::2)"]),
    _q("Q-FP8-ALIGN", "fp8/fp6/fp4 (kind::f8f6f4, mxf8f6f4) alignment of products: truncation toward zero or toward -inf",
       ["9.7.16.10.6"], [
        ("toward-zero", "bits below the alignment point (F = 25 fraction bits of 2^e_max) are dropped from the magnitude (trunc)",
         ["MMA-Sim Blackwell model (arXiv:2511.10909)", "docs/mma.md"]),
        ("toward-minus-inf", "two's-complement alignment: bits below the point round the value down (floor)",
         ["fixed-point adders that shift two's-complement significands"]),
     ], "toward-zero", "kind::f8f6f4 D f32, C = 2^E and one product -2^(E-26) per element (e2m3 x e3m2: C = 2^19, "
                       "product -2^-7): D = C (trunc) or C - 2^(E-24) (floor)",
       ["docs/mma.md"]),
    _q("Q-E-ZERO", "Zero products and a zero C: do they take part in the alignment exponent e_max", ["9.7.16.10.6"], [
        ("competes", "a zero product (or zero C) has exponent e_zero (-133 f32 D, -21 f16 D, -139 mxf4) in e_max",
         ["MMA-Sim Blackwell model (arXiv:2511.10909) e_zero", "docs/mma.md"]),
        ("ignored", "zero terms take no part in e_max (only nonzero products and C set the alignment point)",
         ["the MMA text: the sum of products is not described per term; IEEE-style addition ignores zeros"]),
     ], "competes", "kind::tf32 D f32, C = 0: per element products 2^-145 and -2^-165 and a zero product: D = 2^-145 "
                    "(e_max -133 drops -2^-165) or 2^-145 - 2^-149 (e_max -145 keeps it, RZ)",
       ["docs/mma.md (zero-product exponent e_zero)"]),
    _q("Q-SCALE-INPUT-D", "scale-input-d: C * 2^-s exact (C's exponent minus s) or rounded to D's format first",
       ["9.7.16.10.9.1"], [
        ("exponent", "C enters the sum with its exponent minus s, all its bits (then aligned like any term)",
         ["docs/mma.md (scale-input-d on hardware)", "reference/numerics_hw.py c_shift"]),
        ("c-rounded", "C * 2^-s is first rounded to D's format (RZ f32 / RNE f16; subnormals kept), then added",
         ["§9.7.16.10.9.1 writes D * 2^-scale-input-d as its own product"]),
     ], "exponent", "kind::tf32 D f32, enable-input-d, s = 4..7: C = (1 + 2^-23) 2^-126 and one product -2^-(148+s): "
                    "D = 2^-(126+s) - 2^-149 (exact) or 2^-(126+s) (C rounded first)",
       ["docs/mma.md (scale-input-d on hardware)"]),
    _q("Q-I8-SAT", "kind::i8 .satfinite: clamp the exact sum once, or saturate the running accumulator",
       ["9.7.16.10.9.1", "9.7.16.4.2"], [
        ("clamp-once", "D = clamp(C + sum of the products) to [-2^31, 2^31 - 1], the sum exact",
         ["docs/mma.md (i8 saturate)", "reference/mma_semantics.py integer_mma"]),
        ("running", "C, then the products in K order, are added one at a time, clamping after each addition",
         ["an accumulator that saturates (the text does not say when saturation applies)"]),
     ], "clamp-once", "kind::i8 (s8 operand) .satfinite with enable-input-d: C = 2^31 - 101, products +16129 then "
                      "-16129: D = 2^31 - 101 or 2^31 - 1 - 16129",
       ["docs/mma.md (i8 saturate)"]),
    _q("Q-RZ-OVERFLOW", "Round-toward-zero D (f32) that overflows: Inf or the largest finite value", ["9.7.16.10.6"], [
        ("inf", "a sum >= 2^128 rounds to Inf (of its sign)", ["MMA-Sim Blackwell model (arXiv:2511.10909)", "docs/mma.md"]),
        ("max-finite", "a sum >= 2^128 rounds to the largest finite f32 (of its sign), as IEEE 754 roundTowardZero",
         ["IEEE 754-2019 §7.4 (overflow under roundTowardZero)"]),
     ], "inf", "kind::tf32 D f32: per element products 2^127 + 2^127 (A = 2^64, B = 2^63 twice): Inf or 0x7F7FFFFF",
       ["docs/mma.md (RZ overflow)"]),
    _q("Q-TF32-TRUNC", "tf32 operands: low 13 mantissa bits ignored (truncated) or rounded", ["9.7.16.10.6"], [
        ("truncate", "the low 13 bits of a tf32 operand's f32 container are ignored",
         ["NOTES.md item 10 (published measurements)", "docs/formats.md"]),
        ("round-nearest", "the f32 container is rounded to nearest-even at 10 mantissa bits",
         ["cvt.rna.tf32.f32 rounds; the MMA text does not say"]),
     ], "truncate", "kind::tf32 MMA whose operands carry nonzero low 13 bits", ["NOTES.md item 10", "docs/formats.md"]),
    _q("Q-K96-SFW", "K = 96 scale factors: column distance to the next set of four bytes when MN < 128",
       ["9.7.16.10.7"], [
        ("group-of-4", "W = ceil(ceil(MN/32)/4)*4 columns (4 for MN <= 128)",
         ["CUTLASS sm103 block-scaled collective", "reference/tmem_mma_operands.py",
          "CuTe oracle: tmem_sf_frg lays SFB of N = 192 K = 96 MMAs over 256 columns (docs/clients-cute.md CU6)",
          "corpus kernel cute.k96_nvf4_ue4m3_m128n192 (CUTLASS sm103 mainloop pieces, N = 192): bit-exact under "
          "group-of-4, 24557 of 24576 outputs differ under compact (docs/clients-cute.md CU9)"]),
        ("compact", "W = ceil(MN/32) columns (the next set follows at once)", ["the missing Figures 234-258 (not public)"]),
     ], "group-of-4", "kind::mxf4 K = 96 block32 (3 scale factors) N = 16, B scale id 2: byte 4 in the next column group", ["docs/mma.md", "docs/tmem.md"]),
    _q("Q-SFB-2CTA", "cta_group::2 block scaling: which CTA supplies B's scale factors", ["9.7.16.10.7"], [
        ("lead", "the issuing (even) CTA's SFB holds all N columns", ["reference/tmem_mma_operands.py", "docs/clients.md C3",
         "CuTe oracle: 2x1SM MMA_ScaleFactor puts all N SFB columns in every CTA (docs/clients-cute.md CU6)"]),
        ("split", "each CTA's SFB holds its own N/2 columns (CTA 0: 0..N/2-1, CTA 1: N/2..N-1) at the same address",
         ["Gluon TensorMemoryScalesLayout(cga_layout=[[1, 0]])", "docs/clients.md C3"]),
     ], "lead", "kind::mxf8f6f4 cta_group::2 M=256 N=256, SFB placed once as each reading says (lead: all N in both "
                "CTAs; split: N/2 per CTA)",
       ["docs/clients.md C3", "issue 16 (SFB under cta_group::2)"]),
    _q("Q-K96-M128", "K = 96 (sm_103a) with M = 128: outside Table 39, or legal as CuTe's sm_103 atoms issue it",
       ["9.7.16.2.1", "9.7.16.10.7"], [
        ("table-39", "K = 96 is legal only as 256xNx96 with cta_group::2: an M = 128 descriptor with the K bit is "
                     "illegal and the MMA is refused (the kernel traps or reports an error; no D)",
         ["§9.7.16.2.1 Table 39 (K1 = 96 only in the 256xNxK1 row, cta_group::2)", "reference/tables.py TABLE_39",
          "docs/clients-cute.md CU2"]),
        ("cute-m128", "K = 96 is also legal with cta_group::1 M = 128 and cta_group::2 M = 128: D = A * B as any "
                      "block-scaled MMA (3 block32 / 6 block16 scale factors per row)",
         ["CuTe SM103_MXF4_ULTRA_SS_VS static_assert(M == 128) (cute/arch/mma_sm100_umma.hpp:1642) and "
          "SM103_MXF4_ULTRA_2x1SM_SS_VS (M = 128 or 256); k_size_ = 1 (cute/atom/mma_traits_sm100.hpp:3924)",
          "docs/clients-cute.md CU2",
          "CUTLASS 4.2 example 89_sm103_fp4_ultra_gemm (NVIDIA's sm_103a example): KernelTmaWarpSpecialized1Sm"
          "BlockScaledMxNvf4UltraVs16Sm103, MmaTileShape 128x128x768, i.e. tcgen05.mma.cta_group::1.kind::mxf4nvf4."
          "block_scale.block16 with an M = 128 K = 96 descriptor; the corpus kernel cute.k96_nvf4_ue4m3_m128n128 "
          "runs its mainloop's pieces (docs/clients-cute.md CU9)"]),
     ], "cute-m128", "kind::mxf4 block32 K = 96 cta_group::1 M=128 N=64 (sm_103a): refused (table-39) or D = A*B "
                    "(cute-m128)", ["docs/clients-cute.md CU2", "docs/clients-cute.md CU9"]),
    _q("Q-KMAJOR-BASE32B", "K-major operand with 128B swizzling and 32B atomicity (descriptor swizzle mode 1): "
       "outside the legal matrix (Table 53) or legal (Table 52)", ["9.7.16.10.3", "9.7.16.10.6", "9.7.16.4.1"], [
        ("table-53", "not a legal layout: an MMA that reads a K-major operand whose descriptor says 128B with 32B "
                     "atomicity has an undefined outcome (the launch is refused, or D is something other than "
                     "the legal readings' A*B)",
         ["§9.7.16.10.6 Table 53: the 32B-atomicity row has an M/N atom (8x4) and '–' for K "
          "(ptx-9.7.16-tcgen05.md:2170-2171); the canonical-layout table of §9.7.16.3.3 has no 32B-atomicity row",
          "CUTLASS 4.2 make_umma_desc<Major::K>: 'B128_BASE32B : Not applicable for Major-K' and static_assert "
          "'SWIZZLE_128B_BASE32B is invalid for Major-K' (cute/atom/mma_traits_sm100.hpp:279, 282)",
          "no client kernel of the corpus uses it (docs/clients-crossref.md)"]),
        ("legal-8-rows", "legal: K-major rows of 128 B, 8 rows per stride-byte-offset group (SBO = the offset from "
                         "the first 8 rows to the next 8, as every K-major mode), leading byte offset unused, the "
                         "32-byte chunks of each row XOR the row's phase (address bits 7-8: Swizzle<2,5,2>)",
         ["§9.7.16.10.3 Table 52: 'Row' A / 'Column' B (K-major), every type size: 'All swizzling modes' "
          "(ptx-9.7.16-tcgen05.md:1906-1907)", "§9.7.16.10.2 restricts 32B atomicity only for transposed "
          "operands (ptx-9.7.16-tcgen05.md:1859-1863)", "§9.7.16.3.2 K-major SBO: 'offset from the first 8 rows "
          "to the next 8 rows'"]),
        ("legal-4-rows", "legal as legal-8-rows, but the stride-byte-offset groups are the 32B atom's 4 rows "
                         "(SBO = the offset from the first 4 rows to the next 4)",
         ["DeepGEMM mma/sm100.cuh make_umma_desc<Major::K, ..., kUseBase32 = true>: SBO = (128 / 32) x row bytes "
          "(deepseek-ai/DeepGEMM 54e2261, deep_gemm/include/deep_gemm/mma/sm100.cuh:56-59, 63-80, 94-108; no "
          "upstream kernel sets kUseBase32)", "the MN-major 32B-atomicity atom's 4 rows (Table 53 8x4; CUTLASS "
          "Layout_MN_SW128_32B_Atom)"]),
     ], "table-53", "kind::f16 MMA M=128 N=64 with A and B K-major in 128B_base32B (built outside the case lists): "
                    "D = A*B read with 8-row or 4-row SBO groups, or a refused launch / any other D (table-53)",
       ["issue 25 item 2", "README open risks", "docs/layouts.md item 6", "docs/generators.md decisions"]),
    _q("Q-SFB-2X2", "cta_group::2 M = 128 block scaling: B's scale factors in every lane quarter or split by "
                    "data-path half", ["9.7.16.10.7", "9.7.16.10.5"], [
        ("replicated", "every 32-lane quarter holds all N columns (column n at lane n % 32, cell n // 32)",
         ["§9.7.16.10.7 'Scale factors for A and B matrices need to be duplicated to all 32 lane partitions' "
          "(ptx-9.7.16-tcgen05.md:2288)", "reference/tmem_mma_operands.py pack_scale_factors", "docs/clients-cute.md CU7"]),
        ("by-datapath", "column n at lane 64 * (n // (N/2)) + n % 32 (and 32 lanes up), cell (n % (N/2)) // 32: "
                        "each data-path half of the 2x2 D layout holds the N/2 columns it computes",
         ["CuTe ScaleFactorDuplicated2by2 (cute/atom/mma_traits_sm100.hpp:3677-3678, tmem_sf_frg SFB branch "
          "lines 861-870)", "docs/clients-cute.md CU7"]),
     ], "replicated", "kind::mxf8f6f4 cta_group::2 M=128 N=64, distinct scale factors per B column, SFB placed as each "
                      "reading says: columns 32-63 read from lanes 64-127 cell 0 or from lanes 0-127 cell 1",
       ["docs/clients-cute.md CU7"]),
    _q("Q-DESC-53-60", "Shared memory descriptor bits 53-60: 'Fixed constant value of 0xb00000000'", ["9.7.16.4.1"], [
        ("zero", "the field is 0 (the hex prefix is a typo for eight zero bits); bits 46-48 hold the constant 0b001",
         ["NOTES.md item 2", "CUTLASS UMMA::SmemDescriptor (writes 1 << 46 and nothing above bit 48)"]),
        ("literal", "the field holds 0xb00000000 as written", ["§9.7.16.4.1 Table 40 text"]),
     ], "zero", NO_PROBE + "0xb00000000 is 36 bits wide and the field 8: no descriptor can hold the literal value, so "
                           "no kernel follows the reading 'literal' (the suite and every public source write 0)",
       ["NOTES.md item 2"]),
    _q("Q-BS-M-FIELD", "Block-scaled instruction descriptor: M at bits 27-28 (M>>7) or at bits 24-28 (M>>4)",
       ["9.7.16.4.2"], [
        ("bits-27-28", "M >> 7 at bits 27-28, bits 24-26 reserved (zero)", ["§9.7.16.4.2 Table 44", "NOTES.md item 3"]),
        ("bits-24-28", "M >> 4 at bits 24-28 (as the other kinds)", ["CUTLASS UMMA::InstrDescriptorBlockScaled", "NOTES.md item 3"]),
     ], "bits-27-28", NO_PROBE + "the only legal M of the block-scaled kinds are 128 and 256, whose encodings are the same "
                                 "word under both readings (1 << 27, 2 << 27); a descriptor with bits 24-26 set is illegal "
                                 "under one reading and means another M under the other (decode rejects it)",
       ["NOTES.md item 3"]),
    _q("Q-K96-SFID", "K = 96 block32 scale factor ids: 0-3 (Figures 234-237) or 0, 2 (Table 44)", ["9.7.16.10.7.2", "9.7.16.4.2"], [
        ("figures", "block32 (3 factors) takes ids 0-3, block16 (6 factors) 0 and 2; id = first byte",
         ["§9.7.16.10.7 Figures 234-237 titles", "CUTLASS sm103 block-scaled collective", "docs/mma.md"]),
        ("table-44", "ids 0 and 2 only; ids 1 and 3 are not legal", ["§9.7.16.4.2 Table 44 (mxf4/mxf4nvf4: 0 or 2)"]),
     ], "figures", NO_PROBE + "the readings differ in which ids are legal, not in what a legal id computes: ids 0 and 2 "
                              "give the same D under both, and ids 1 and 3 have a defined result only under 'figures' "
                              "(a device that computes it agrees with both; one that does not is outside both)",
       ["docs/mma.md", "reference/tables.py descriptor_scale_ids"]),
    _q("Q-CP-NIBBLE", "tcgen05.cp 4-bit to 8-bit decompression: where the nibble lands", ["9.7.16.9.1"], [
        ("bits-5-2", "the 4-bit value goes to bits 5-2 of its byte (the MMA's 8-bit container)",
         ["CUTLASS mma_traits_sm120.hpp", "docs/tmem.md"]),
        ("bits-3-0", "the 4-bit value goes to bits 3-0 of its byte (as ldmatrix does)", ["ldmatrix .b4x16_p64", "docs/tmem.md"]),
     ], "bits-5-2", "tcgen05.cp .b4x16_p64 -> .b8x16, then tcgen05.ld", ["docs/tmem.md"]),
    _q("Q-SYNC-FENCE", "tcgen05 operations ordered across threads: are the tcgen05 fences needed around an "
       "acquire/release synchronization", ["9.7.16.6.3", "9.7.16.6.4"], [
        ("fence-required", "only tcgen05.fence::before_thread_sync -> synchronization -> "
                           "tcgen05.fence::after_thread_sync orders tcgen05 operations across threads "
                           "(tcgen05.commit performs the before-fence implicitly); an mbarrier wait, bar.sync or "
                           "cluster barrier alone does not",
         ["§9.7.16.6.3 (the fences order tcgen05 operations across thread synchronization)",
          "§9.7.16.6.4.2 example 2 and §9.7.16.6.4.4: fence::after_thread_sync after the mbarrier wait "
          "(spec/ptx-9.7.16-tcgen05.md lines 905-911, 942-967; the examples wait with mbarrier.try_wait.relaxed.cluster)"]),
        ("acquire-orders", "an acquire-semantics synchronization (mbarrier.try_wait/test_wait without .relaxed, "
                           "bar.sync/barrier.sync, barrier.cluster.wait) acts as tcgen05.fence::after_thread_sync "
                           "for the waiting thread and a release-semantics arrival (mbarrier.arrive without "
                           ".relaxed, bar arrival, barrier.cluster.arrive without .relaxed, tcgen05.commit) as "
                           "tcgen05.fence::before_thread_sync; .relaxed synchronization still needs the fences",
         ["§9.7.16.6.3 'the standard memory consistency model synchronization mechanisms also apply to the "
          "tcgen05 family' (spec/ptx-9.7.16-tcgen05.md line 847)",
          "Triton 3.9's PTX (the client corpus): 240 waits, all mbarrier.try_wait.parity.shared::cta.b64 "
          "(default .acquire), no tcgen05.fence; hardware-tested",
          "CUTLASS 4.2 headers (nvidia-cutlass wheel): no tcgen05.fence anywhere; cutlass/arch/barrier.h:885 "
          "fence_view_async_tmem_load is tcgen05.wait::ld; barrier.h:418 waits with "
          "mbarrier.try_wait.parity.shared::cta.b64"]),
     ], "fence-required", NO_PROBE + "the readings differ in whether a kernel without the tcgen05 fences races, "
       "and a race is not deterministically observable on hardware (a run that computes the right value agrees "
       "with both; one that does not may be a scheduling accident): the hazard checker follows the reading "
       "(SimDevice(readings=...))", ["docs/sim.md (Hazard checker, triage of client reports)", "docs/hazards.md"]),
    _q("Q-PAIR-DEALLOC", "CTA pair: may a CTA exit before its peer has issued the collective "
       "tcgen05.alloc/dealloc/relinquish_alloc_permit.cta_group::2 it performed itself", ["9.7.16.5", "9.7.16.7.1"], [
        ("exit-ordered", "every .cta_group::2 operation, the collective allocation instructions included, must be "
                         "ordered before the peer CTA's exit (the peer is active when the operation is issued)",
         ["§9.7.16.5 Table 46 (alloc/dealloc/relinquish: 'When the current CTA issues the operation, the peer CTA "
          "should be active and should not have exited')", "§9.7.16.7.1 (the issuing warp must make sure the peer "
          "CTA is launched and still active)"]),
        ("collective", "the two warps perform a collective allocation instruction together: a CTA whose warp performed "
                       "its own matching collective instruction stays active for the peer's, with no further "
                       "synchronization (other .cta_group::2 operations still need the peer's exit ordered after them)",
         ["§9.7.16.7.1 ('one warp from each of the peer CTAs must collectively perform the allocation and "
          "de-allocation')", "Triton 3.9 / Gluon two_ctas PTX (the client corpus): tcgen05.dealloc.cta_group::2 then "
          "ret, no cluster barrier after", "CUTLASS include/cutlass/gemm/kernel/sm100_gemm_tma_warpspecialized.hpp:791-804 "
          "(commit 7107b0553): the MMA warps hand-shake through a cluster mbarrier, then free and exit; nothing orders "
          "the follower's exit after the leader's free"]),
     ], "exit-ordered", NO_PROBE + "the readings differ in whether a kernel whose CTA exits before its peer's "
       "collective dealloc races, and such a race is not deterministically observable on hardware: the hazard "
       "checker follows the reading (rule peer-active, SimDevice(readings=...))",
       ["docs/sim.md (Hazard checker, the CTA pair)", "docs/hazards.md"]),
    _q("Q-MMA-CP-ORDER", "tcgen05.mma -> tcgen05.cp of the same thread: may the copy overwrite Tensor Memory the "
       "issued MMA reads (scale factors) without waiting for its completion", ["9.7.16.6.2", "9.7.16.6.2.1.1"], [
        ("listed", "only the pairs of §9.7.16.6.2 execute in issue order; mma -> cp is not one, so a tcgen05.cp "
                   "over the MMA's scale factors (or A, metadata) must follow the MMA's observed completion "
                   "(tcgen05.commit -> mbarrier wait)",
         ["§9.7.16.6.2 (pipelined pairs: mma -> mma, cp -> mma, shift -> mma, shift -> cp.4x256b, mma -> shift)"]),
        ("in-order", "a tcgen05.cp issued after a tcgen05.mma by the same thread (same cta_group) executes after the "
                     "MMA has read its Tensor Memory operands, as the pipelined pairs do",
         ["CUTLASS 4.2 cutlass/gemm/collective/sm100_blockscaled_mma_warpspecialized.hpp:1014-1025, 1061-1069 "
          "(every k-tile: copy(tiled_copy_s2t_SFA, ..., thr_tCtSFA_s2t) to the same TMEM columns, then the MMAs, "
          "no wait in between)",
          "CUTLASS 4.2 cutlass/gemm/collective/sm103_blockscaled_mma_warpspecialized.hpp sf_load_fn (a new SF buffer "
          "copied over the previous one every 2 or 4 MMAs; example 89_sm103_fp4_ultra_gemm)",
          "docs/clients-cute.md CU10 (cute.k96_*)"]),
     ], "listed", NO_PROBE + "the readings differ in whether a kernel that overwrites an in-flight MMA's scale "
       "factors races, and an MMA that read late is not deterministically observable on hardware: the hazard "
       "checker follows the reading (rule tmem-overwrite, SimDevice(readings=...))",
       ["docs/clients-cute.md CU10", "docs/hazards.md"]),
)}


# -- resolution ------------------------------------------------------------------------------------

_DEFAULTS: dict[str, str] = {}
_CURRENT: contextvars.ContextVar[tuple[Mapping[str, str], bool] | None] = contextvars.ContextVar(
    "spec_question_readings", default=None)


def question(qid: str) -> Question:
    """The question ``qid``; one-line error naming the known IDs otherwise."""
    try:
        return QUESTIONS[qid]
    except KeyError:
        raise SpecError("9.7.16", "spec questions", expects_but_got(
            "spec question", "one of " + ", ".join(QUESTIONS), qid)) from None


def check_readings(readings: Mapping[str, str] | None) -> dict[str, str]:
    """``{QID: reading}`` validated (known question, known reading of it)."""
    out = {}
    for qid, rid in dict(readings or {}).items():
        out[qid] = question(qid).reading(rid).id
    return out


def parse_assignment(text: str) -> tuple[str, str]:
    """``"Q-ZCM-SPAN=table-prose"`` -> ``("Q-ZCM-SPAN", "table-prose")``, validated."""
    qid, sep, rid = str(text).partition("=")
    if not sep:
        raise SpecError("9.7.16", "spec questions", expects_but_got("reading assignment", "QID=READING", text))
    qid, rid = qid.strip(), rid.strip()
    question(qid).reading(rid)
    return qid, rid


def parse_assignments(texts) -> dict[str, str]:
    return dict(parse_assignment(t) for t in texts or ())


def set_defaults(readings: Mapping[str, str] | None) -> None:
    """Process-wide readings of the expected values (``--reading``); ``None``/``{}`` = the picks."""
    _DEFAULTS.clear()
    _DEFAULTS.update(check_readings(readings))


def defaults() -> dict[str, str]:
    return dict(_DEFAULTS)


def reading(qid: str) -> str:
    """The reading of ``qid`` in force here (module docstring)."""
    q = question(qid)
    current = _CURRENT.get()
    if current is not None:
        mapping, exact = current
        if qid in mapping:
            return mapping[qid]
        if exact:
            return q.pick
    return _DEFAULTS.get(qid, q.pick)


def is_explicit(qid: str) -> bool:
    """Whether ``qid``'s reading was chosen (``following`` or ``--reading``), not left at the pick:
    the reference then marks nothing of it spec-ambiguous."""
    current = _CURRENT.get()
    if current is not None and qid in current[0]:
        return True
    return (current is None or not current[1]) and qid in _DEFAULTS


def resolve(qid: str, given: str | None) -> str:
    """An explicit ``reading=`` argument (validated), else :func:`reading`."""
    return question(qid).reading(given).id if given is not None else reading(qid)


def in_force() -> dict[str, str]:
    """Every question's reading in force here."""
    return {qid: reading(qid) for qid in QUESTIONS}


@contextlib.contextmanager
def following(readings: Mapping[str, str] | None, exact: bool = False) -> Iterator[dict[str, str]]:
    """Inside the block the reference follows ``readings``; with ``exact`` every other question
    follows its pick (not the process defaults): the simulated device's own readings."""
    checked = check_readings(readings)
    outer = _CURRENT.get()
    if not exact and outer is not None:
        merged = dict(outer[0])
        merged.update(checked)
        token = _CURRENT.set((merged, outer[1]))
    else:
        token = _CURRENT.set((checked, exact))
    try:
        yield checked
    finally:
        _CURRENT.reset(token)


__all__ = ["Reading", "Question", "QUESTIONS", "NONE_OF_THEM", "NO_PROBE", "question", "check_readings", "parse_assignment",
           "parse_assignments", "set_defaults", "defaults", "reading", "resolve", "is_explicit", "in_force", "following"]
