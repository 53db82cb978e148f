"""The built-in catalogue of plausible hardware/toolchain faults for the mutation score.

Each :class:`Fault` transforms one decoded effect at one hook point (docs/sim.md has the value
types and ctx fields) and carries a one-line rationale: the bug in silicon, microcode, driver or
compiler it stands for. A fault that does not apply to an instruction returns the value unchanged,
so every fault can stay active over a whole run. ``FAULTS`` is also what a ``--faults-from`` file
defines; this module is the model for such files.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ptxsim.faults.model import Fault
from reference import formats as F


def _when(cond, change):
    """``fn(value, ctx)``: ``change(value, ctx)`` where ``cond(value, ctx)``, else the value."""
    return lambda v, ctx: change(v, ctx) if cond(v, ctx) else v


# -- shared memory descriptor ---------------------------------------------------------------------

def _swizzle(old, new):
    return _when(lambda d, c: d.swizzle == old, lambda d, c: replace(d, swizzle=new))


SMEM = [
    Fault("swizzle-64B-read-as-32B", "smem_desc", _swizzle("64B", "32B"),
          "swizzle code 4 (64B) decoded as 6 (32B): one bit of the layout-type field stuck at 1"),
    Fault("swizzle-128B-read-as-64B", "smem_desc", _swizzle("128B", "64B"),
          "row-phase XOR uses 2 instead of 3 address bits for 128-byte swizzling"),
    Fault("swizzle-128B-base32B-read-as-128B", "smem_desc", _swizzle("128B_base32B", "128B"),
          "32-byte atomicity flag ignored: 16-byte chunks permuted instead of 32-byte ones"),
    Fault("swizzle-ignored", "smem_desc", _when(lambda d, c: d.swizzle != "none", lambda d, c: replace(d, swizzle="none")),
          "layout-type field not wired to the address generator"),
    Fault("base-offset-ignored", "smem_desc", _when(lambda d, c: d.base_offset != 0, lambda d, c: replace(d, base_offset=0)),
          "pattern start offset (bits 49-51) not applied to the swizzle phase"),
    Fault("lbo-sbo-swapped-mn-major", "smem_desc",
          _when(lambda d, c: c.major == "MN" and d.lbo_mode == "relative",
                lambda d, c: replace(d, leading_byte_offset=d.stride_byte_offset, stride_byte_offset=d.leading_byte_offset)),
          "MN-major operands take LBO and SBO in the opposite roles (the two majors name them differently)"),
    Fault("lbo-read-as-sbo-no-swizzle", "smem_desc",
          _when(lambda d, c: d.swizzle == "none" and d.lbo_mode == "relative",
                lambda d, c: replace(d, leading_byte_offset=d.stride_byte_offset)),
          "field select mux picks bits 32-45 for both strides of an interleaved layout"),
    Fault("sbo-off-by-one-unit", "smem_desc", lambda d, c: replace(d, stride_byte_offset=(d.stride_byte_offset + 16) % (1 << 18)),
          "SBO decoded with an extra 16-byte unit (>>4 encoding off by one)"),
    Fault("start-address-low-bits-dropped", "smem_desc",
          _when(lambda d, c: d.start_address % 128, lambda d, c: replace(d, start_address=d.start_address & ~0x7F)),
          "start address truncated to a 128-byte row boundary"),
    Fault("k-major-swizzled-lbo-honoured", "smem_units",
          _when(lambda v, c: c.major == "K" and c.desc.swizzle != "none" and c.desc.lbo_mode == "relative",
                lambda v, c: v + c.unit * (c.desc.leading_byte_offset - 16)),
          "K-major swizzled operand: LBO used as the stride between 16-byte units along K (§9.7.16.3.1: not used)"),
    Fault("absolute-lbo-mode-ignored", "smem_desc",
          _when(lambda d, c: d.lbo_mode == "absolute", lambda d, c: replace(d, lbo_mode="relative")),
          "bit 52 (leading-dimension absolute address mode, sm_103) not decoded"),
]

# -- instruction descriptor -----------------------------------------------------------------------

def _field(name, cond, value):
    return _when(lambda d, c: cond(d), lambda d, c: replace(d, **{name: value(d)}))


IDESC = [
    Fault("negate-a-ignored", "instr_desc", _field("negate_a", lambda d: d.negate_a, lambda d: False),
          "negate-A bit (13) not routed to the multiplier sign"),
    Fault("negate-b-ignored", "instr_desc", _field("negate_b", lambda d: d.negate_b, lambda d: False),
          "negate-B bit (14) not routed to the multiplier sign"),
    Fault("transpose-a-ignored-8bit", "instr_desc",
          _field("transpose_a", lambda d: d.transpose_a and d.a_type in ("e4m3", "e5m2", "u8", "s8", "e2m3", "e3m2", "e2m1"),
                 lambda d: False), "MN-major A of 8-bit types read as K-major (transpose path only built for 16/32-bit)"),
    Fault("transpose-b-ignored", "instr_desc", _field("transpose_b", lambda d: d.transpose_b, lambda d: False),
          "transpose-B bit (16) not decoded"),
    Fault("saturate-ignored", "instr_desc", _field("saturate", lambda d: d.saturate, lambda d: False),
          "i8 saturation bit (3) ignored: results wrap modulo 2^32"),
    Fault("n-off-by-8", "instr_desc", _field("n", lambda d: d.n > 8, lambda d: d.n - 8),
          "N>>3 field decoded one step short: the last 8 columns of D are never written"),
    Fault("bf16-read-as-f16", "instr_desc",
          _when(lambda d, c: "bf16" in (d.a_type, d.b_type),
                lambda d, c: replace(d, a_type="f16" if d.a_type == "bf16" else d.a_type,
                                     b_type="f16" if d.b_type == "bf16" else d.b_type)),
          "atype/btype code 1 decoded as f16 instead of bf16"),
    Fault("e5m2-read-as-e4m3", "instr_desc",
          _when(lambda d, c: "e5m2" in (d.a_type, d.b_type),
                lambda d, c: replace(d, a_type="e4m3" if d.a_type == "e5m2" else d.a_type,
                                     b_type="e4m3" if d.b_type == "e5m2" else d.b_type)),
          "FP8 format code bit 0 ignored: E5M2 operands decoded as E4M3"),
    Fault("a-b-types-swapped", "instr_desc",
          _when(lambda d, c: d.a_type != d.b_type, lambda d, c: replace(d, a_type=d.b_type, b_type=d.a_type)),
          "atype (bits 7-9) and btype (bits 10-12) fields swapped in the decoder"),
    Fault("d-f16-written-as-f32", "instr_desc",
          _when(lambda d, c: d.d_type == "f16" and d.kind in ("f16", "f8f6f4"), lambda d, c: replace(d, d_type="f32")),
          "dtype bits 4-5 ignored: f16 accumulators computed and stored as f32"),
    Fault("sparsity-selector-ignored", "instr_desc",
          _field("sparsity_selector", lambda d: d.sparsity_selector != 0, lambda d: 0),
          "sparsity selector (bits 0-1) not applied: metadata always read from sub-column 0"),
    Fault("scale-type-ue4m3-as-ue8m0", "instr_desc",
          _field("scale_type", lambda d: d.scale_type == "ue4m3", lambda d: "ue8m0"),
          "scale type bit 23 ignored on mxf4nvf4: ue4m3 scales decoded as ue8m0"),
]

# -- zero-column mask -----------------------------------------------------------------------------

def _mask_of(desc, m, n):
    bits = desc.mask(m, n)
    return np.array([(bits >> j) & 1 for j in range(n)], dtype=bool)


ZCM = [
    Fault("zero-column-mask-ignored", "zero_column_mask", lambda v, c: np.zeros_like(v),
          "non-zero-mask flag (bit 39) never seen: B columns are never replaced by zeros"),
    Fault("zero-column-mask-inverted", "zero_column_mask", lambda v, c: ~v,
          "mask polarity reversed: 1 = use B"),
    Fault("skip-use-spans-swapped", "zero_column_mask",
          lambda v, c: _mask_of(replace(c.desc, skip_span=c.desc.use_span, use_span=c.desc.skip_span), c.m, c.n),
          "skip span and use span fields swapped (the Table 45 wording, NOTES.md item 1)"),
    Fault("start-counts-ignored", "zero_column_mask",
          lambda v, c: _mask_of(replace(c.desc, start_count=(0, 0, 0, 0)), c.m, c.n),
          "start counts (bits 0-31) not applied: every sub-mask starts at the beginning of its pattern"),
    Fault("first-span-ignored", "zero_column_mask",
          lambda v, c: _mask_of(replace(c.desc, first_span=(0, 0, 0, 0)), c.m, c.n),
          "first-span bits (32-35) ignored: every pattern starts with a use run"),
    Fault("submask-0-for-all", "zero_column_mask",
          _when(lambda v, c: c.m < 128, lambda v, c: np.tile(v[:len(v) // (128 // c.m)], 128 // c.m)),
          "M = 32/64: sub-mask 0 replicated instead of generating one per sub-partition"),
]

# -- non-descriptor MMA operands ------------------------------------------------------------------

OPERANDS = [
    Fault("column-shift-ignored", "mma_operands", _when(lambda o, c: o.column_shift, lambda o, c: replace(o, column_shift=0)),
          ".ws column shift (zero-column mask bits 56-61) not applied to the B address"),
    Fault("enable-input-d-inverted", "mma_operands", lambda o, c: replace(o, enable_input_d=not o.enable_input_d),
          "enable-input-d predicate polarity inverted"),
    Fault("enable-input-d-stuck-true", "mma_operands", lambda o, c: replace(o, enable_input_d=True),
          "accumulator always read: D = A*B + D even when enable-input-d is false"),
    Fault("scale-input-d-off-by-one", "mma_operands",
          _when(lambda o, c: 0 < o.scale_input_d < 15, lambda o, c: replace(o, scale_input_d=o.scale_input_d + 1)),
          "scale-input-d applied as 2^-(s+1)"),
    Fault("scale-input-d-ignored", "mma_operands", _when(lambda o, c: o.scale_input_d, lambda o, c: replace(o, scale_input_d=0)),
          "scale-input-d immediate not forwarded to the accumulator path"),
    Fault("disable-output-lane-off-by-one", "mma_operands",
          _when(lambda o, c: o.disable_output_lane, lambda o, c: replace(o, disable_output_lane=o.disable_output_lane << 1)),
          "lane mask bit i applied to lane i+1"),
    Fault("disable-output-lane-ignored", "mma_operands",
          _when(lambda o, c: o.disable_output_lane, lambda o, c: replace(o, disable_output_lane=None)),
          "disable-output-lane vector not forwarded: every lane written"),
    Fault("disable-output-lane-ctas-swapped", "mma_operands",
          _when(lambda o, c: o.disable_output_lane and o.disable_output_lane >> 128,
                lambda o, c: replace(o, disable_output_lane=(o.disable_output_lane >> 128)
                                     | ((o.disable_output_lane & ((1 << 128) - 1)) << 128))),
          "cta_group::2: words 4-7 applied to the issuing CTA, words 0-3 to the peer"),
]

# -- sparsity metadata ----------------------------------------------------------------------------

SPARSE = [
    Fault("sparse-indices-reversed", "sparsity_metadata", lambda p, c: np.asarray(p)[..., ::-1],
          "the two 2-bit indices of a nibble read in the wrong order"),
    Fault("metadata-rows-paired", "sparsity_metadata", lambda p, c: np.asarray(p)[np.arange(len(p)) ^ 1],
          "metadata of row r applied to row r^1 (row interleave of the metadata layout wrong)"),
    Fault("metadata-chunks-shifted", "sparsity_metadata", lambda p, c: np.roll(np.asarray(p), 1, axis=1),
          "chunk j uses the nibble of chunk j-1 (metadata bit offset off by 4)"),
]

# -- scale factors --------------------------------------------------------------------------------

SCALES = [
    Fault("sfa-id-ignored", "scale_factors", _when(lambda s, c: s.a_id, lambda s, c: c.reread(0, s.b_id)),
          "SFA_ID (idesc bits 29-30) not added to the scale-A byte address"),
    Fault("sfb-id-ignored", "scale_factors", _when(lambda s, c: s.b_id, lambda s, c: c.reread(s.a_id, 0)),
          "SFB_ID (idesc bits 4-5) not added to the scale-B byte address"),
    Fault("scale-block-k-applied-to-k+1", "scale_factors",
          _when(lambda s, c: s.a.shape[1] > 1, lambda s, c: replace(s, a=np.roll(s.a, 1, axis=1), b=np.roll(s.b, 1, axis=1))),
          "K-chunk counter of the scale pipeline one block late"),
    Fault("scale-b-from-row-0-only", "scale_factors", lambda s, c: replace(s, b=np.broadcast_to(s.b[:1], s.b.shape).copy()),
          "scale-B read once for the whole tile instead of per column"),
    Fault("warp-scale-byte-ids-swapped", "scale_factors",
          _when(lambda s, c: getattr(c, "thread_id_a", None) is not None and s.a_id != s.b_id,
                lambda s, c: c.reread(s.b_id, s.a_id)),
          "warp-level block_scale: byte-id-a steers the scale-B byte select and byte-id-b the scale-A one"),
]


def _ue4m3_sign_honoured(v, c):
    """Negate the operand chunks whose ue4m3 scale has its sign bit set (flip the elements' sign bits)."""
    case = c.case
    if case.scale_type != "ue4m3" or case.sa is None:
        return v
    sign_a = np.uint64(1 << (F.get_format(case.a_type).bits - 1))
    sign_b = np.uint64(1 << (F.get_format(case.b_type).bits - 1))
    ka, kb = case.a.shape[1] // case.sa.shape[1], case.b.shape[0] // case.sb.shape[0]
    neg_a = np.repeat((np.asarray(case.sa) & 0x80) != 0, ka, axis=1)
    neg_b = np.repeat((np.asarray(case.sb) & 0x80) != 0, kb, axis=0)
    a = np.where(neg_a, np.asarray(case.a, dtype=np.uint64) ^ sign_a, case.a)
    b = np.where(neg_b, np.asarray(case.b, dtype=np.uint64) ^ sign_b, case.b)
    return c.recompute(a=a, b=b)


# -- Tensor Memory load/store fragments -----------------------------------------------------------

def _swap_pairs(axis_len, v):
    idx = np.arange(axis_len) ^ 1
    return v[:, idx]


def _half_split_ignored(v, c):
    v = v.copy()
    delta = v[16, 0, 1] - v[0, 0, 1]
    v[16:, :, 1] -= delta
    return v


LDST = [
    Fault("ld-16x64b-register-order-swapped", "tmem_ld_map",
          _when(lambda v, c: c.shape == "16x64b" and v.shape[1] > 1 and not c.pack, lambda v, c: _swap_pairs(v.shape[1], v)),
          ".16x64b: registers 2i and 2i+1 delivered in swapped order"),
    Fault("ld-pack16-halves-swapped", "tmem_ld_map", _when(lambda v, c: c.pack, lambda v, c: _swap_pairs(v.shape[1], v)),
          ".pack::16b: the two columns' halves packed high/low instead of low/high"),
    Fault("ld-16x32bx2-half-split-ignored", "tmem_ld_map",
          _when(lambda v, c: c.shape == "16x32bx2" and v[16, 0, 1] != v[0, 0, 1], lambda v, c: _half_split_ignored(v, c)),
          "immHalfSplitoff not added: both halves read the first access's columns"),
    Fault("ld-16x256b-lane-halves-swapped", "tmem_ld_map",
          _when(lambda v, c: c.shape == "16x256b", lambda v, c: np.concatenate([v[..., :1] ^ 8, v[..., 1:]], axis=-1)),
          ".16x256b: lanes 0-7 and 8-15 of the access exchanged"),
    Fault("ld-32x32b-column-off-by-one", "tmem_ld_map",
          _when(lambda v, c: c.shape == "32x32b" and v.shape[1] > 1,
                lambda v, c: np.concatenate([v[..., :1], np.minimum(v[..., 1:] + 1, v[..., 1:].max())], axis=-1)),
          ".32x32b.xN, N > 1: register i reads column i+1 (last stays)"),
    Fault("st-unpack16-halves-swapped", "tmem_st_map", _when(lambda v, c: c.unpack, lambda v, c: _swap_pairs(v.shape[1], v)),
          ".unpack::16b: high half written to the even column"),
    Fault("st-16x128b-lane-halves-swapped", "tmem_st_map",
          _when(lambda v, c: c.shape == "16x128b", lambda v, c: np.concatenate([v[..., :1] ^ 8, v[..., 1:]], axis=-1)),
          ".16x128b stores: lanes 0-7 and 8-15 exchanged"),
    Fault("st-16x32bx2-half-split-ignored", "tmem_st_map",
          _when(lambda v, c: c.shape == "16x32bx2" and v[16, 0, 1] != v[0, 0, 1], lambda v, c: _half_split_ignored(v, c)),
          "stores: immHalfSplitoff not added to the second access"),
]

# -- tcgen05.cp decompression, shift --------------------------------------------------------------

CP_SHIFT = [
    Fault("cp-nibble-order-swapped", "cp_decompress",
          lambda v, c: np.asarray(v).reshape(-1, 2)[:, ::-1].reshape(np.shape(v)),
          "decompressor takes the high nibble (element 2i+1) first"),
    Fault("cp-4bit-in-bits-3-0", "cp_decompress", _when(lambda v, c: c.src_format == "b4x16_p64", lambda v, c: np.asarray(v) >> 2),
          "4-bit codes placed in bits 3-0 (the ldmatrix container) instead of the MMA's bits 5-2"),
    Fault("cp-6bit-top-bit-dropped", "cp_decompress", _when(lambda v, c: c.src_format == "b6x16_p32", lambda v, c: np.asarray(v) & 0x1F),
          "6-bit unpacker keeps 5 bits (sign of e2m3/e3m2 lost)"),
    Fault("shift-also-moves-last-row", "shift",
          _when(lambda v, c: c.op == "shift", lambda v, c: np.append(v, len(v) - 1)),
          "tcgen05.shift moves the last row too: row 31 spills into the first lane of the next 32-lane quarter"),
    Fault("shift-ignored", "shift", _when(lambda v, c: c.op == "shift", lambda v, c: np.arange(len(v))),
          "tcgen05.shift completes without moving data"),
    Fault("ashift-shifts-up", "shift",
          _when(lambda v, c: c.op == "ashift", lambda v, c: np.minimum(np.arange(len(v)) + 1, len(v) - 1)),
          ".ashift moves rows of A up instead of down"),
    Fault("ashift-ignored", "shift", _when(lambda v, c: c.op == "ashift", lambda v, c: np.arange(len(v))),
          ".ashift qualifier dropped by the assembler"),
]

# -- MMA results ----------------------------------------------------------------------------------

def _tf32_rne(codes):
    c = np.asarray(codes, dtype=np.uint64)
    return ((c + np.uint64(0x1000)) & np.uint64(0xFFFFE000)) & np.uint64(0xFFFFFFFF)


def _tf32_rounded(v, c):
    if c.kind != "tf32":
        return v
    return c.recompute(a=_tf32_rne(c.case.a), b=_tf32_rne(c.case.b))


def _not_written(cond):
    return lambda v, c: np.where(cond(v, c), c.d_in, v)


def _flush_subnormal(v, c):
    if c.d_type != "f32":
        return v
    v = np.asarray(v, dtype=np.uint32)
    sub = ((v >> 23) & 0xFF == 0) & ((v & 0x7FFFFF) != 0)
    return np.where(sub, v & np.uint32(0x80000000), v)


RESULTS = [
    Fault("f32-rne-instead-of-rz", "mma_result",
          _when(lambda v, c: c.d_type == "f32" and c.kind != "i8", lambda v, c: c.recompute(rounding="rne")),
          "f32 accumulator rounds to nearest even (published sm_100 behaviour: toward zero)"),
    Fault("tf32-rounded-instead-of-truncated", "mma_result", lambda v, c: _tf32_rounded(v, c),
          "tf32 operands rounded to nearest instead of dropping the low 13 bits (published: truncated)"),
    Fault("nan-not-canonical", "mma_result",
          _when(lambda v, c: c.d_type in ("f32", "f16"),
                lambda v, c: np.where((np.asarray(v) == 0x7FFFFFFF) & (c.d_type == "f32"), np.uint32(0x7FC00000),
                                      np.where((np.asarray(v) == 0x7FFF) & (c.d_type == "f16"), np.uint32(0x7E00), v))),
          "NaN results propagate the default quiet NaN instead of the canonical 0x7FFFFFFF / 0x7FFF"),
    Fault("ue4m3-sign-honoured", "mma_result",
          _ue4m3_sign_honoured,
          "ue4m3 scale sign bit applied (the spec says it is ignored)"),
    Fault("cta-group-2-writes-one-cta-only", "mma_result",
          _when(lambda v, c: c.cta_group == 2, _not_written(lambda v, c: c.row >= np.shape(v)[0] // 2)),
          "cta_group::2 MMA result never reaches the peer CTA's Tensor Memory"),
    Fault("last-column-dropped", "mma_result", _not_written(lambda v, c: c.col == np.shape(v)[1] - 1),
          "write-back loop bound N-1: the last column of D keeps its old value"),
    Fault("subnormal-results-flushed", "mma_result", _flush_subnormal,
          "f32 results below 2^-126 flushed to zero (the published model keeps subnormals)"),
    Fault("zero-result-negative", "mma_result",
          lambda v, c: np.where((np.asarray(v) == 0) & (c.d_type == "f32"), np.uint32(0x80000000), v),
          "a zero sum keeps the sign of the last product (published: +0)"),
]

# -- mbarrier --------------------------------------------------------------------------------------

MBAR = [
    Fault("commit-arrives-early", "mbarrier",
          lambda e, c: replace(e, complete_pending=False) if e.kind == "commit" else e,
          "tcgen05.commit signals the mbarrier before the tracked MMA/cp/shift have written Tensor Memory"),
    Fault("commit-multicast-to-first-cta-only", "mbarrier",
          lambda e, c: None if e.kind == "commit" and "multicast" in c.instr and e.cta % 2 else e,
          "multicast commit ignores ctaMask beyond the issuing CTA"),
    Fault("expect-tx-ignored", "mbarrier", lambda e, c: None if e.kind == "expect_tx" else e,
          "transaction count never armed: phases complete before the bytes arrive"),
]


FAULTS: list[Fault] = SMEM + IDESC + ZCM + OPERANDS + SPARSE + SCALES + LDST + CP_SHIFT + RESULTS + MBAR
