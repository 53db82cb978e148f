"""Warp-level sparse MMA: ``mma.sp{::ordered_metadata}.sync.aligned.m16n8k*.row.col`` (§9.7.14.6).

Per warp: the A (compressed 16 x K/2), B (K x 8) and C (16 x 8) fragments are gathered from the
registers through ``reference.warp_mma_fragments``; the metadata through
``reference.warp_sparse.warp_metadata_from_registers`` (threads named by the sparsity selector);
kept positions (hook ``sparsity_metadata``) expand A; D = ``mma_arithmetic`` (hook
``mma_result``) is scattered back into the D registers.

Numerics: the tcgen05 kind with the same operand types (f16, tf32, i8 for s8/u8/s4/u4, f8f6f4) and
its sm_100 hardware parameters (a decision: warp-level numerics of other architectures differ,
semantic cases are exact). ``.satfinite`` saturates s32 results.

Block-scaled forms (``.kind::mxf8f6f4/mxf4/mxf4nvf4.block_scale{.scale_vec::NX}.<stype>``,
§9.7.14.3): the selector tuples ``{byte-id, thread-id}`` may be immediates or registers (then one
value per warp, else a SimError); Table 37 is checked (SpecError). scale_A / scale_B are read from
the ``scale-a-data`` / ``scale-b-data`` registers through ``reference.warp_block_scaling`` (hook
``scale_factors``: ``a_id`` / ``b_id`` are the byte-ids, ctx ``thread_id_a`` / ``thread_id_b``);
the numerics are the tcgen05 block-scaled kind's. ``.kind::mxf4*`` packs e2m1 eight per register
with 4:8 pair sparsity.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ptxsim.errors import SimError
from ptxsim.isa.control import require_full_warps
from ptxsim.isa.mma_arith import MmaCase, ScaleFactors, mma_arithmetic
from ptxsim.isa.mma_sparse import expand_sparse, kept_positions_of, pattern_of
from ptxsim.ptx.parser import Imm
from ptxsim.ptx.registry import Unsupported, opcode
from ptxsim.ptx.types import TYPES
from reference import warp_block_scaling as WB
from reference import warp_mma_fragments as WF
from reference.errors import SpecError
from reference.warp_sparse import warp_metadata_from_registers, warp_sparse_shape

U32, U16 = TYPES["u32"], TYPES["u16"]
PACKED_FP4_KINDS = ("mxf4", "mxf4nvf4")
ELEMENT_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "u8": 8, "s4": 4, "u4": 4,
                "e4m3": 8, "e5m2": 8, "e3m2": 8, "e2m3": 8, "e2m1": 8}
KIND_OF = {"f16": "f16", "bf16": "f16", "tf32": "tf32", "s8": "i8", "u8": "i8", "s4": "i8", "u4": "i8",
           "e4m3": "f8f6f4", "e5m2": "f8f6f4"}
TYPE_WORDS = ("f16", "bf16", "tf32", "f32", "s32", "s8", "u8", "s4", "u4", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1")


def _container_code(a_type: str, codes: np.ndarray, kind: str | None) -> np.ndarray:
    """f8f6f4 4/6-bit types arrive in 8-bit containers (reference.tmem_packing); mxf4* e2m1 packed."""
    if a_type in ("e2m1", "e3m2", "e2m3") and kind not in PACKED_FP4_KINDS:
        from reference.tmem_packing import container_code
        return container_code(a_type, codes).astype(np.uint64)
    return codes


@opcode("mma.sp", "mma.sp::ordered_metadata")
def compile_mma_sp(ins, q, k):
    # ::ordered_metadata changes which metadata values are defined, not how they decode
    q.take("sync", required=True)
    q.take("aligned", required=True)
    shape = q.take_prefix("m16n8k", required=True)
    q.take("row", required=True)
    q.take("col", required=True)
    satfinite = q.flag("satfinite")
    kind = q.take_prefix("kind::")
    if kind is not None and kind != "f8f6f4" and kind not in WB.SCALE_VECS:
        raise Unsupported(f".kind::{kind} is not a warp-level mma.sp kind")
    block = kind in WB.SCALE_VECS
    sf, stype, rsf, rsel = 0, None, [], []
    if block:
        q.take("block_scale", required=True)
        vec = q.take_prefix("scale_vec::")
        stype = q.take("ue8m0", "ue4m3", required=True)
        sf = WB.warp_scale_factor_count(kind, None if vec is None else f"scale_vec::{vec}", stype)
    types = [t for t in q.rest if t in TYPE_WORDS]
    if len(types) != 4:
        raise Unsupported("expects .dtype.atype.btype.ctype")
    q.rest = [t for t in q.rest if t not in TYPE_WORDS]
    d_type, a_type, b_type, c_type = types
    kdim = int(shape)
    packed = kind in PACKED_FP4_KINDS
    try:
        fam = warp_sparse_shape(f"m16n8k{kdim}", "mxf4:e2m1" if packed else a_type)
    except SpecError as exc:
        raise Unsupported(str(exc)) from None
    tc_kind = kind if kind is not None else KIND_OF.get(a_type)
    if tc_kind is None:
        raise Unsupported(f"A type .{a_type} without .kind::f8f6f4")
    bits = 4 if packed else ELEMENT_BITS[a_type]
    fa, fb = WF.a_fragment(kdim // 2, bits), WF.b_fragment(kdim, 4 if packed else ELEMENT_BITS[b_type])
    fc, fd = WF.cd_fragment(16 if c_type == "f16" else 32), WF.cd_fragment(16 if d_type == "f16" else 32)
    ops = k.operands(ins, 10 if block else 6)
    d_op, a_op, b_op, c_op, e_op, sel_op = ops[:6]
    if not isinstance(sel_op, Imm):
        raise Unsupported("the sparsity selector expects an immediate")
    selector = int(sel_op.value)
    if selector not in fam.selectors:
        raise SpecError("9.7.14.6.1", "sparsity selector", f"sparsity selector of mma.sp.m16n8k{kdim}.{a_type} expects "
                        f"one of {list(fam.selectors)}, but got {selector}")
    ra = [k.reader(r, U32) for r in k.vector(a_op, fa.registers)]
    rb = [k.reader(r, U32) for r in k.vector(b_op, fb.registers)]
    rc = [k.reader(r, U32) for r in k.vector(c_op, fc.registers)]
    re = k.reader(e_op, U32)
    wd = [k.writer(r, U32) for r in k.vector(d_op, fd.registers)]
    pat = pattern_of("tf32" if a_type == "tf32" else "mxf4" if bits == 4 else "f16")
    if block:
        rsf = [k.reader(ops[6], U32), k.reader(ops[8], U32)]
        rsel = [k.reader(r, U16) for r in k.vector(ops[7], 2) + k.vector(ops[9], 2)]

    def regs(m, s, readers):
        return np.stack([np.broadcast_to(np.asarray(r(m, s)).astype(np.uint32), (s.n,)) for r in readers], axis=1)

    def selectors(m, s, w) -> WB.ScaleSelectors:
        vals = []
        for read in rsel:
            v = np.broadcast_to(np.asarray(read(m, s)).astype(np.int64), (s.n,))[w]
            if (v != v[0]).any():
                raise SimError(f"{ins.opcode}: the scale selectors {{byte-id, thread-id}} must be the same in every "
                               f"thread of the warp, but got {sorted(set(v.tolist()))}")
            vals.append(int(v[0]))
        sel = WB.ScaleSelectors(*vals)
        WB.check_selectors(sf, sel)
        return sel

    def scales(m, s, w, sfa, sfb, cta):
        sel = selectors(m, s, w)

        def read(a_id: int, b_id: int) -> ScaleFactors:
            at = WB.ScaleSelectors(a_id, sel.thread_id_a, b_id, sel.thread_id_b)
            sa = WB.scales_from_registers(sfa, WB.scale_a_sources(sf, at))
            sb = WB.scales_from_registers(sfb, WB.scale_b_sources(sf, at))
            return ScaleFactors(sa, sb.T.copy(), a_id, b_id, stype)
        got = read(sel.byte_id_a, sel.byte_id_b)
        got = m.faults.apply("scale_factors", got, kind=tc_kind, scale_type=stype, raw_a=got.a.copy(), raw_b=got.b.copy(),
                             reread=read, thread_id_a=sel.thread_id_a, thread_id_b=sel.thread_id_b, instr=ins.text, cta=cta)
        return np.asarray(got.a), np.asarray(got.b).T

    def run(m, s):
        starts, _, sizes = require_full_warps(m, s, ins.opcode)
        if (sizes != 32).any():
            raise SimError(f"{ins.opcode}: every thread of the warp must execute it")
        A, B, C, E = regs(m, s, ra), regs(m, s, rb), regs(m, s, rc), regs(m, s, [re])[:, 0]
        SFR = regs(m, s, rsf) if block else None
        out = np.zeros((s.n, fd.registers), dtype=np.uint32)
        for st in starts.tolist():
            w = slice(st, st + 32)
            cta = int(m.cta_of[int(s.idx[st])])
            comp = _container_code(a_type, WF.gather(fa, A[w]), kind)
            nib = warp_metadata_from_registers(fam, E[w], selector)
            pos = m.faults.apply("sparsity_metadata", kept_positions_of(pat, nib), kind=tc_kind, selector=selector,
                                 raw=E[w].copy(), instr=ins.text, cta=cta)
            a = expand_sparse(pat, comp, np.asarray(pos))
            b = _container_code(b_type, WF.gather(fb, B[w]), kind)
            c = WF.gather(fc, C[w])
            sa = sb = None
            if block:
                sa, sb = scales(m, s, w, SFR[w, 0], SFR[w, 1], cta)
            case = MmaCase(tc_kind, d_type, a_type, b_type, a, b, c, None, True, saturate=satfinite, sa=sa, sb=sb,
                           scale_type=stype)
            d = mma_arithmetic(case)
            d = m.faults.apply("mma_result", d, row=np.arange(16)[:, None], col=np.arange(8)[None, :], kind=tc_kind,
                               d_type=d_type, d_in=c, enable_input_d=True, cta_group=0, instr=ins.text, cta=cta,
                               case=case, recompute=lambda case=case, **ch: mma_arithmetic(replace(case, **ch)))
            out[w] = WF.scatter(fd, d)
        for i, write in enumerate(wd):
            write(m, s, out[:, i])
    return run


__all__ = ["compile_mma_sp"]
