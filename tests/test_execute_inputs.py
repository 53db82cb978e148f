"""Input synthesis (``generators.inputs``): what the kernels receive is what the logical inputs say,
checked through the reference's *readers* (written apart from the packers the synthesis uses), and
the values are exact by construction."""

from __future__ import annotations

import numpy as np
import pytest

from generators.inputs import NUMERICS, Untestable, synthesize
from generators.inputs.block import LANES
from generators.ptx import record as R
from generators.variants import cases
from generators.variants.common import parse_layout
from reference import formats as F
from reference import sparsity as SP
from reference import tmem_mma_operands as TO
from reference.datapath_layouts import d_placement, layout_for
from reference.smem_descriptor import SmemDescriptor
from reference.smem_image import SmemImage, read

pytestmark = pytest.mark.reference

SMOKE = [c for c in cases("smoke") if c.legal]
MMA = [c for c in SMOKE if c.family.startswith("mma")]


def _testable(cs):
    out = []
    for c in cs:
        try:
            out.append((c, synthesize(c)))
        except Untestable:
            pass
    return out


MMA_INPUTS = _testable(MMA)


def _block_words(inputs, cta, offset, count):
    return np.frombuffer(inputs.in_blocks[cta], dtype="<u4", count=count, offset=offset)


def _preloads(rec):
    slots = rec["preload"] + [0] * (18 - len(rec["preload"]))
    return {slots[i]: (slots[i + 1], slots[i + 2]) for i in range(0, 18, 3) if slots[i + 1]}


def _region(inputs, rec, cta, column):
    ncols, off = _preloads(rec)[column]
    return _block_words(inputs, cta, off, LANES * ncols).reshape(LANES, ncols)


def test_every_smoke_case_synthesizes_or_names_why():
    reasons = set()
    for c in SMOKE:
        try:
            inputs = synthesize(c)
        except Untestable as exc:
            reasons.add(str(exc).split(":")[0])
            continue
        assert len({len(b) for b in inputs.in_blocks}) == 1 and inputs.out_words > 0
        assert len(inputs.in_blocks) == (c.kernel.cluster if c.family != "alloc" else c.params["cta_group"])
    assert reasons <= {"K = 96 (scale_vec 3X/6X, sm_103a)"}, reasons


def test_synthesis_is_deterministic():
    for c in MMA[:6] + [c for c in SMOKE if c.family in ("ld", "cp", "warp.mma.sp")][:6]:
        try:
            a, b = synthesize(c), synthesize(c)
        except Untestable:
            continue
        assert a.in_blocks == b.in_blocks and a.record == b.record


@pytest.mark.parametrize("case,inputs", MMA_INPUTS[::3], ids=lambda x: getattr(x, "case_id", ""))
def test_smem_operands_read_back_through_the_descriptor(case, inputs):
    """A and B as ``reference.smem_image.read`` sees them from the record's descriptors."""
    lg, p, rec = inputs.logical["mma"], case.params, inputs.record
    op = lg.op
    cg = op.cta_group
    ks = op.k // 2 if op.sparse else op.k
    for cta in range(cg):
        smem = inputs.in_blocks[cta][rec["smem_src"]:rec["smem_src"] + rec["smem_bytes"]]
        image = SmemImage(rec.get("smem_dst", 0), smem)      # the copy lands smem_dst bytes into the buffer
        if p["a_operand"] != "tmem":
            _, major = parse_layout(p["a_operand"])
            got = read(image, SmemDescriptor.decode(rec["a_desc"]), op.m // cg, ks, op.a_type, major, kind=op.kind)
            assert (got == lg.a[cta * op.m // cg:(cta + 1) * op.m // cg]).all()
        _, major = parse_layout(p["b_layout"])
        nc = op.n // cg + op.column_shift
        got = read(image, SmemDescriptor.decode(rec["b_desc"]), nc, op.k, op.b_type, major, kind=op.kind)
        want = lg.b[:, cta * nc:(cta + 1) * nc] if cg == 2 else lg.b
        assert (got.T == want).all()


@pytest.mark.parametrize("case,inputs", [ci for ci in MMA_INPUTS if ci[0].params["a_operand"] == "tmem"
                                          or ci[0].params["sparse"] or ci[0].params["scale_type"]][::2],
                         ids=lambda x: getattr(x, "case_id", ""))
def test_tmem_operands_read_back(case, inputs):
    """A, metadata and scale factors as ``reference.tmem_mma_operands.read_*`` sees them."""
    lg, rec = inputs.logical["mma"], inputs.record
    op = lg.op
    layout = layout_for(op.m, op.cta_group, sparse=op.sparse, ws=op.ws)
    where = TO.row_lanes(layout, lg.lane_offset)        # A and metadata: the lanes of D's lane alignment
    assert rec["tm_d"] >> 16 == rec["tm_a"] >> 16 == rec["tm_meta"] >> 16 == lg.lane_offset
    ks = op.k // 2 if op.sparse else op.k
    regions = {col: [_region(inputs, rec, c, col) for c in range(op.cta_group)] for col in _preloads(rec)}
    col_a, col_meta = rec["tm_a"] & 0xFFFF, rec["tm_meta"] & 0xFFFF
    if case.params["a_operand"] == "tmem":
        rows = np.stack([regions_at(regions, col_a, where, i) for i in range(op.m)])
        assert (TO.read_a(op.kind, op.a_type, rows, ks) == lg.a).all()
    if op.sparse:
        cells = np.stack([regions_at(regions, col_meta, where, i) for i in range(op.m)])
        sel = 0 if op.block_scaled else op.sparsity_selector
        chunks = op.k // SP.pattern_for_kind(op.kind).chunk
        # rows per CTA decide Q-META-TMEM's interleaving (128 rows: M = 256 with cta_group::2 too)
        assert (TO.read_metadata(op.kind, cells, chunks, sel, rows_per_cta=op.m // op.cta_group) == lg.meta).all()
        assert not np.isin(lg.meta, [0b0110]).any()            # never the spec-ambiguous nibble
    if op.block_scaled:
        mc = op.m // op.cta_group
        got = np.concatenate([TO.replicated(TO.read_scale_factors(regions[rec["tm_sfa"]][c], mc, op.scale_factors,
                                                                  op.a_scale_id)) for c in range(op.cta_group)])
        assert (got == lg.scale_a).all()
        got_b = TO.replicated(TO.read_scale_factors(regions[rec["tm_sfb"]][0], op.n, op.scale_factors, op.b_scale_id))
        assert (got_b.T == lg.scale_b).all()
        values = F.decode(op.scale_type, lg.scale_a)
        assert set(np.unique(values)) <= {0.5, 1.0, 2.0}


def regions_at(regions, column, where, i):
    return regions[column][where[i, 0]][where[i, 1]]


def test_d_region_holds_c_at_the_data_path_cells():
    for _case, inputs in MMA_INPUTS[::4]:
        lg, region = inputs.logical["mma"], inputs.logical["region"]
        op = lg.op
        where = d_placement(layout_for(op.m, op.cta_group, sparse=op.sparse, ws=op.ws), op.n, lg.lane_offset)
        got = region.before[where[..., 0], where[..., 1], where[..., 2]]
        assert (got == lg.c.astype(np.uint32)).all()
        assert inputs.record["tm_d"] == lg.lane_offset << 16 | region.column
        assert inputs.record["readback"][:2] == [region.column, region.ncols]
        for cta in range(op.cta_group):
            assert (_region(inputs, inputs.record, cta, region.column) == region.before[cta]).all()


def test_values_are_small_and_normal():
    """Every floating-point A/B element is a nonzero normal number of at most 2 significant bits,
    |x| <= 3; integer tiles span their type's full range: minimum, maximum and zero (issue 15)."""
    full = {"u8": (0, 255), "s8": (-128, 127)}
    for case, inputs in MMA_INPUTS:
        lg = inputs.logical["mma"]
        for fmt, codes in ((lg.op.a_type, lg.a), (lg.op.b_type, lg.b)):
            v = F.decode(fmt, codes)
            if fmt in full:
                lo, hi = full[fmt]
                assert v.min() == lo and v.max() == hi and (v == 0).any(), case.case_id
                continue
            assert np.all(v != 0) and np.all(np.abs(v) <= 3)
            mant, _ = np.frexp(np.abs(v))
            assert np.all((mant * 4) == np.round(mant * 4)), case.case_id


@pytest.mark.parametrize("fmt", ["f16", "bf16", "tf32", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "s8", "u8", "s4", "u4"])
def test_table_codes_are_the_drawn_values_encoded(fmt):
    """``operand_codes`` / ``accumulator_codes`` (codes looked up in a table of the pool) are the
    codes ``element_codes`` gives the values ``element_values`` / ``accumulator_values`` draw from
    the same random stream, and leave the stream at the same place (later draws unchanged)."""
    from generators.inputs import values as V

    for seed, shape, pool in ((0, (128, 32), V.WIDE), (1, (7, 5), V.NARROW), (2, (1, 1), V.WIDE)):
        old, new = np.random.default_rng(seed), np.random.default_rng(seed)
        want = V.element_codes(fmt, V.element_values(fmt, shape, old, pool), old, tf32_noise=True)
        got = V.operand_codes(fmt, shape, new, pool, tf32_noise=True)
        assert got.dtype == want.dtype and np.array_equal(got, want)
        assert old.integers(0, 1 << 62) == new.integers(0, 1 << 62)
    for d_type, limit, exp in (("f32", 8.0, 0), ("f16", 8.0, 0), ("f16", 1.75, 15), ("f32", 8.0, 3)):
        old, new = np.random.default_rng(7), np.random.default_rng(7)
        want = V.element_codes(d_type, V.accumulator_values((64, 48), old, limit=limit, scale_exp=exp))
        got = V.accumulator_codes(d_type, (64, 48), new, limit=limit, scale_exp=exp)
        assert got.dtype == want.dtype and np.array_equal(got, want)
        assert old.integers(0, 1 << 62) == new.integers(0, 1 << 62)


@pytest.mark.parametrize("before", [0, 1, 2])
@pytest.mark.parametrize("shape", [(2048,), (2049,), (1, 128, 33), (2, 128, 64)])
def test_random_words_are_the_uint64_draws(before, shape):
    """``random_words`` of a large shape (64-bit outputs split into 32-bit halves) gives the words
    ``integers(0, 2**32, dtype=uint64)`` draws, and leaves the stream where that leaves it, also
    after an odd number of earlier 32-bit draws (a half kept in the generator's state)."""
    from generators.inputs import values as V

    old, new = np.random.default_rng(11), np.random.default_rng(11)
    for rng in (old, new):
        rng.integers(0, 1 << 32, size=before, dtype=np.uint64)
    want = old.integers(0, 1 << 32, size=shape, dtype=np.uint64).astype(np.uint32)
    got = V.random_words(new, shape)
    assert got.dtype == np.uint32 and got.shape == want.shape and np.array_equal(got, want)
    assert np.array_equal(old.integers(0, 1 << 32, size=3, dtype=np.uint64), new.integers(0, 1 << 32, size=3, dtype=np.uint64))
    assert old.integers(0, 1 << 62) == new.integers(0, 1 << 62)


def test_k96_absolute_lbo_splits_rows_and_sets_the_flags():
    """§9.7.16.3.1.2: an absolute-mode case really uses bit 52, a start whose 48-byte row passes its
    128-byte row, base offset 0, and the flags that make the kernel relocate the LBO address."""
    k96 = [c for c in MMA if c.params["k"] == 96 and c.params["lbo_mode"] == "absolute"]
    assert k96
    rec = synthesize(k96[0]).record
    for name, flag in (("a_desc", R.FLAG_A_LBO_ABSOLUTE), ("b_desc", R.FLAG_B_LBO_ABSOLUTE)):
        if name not in rec:
            continue
        d = SmemDescriptor.decode(rec[name])
        assert d.lbo_mode == "absolute" and d.base_offset == 0 and rec["flags"] & flag
        assert d.start_address % 128 + 48 > 128 and d.leading_byte_offset % 1024 == 0
        # the image always moved up, so absolute LBOs (addresses) reach above 64 KiB (issue 15)
        assert rec["smem_dst"] > 0 and d.leading_byte_offset > rec["smem_dst"]


def test_warp_block_scaled_carry_scale_registers_and_selectors():
    """§9.7.14.3: selectors in aux[0..3] within Table 37; the scale registers follow the A..E registers."""
    from reference import warp_block_scaling as WB

    scaled = [c for c in SMOKE if c.family == "warp.mma.sp" and c.params["kind"] not in (None, "f8f6f4")]
    assert {c.params["kind"] for c in scaled} == {"mxf8f6f4", "mxf4", "mxf4nvf4"}
    for c in scaled:
        inputs = synthesize(c)
        sc = inputs.logical["warp"].scales
        sel = WB.ScaleSelectors(*inputs.record["aux"])
        assert sel == sc.selectors
        sf = sc.a.shape[1]
        WB.check_selectors(sf, sel)
        nwords = len(inputs.in_block) // 128
        regs = np.frombuffer(inputs.in_block[:128 * nwords], dtype=np.uint32).reshape(32, nwords)
        np.testing.assert_array_equal(WB.scales_from_registers(regs[:, -2], WB.scale_a_sources(sf, sel)), sc.a)
        np.testing.assert_array_equal(WB.scales_from_registers(regs[:, -1], WB.scale_b_sources(sf, sel)), sc.b)
        if len(WB.BYTE_IDS[sf]) > 1:
            assert sel.byte_id_a != sel.byte_id_b


def test_numerics_mode_has_full_mantissas_nan_and_subnormal_rows():
    case = next(c for c, _ in MMA_INPUTS if c.params["kind"] == "f16" and c.params["d_type"] == "f32")
    lg = synthesize(case, NUMERICS).logical["mma"]
    assert (lg.a[0] == 0).all() and np.isnan(F.decode(lg.op.a_type, lg.a[1, :1])).all()
    c0 = F.decode("f32", lg.c[0])
    assert np.all((np.abs(c0) < 2.0 ** -126) & (c0 != 0))
    with pytest.raises(ValueError, match="numerics expects an MMA case"):
        synthesize(next(c for c in SMOKE if c.family == "ld"), NUMERICS)


def test_record_fields_fit_the_abi():
    for _case, inputs in MMA_INPUTS:
        rec = inputs.record
        assert rec["smem_bytes"] <= R.SMEM_CAPACITY and rec["smem_src"] % 1024 == 0
        assert len(rec["preload"]) <= 18 and rec["readback"][1] * LANES == inputs.out_words
        for col, (ncols, off) in _preloads(rec).items():
            assert off + 4 * LANES * ncols <= len(inputs.in_block) and col + ncols <= 512


def test_tmem_operands_are_disjoint_and_in_the_allocation():
    """D, A, SFA, SFB and metadata columns vary per case (field coverage, issue 15) yet never overlap
    and stay in the 512-column allocation (§9.7.16.1)."""
    starts = set()
    for _case, inputs in MMA_INPUTS:
        spans = sorted((col, col + n) for col, (n, _) in _preloads(inputs.record).items())
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)) and spans[-1][1] <= 512
        starts.add(inputs.record["tm_d"] & 0xFFFF)
    assert len(starts) > 10
