"""Instruction descriptor (§9.7.16.4.2, Tables 42-44) against hand-computed values, a test-local
decoder transcribed separately from the tables, and every class of invalid value."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import tables as T
from reference.errors import SpecError
from reference.instr_descriptor import InstrDescriptor, decode_instr_descriptor

pytestmark = pytest.mark.reference

# ---- test-local transcription of Tables 42-44: field -> (lo bit, width) --------------------
T42 = {"sparsity_selector": (0, 2), "sparse": (2, 1), "saturate": (3, 1), "d_type": (4, 2), "a_type": (7, 3),
       "b_type": (10, 3), "negate_a": (13, 1), "negate_b": (14, 1), "transpose_a": (15, 1), "transpose_b": (16, 1),
       "n": (17, 6), "m": (24, 5), "max_shift": (30, 2)}
T43 = {"sparse": (2, 1), "b_scale_id": (4, 2), "a_type": (7, 3), "b_type": (10, 3), "negate_a": (13, 1),
       "negate_b": (14, 1), "transpose_a": (15, 1), "transpose_b": (16, 1), "n": (17, 6), "scale_type": (23, 1),
       "m": (27, 2), "a_scale_id": (29, 2)}
T44 = dict(T43, b_type=(10, 2), k96=(31, 1))
TYPE_CODE = {  # (kind group, word) -> code, as printed in the tables
    "tf32": {"tf32": 2}, "f16": {"f16": 0, "bf16": 1}, "i8": {"u8": 0, "s8": 1},
    "f8": {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5}, "mxf4": {"e2m1": 1},
}


def expected_fields(d: InstrDescriptor) -> dict[str, int]:
    group = {"f8f6f4": "f8", "mxf8f6f4": "f8", "mxf4nvf4": "mxf4"}.get(d.kind, d.kind)
    out = {"sparse": int(d.sparse), "a_type": TYPE_CODE[group][d.a_type], "b_type": TYPE_CODE[group][d.b_type],
           "negate_a": int(d.negate_a), "negate_b": int(d.negate_b), "transpose_a": int(d.transpose_a),
           "transpose_b": int(d.transpose_b), "n": d.n // 8}
    if d.kind in ("mxf8f6f4", "mxf4", "mxf4nvf4"):
        out.update(b_scale_id=d.b_scale_id, a_scale_id=d.a_scale_id, m=d.m // 128,
                   scale_type=1 if d.scale_type == "ue8m0" else 0)
        if d.kind != "mxf8f6f4":
            out["k96"] = int(d.k96)
    else:
        out.update(sparsity_selector=d.sparsity_selector, saturate=int(d.saturate), m=d.m // 16,
                   d_type={"f16": 0, "f32": 1, "s32": 2}[d.d_type], max_shift={0: 0, 8: 1, 16: 2, 32: 3}[d.max_shift])
    return out


def layout_of(kind):
    return {"mxf8f6f4": T43, "mxf4": T44, "mxf4nvf4": T44}.get(kind, T42)


def assemble(kind, values: dict[str, int]) -> int:
    layout = layout_of(kind)
    v = 0
    for name, x in values.items():
        lo, width = layout[name]
        assert 0 <= x < 1 << width
        v |= x << lo
    return v


@pytest.mark.parametrize("desc,value", [
    # f16 kind, M=128 N=256, bf16 x bf16 -> f32: 1<<4 | 1<<7 | 1<<10 | 32<<17 | 8<<24
    (InstrDescriptor("f16", 128, 256, "bf16", "bf16"), 0x08400490),
    # tf32, M=64 N=8, sparse selector 3: 3 | 1<<2 | 1<<4 | 2<<7 | 2<<10 | 1<<17 | 4<<24
    (InstrDescriptor("tf32", 64, 8, "tf32", "tf32", sparse=True, sparsity_selector=3), 0x04020917),
    # i8 saturate, u8 x s8, M=128 N=32, max shift 32 (.ws): 1<<3 | 2<<4 | 0<<7 | 1<<10 | 4<<17 | 8<<24 | 3<<30
    (InstrDescriptor("i8", 128, 32, "u8", "s8", d_type="s32", saturate=True, max_shift=32), 0xC8080428),
    # mxf8f6f4, e2m1 x e4m3, M=256 N=128, SFA id 3, SFB id 1, negate B, transpose A:
    # 1<<4 | 5<<7 | 0<<10 | 1<<14 | 1<<15 | 16<<17 | 1<<23 | 2<<27 | 3<<29
    (InstrDescriptor("mxf8f6f4", 256, 128, "e2m1", "e4m3", negate_b=True, transpose_a=True, a_scale_id=3, b_scale_id=1),
     0x70A0C290),
    # mxf4nvf4 K=96, ue4m3, M=256 N=16: 1<<7 | 1<<10 | 2<<17 | 0<<23 | 2<<27 | 1<<31, ids 2/2
    (InstrDescriptor("mxf4nvf4", 256, 16, "e2m1", "e2m1", scale_type="ue4m3", k96=True, a_scale_id=2, b_scale_id=2),
     0x80000000 | (2 << 29) | (2 << 27) | (2 << 17) | (1 << 10) | (1 << 7) | (2 << 4)),
])
def test_hand_computed_values(desc, value):
    assert desc.encode() == value
    assert decode_instr_descriptor(value, desc.kind) == desc


@st.composite
def legal_descriptors(draw):
    row = draw(st.sampled_from(T.TABLE_39))
    combo = draw(st.sampled_from(T.TYPE_COMBOS[row.kind]))
    m = draw(st.sampled_from(row.m))
    n = draw(st.sampled_from(row.n))
    transpose_ok, negate_ok = T.TABLE_49[row.kind]
    scaled = row.kind in T.BLOCK_SCALED_KINDS
    ta = draw(st.booleans()) if transpose_ok else False
    tb = draw(st.booleans()) if transpose_ok else False
    # Table 50: 8-bit transposed B (the 4/6-bit f8f6f4 types sit in 8-bit slots too)
    if tb and combo.b_type in ("e4m3", "e5m2", "s8", "u8", "e2m1", "e2m3", "e3m2") and n not in T.TABLE_50[row.cta_group]:
        tb = False
    kw = dict(kind=row.kind, m=m, n=n, a_type=combo.a_type, b_type=combo.b_type, d_type=combo.d_type,
              sparse=row.sparse, transpose_a=ta, transpose_b=tb,
              negate_a=draw(st.booleans()) if negate_ok else False,
              negate_b=draw(st.booleans()) if negate_ok else False)
    if scaled:
        ids = (0, 1, 2, 3) if row.k == 96 else T.SCALE_ID_VALUES[row.kind]
        kw.update(scale_type=combo.scale_type, a_scale_id=draw(st.sampled_from(ids)),
                  b_scale_id=draw(st.sampled_from(ids)), k96=row.k == 96)
    else:
        kw.update(saturate=draw(st.booleans()) if row.kind == "i8" else False,
                  sparsity_selector=draw(st.integers(0, 3)) if row.sparse and row.kind in ("f16", "tf32") else 0,
                  max_shift=draw(st.sampled_from([0, 8, 16, 32])) if row.ws else 0)
    return InstrDescriptor(**kw), row


@settings(max_examples=600, deadline=None)
@given(legal_descriptors())
def test_round_trip_over_the_legal_space(case):
    desc, row = case
    value = desc.encode()
    assert 0 <= value < 1 << 32
    assert value == assemble(desc.kind, expected_fields(desc))
    assert decode_instr_descriptor(value, desc.kind) == desc
    assert desc.check_legal(row.cta_group, row.ws) == (row.cta_group, row.ws)


def test_every_table39_row_has_a_legal_descriptor():
    for row in T.TABLE_39:
        combo = T.TYPE_COMBOS[row.kind][0]
        d = InstrDescriptor(row.kind, row.m[-1], row.n[-1], combo.a_type, combo.b_type, combo.d_type,
                            sparse=row.sparse, scale_type=combo.scale_type, k96=row.k == 96)
        d.check_legal(row.cta_group, row.ws)


def test_json_fields_per_format():
    assert list(InstrDescriptor("f16", 64, 8, "f16", "f16", "f16").to_json()) == [
        "kind", "m", "n", "d_type", "a_type", "b_type", "sparse", "sparsity_selector", "saturate",
        "negate_a", "negate_b", "transpose_a", "transpose_b", "max_shift"]
    mx = InstrDescriptor("mxf8f6f4", 128, 8, "e4m3", "e4m3").to_json()
    assert "k96" not in mx and "d_type" not in mx and mx["scale_type"] == "ue8m0"
    assert InstrDescriptor("mxf4", 128, 8, "e2m1", "e2m1").to_json()["k96"] is False


def bad(rule, **kw):
    base = dict(kind="f16", m=128, n=64, a_type="f16", b_type="f16", d_type="f32")
    base.update(kw)
    return pytest.param(base, rule, id=f"{rule}:{','.join(f'{k}={v}' for k, v in kw.items())}")


@pytest.mark.parametrize("kw,rule", [
    bad("Table 42", a_type="e4m3"),
    bad("Table 42 bits 4-5", d_type="s32"),
    bad("Table 42 bits 0-1", sparsity_selector=1),
    bad("sparsity selector", kind="i8", a_type="s8", b_type="s8", d_type="s32", sparse=True, sparsity_selector=2),
    bad("sparsity selector", kind="f8f6f4", a_type="e4m3", b_type="e4m3", sparse=True, sparsity_selector=1),
    bad("Table 42 bit 3", saturate=True),
    bad("Table 42 bits 30-31", max_shift=4),
    bad("Table 49", kind="i8", a_type="s8", b_type="s8", d_type="s32", negate_a=True),
    bad("Table 49", kind="mxf4", m=128, a_type="e2m1", b_type="e2m1", transpose_b=True),
    bad("Table 43", kind="mxf8f6f4", a_type="e4m3", b_type="e4m3", d_type="f16"),
    bad("Table 43 bit 23", kind="mxf8f6f4", a_type="e4m3", b_type="e4m3", scale_type="ue4m3"),
    bad("Table 44", kind="mxf4", a_type="e2m1", b_type="e2m1", a_scale_id=1),
    bad("Table 44", kind="mxf4nvf4", a_type="e2m1", b_type="e2m1", b_scale_id=3),
    bad("Table 43", kind="mxf8f6f4", a_type="e4m3", b_type="e4m3", k96=True),
    bad("Table 42", scale_type="ue8m0"),
    bad("M>>4", m=72), bad("M>>4", m=512), bad("M>>7", kind="mxf4", m=64, a_type="e2m1", b_type="e2m1"),
    bad("bits 17-22", n=12), bad("bits 17-22", n=512), bad("bits 17-22", n=0),
    bad("Tables 42-44", sparse=1),
    bad("MMA kinds", kind="f64"),
])
def test_field_rules(kw, rule):
    with pytest.raises(SpecError, match=re.escape(rule)):
        InstrDescriptor(**kw)


@pytest.mark.parametrize("kw,cta_group,ws,rule", [
    (dict(kind="f16", m=256, n=64, a_type="f16", b_type="f16"), 1, False, "Table 39"),     # M=256 needs cta_group::2
    (dict(kind="f16", m=128, n=24, a_type="f16", b_type="f16"), 2, False, "Table 39"),     # N step 16 for ::2
    (dict(kind="f16", m=64, n=64, a_type="f16", b_type="f16"), 2, True, "Table 39"),       # .ws with ::2 invalid
    (dict(kind="f16", m=128, n=96, a_type="f16", b_type="f16"), 1, True, "Table 39"),      # .ws N in {64,128,256}
    (dict(kind="f16", m=128, n=256, a_type="f16", b_type="f16", sparse=True), 1, True, "Table 39"),  # ws sparse N<=128
    (dict(kind="f16", m=128, n=64, a_type="f16", b_type="bf16"), 1, False, "Table 39"),    # mixed f16 x bf16
    (dict(kind="f16", m=128, n=64, a_type="bf16", b_type="bf16", d_type="f16"), 1, False, "Table 39"),
    (dict(kind="i8", m=128, n=40, a_type="s8", b_type="s8", d_type="s32"), 1, False, "Table 39"),  # 40: not in i8 N set
    (dict(kind="i8", m=128, n=48, a_type="s8", b_type="s8", d_type="s32"), 2, False, "Table 39"),  # ::2 N step 32
    (dict(kind="mxf8f6f4", m=128, n=64, a_type="e4m3", b_type="e4m3", sparse=True), 2, False, "Table 39"),  # sparse ::2 M=256 only
    (dict(kind="mxf4", m=128, n=8, a_type="e2m1", b_type="e2m1", k96=True), 1, False, "Table 39"),  # K=96 M=128: N step 16
    (dict(kind="mxf4", m=256, n=64, a_type="e2m1", b_type="e2m1", k96=True, sparse=True), 2, False, "Table 39"),
    (dict(kind="f16", m=128, n=64, a_type="f16", b_type="f16", max_shift=8), 1, False, "bits 30-31"),
    (dict(kind="f8f6f4", m=128, n=24, a_type="e4m3", b_type="e2m3", transpose_b=True), 1, False, "Table 50"),
    (dict(kind="f8f6f4", m=128, n=24, a_type="e4m3", b_type="e4m3", transpose_b=True), 1, False, "Table 50"),
    (dict(kind="i8", m=128, n=24, a_type="s8", b_type="s8", d_type="s32", transpose_b=True), 1, False, "Table 50"),
])
def test_table39_and_related_rules(kw, cta_group, ws, rule):
    d = InstrDescriptor(**kw)
    with pytest.raises(SpecError, match=re.escape(rule)):
        d.check_legal(cta_group, ws)


def test_sub_byte_f8f6f4_operands_may_be_mn_major():
    """Spec-ambiguous (Table 52 has no 4/6-bit transposed row; Table 49 allows transpose for
    f8f6f4/mxf8f6f4; public SM100 code builds such layouts): accepted, as 8-bit slots."""
    assert InstrDescriptor("f8f6f4", 128, 64, "e2m1", "e3m2", transpose_a=True, transpose_b=True).check_legal(1, False)
    assert InstrDescriptor("mxf8f6f4", 128, 32, "e2m3", "e2m1", transpose_b=True).check_legal(1, False)


def test_k96_scale_ids_follow_the_figures():
    """Erratum: Table 44 lists ids 0 or 2, Figures 234-237 (block32, K=96) show ids 0-3."""
    InstrDescriptor("mxf4", 256, 64, "e2m1", "e2m1", k96=True, a_scale_id=1, b_scale_id=3).check_legal(2, False)
    with pytest.raises(SpecError, match="0 or 2"):
        InstrDescriptor("mxf4", 256, 64, "e2m1", "e2m1", a_scale_id=1)


def test_check_legal_any_combination():
    assert InstrDescriptor("f16", 256, 64, "f16", "f16").check_legal() == (2, False)
    assert InstrDescriptor("f16", 32, 64, "f16", "f16", max_shift=16).check_legal() == (1, True)
    with pytest.raises(SpecError, match="Table 39"):
        InstrDescriptor("f16", 256, 8, "f16", "f16").check_legal()


@pytest.mark.parametrize("kind,value,rule", [
    ("f16", 0x08400490 | 1 << 6, "reserved bits 6, 23, 29"),
    ("f16", 0x08400490 | 1 << 23, "reserved bits 6, 23, 29"),
    ("f16", 0x08400490 | 1 << 29, "reserved bits 6, 23, 29"),
    ("f16", 0x08400490 | 3 << 4, "bits 4-5"),
    ("f16", (0x08400490 & ~(7 << 7)) | 2 << 7, "bits 7-9"),
    ("f8f6f4", 0x08400010 | 2 << 7, "bits 7-9"),          # code 2 unused for f8f6f4
    ("f8f6f4", 0x08400010 | 6 << 10, "bits 10-12"),
    ("mxf8f6f4", 0x08800000 | 1 << 24, "reserved bits"),  # NOTES.md item 3: bits 24-26 reserved
    ("mxf8f6f4", 0x08800000 | 1 << 31, "reserved bits"),
    ("mxf4", 0x08800080 | 1 << 12, "reserved bits"),
    ("mxf4", 0x08800080 | 1 << 3, "reserved bits"),
    ("mxf4", 0x08800080 | 1 << 0, "reserved bits"),
    ("mxf4", (1 << 27) | (1 << 23) | (8 << 17), "bits 7-9"),  # atype 0 is not e2m1
    ("tf32", 1 << 33, "32-bit"),
])
def test_decode_rejects(kind, value, rule):
    with pytest.raises(SpecError, match=re.escape(rule)):
        decode_instr_descriptor(value, kind)
