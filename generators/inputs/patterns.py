"""Inputs of the synchronization-pattern kernels (§9.7.16.6.4; ``generators/ptx/patterns.py``).

Every pattern runs kind::f16 MMAs with M = N = 128 (f16 A/B in 128B-swizzled K-major shared
memory, f32 D, accumulate) around its own ordering instructions; what each pattern's extra
registers and Tensor Memory cells must hold is in :data:`PATTERN_EXTRAS`:

* ``pipelined_different_thread``: A reaches Tensor Memory by ``tcgen05.cp.128x256b`` from a
  K-major 8-bit copy of its Tensor Memory rows (nothing preloads A);
* ``non_pipelined_different_thread.ld_mma``: warp 0 loads D's column 0 *before* the MMA writes it;
* ``...mma_ld`` / ``...composed``: warp 1 loads column 7 of D's lanes 32-63 *after* the MMA;
* ``async_proxy_operands.bulk_copy_expect_tx``: the usual inputs; only the kernel's staging differs
  (one cp.async.bulk tracked by an mbarrier transaction count, §9.7.16.6.5);
* ``register_dependency_same_thread``: the instruction descriptor travels through Tensor Memory
  (column 300) and a register; the record's own descriptor field is 0 (invalid) on purpose.
"""

from __future__ import annotations

import numpy as np

from generators.inputs.block import InBlocks, Preloads, Staging
from generators.inputs.mma import A_COL, D_COL, LANES, logical_operands, mma_op, place_mma
from generators.inputs.movement import stage_cp_source
from generators.inputs.types import SEMANTIC, CaseInputs
from generators.params import KERNEL_AXES, RUNTIME_AXES
from reference import tmem_mma_operands as TO
from reference.datapath_layouts import layout_for
from reference.instr_descriptor import InstrDescriptor

IDESC_COLUMN = 300
LD_AFTER_COLUMN = 7
# pattern -> (A in Tensor Memory through cp, taddr column of the pattern's tcgen05.ld, dump)
PATTERN_EXTRAS = {
    "pipelined_same_thread": (False, None),
    "non_pipelined_same_thread.mma_commit_ld": (False, None),
    "pipelined_different_thread": (True, None),
    "non_pipelined_different_thread.ld_mma": (False, D_COL),
    "non_pipelined_different_thread.mma_ld": (False, LD_AFTER_COLUMN),
    "non_pipelined_different_thread.composed": (False, LD_AFTER_COLUMN),
    "register_dependency_same_thread": (False, IDESC_COLUMN),
    "async_proxy_operands.bulk_copy_expect_tx": (False, None),
}


def pattern_params(pattern: str) -> dict:
    """The MMA parameters of a pattern's kernel (axes as generators.variants.mma names them)."""
    a_in_tmem, _ = PATTERN_EXTRAS[pattern]
    p = {a: None for a in KERNEL_AXES + RUNTIME_AXES}
    p.update(kind="f16", cta_group=1, sparse=False, ws=False, m=128, n=128, k=16, d_type="f32", a_type="f16",
             b_type="f16", scale_type=None, a_operand="tmem" if a_in_tmem else "sw128_k", collector=None, ashift=False,
             b_layout="sw128_k", enable_input_d=True, negate="none", selector=0, scale_ids=(0, 0), saturate=False,
             max_shift=0, lbo_mode="relative")
    p["idesc"] = InstrDescriptor(kind="f16", m=128, n=128, a_type="f16", b_type="f16", d_type="f32").encode()
    return p


def pattern_inputs(case, rng) -> CaseInputs:
    pattern = case.params["pattern"]
    a_in_tmem, ld_column = PATTERN_EXTRAS[pattern]
    p = pattern_params(pattern)
    op = mma_op(p)
    logical = logical_operands(op, rng, SEMANTIC)
    blocks = InBlocks(1)
    rec, blocks, pre, region = place_mma(p, logical, rng, blocks=blocks, preload_a=False, extra_smem=(
        (lambda st: {"s_desc": _a_copy(st, op, logical)}) if a_in_tmem else None))
    if pattern == "register_dependency_same_thread":
        pre.add(IDESC_COLUMN, [np.full((LANES, 1), p["idesc"], dtype=np.uint32)])
        rec["preload"] = pre.record()
        rec["idesc"] = 0
    if ld_column is not None:
        rec["taddr"] = ld_column
    dump = ld_column is not None and pattern != "register_dependency_same_thread"
    out_words = LANES * region.ncols + (LANES if dump else 0)
    extras = {"pattern": pattern, "ld_column": ld_column, "dump": dump}
    return CaseInputs(rec, blocks.blocks(), out_words, {"mma": logical, "region": region, "pattern": extras})


def _a_copy(staging: Staging, op, logical) -> int:
    """Stage A's Tensor Memory rows (f16, 2 per cell) as the 128 x 32-byte source of the cp."""
    cells = TO.pack_a(op.kind, op.a_type, logical.a)                       # (128, 8) uint32
    layout = layout_for(op.m, op.cta_group, sparse=op.sparse, ws=op.ws)
    rows = np.zeros((LANES, cells.shape[1]), dtype=np.uint32)
    where = TO.row_lanes(layout)
    rows[where[:, 1]] = cells
    data = rows.astype("<u4").view(np.uint8).reshape(LANES, -1)
    return stage_cp_source([staging], data[None], "none", 7)


__all__ = ["pattern_inputs", "pattern_params", "PATTERN_EXTRAS", "A_COL", "Preloads"]
