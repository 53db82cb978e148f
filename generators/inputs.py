"""Input synthesis: the case record and operand images of one case (docs/kernel-abi.md).

:func:`synthesize` returns the 256-byte case record fields, the in block (bytes, per CTA) and the
number of output words, for any case of the suite. Operand *values* are seeded random bits
(seed = crc32 of the case ID); the exact-by-construction values of the semantic tiers come from
the reference issues. Shared-memory operand images go through the layout issue's packer when it
exists (``generators.ptx.hooks.layout_packer``); until then A and B are placed as dense
row blocks of the swizzle atom's width with the descriptor strides below, which are placeholders
(not checked against §9.7.16.3), clearly so named.

TMEM placement of an MMA case (columns of the 512-column allocation): D at 0 (N columns),
A at 256, scale factors A/B at 384/416, sparsity metadata at 448.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from generators.params import Case
from generators.ptx import record as R
from generators.ptx.hooks import layout_packer
from generators.variants.common import TYPE_BITS, parse_layout
from reference.smem_descriptor import SmemDescriptor
from reference.zero_column_mask import ZeroColumnMaskDescriptor

D_COL, A_COL, SFA_COL, SFB_COL, META_COL = 0, 256, 384, 416, 448
LANES = 128
ATOM_BYTES = {"none": 16, "32B": 32, "64B": 64, "128B": 128, "128B_base32B": 128}
DOL_WORDS = {"zero": 0x00000000, "odd_lanes": 0xAAAAAAAA, "warp1": None}
# §9.7.16.4.3 worked examples 2 and 4 (skip 2, use 3; example 4 with start counts and shift 2)
ZCM = {
    "off": ZeroColumnMaskDescriptor(),
    "example2": ZeroColumnMaskDescriptor(non_zero_mask=True, skip_span=2, use_span=3),
    "example4": ZeroColumnMaskDescriptor(start_count=(0, 1, 2, 1), first_span=(1, 1, 0, 0), non_zero_mask=True,
                                         skip_span=2, use_span=3, column_shift=2),
}


@dataclass
class CaseInputs:
    """Everything the host writes for one case (the pointer fields are filled at launch)."""

    record: dict
    in_block: bytes          # per CTA; a CTA pair reads two blocks of len(in_block) each
    out_words: int           # per CTA


def _rng(case: Case) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(case.case_id.encode()))


def _words(rng, n: int) -> bytes:
    return rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32).tobytes()


class _Block:
    """Builds an in block: appended pieces at 1024-byte aligned offsets."""

    def __init__(self) -> None:
        self.data = bytearray()

    def add(self, payload: bytes, align: int = 1024) -> int:
        off = -(-len(self.data) // align) * align
        self.data.extend(b"\0" * (off - len(self.data)))
        self.data.extend(payload)
        return off


def _smem_operand(rng, rows: int, k_bytes: int, layout: str, start: int) -> tuple[bytes, int]:
    """(image, descriptor) of one operand in the staging buffer (placeholder strides)."""
    swizzle, major = parse_layout(layout)
    atom = ATOM_BYTES[swizzle]
    row_bytes = max(atom, -(-k_bytes // 16) * 16)
    size = rows * row_bytes
    packer = layout_packer()
    image = packer(rows=rows, k_bytes=k_bytes, layout=layout, rng=rng) if packer else _words(rng, size // 4)
    desc = SmemDescriptor(start_address=start, leading_byte_offset=16 if major == "K" else 8 * atom,
                          stride_byte_offset=8 * row_bytes, swizzle=swizzle).encode()
    return image, desc


def _mma_inputs(case: Case) -> CaseInputs:
    p, rng = case.params, _rng(case)
    cg, m, n, k = p["cta_group"], p["m"], p["n"], p["k"]
    rows_a, cols_b = (m // cg if cg == 2 else m), (n // cg if cg == 2 else n)
    a_bits, b_bits = TYPE_BITS[p["a_type"]], TYPE_BITS[p["b_type"]]
    k_a = (k // 2 if p["sparse"] else k) * a_bits // 8
    smem = _Block()
    rec: dict = {"idesc": p["idesc"], "tm_d": D_COL, "tm_a": A_COL, "tm_sfa": SFA_COL, "tm_sfb": SFB_COL,
                 "tm_meta": META_COL, "flags": R.FLAG_ENABLE_INPUT_D if p["enable_input_d"] else 0}
    if p["a_operand"] != "tmem":
        image, rec["a_desc"] = _smem_operand(rng, rows_a, k_a, p["a_operand"], 0)
        smem.add(image)
    b_off = -(-len(smem.data) // 1024) * 1024
    image, rec["b_desc"] = _smem_operand(rng, cols_b, k * b_bits // 8, p["b_layout"], b_off)
    smem.add(image)
    if p["lbo_mode"] == "absolute":
        rec["flags"] |= R.FLAG_A_LBO_ABSOLUTE | R.FLAG_B_LBO_ABSOLUTE
    block = _Block()
    smem_off = block.add(bytes(smem.data))
    preload = []
    if p["enable_input_d"]:
        preload.append((D_COL, n, block.add(_words(rng, LANES * n))))
    if p["a_operand"] == "tmem":
        cols = max(1, k_a // 4)
        preload.append((A_COL, cols, block.add(_words(rng, LANES * cols))))
    if p["scale_type"]:
        preload += [(SFA_COL, 4, block.add(_words(rng, LANES * 4))), (SFB_COL, 4, block.add(_words(rng, LANES * 4)))]
    if p["sparse"]:
        preload.append((META_COL, 8, block.add(_words(rng, LANES * 8))))
    rec["preload"] = [v for region in preload for v in region]
    rec["readback"] = [D_COL, n]
    rec.update(smem_bytes=len(smem.data), smem_src=smem_off)
    if p["dol"] is not None:
        word = DOL_WORDS[p["dol"]]
        rec["dol"] = [(0xFFFFFFFF if i == 1 else 0) if word is None else word for i in range(4 * cg)]
    if p["zcm"] is not None:
        rec["zcm_desc"] = ZCM[p["zcm"]].encode()
    return CaseInputs(rec, bytes(block.data), LANES * n)


def _tmem_inputs(case: Case) -> CaseInputs:
    """ld / ld.red / st / wait / cp / shift / fence / commit / sync: one region at the case's column."""
    p, rng = case.params, _rng(case)
    column = p.get("column", 0)
    nregs = p.get("registers", 1)
    block = _Block()
    rec: dict = {"taddr": (p.get("lane_offset", 0) << 16) | column}
    width = max(8, nregs)
    out_words = 0
    if case.family in ("ld", "ld.red", "fence", "shift", "sync", "wait"):
        rec["preload"] = [column, width, block.add(_words(rng, LANES * width))]
    if case.family in ("st", "wait"):
        rec["regs_src"] = block.add(_words(rng, LANES * nregs))
    if case.family in ("st", "cp", "shift", "commit", "fence", "sync"):
        rec["readback"] = [column, width]
        out_words += LANES * width
    if case.family in ("ld", "ld.red", "wait", "fence") or (case.family == "sync" and "different_thread" in case.case_id):
        out_words += LANES * (nregs + (1 if case.family == "ld.red" else 0))
    if case.family in ("cp", "commit", "fence", "sync"):
        smem_off = block.add(_words(rng, 4096 // 4))
        rec.update(smem_bytes=4096, smem_src=smem_off,
                   s_desc=SmemDescriptor(start_address=0, leading_byte_offset=16, stride_byte_offset=1024).encode())
    if case.family == "commit":
        rec["aux"] = [p["cta_mask"]]
    return CaseInputs(rec, bytes(block.data), out_words)


def _warp_inputs(case: Case) -> CaseInputs:
    rng = _rng(case)
    sp_regs = sum(1 for line in case.kernel.instruction.split("{")[1:] for _ in line.split("}")[0].split(","))
    block = _Block()
    off = block.add(_words(rng, 32 * (sp_regs + 3)))
    return CaseInputs({"regs_src": off}, bytes(block.data), 32 * 4)


def synthesize(case: Case) -> CaseInputs:
    """Case record fields, in block and output size of ``case`` (legal cases)."""
    if case.family.startswith("mma"):
        return _mma_inputs(case)
    if case.family == "warp.mma.sp":
        return _warp_inputs(case)
    if case.family == "alloc":
        return CaseInputs({}, b"", 1)
    return _tmem_inputs(case)


def case_record(case: Case, inputs: CaseInputs, in_ptr: int = 0, out_ptr: int = 0, status_ptr: int = 0) -> bytes:
    """The packed 256-byte record (pointers as given; in_cta_stride = len(in_block))."""
    fields = dict(inputs.record)
    fields.update(in_ptr=in_ptr, out_ptr=out_ptr, status_ptr=status_ptr, out_words=inputs.out_words,
                  in_cta_stride=len(inputs.in_block))
    return R.pack_case_record(fields)
