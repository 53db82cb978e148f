"""tcgen05.mma / .sp / .ws / .ws.sp (all kinds, block scaling) on the simulated tensor core
(§9.7.16.10.9).

At issue the handler reads the instruction's operands (addresses, descriptors, predicates,
vectors), decodes the instruction descriptor (hook ``instr_desc``) and checks it against the
qualifiers (Tables 39, 42-44, 49, 52); the rest happens in the queued effect, when the commit
tracking the MMA runs it (:mod:`ptxsim.tcgen05.core`):

* A from shared memory through the decoded descriptor (hook ``smem_desc``, ``reference.smem_image.
  read``; MN-major when the descriptor transposes A), or from Tensor Memory
  (``reference.tmem_mma_operands``); with ``.cta_group::2`` each CTA supplies its M/2 rows; a .ws
  MMA of Layout E/G with A in Tensor Memory reads A once per column block of D, from the lanes
  spec question Q-WS-A-LANES says (:func:`by_column_block`; one block under ``first-quarter``);
* B likewise (``K x N``, transposed = K-major rows of N), each CTA of a pair its N/2 columns
  (CUTLASS ``SM100_MMA_*_2x1SM_SS``: ``BLayout`` splits N over the peer CTAs); a .ws MMA reads
  N + column shift columns and uses columns ``shift .. shift+N-1``;
* sparse A: metadata nibbles from Tensor Memory -> kept positions (hook ``sparsity_metadata``,
  ``reference.sparsity`` when present, else the nibble rule of §9.7.16.10.8.1-3) -> dense A;
* ``.ashift``: source row of each row of A (hook ``shift``, op ``ashift``): rows move down one,
  row 0 keeps its own (the reference MMA model's reading);
* zero-column mask (hook ``zero_column_mask``), scale factors (hook ``scale_factors``; with
  cta_group::2 SFA per CTA, SFB as spec question Q-SFB-2CTA's reading says:
  ``reference.tmem_mma_operands.scale_b_parts``), the non-descriptor operands (hook ``mma_operands``);
* D = :func:`ptxsim.isa.mma_arith.mma_arithmetic` (hook ``mma_result``), written where the
  data-path layout puts it (``reference.datapath_layouts``), except lanes disable-output-lane masks.

Collector buffers: ``::fill`` keeps the operand (A; B for .ws), ``::use``/``::lastuse`` use the kept
copy when one is valid (hardware may reload; "reuse is opportunistic"), ``::lastuse``/``::discard``
invalidate it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ptxsim.isa.mma_arith import MmaCase, MmaOperands, ScaleFactors, mma_arithmetic
from ptxsim.isa.mma_sparse import expand_sparse, kept_positions_of, pattern_of
from ptxsim.ptx.parser import Addr, Imm, Vec
from ptxsim.ptx.registry import Unsupported, opcode
from ptxsim.tcgen05.core import U32, U64, check_peer, cta_group, tensor_core
from ptxsim.tcgen05.smem_operands import decode_desc, read_tile
from reference import tables as T
from reference import tmem_mma_operands as TO
from reference.datapath_layouts import columns_used, d_placement, layout_for
from reference.errors import SpecError, expects_but_got
from reference.instr_descriptor import InstrDescriptor
from reference.mma_semantics import ashift_source_rows, disabled_lanes, rows_taken
from reference.zero_column_mask import ZeroColumnMaskDescriptor, zeroed_columns

SECTION = "9.7.16.10.9.1"
WS_KINDS = ("f16", "tf32", "f8f6f4", "i8")
SCALE_VECS = ("scale_vec::1X", "scale_vec::2X", "scale_vec::4X", "block16", "block32")
COLLECTOR_OPS = ("fill", "use", "lastuse", "discard")


def _err(rule: str, what: str, expected: str, got, section: str = SECTION) -> SpecError:
    return SpecError(section, rule, expects_but_got(what, expected, got))


class MmaForm:
    """What the instruction text fixes (compile time)."""

    def __init__(self, ins, q, k) -> None:
        self.text = ins.text
        self.ws = q.flag("ws")
        self.sparse = q.flag("sp")
        self.group = cta_group(q, k)
        self.kind = q.take_prefix("kind::", required=True)
        if self.kind not in T.KINDS:
            raise Unsupported(f".kind::{self.kind}")
        self.block_scale = q.flag("block_scale")
        self.vec = q.take(*SCALE_VECS)
        self.ashift = q.flag("ashift")
        collector = q.take_prefix("collector::")
        self.buffer, self.usage = (collector.split("::") + [""])[:2] if collector else (None, None)
        self._check_qualifiers()
        ops = list(ins.operands)
        if len(ops) < 4:
            raise Unsupported(f"expects at least 4 operands, but got {len(ops)}")
        self.d = k.address(ops[0])[1]
        self.a_tmem = isinstance(ops[1], Addr)
        self.a = k.address(ops[1])[1] if self.a_tmem else k.reader(ops[1], U64)
        self.b = k.reader(ops[2], U64)
        rest = ops[3:]
        self.meta = None
        if self.sparse:
            self.meta, rest = k.address(rest[0])[1], rest[1:]
        self.idesc, rest = k.reader(rest[0], U32), rest[1:]
        self.sfa = self.sfb = self.dol = self.zcm = None
        self.scale_input_d = 0
        if self.block_scale:
            if len(rest) != 3:
                raise Unsupported("block-scaled form expects [scale-A-tmem], [scale-B-tmem], enable-input-d")
            self.sfa, self.sfb = k.address(rest[0])[1], k.address(rest[1])[1]
            rest = rest[2:]
        elif not self.ws and rest and isinstance(rest[0], Vec):
            words = k.vector(rest[0])
            if len(words) != 4 * self.group:
                raise _err("disable-output-lane", f"disable-output-lane for .cta_group::{self.group}",
                           f"{4 * self.group} 32-bit values", len(words))
            self.dol, rest = [k.reader(w, U32) for w in words], rest[1:]
        if not rest:
            raise Unsupported("expects the enable-input-d predicate")
        self.enable, rest = k.pred_reader(rest[0]), rest[1:]
        if self.ws and rest:
            self.zcm, rest = k.reader(rest[0], U64), rest[1:]
        elif not self.ws and not self.block_scale and rest:
            if not isinstance(rest[0], Imm):
                raise Unsupported("scale-input-d expects an immediate")
            self.scale_input_d, rest = int(rest[0].value), rest[1:]
            if self.kind not in ("f16", "tf32") or not 0 <= self.scale_input_d <= 15:
                raise _err("scale-input-d", f"scale-input-d with kind::{self.kind}", "0..15, kind::f16/tf32 only",
                           self.scale_input_d)
        if rest:
            raise Unsupported(f"{len(rest)} operand(s) too many for this form")
        if self.ashift and not self.a_tmem:
            raise _err(".ashift", ".ashift", "A in Tensor Memory ([a-tmem])", "a shared memory descriptor")

    def _check_qualifiers(self) -> None:
        scaled = self.kind in T.BLOCK_SCALED_KINDS
        if self.block_scale != scaled:
            raise _err(".block_scale", f".block_scale with kind::{self.kind}", "present exactly for mx kinds",
                       self.block_scale)
        if self.vec and not self.block_scale:
            raise _err(".scale_vectorsize", ".scale_vectorsize", "only with .block_scale", self.vec)
        if self.kind == "mxf4nvf4" and self.vec is None:
            raise _err(".scale_vectorsize", ".scale_vectorsize for kind::mxf4nvf4", "explicit", None)
        if self.ws and (self.group != 1 or self.kind not in WS_KINDS):
            raise _err(".ws", ".ws", "cta_group::1 with kind f16/tf32/f8f6f4/i8", f"::{self.group} kind::{self.kind}",
                       "9.7.16.10.9.3")
        if self.ashift and self.ws:
            raise _err(".ashift", ".ashift", "a non-.ws MMA", ".ws")
        if self.buffer is not None:
            buffers = ("b0", "b1", "b2", "b3") if self.ws else ("a",)
            if self.buffer not in buffers or self.usage not in COLLECTOR_OPS:
                raise _err(".collector_usage", ".collector_usage", f"<{'|'.join(buffers)}>::<fill|use|lastuse|discard>",
                           f"{self.buffer}::{self.usage}")
            if self.ashift and self.usage in ("use", "fill"):
                raise _err(".collector_usage", "collector usage with .ashift", "lastuse or discard", self.usage)

    def scale_factor_count(self, desc: InstrDescriptor) -> int:
        k = T.mma_k(self.kind, self.sparse, k96=desc.k96)
        vec = self.vec or T.DEFAULT_SCALE_VEC[self.kind]
        if self.sparse:           # sparse K: chunks of the logical K (reference.block_scaling decision)
            k = T.mma_k(self.kind, False, k96=desc.k96)
        return T.scale_factor_count(self.kind, vec, k, desc.scale_type)


def _scalar(v, j: int) -> int:
    arr = np.asarray(v)
    return int(arr if arr.ndim == 0 else arr[j])


def check_descriptor(form: MmaForm, desc: InstrDescriptor) -> None:
    """The instruction descriptor against the instruction's qualifiers (Tables 39, 42-44, 49-52)."""
    if desc.sparse != form.sparse:
        raise _err("Table 42 bit 2", "sparsity bit of the instruction descriptor",
                   "1 for tcgen05.mma.sp, 0 otherwise", int(desc.sparse), "9.7.16.4.2")
    desc.check_legal(form.group, form.ws)
    if form.ashift and desc.m not in (128, 256):
        raise _err(".ashift", ".ashift", "M = 128 or 256", desc.m)
    if form.block_scale:
        form.scale_factor_count(desc)


class IssuedMma:
    """One issued MMA: every operand value, decoded at issue."""

    def __init__(self, m, form: MmaForm, s, j: int) -> None:
        self.thread = int(s.idx[j])
        self.cta = int(m.cta_of[self.thread])
        check_peer(m, self.cta, form.group, "tcgen05.mma", self.thread)
        self.raw_idesc = _scalar(form.idesc(m, s), j) & 0xFFFFFFFF
        desc = InstrDescriptor.decode(self.raw_idesc, form.kind)
        self.desc = m.faults.apply("instr_desc", desc, kind=form.kind, raw=self.raw_idesc, instr=form.text, cta=self.cta)
        check_descriptor(form, self.desc)
        self.d = _scalar(form.d(m, s), j) & 0xFFFFFFFF
        self.a = _scalar(form.a(m, s), j) & (0xFFFFFFFF if form.a_tmem else 0xFFFF_FFFF_FFFF_FFFF)
        self.b = _scalar(form.b(m, s), j)
        self.meta = _scalar(form.meta(m, s), j) & 0xFFFFFFFF if form.meta else None
        self.sfa = _scalar(form.sfa(m, s), j) & 0xFFFFFFFF if form.sfa else None
        self.sfb = _scalar(form.sfb(m, s), j) & 0xFFFFFFFF if form.sfb else None
        dol = None
        if form.dol:
            dol = sum((_scalar(r(m, s), j) & 0xFFFFFFFF) << (32 * i) for i, r in enumerate(form.dol))
        self.zcm_raw = _scalar(form.zcm(m, s), j) if form.zcm else None
        self.zcm = ZeroColumnMaskDescriptor.decode(self.zcm_raw) if self.zcm_raw is not None else None
        enable = bool(np.broadcast_to(np.asarray(form.enable(m, s)), (s.n,))[j])
        ops = MmaOperands(enable, form.scale_input_d, dol, self.zcm.column_shift if self.zcm else 0)
        self.ops = m.faults.apply("mma_operands", ops, kind=form.kind, instr=form.text, cta=self.cta)


def split(addr: int) -> tuple[int, int]:
    return (addr >> 16) & 0xFFFF, addr & 0xFFFF


class MmaExecution:
    """The effect of one issued MMA (runs at completion)."""

    def __init__(self, m, tc, form: MmaForm, iss: IssuedMma) -> None:
        self.m, self.tc, self.form, self.iss = m, tc, form, iss
        d = iss.desc
        self.k = T.mma_k(form.kind, form.sparse, k96=d.k96)
        self.ctas = [iss.cta - iss.cta % 2, iss.cta - iss.cta % 2 + 1] if form.group == 2 else [iss.cta]
        self.layout = layout_for(d.m, form.group, sparse=form.sparse, ws=form.ws)
        self.mc = d.m // form.group

    def hook(self, name, value, **ctx):
        return self.m.faults.apply(name, value, instr=self.form.text, cta=self.iss.cta, **ctx)

    # -- operands ---------------------------------------------------------------------------------
    def tmem_rows(self, addr: int, cols: int, what: str, where: np.ndarray | None = None) -> np.ndarray:
        """``uint32[M, cols]``: the row lanes of every CTA from ``addr``'s column (lane = alignment);
        ``where``: other ``(cta, lane)`` of the rows (a column block's A, :func:`reference.tmem_mma_operands.a_row_lanes`)."""
        lane, col = split(addr)
        where = TO.row_lanes(self.layout, lane) if where is None else where
        c = np.asarray(self.ctas)[where[:, 0]]
        cells_c = col + np.arange(cols)[None, :]
        self.tc.require_cells(c[:, None], where[:, 1:2], cells_c, what)
        return self.tc.tmem[c[:, None], where[:, 1:2], cells_c]

    def tmem_operands(self) -> list[tuple[int, int]]:
        """Column ranges ``[lo, hi)`` the MMA reads from Tensor Memory besides D: A (when in Tensor
        Memory) and the sparsity metadata (for the hazard checker, in every CTA of the MMA; the scale
        factors, which differ per CTA, are :meth:`scale_factor_cells`)."""
        f, d = self.form, self.iss.desc
        out = []
        if f.a_tmem:
            col = split(self.iss.a)[1]
            out.append((col, col + TO.a_columns(f.kind, d.a_type, self.k // 2 if f.sparse else self.k)))
        if self.iss.meta is not None:
            col = split(self.iss.meta)[1]
            out.append((col, col + d.sparsity_selector + TO.META_WORDS[f.kind]))
        return out

    def a_blocks(self) -> list[np.ndarray]:
        """A as each column block of D reads it: one matrix, except a .ws MMA with A in Tensor Memory
        (Layouts E/G), whose lane quarters may each read their own lanes (spec question Q-WS-A-LANES)."""
        f = self.form
        if not (f.ws and f.a_tmem):
            return [self.collector("a", self.read_a)]
        lane = split(self.iss.a)[0]
        return [self.read_a(where) for where in TO.a_row_lanes(self.layout, lane)]

    def read_a(self, where: np.ndarray | None = None) -> np.ndarray:
        f, d = self.form, self.iss.desc
        ks = self.k // 2 if f.sparse else self.k
        if f.a_tmem:
            cells = self.tmem_rows(self.iss.a, TO.a_columns(f.kind, d.a_type, ks), "tcgen05.mma A", where)
            return TO.read_a(f.kind, d.a_type, cells, ks)
        major = "MN" if d.transpose_a else "K"
        parts = [read_tile(self.m, c, decode_desc(self.m, self.iss.a, operand="a", kind=f.kind, instr=f.text, cta=c,
                                               major=major),
                           self.mc, ks, d.a_type, major, f.kind, f.text) for c in self.ctas]
        return np.concatenate(parts, axis=0)

    def read_b(self, extra: int) -> np.ndarray:
        f, d = self.form, self.iss.desc
        major = "MN" if d.transpose_b else "K"
        nc = d.n // f.group + extra
        parts = [read_tile(self.m, c, decode_desc(self.m, self.iss.b, operand="b", kind=f.kind, instr=f.text, cta=c,
                                               major=major),
                           nc, self.k, d.b_type, major, f.kind, f.text) for c in self.ctas]
        return np.concatenate(parts, axis=0).T                              # K x N

    def collector(self, key: str, read):
        f = self.form
        buffers = self.tc.collectors
        slot = (self.iss.cta, f.buffer or ("b0" if f.ws else "a"))
        usage = f.usage or "discard"
        if key != ("b" if f.ws else "a"):
            return read()
        value = buffers.get(slot) if usage in ("use", "lastuse") else None
        if value is None:
            value = read()
        if usage == "fill":
            buffers[slot] = value
        elif usage in ("lastuse", "discard"):
            buffers.pop(slot, None)
        return value

    def sparse_a(self, comp: np.ndarray) -> np.ndarray:
        f, d = self.form, self.iss.desc
        pat = pattern_of(f.kind)
        chunks = self.k // pat.chunk
        cells = self.tmem_rows(self.iss.meta, d.sparsity_selector + TO.META_WORDS[f.kind], "tcgen05.mma.sp metadata")
        nib = TO.read_metadata(f.kind, cells, chunks, 0 if f.kind in T.BLOCK_SCALED_KINDS else d.sparsity_selector,
                               rows_per_cta=self.mc)
        pos = self.hook("sparsity_metadata", kept_positions_of(pat, nib), kind=f.kind, selector=d.sparsity_selector,
                        raw=nib)
        return expand_sparse(pat, comp, np.asarray(pos))

    def sf_columns(self, addr: int, mn: int, sid: int, by_half: bool = False) -> np.ndarray:
        """The Tensor Memory columns (all 128 lanes) holding ``mn`` rows' scale factors of scale
        factor id ``sid`` at ``addr`` (``reference.tmem_mma_operands.scale_factor_span``)."""
        sf = self.form.scale_factor_count(self.iss.desc)
        return split(addr)[1] + np.arange(TO.scale_factor_span(mn // 2 if by_half else mn, sf, sid))

    def sfb_parts(self) -> list[tuple[int, int, bool]]:
        """(owner CTA, N columns, read by half) of each SFB part: spec questions Q-SFB-2CTA, Q-SFB-2X2."""
        d, group = self.iss.desc, self.form.group
        parts = TO.scale_b_parts(d.n, group)
        owners = [self.iss.cta] if len(parts) == 1 else self.ctas
        halves = TO.scale_b_by_half(d.m, group)
        return [(owners[i], cols, halves) for i, _, cols in parts]

    def scale_factor_cells(self) -> list[tuple[int, int, int]]:
        """``(cta, lo, hi)``: the columns (all lanes) :meth:`scale_factors` reads, for the hazard checker."""
        if not self.form.block_scale:
            return []
        d = self.iss.desc
        cells = [(c, self.sf_columns(self.iss.sfa, self.mc, d.a_scale_id)) for c in self.ctas]
        cells += [(c, self.sf_columns(self.iss.sfb, n, d.b_scale_id, half)) for c, n, half in self.sfb_parts()]
        return [(int(c), int(cols[0]), int(cols[-1]) + 1) for c, cols in cells if cols.size]

    def scale_factors(self, a_id: int, b_id: int) -> ScaleFactors:
        f, d = self.form, self.iss.desc
        sf = f.scale_factor_count(d)

        def per_cta(addr, mn, cta, sid, by_half=False):
            lane = split(addr)[0]
            # CUTLASS's reading (cute/arch/mma_sm100_desc.hpp, make_runtime_instr_desc_block_scaled): a
            # sub-word TMEM address carries the byte offset in bits 31:30, and CuTe hands that address to
            # the MMA with the same offset as the descriptor's scale-factor id.  Accepted when the two agree
            # (docs/clients.md, finding K2); any other lane bit stays an error.
            byte, lane = lane >> 14, lane & 0x3FFF
            if byte and byte != sid:
                raise _err("scale factor address", "bits 31:30 of a scale factor address (CuTe's byte offset)",
                           f"0 or the descriptor's scale factor id {sid}", byte, "9.7.16.10.7")
            if lane:
                raise _err("scale factor address", "lane of a scale factor address", "0 (all 4 lane quarters)", lane,
                           "9.7.16.10.7")
            cols = self.sf_columns(addr, mn, sid, by_half)
            self.tc.require_cells(cta, np.arange(128)[:, None], cols[None, :], "tcgen05.mma scale factors")
            return TO.replicated(TO.read_scale_factors(self.tc.tmem[cta][:, cols], mn, sf, sid, by_half))
        sa = np.concatenate([per_cta(self.iss.sfa, self.mc, c, a_id) for c in self.ctas])
        sb = np.concatenate([per_cta(self.iss.sfb, cols, c, b_id, half) for c, cols, half in self.sfb_parts()])
        return ScaleFactors(sa, sb, a_id, b_id, d.scale_type)

    # -- the MMA ----------------------------------------------------------------------------------
    def run(self) -> None:
        f, iss, d = self.form, self.iss, self.iss.desc
        ops = iss.ops
        blocks = self.a_blocks()
        if f.sparse:
            blocks = [self.sparse_a(a) for a in blocks]
        if f.ashift:
            src = self.hook("shift", ashift_source_rows(d.m), op="ashift", rows=d.m)
            blocks = [rows_taken(a, src) for a in blocks]
        a = blocks[0]
        shift = ops.column_shift if f.ws else 0
        b = self.collector("b", lambda: self.read_b(shift))
        b = b[:, shift:shift + d.n] if f.group == 1 else b
        zero = None
        if iss.zcm is not None:
            bits = iss.zcm.mask(d.m, d.n)
            zero = zeroed_columns(bits, d.n, shift)           # spec question Q-ZCM-SHIFT
            zero = np.asarray(self.hook("zero_column_mask", zero, desc=iss.zcm, raw=iss.zcm_raw, m=d.m, n=d.n), dtype=bool)
        sa = sb = None
        if f.block_scale:
            read = self.scale_factors(d.a_scale_id, d.b_scale_id)
            scales = self.hook("scale_factors", read, kind=f.kind, scale_type=d.scale_type, raw_a=read.a.copy(),
                               raw_b=read.b.copy(), reread=self.scale_factors)
            sa, sb = np.asarray(scales.a), np.asarray(scales.b).T
        where = d_placement(self.layout, d.n, split(iss.d)[0])
        d_lane0, d_col0 = split(iss.d)
        if self.layout.organization != "4x1-half" and d_lane0:
            raise _err("Tensor Memory Datapath Lane Alignment", f"lane of the D address (Layout {self.layout.layout_id})",
                       "0", d_lane0, "9.7.16.10.5")
        cta = np.asarray(self.ctas)[where[..., 0]]
        lanes, cols = where[..., 1], d_col0 + where[..., 2]
        self.tc.require_cells(cta, lanes, cols, "tcgen05.mma D")
        bits = 16 if d.d_type == "f16" else 32
        cells = self.tc.cell_index(cta, lanes, cols)
        c_in = self.tc.tmem_flat[cells] & np.uint32((1 << bits) - 1)
        case = MmaCase(f.kind, d.d_type, d.a_type, d.b_type, a, b, c_in, zero, f.sparse, d.negate_a, d.negate_b,
                       d.saturate, ops.enable_input_d, ops.scale_input_d, sa, sb, d.scale_type)
        out = by_column_block(case, blocks, self.layout)
        out = self.hook("mma_result", out, row=np.arange(d.m)[:, None], col=np.arange(d.n)[None, :], kind=f.kind,
                        d_type=d.d_type, d_in=c_in, enable_input_d=ops.enable_input_d, cta_group=f.group,
                        case=case, recompute=lambda **changes: by_column_block(replace(case, **changes), blocks,
                                                                               self.layout))
        out = np.asarray(out).astype(np.uint32) & np.uint32((1 << bits) - 1)
        if not ops.disable_output_lane:                 # every cell written (no masks, no copies)
            self.tc.tmem_flat[cells] = out
            return
        off = disabled_lanes(ops.disable_output_lane, len(self.ctas))          # spec question Q-DOL-2CTA
        write = ~off[cta - self.ctas[0], lanes]
        self.tc.tmem[cta[write], lanes[write], cols[write]] = out[write]


def by_column_block(case: MmaCase, a_blocks: list[np.ndarray], layout) -> np.ndarray:
    """D of ``case`` where column block ``b`` of D multiplies ``a_blocks[b]`` (one block: ``case.a``
    throughout; a changed ``a`` in ``case`` -- a fault's recompute -- wins over the blocks)."""
    if len(a_blocks) == 1 or case.a is not a_blocks[0]:
        return mma_arithmetic(case)
    block = TO.column_blocks(layout, case.b.shape[1])
    out = None
    for b, a in enumerate(a_blocks):
        part = np.asarray(mma_arithmetic(replace(case, a=a)))
        out = part if out is None else np.where(block[None, :] == b, part, out)
    return out


@opcode("tcgen05.mma")
def compile_mma(ins, q, k):
    form = MmaForm(ins, q, k)

    def run(m, s):
        tc = tensor_core(m)
        for j in range(s.n):
            iss = IssuedMma(m, form, s, j)
            execution = MmaExecution(m, tc, form, iss)
            col = split(iss.d)[1]
            cols = (col, col + columns_used(execution.layout, iss.desc.n))     # N/2 columns in Layouts B/E, N/4 in G
            reads = []
            if m.hz is not None:
                operands = execution.tmem_operands()
                m.hz.mma_reads_tmem(iss.thread, execution.ctas, [cols, *operands], ins, "tcgen05.mma")
                sf = execution.scale_factor_cells()
                if sf:
                    m.hz.mma_reads_cells(iss.thread, sf, ins, "tcgen05.mma scale factors")
                reads = [(c, lo, hi) for c in execution.ctas for lo, hi in operands] + sf
            tc.issue(iss.thread, form.group, "mma", execution.run, ins=ins, ctas=execution.ctas, cols=cols,
                     reads=reads)
    return run


__all__ = ["MmaForm", "IssuedMma", "MmaExecution"]
