"""Variants of alloc/dealloc/relinquish, ld (+ .red), st, wait, cp, shift, fence, commit.

These families have few spellings, so default and exhaustive hold every legal spelling; smoke
holds each shape/qualifier at least once. Runtime axes (TMEM column, lane base of the 16-lane
shapes) are assigned cyclically.
"""

from __future__ import annotations

import itertools

from generators.params import Case, Params
from generators.ptx import movement as M
from generators.variants.common import make_case
from reference import tables as T
from reference.tmem import COLUMNS
from reference.tmem_fragments import fragment_map

ALLOC_NCOLS = (32, 64, 128, 256, 512)        # "power of 2 ... within the range [32, 512]"
CP_SHAPES = (("128x256b", None), ("4x256b", None), ("128x128b", None), ("64x128b", "warpx2::02_13"),
             ("64x128b", "warpx2::01_23"), ("32x128b", "warpx4"))   # §9.7.16.9.2: 64x128b/32x128b need these
CP_DECOMPRESS = (None, "b6x16_p32", "b4x16_p64")
# taddr columns of ld/st/cp cases: between them every column bit 0-8 is 0 and 1 (field coverage, issue 15)
TMEM_COLUMNS = (0, 87, 128, 200, 310, 455)
# lane offsets of 16-lane ld/st shapes inside the warp's 32-lane quarter (§9.7.16.8.1: the 16 lanes
# must stay in it; no alignment is stated): 0 and 16, and 5 and 10 so that lane bits 0-3 are set too
LANE_OFFSETS_16 = (0, 16, 5, 10)
# (column, lane) of the shift cases: the first two set complementary column bits (341 + 170 = 511)
# and lanes 0 and 96 (§9.7.16.9.3: lane aligned to 32; 8 columns in bounds)
SHIFT_PLACES = ((341, 0), (170, 96), (0, 32), (455, 64))


def _pick(level: str, items: list, every: int, key=None) -> list:
    """smoke keeps every ``every``-th item (and the first), plus the first item of every ``key``
    value (e.g. each ld/st shape) the stride missed; other levels keep all."""
    if level != "smoke":
        return items
    keep = {i for i in range(len(items)) if i % every == 0}
    if key is not None:
        seen = {key(items[i]) for i in keep}
        for i, x in enumerate(items):
            if key(x) not in seen:
                seen.add(key(x))
                keep.add(i)
    return [x for i, x in enumerate(items) if i in keep]


def alloc_cases(level: str) -> list[Case]:
    out = []
    combos = [(op, cg, n, sh) for op in ("alloc", "dealloc") for cg in (1, 2) for n in ALLOC_NCOLS for sh in (True, False)
              if op == "alloc" or sh]
    combos += [("relinquish_alloc_permit", cg, 32, True) for cg in (1, 2)]
    for op, cg, n, shared in _pick(level, combos, 5):
        kernel = M.alloc_kernel(op, cg, n, shared)
        spell = M.alloc_spellings(cg, n, shared)[op]
        head = spell.split(" ")[0]
        cid = head + ("" if op == "relinquish_alloc_permit" else f".ncols{n}") + ("" if shared or op != "alloc" else ".generic")
        out.append(make_case(cid, "alloc", "9.7.16.7.1", kernel,
                             Params.of(op=op, cta_group=cg, ncols=n, shared_cta=shared),
                             rule="§9.7.16.7.1: nCols a power of 2 in [32, 512]"))
    return out


def _ldst_shapes(op: str, red: bool = False):
    shapes = ("32x32b", "16x32bx2") if red else T.LDST_SHAPES
    for shape in shapes:
        for num in T.LDST_NUMS:
            if (shape, num) in T.TABLE_47 and not (red and num < 2):   # .red: ".num must be at least .x2"
                yield shape, num


def _runtime(i: int, shape: str, width: int = 1) -> dict:
    """Lane base and TMEM column of case i: the columns cycle, skipping one where the
    instruction's ``width`` columns would pass the last column (§9.7.16.1: 512 columns)."""
    lane = LANE_OFFSETS_16[i % len(LANE_OFFSETS_16)] if shape.startswith("16x") else 0
    cols = [TMEM_COLUMNS[(i + j) % len(TMEM_COLUMNS)] for j in range(len(TMEM_COLUMNS))]
    return {"column": next((c for c in cols if c + width <= COLUMNS), 0), "lane_offset": lane}


def _width(shape: str, num: int, pack: bool, imm: int | None, op: str) -> int:
    """Columns a tcgen05.ld/st spans from its address (reference fragment map, §9.7.16.2.3.1)."""
    return fragment_map(shape, num, pack=pack, half_split=imm, op=op).columns


def _suffix(rt: dict) -> str:
    return f".col{rt['column']}" + (f".lane{rt['lane_offset']}" if rt["lane_offset"] else "")


def ld_cases(level: str) -> list[Case]:
    out = []
    items = [(s, n, p) for s, n in _ldst_shapes("ld") for p in (False, True)]
    for i, (shape, num, pack) in enumerate(_pick(level, items, 15, key=lambda x: x[0])):
        imm = num if shape == "16x32bx2" else None
        instr = M.ld_instruction(shape, num, pack, imm)
        kernel = M.ld_kernel(instr, T.ldst_registers(shape, num))
        rt = _runtime(i, shape, _width(shape, num, pack, imm, "ld"))
        cid = instr.split(" ")[0] + (f".imm{imm}" if imm is not None else "") + _suffix(rt)
        out.append(make_case(cid, "ld", "9.7.16.8.3", kernel,
                             Params.of(shape=shape, num=num, pack=pack, imm=imm, registers=T.ldst_registers(shape, num), **rt),
                             rule=f"Table 47: .{shape}.x{num} = {T.ldst_registers(shape, num)} registers"))
    return out


def st_cases(level: str) -> list[Case]:
    out = []
    items = [(s, n, u) for s, n in _ldst_shapes("st") for u in (False, True)]
    for i, (shape, num, unpack) in enumerate(_pick(level, items, 15, key=lambda x: x[0])):
        imm = num if shape == "16x32bx2" else None
        regs = T.ldst_registers(shape, num, op="st")
        instr = M.st_instruction(shape, num, unpack, imm)
        rt = _runtime(i, shape, _width(shape, num, unpack, imm, "st"))
        cid = instr.split(" ")[0] + (f".imm{imm}" if imm is not None else "") + _suffix(rt)
        out.append(make_case(cid, "st", "9.7.16.8.4", M.st_kernel(instr, regs),
                             Params.of(shape=shape, num=num, unpack=unpack, imm=imm, registers=regs, **rt),
                             rule=f"Table 48: .{shape}.x{num} = {regs} registers"))
    return out


def ld_red_cases(level: str) -> list[Case]:
    out = []
    mods = [(op, "f32", a, nan) for op in ("min", "max") for a in (False, True) for nan in (False, True)]
    mods += [(op, t, False, False) for op in ("min", "max") for t in ("u32", "s32")]
    items = [(s, n, m) for (s, n), m in itertools.product(_ldst_shapes("ld", red=True), mods)]
    for i, (shape, num, (redop, dtype, abs_, nan)) in enumerate(_pick(level, items, 37)):
        imm = num if shape == "16x32bx2" else None
        instr = M.ld_red_instruction(shape, num, redop, dtype, abs_, nan, imm)
        regs = T.ldst_registers(shape, num)
        rt = _runtime(i, shape, _width(shape, num, False, imm, "ld"))
        cid = instr.split(" ")[0] + (f".imm{imm}" if imm is not None else "") + _suffix(rt)
        out.append(make_case(cid, "ld.red", "9.7.16.8.3", M.ld_kernel(instr, regs, red=True),
                             Params.of(shape=shape, num=num, redop=redop, type=dtype, abs=abs_, nan=nan, imm=imm,
                                       registers=regs, **rt),
                             rule=".red: .num at least .x2, shapes .32x32b/.16x32bx2, Table 47"))
    return out


def wait_cases(level: str) -> list[Case]:
    return [make_case(f"tcgen05.wait::{w}.sync.aligned", "wait", "9.7.16.8.5", M.wait_kernel(w), Params.of(wait=w),
                      rule="§9.7.16.6.4.2 example 1") for w in ("st", "ld")]


def cp_cases(level: str) -> list[Case]:
    out = []
    items = [(cg, s, mc, d) for cg in (1, 2) for (s, mc) in CP_SHAPES for d in CP_DECOMPRESS]
    for i, (cg, shape, mc, dec) in enumerate(_pick(level, items, 7)):
        instr = M.cp_instruction(cg, shape, mc, dec)
        rt = {"column": TMEM_COLUMNS[i % len(TMEM_COLUMNS)], "src_swizzle": ("none", "128B")[i % 2]}
        cid = instr.split(" ")[0] + f".col{rt['column']}.src_{rt['src_swizzle']}"
        out.append(make_case(cid, "cp", "9.7.16.9.2", M.cp_kernel(instr, cg),
                             Params.of(cta_group=cg, shape=shape, multicast=mc, decompress=dec, **rt),
                             rule="§9.7.16.9.2: .64x128b needs .warpx2::*, .32x128b needs .warpx4"))
    return out


def shift_cases(level: str) -> list[Case]:
    out = []
    for i, (cg, example) in enumerate(_pick(level, [(1, False), (2, False), (1, True), (2, True)], 2)):
        instr = M.shift_instruction(cg, example)
        cid = instr.split(" ")[0] + (".example_order" if example else "")
        column, lane = SHIFT_PLACES[i % len(SHIFT_PLACES)]
        out.append(make_case(cid, "shift", "9.7.16.9.3", M.shift_kernel(instr, cg),
                             Params.of(cta_group=cg, example_order=example, column=column, lane=lane),
                             rule="§9.7.16.9.3 syntax" + (" (order of the examples, NOTES.md item 6)" if example else ""),
                             note="example spelling order accepted by ptxas" if example else ""))
    return out


def fence_cases(level: str) -> list[Case]:
    return [make_case(f"tcgen05.fence::{w}", "fence", "9.7.16.11.1", M.fence_kernel(w), Params.of(fence=w),
                      rule="§9.7.16.6.4.4 example 1") for w in ("before_thread_sync", "after_thread_sync")]


def commit_cases(level: str) -> list[Case]:
    out = []
    items = [(cg, sc, mc) for cg in (1, 2) for sc in (True, False) for mc in (False, True)]
    for cg, shared_cluster, mc in _pick(level, items, 3):
        instr = M.commit_instruction(cg, shared_cluster, mc)
        cid = instr.split(" ")[0]
        out.append(make_case(cid, "commit", "9.7.16.12.1", M.commit_kernel(instr, cg),
                             Params.of(cta_group=cg, shared_cluster=shared_cluster, multicast=mc,
                                       cta_mask=(3 if cg == 2 else 1) if mc else 0),
                             rule="§9.7.16.12.1 syntax"))
    return out
