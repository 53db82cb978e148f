"""Expected values (``conformance.harness.oracles``) against closed forms written here: numpy float16
arithmetic for an MMA, the .32x32b fragment rule, the shift rule, a hand-decoded 2:4 warp mma.sp."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.harness.oracles import expected, output_pieces
from generators.inputs import synthesize
from generators.ptx.movement import fence_kernel
from generators.variants import cases
from generators.variants.mma import Base, make_mma_case
from generators.variants.warp_mma_sp import case_for, spellings
from reference import tables as T

pytestmark = pytest.mark.reference

SMOKE = [c for c in cases("smoke") if c.legal]


def _f16_case(**changes):
    row = next(r for r in T.TABLE_39 if r.kind == "f16" and r.cta_group == 1 and not r.sparse and not r.ws
               and 128 in r.m)
    combo = next(c for c in T.TYPE_COMBOS["f16"] if (c.a_type, c.b_type, c.d_type) == ("f16", "f16", "f32"))
    r = dict(a_operand="sw128_k", collector=None, ashift=False, dol=None, scale_input_d=None, zcm=None, scale_vec=None,
             b_layout="swnone_mn", enable_input_d=True, negate="b", selector=0, scale_ids=(0, 0), saturate=False,
             max_shift=0, lbo_mode="relative")
    r.update(changes)
    return make_mma_case(Base(row, combo, 128, 64), r)


def _section(exp, name):
    return next(s for s in exp.sections if s.name == name)


@pytest.mark.parametrize("changes", [{}, {"enable_input_d": False, "negate": "a"}, {"dol": "warp1"}])
def test_mma_d_equals_numpy_float16_product(changes):
    case = _f16_case(**changes)
    inputs = synthesize(case)
    lg = inputs.logical["mma"]
    a = lg.a.astype(np.uint16).view(np.float16).astype(np.float64)
    b = lg.b.astype(np.uint16).view(np.float16).astype(np.float64)
    c = lg.c.astype(np.uint32).view(np.float32).astype(np.float64)
    a = -a if case.params["negate"] in ("a", "ab") else a
    b = -b if case.params["negate"] in ("b", "ab") else b
    d = a @ b + (c if case.params["enable_input_d"] else 0)
    want = d.astype(np.float32).view(np.uint32)
    sec = _section(expected(case, inputs), "D")
    if case.params["dol"] == "warp1":            # lanes 32-63 (rows 32-63, Layout D) keep their old D
        want[32:64] = lg.c[32:64].astype(np.uint32)
    assert (sec.expected == want).all() and (sec.mask == 0xFFFFFFFF).all()
    # every D word sits where Layout D (M = 128: lane i, column j) puts it, after no other block
    assert (sec.index == np.arange(128)[:, None] * 64 + np.arange(64)[None, :]).all()
    rest = _section(expected(case, inputs), "TMEM outside D")
    assert (rest.mask == 0).all()                 # N = 64 columns read back: D covers the region


def test_f16_d_compares_the_low_half_only():
    case = next(c for c in SMOKE if c.family == "mma" and c.params["d_type"] == "f16" and c.params["dol"] is None)
    sec = _section(expected(case, synthesize(case)), "D")
    assert set(np.unique(sec.mask[sec.mask != 0])) <= {0xFFFF} and sec.value_type == "f16"


def test_ld_32x32b_registers_are_lane_t_column_i():
    case = next(c for c in SMOKE if c.family == "ld" and c.params["shape"] == "32x32b" and not c.params["pack"])
    inputs = synthesize(case)
    before = inputs.logical["region"].before[0]
    sec = expected(case, inputs).sections[0]
    n = case.params["registers"]
    assert (sec.expected == before[:, :n]).all()       # thread 32w+t of warp w reads lane 32w+t


def test_shift_moves_rows_down_and_leaves_row_0_undefined():
    case = next(c for c in SMOKE if c.family == "shift" and c.params["cta_group"] == 1)
    inputs = synthesize(case)
    before = inputs.logical["region"].before[0]
    sec = expected(case, inputs).sections[0]
    assert (sec.expected[1:32] == before[0:31]).all() and (sec.expected[32:] == before[32:]).all()
    assert (sec.mask[0] == 0).all() and (sec.mask[1:] == 0xFFFFFFFF).all()


def test_fence_kernel_output_layout_is_dump_then_region():
    case = next(c for c in SMOKE if c.family == "fence")
    inputs = synthesize(case)
    pieces = output_pieces(fence_kernel("before_thread_sync"), inputs.record)
    assert [(p.kind, p.offset) for p in pieces] == [("registers", 0), ("region", 128)]
    dump = expected(case, inputs).sections[0]
    assert (dump.mask[32:] == 0).all()                 # warps 1-3 never set the dumped register


def test_alloc_address_checks_lane_and_allocation_unit():
    case = next(c for c in SMOKE if c.family == "alloc")
    sec = expected(case, synthesize(case)).sections[0]
    assert int(sec.mask.ravel()[0]) == 0xFFFFFE1F and int(sec.expected.ravel()[0]) == 0


def test_warp_mma_sp_m16n8k16_f16_by_hand():
    sp = next(s for s in spellings() if (s.shape, s.a_type, s.d_type, s.selector) == ("m16n8k16", "f16", "f32", 2))
    case = case_for(sp)
    inputs = synthesize(case)
    lg = inputs.logical["warp"]
    comp = lg.a.astype(np.uint16).view(np.float16).astype(np.float64)
    dense = np.zeros((16, 16))
    for i in range(16):
        for j in range(4):                                 # 2:4: nibble = idx1 << 2 | idx0
            nib = int(lg.meta[i, j])
            dense[i, 4 * j + (nib & 3)] = comp[i, 2 * j]
            dense[i, 4 * j + (nib >> 2)] = comp[i, 2 * j + 1]
    b = lg.b.astype(np.uint16).view(np.float16).astype(np.float64)
    c = lg.c.astype(np.uint32).view(np.float32)
    with np.errstate(invalid="ignore"):                    # special values (issue 15): Inf x 0 is NaN
        d = ((dense[:, :, None] * b[None]).sum(axis=1) + c).astype(np.float32).view(np.uint32)
    regs = expected(case, inputs).sections[0].expected
    lane = np.arange(32)
    gid, tig = lane >> 2, lane & 3                         # C/D fragment: row gid + 8*(r//2), col 2*tig + r%2
    for r in range(4):
        want = d[gid + 8 * (r // 2), 2 * tig + r % 2]
        got = np.asarray(regs[:, r], dtype=np.uint32)
        assert ((got == want) | (np.isnan(got.view(np.float32)) & np.isnan(want.view(np.float32)))).all()
    assert np.isnan(d.view(np.float32)).any() and np.isinf(d.view(np.float32)).any()
