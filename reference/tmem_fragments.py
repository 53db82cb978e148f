"""tcgen05.ld / tcgen05.st fragments: which thread's register holds which Tensor Memory cell.

PTX ISA §9.7.16.2.3.1 (Figures 183-187), §9.7.16.8.2 (Figure 193), §9.7.16.8.3-4 (Tables 47/48).

For a warp executing ``tcgen05.{ld,st}.<shape>.x<num>`` at address ``taddr`` (lane L, column C),
register ``i`` of thread ``t`` (``0 <= i < R``, R from Table 47/48) holds the cell
``(L + dl, C + dc)`` with (t >> k meaning integer shift, & bitwise and)::

    shape      dl                          dc
    .32x32b    t                           i
    .16x64b    8*(t&1) + (t>>2)            ((t>>1)&1) + 2*i
    .16x128b   (t>>2) + 8*(i&1)            (t&3) + 4*(i>>1)
    .16x256b   (t>>2) + 8*((i>>1)&1)       2*(t&3) + (i&1) + 8*(i>>2)
    .16x32bx2  t&15                        (t>>4)*immHalfSplitoff + i

Sources (figure-derived facts): .32x32b is fully defined by the text ("each lane (32 * .num)-bits",
thread t <-> lane t, register i <-> column i). The other rows are the CuTe atoms
``SM100_TMEM_LOAD_{16dp64b,16dp128b,16dp256b,16dp32b,32dp32b}{1..128}x`` in NVIDIA/cutlass
``include/cute/atom/copy_traits_sm100.hpp`` (``DstLayout`` composed with ``ValID``), and agree with
Triton's ``getTileLayout`` (triton-lang/triton ``lib/Dialect/TritonNvidiaGPU/IR/Dialect.cpp``:
16x64b lane bases {8,0},{0,1},{1,0},{2,0},{4,0}; 16x128b and 16x256b as above). CUTLASS passes
``immHalfSplitoff = num`` (``2*num`` with ``.pack::16b``) so that the two halves of .16x32bx2 abut.

``.pack::16b`` / ``.unpack::16b`` (§9.7.16.8.2; same CUTLASS atoms, ``*_16b`` variants, whose
``ValID`` keeps bits 0-15 of every 32-bit column): the 16-bit half ``h`` of register ``i`` is the
low 16 bits of column ``C + base + 2*u + h`` where ``dc = base + u`` above (``base`` is the
``immHalfSplitoff`` term of .16x32bx2, 0 otherwise): the Tensor Memory footprint doubles in columns.
The upper 16 bits of a cell are ignored by ``.pack::16b``; what ``.unpack::16b`` leaves in them
is spec question ``Q-UNPACK-UPPER`` (:func:`unpack_kept_bits`): ``zero`` (the pick) writes 0 (D
packing §9.7.16.10.4.1 keeps 16-bit elements in the low half of a word, upper half zero), ``preserved``
writes the low 16 bits only (the cell's upper half keeps what it held). The text is silent; the suite
compares the upper half only once the reading was chosen (:func:`unpack_upper_compared`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from reference.errors import SpecError, expects_but_got
from reference.spec_questions import is_explicit, resolve
from reference.tables import LDST_SHAPES, ldst_registers
from reference.tmem import (
    COLUMNS,
    LANES,
    LANES_PER_WARP,
    TensorMemory,
    TmemAddress,
    accessible_lanes,
    split_address,
)

WARP = 32
SECTION_SHAPES = "9.7.16.2.3.1"
SECTION_LD = "9.7.16.8.3"
SECTION_ST = "9.7.16.8.4"
SECTION_PACK = "9.7.16.8.2"
UNPACK_UPPER_HALF = 0          # what .unpack::16b writes into bits 16-31 of a cell (text silent)
SHAPE_LANES: dict[str, int] = {"32x32b": 32, "16x64b": 16, "16x128b": 16, "16x256b": 16, "16x32bx2": 16}


@dataclass(frozen=True)
class FragmentMap:
    """The bijection (thread, register, half) <-> (lane offset, column offset) of one ld/st form.

    ``entries`` is an int array with one row ``[thread, reg, lane, column, half]`` per 32-bit
    register (``half`` = 0) or, with ``pack``, per 16-bit register half; lane/column are offsets
    from ``taddr``. Rows are ordered by thread, register, half.
    """

    shape: str
    num: int
    pack: bool
    half_split: int | None
    registers: int
    entries: np.ndarray = field(compare=False, repr=False)

    def cells(self) -> set[tuple[int, int]]:
        """The (lane offset, column offset) cells the instruction touches."""
        return {(int(r[2]), int(r[3])) for r in self.entries}

    @property
    def lanes(self) -> int:
        """Lanes touched from taddr's lane: 32 (.32x32b) or 16."""
        return int(self.entries[:, 2].max()) + 1

    @property
    def columns(self) -> int:
        """Columns spanned from taddr's column (with .16x32bx2: up to the end of the second half)."""
        return int(self.entries[:, 3].max()) + 1


def _unit_cell(shape: str, t: np.ndarray, i: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lane offset, per-access column unit, access base flag) of register i of thread t, unpacked."""
    zero = np.zeros_like(t)
    if shape == "32x32b":
        return t, i, zero
    if shape == "16x64b":
        return 8 * (t & 1) + (t >> 2), ((t >> 1) & 1) + 2 * i, zero
    if shape == "16x128b":
        return (t >> 2) + 8 * (i & 1), (t & 3) + 4 * (i >> 1), zero
    if shape == "16x256b":
        return (t >> 2) + 8 * ((i >> 1) & 1), 2 * (t & 3) + (i & 1) + 8 * (i >> 2), zero
    return t & 15, i, t >> 4                     # 16x32bx2: threads 16-31 use the second access


def check_half_split(shape: str, half_split: int | None, section: str = SECTION_LD) -> None:
    """immHalfSplitoff is required by .16x32bx2 and absent otherwise (§9.7.16.8.3-4 syntax)."""
    if shape == "16x32bx2":
        if half_split is None or not isinstance(half_split, (int, np.integer)) or half_split < 0:
            raise SpecError(section, "immHalfSplitoff", expects_but_got(
                "immHalfSplitoff of .16x32bx2", "a non-negative immediate", half_split))
    elif half_split is not None:
        raise SpecError(section, "immHalfSplitoff", expects_but_got(
            f"immHalfSplitoff with .{shape}", "none (only .16x32bx2 takes it)", half_split))


def fragment_map(shape: str, num: int, *, pack: bool = False, half_split: int | None = None,
                 op: str = "ld") -> FragmentMap:
    """Fragment of ``tcgen05.{ld,st}.<shape>.x<num>{.pack::16b|.unpack::16b}`` (§9.7.16.2.3.1).

    Raises SpecError naming Table 47 (ld) or Table 48 (st) for an NA shape/num combination.
    """
    registers = ldst_registers(shape, num, op=op)
    check_half_split(shape, half_split, SECTION_LD if op == "ld" else SECTION_ST)
    t, i = np.meshgrid(np.arange(WARP), np.arange(registers), indexing="ij")
    t, i = t.ravel(), i.ravel()
    lane, unit, second = _unit_cell(shape, t, i)
    base = second * (half_split or 0)
    if pack:
        halves = [np.stack([t, i, lane, base + 2 * unit + h, np.full_like(t, h)], axis=1) for h in (0, 1)]
        entries = np.stack(halves, axis=1).reshape(-1, 5)
    else:
        entries = np.stack([t, i, lane, base + unit, np.zeros_like(t)], axis=1)
    entries.setflags(write=False)
    return FragmentMap(shape, num, pack, half_split if shape == "16x32bx2" else None, registers, entries)


def _address(taddr) -> TmemAddress:
    return taddr if isinstance(taddr, TmemAddress) else split_address(taddr)


def absolute_cells(fmap: FragmentMap, taddr, *, warp_id: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Absolute (lanes, columns) of every entry of ``fmap`` at ``taddr``, checked.

    Checks: every cell inside the 128 x 512 memory (§9.7.16.1); all lanes inside one quarter
    (a warp reaches one quarter, §9.7.16.8.1), and the quarter of ``warp_id`` when given.
    """
    base = _address(taddr)
    lanes = base.lane + fmap.entries[:, 2]
    cols = base.column + fmap.entries[:, 3]
    if lanes.max() >= LANES:
        raise SpecError("9.7.16.1", "Tensor Memory shape", expects_but_got(
            f"lanes of .{fmap.shape} at lane {base.lane}", f"lanes below {LANES}", int(lanes.max())))
    if cols.max() >= COLUMNS:
        raise SpecError("9.7.16.1", "Tensor Memory shape", expects_but_got(
            f"columns of .{fmap.shape}.x{fmap.num} at column {base.column}", f"columns below {COLUMNS}", int(cols.max())))
    quarters = set((lanes // LANES_PER_WARP).tolist())
    if len(quarters) != 1:
        raise SpecError("9.7.16.8.1", "Access restrictions", expects_but_got(
            f"lanes of .{fmap.shape} at lane {base.lane}", "lanes of one warp quarter (32*w .. 32*w+31)",
            f"lanes {int(lanes.min())}-{int(lanes.max())}"))
    if warp_id is not None:
        allowed = accessible_lanes(warp_id)
        if quarters.pop() != allowed.start // LANES_PER_WARP:
            raise SpecError("9.7.16.8.1", "Access restrictions", expects_but_got(
                f"lanes reached by warp {warp_id}", f"lanes {allowed.start}-{allowed.stop - 1}",
                f"lanes {int(lanes.min())}-{int(lanes.max())}"))
    return lanes, cols


def ld(tmem: TensorMemory, taddr, shape: str, num: int, *, pack: bool = False,
       half_split: int | None = None, warp_id: int | None = None) -> np.ndarray:
    """``tcgen05.ld.sync.aligned.<shape>.x<num>{.pack::16b}.b32``: registers[thread, reg] (uint32).

    §9.7.16.8.3. ``taddr`` is the 32-bit address (or a TmemAddress) every thread passes.
    """
    fmap = fragment_map(shape, num, pack=pack, half_split=half_split, op="ld")
    lanes, cols = absolute_cells(fmap, taddr, warp_id=warp_id)
    values = tmem.cells[lanes, cols].astype(np.uint64)
    regs = np.zeros((WARP, fmap.registers), dtype=np.uint64)
    t, r, h = fmap.entries[:, 0], fmap.entries[:, 1], fmap.entries[:, 4]
    if pack:
        np.bitwise_or.at(regs, (t, r), (values & 0xFFFF) << (16 * h).astype(np.uint64))
    else:
        regs[t, r] = values
    return regs.astype(np.uint32)


def unpack_kept_bits(reading: str | None = None) -> int:
    """Bits of a cell ``tcgen05.st .unpack::16b`` leaves as they were (§9.7.16.8.2, spec question
    ``Q-UNPACK-UPPER``): none under ``zero`` (bits 16-31 written 0), bits 16-31 under ``preserved``."""
    return 0xFFFF0000 if resolve("Q-UNPACK-UPPER", reading) == "preserved" else 0


def unpack_upper_compared(before_known: bool) -> bool:
    """Whether the upper half of ``.unpack::16b`` cells has an expected value: only once
    ``Q-UNPACK-UPPER``'s reading was chosen (``--reading``, a probe), and under ``preserved`` only
    where the cell's content before the store is known."""
    return is_explicit("Q-UNPACK-UPPER") and (before_known or not unpack_kept_bits())


def st(tmem: TensorMemory, taddr, registers, shape: str, num: int, *, unpack: bool = False,
       half_split: int | None = None, warp_id: int | None = None) -> None:
    """``tcgen05.st.sync.aligned.<shape>.x<num>{.unpack::16b}.b32``: write registers[thread, reg].

    §9.7.16.8.4. With ``unpack`` each 16-bit half goes to the low bits of its own cell; the upper
    half as :func:`unpack_kept_bits` says (spec question ``Q-UNPACK-UPPER``).
    """
    fmap = fragment_map(shape, num, pack=unpack, half_split=half_split, op="st")
    regs = np.asarray(registers, dtype=np.uint64)
    if regs.shape != (WARP, fmap.registers):
        raise SpecError(SECTION_ST, "Table 48", expects_but_got(
            f"register array of .{shape}.x{num}", f"shape (32, {fmap.registers})", regs.shape))
    lanes, cols = absolute_cells(fmap, taddr, warp_id=warp_id)
    t, r, h = fmap.entries[:, 0], fmap.entries[:, 1], fmap.entries[:, 4]
    values = regs[t, r]
    if unpack:
        values = ((values >> (16 * h).astype(np.uint64)) & 0xFFFF) | (UNPACK_UPPER_HALF << 16)
        values = values | (tmem.cells[lanes, cols].astype(np.uint64) & unpack_kept_bits())
    tmem.cells[lanes, cols] = values.astype(np.uint32)


# ---------------------------------------------------------------------------------------------
# tcgen05.ld.red (§9.7.16.8.3)
# ---------------------------------------------------------------------------------------------

RED_SHAPES = ("32x32b", "16x32bx2")      # .shape3 / .shape4
RED_OPS = ("min", "max")
RED_TYPES = ("f32", "u32", "s32")
CANONICAL_NAN = 0x7FFFFFFF


def check_ld_red(shape: str, num: int, op: str, dtype: str, *, abs_: bool = False, nan: bool = False) -> None:
    """The qualifier rules of ``tcgen05.ld.red`` (§9.7.16.8.3 syntax and description)."""
    if shape not in RED_SHAPES:
        raise SpecError(SECTION_LD, "tcgen05.ld.red syntax", expects_but_got(".shape of tcgen05.ld.red", ".32x32b or .16x32bx2", shape))
    if num < 2:
        raise SpecError(SECTION_LD, ".red needs .num >= .x2", expects_but_got(".num with .red", "at least .x2", f".x{num}"))
    if op not in RED_OPS:
        raise SpecError(SECTION_LD, "tcgen05.ld.red syntax", expects_but_got(".redOp", ".min or .max", op))
    if dtype not in RED_TYPES:
        raise SpecError(SECTION_LD, "tcgen05.ld.red syntax", expects_but_got("type of tcgen05.ld.red", ".f32, .u32 or .s32", dtype))
    if dtype != "f32" and (abs_ or nan):
        raise SpecError(SECTION_LD, "tcgen05.ld.red syntax", expects_but_got(
            f".abs/.NaN with .{dtype}", "only the .f32 form", ".abs" if abs_ else ".NaN"))


def _f32_order_key(bits: np.ndarray) -> np.ndarray:
    """An unsigned key whose order is the f32 order, -0 below +0 (NaNs excluded by the caller)."""
    bits = bits.astype(np.uint64)
    negative = (bits >> 31) & 1
    return np.where(negative == 1, 0xFFFFFFFF - bits, bits | 0x80000000)


def reduce_lane(values: np.ndarray, op: str, dtype: str, *, abs_: bool = False, nan: bool = False,
                reading: str | None = None) -> int:
    """The reduction of one thread's loaded registers (§9.7.16.8.3 ``redval``), as 32-bit bits.

    f32 (decisions, the text defines only the qualifiers): ``.abs`` reduces |x| (sign bits
    cleared); without ``.NaN`` NaN inputs are ignored and the result is NaN only when all inputs
    are NaN; with ``.NaN`` any NaN input gives NaN; NaN results are the canonical 0x7FFFFFFF.
    Signed zeros are spec question ``Q-LDRED-ZERO`` (``reading``; None = the reading in force):
    ``neg-below`` -0.0 orders below +0.0; ``zeros-equal`` they compare equal and the first of the
    equal extremes in register order is the result. u32/s32: unsigned/signed order.
    """
    bits = np.asarray(values, dtype=np.uint64) & 0xFFFFFFFF
    pick = np.argmin if op == "min" else np.argmax
    if dtype == "u32":
        return int(bits[pick(bits)])
    if dtype == "s32":
        signed = bits.astype(np.int64) - ((bits >> 31) << 32).astype(np.int64)
        return int(bits[pick(signed)])
    if abs_:
        bits = bits & 0x7FFFFFFF
    is_nan = ((bits >> 23) & 0xFF == 0xFF) & ((bits & 0x7FFFFF) != 0)
    if is_nan.all() or (nan and is_nan.any()):
        return CANONICAL_NAN
    finite = bits[~is_nan]
    ordered = finite
    if resolve("Q-LDRED-ZERO", reading) == "zeros-equal":
        ordered = np.where(finite == 0x80000000, 0, finite)         # -0 takes +0's place; argmin/argmax: first
    return int(finite[pick(_f32_order_key(ordered))])


def ld_red(tmem: TensorMemory, taddr, shape: str, num: int, op: str, dtype: str, *, abs_: bool = False,
           nan: bool = False, half_split: int | None = None, warp_id: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``tcgen05.ld.red.<shape>.x<num>.<op>{.abs}{.NaN}.<type>``: (registers, redval per thread).

    §9.7.16.8.3: the registers are loaded as by ``tcgen05.ld``; ``redval`` of each thread is the
    reduction of the values it loaded, which all come from one lane (.32x32b: lane t;
    .16x32bx2: lane t&15 of the access of its half). Only sm_103f/sm_110f have it
    (shared/spec/NOTES.md item 9).
    """
    check_ld_red(shape, num, op, dtype, abs_=abs_, nan=nan)
    regs = ld(tmem, taddr, shape, num, half_split=half_split, warp_id=warp_id)
    red = np.array([reduce_lane(regs[t], op, dtype, abs_=abs_, nan=nan) for t in range(WARP)], dtype=np.uint32)
    return regs, red


__all__ = [
    "FragmentMap", "fragment_map", "absolute_cells", "ld", "st", "ld_red", "reduce_lane", "check_ld_red",
    "check_half_split", "LDST_SHAPES", "SHAPE_LANES", "RED_SHAPES", "RED_OPS", "RED_TYPES",
    "CANONICAL_NAN", "UNPACK_UPPER_HALF", "unpack_kept_bits", "unpack_upper_compared",
]
