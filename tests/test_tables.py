"""The spec's tables as data (reference.tables) against the spec text and hand-written facts."""

import pytest

from reference import tables as T
from reference.errors import SpecError
from tests.spec_texts import spec_text

pytestmark = pytest.mark.reference


def markdown_table(text: str, caption: str) -> list[list[str]]:
    """Rows (cells stripped) of the first markdown table after ``caption``."""
    start = text.index(caption)
    rows, seen = [], False
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            seen = True
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif seen:
            break
    return [r for r in rows if not set("".join(r)) <= set("-: ")]


@pytest.mark.parametrize("caption,table", [("Table 47 Various-combinations", T.TABLE_47),
                                           ("Table 48 Various-combinations", T.TABLE_48)])
def test_ldst_register_counts_match_the_text(caption, table):
    rows = markdown_table(spec_text("ptx-9.7.16-tcgen05.md"), caption)
    body = [r for r in rows if r[0].startswith("`.x")]
    assert len(body) == 8
    parsed = {}
    for num_cell, small, mid, big in body:
        num = int(num_cell.strip("`.x"))
        for shapes, cell in ((("16x32bx2", "16x64b", "32x32b"), small), (("16x128b",), mid), (("16x256b",), big)):
            for s in shapes:
                if cell != "NA":
                    parsed[(s, num)] = int(cell)
    assert parsed == table


def test_ldst_registers_rejects_na():
    assert T.ldst_registers("16x256b", 32) == 128
    with pytest.raises(SpecError, match="Table 47"):
        T.ldst_registers("16x256b", 64)
    with pytest.raises(SpecError, match="Table 48"):
        T.ldst_registers("16x128b", 128, op="st")
    with pytest.raises(SpecError, match="shape"):
        T.ldst_registers("8x8b", 1)


def test_table49_matches_the_text():
    rows = markdown_table(spec_text("ptx-9.7.16-tcgen05.md"), "Table 49 Transpose and Negate")
    parsed = {r[0].strip("`").replace(".kind::", ""): (r[1] == "Yes", r[2] == "Yes") for r in rows[1:]}
    assert parsed == T.TABLE_49


def test_table53_matches_the_text():
    rows = markdown_table(spec_text("ptx-9.7.16-tcgen05.md"), "Table 53 Layout for swizzle atoms")
    mode = None
    parsed = {}
    names = {"128B Swizzling with 32B atomicity": "128B_base32B", "128B Swizzling with 16B atomicity": "128B",
             "64B Swizzling Mode": "64B", "32B Swizzling Mode": "32B", "None": "none"}
    for r in rows[1:]:
        if len(r) == 3:
            mode, lead, shape = names.get(r[0]), r[1], r[2]
        else:
            lead, shape = r[0], r[1]
        if lead in ("M/N", "K") and mode:
            a, b = map(int, shape.split("x"))
            parsed[(mode, "MN" if lead == "M/N" else "K")] = (a, b)
    assert parsed == T.TABLE_53


# Hand-transcribed facts of Table 39 (independent of the generator function in tables.py).
@pytest.mark.parametrize("kind,cg,sparse,ws,m,n_count,n_first,n_last,k", [
    ("f16", 1, False, False, (64, 128), 32, 8, 256, 16),
    ("f16", 2, True, False, (128, 256), 16, 16, 256, 32),
    ("f16", 1, True, True, (32, 64, 128), 2, 64, 128, 32),
    ("tf32", 1, False, True, (32, 64, 128), 3, 64, 256, 8),
    ("f8f6f4", 2, False, False, (128, 256), 16, 16, 256, 32),
    ("i8", 1, False, False, (64, 128), 18, 8, 256, 32),
    ("i8", 2, True, False, (128, 256), 8, 32, 256, 64),
    ("mxf8f6f4", 1, True, False, (128,), 32, 8, 256, 64),
    ("mxf4nvf4", 2, True, False, (256,), 16, 16, 256, 128),
])
def test_table39_facts(kind, cg, sparse, ws, m, n_count, n_first, n_last, k):
    rows = [r for r in T.shape_rows(kind, ws=ws, cta_group=cg, sparse=sparse) if r.k != 96]
    assert len(rows) == 1
    r = rows[0]
    assert r.m == m and len(r.n) == n_count and (r.n[0], r.n[-1], r.k) == (n_first, n_last, k)


def test_table39_invalid_rows():
    for kind in T.KINDS:
        assert not T.shape_rows(kind, ws=True, cta_group=2)
    for kind in ("mxf8f6f4", "mxf4", "mxf4nvf4"):
        assert not T.shape_rows(kind, ws=True)
    k96 = [r for r in T.TABLE_39 if r.k == 96]
    assert {(r.kind, r.cta_group, r.sparse, r.m, r.targets) for r in k96} == {
        ("mxf4", 2, False, (256,), ("sm_103a",)), ("mxf4nvf4", 2, False, (256,), ("sm_103a",))}
    assert T.N_I8_CG1[:5] == (8, 16, 24, 32, 48)


def test_table39_k_values_appear_in_the_text():
    text = spec_text("ptx-9.7.16-tcgen05.md")
    table = text[text.index("Table 39 Various"):text.index("9.7.16.2.1.1.")]
    for kind, (kd, ks) in T.DENSE_SPARSE_K.items():
        block = table[table.index(f"kind::{kind}`"):]
        assert f"K = {kd}" in block and f"K = {ks}" in block


def test_check_shape_messages():
    with pytest.raises(SpecError, match=r"M for kind::mxf4 cta_group::1 dense K=64 expects one of \[128\]"):
        T.check_shape("mxf4", 64, 64)
    with pytest.raises(SpecError, match="is Invalid"):
        T.check_shape("mxf4", 128, 64, ws=True)
    with pytest.raises(SpecError, match="K = 96"):
        T.mma_k("f16", False, k96=True)


@pytest.mark.parametrize("kind,q,k,st,sf", [
    ("mxf8f6f4", "scale_vec::1X", 32, "ue8m0", 1), ("mxf8f6f4", "block32", 64, "ue8m0", 1),
    ("mxf4", "scale_vec::2X", 64, "ue8m0", 2), ("mxf4", "block32", 96, "ue8m0", 3), ("mxf4", "block32", 128, "ue8m0", 2),
    ("mxf4nvf4", "scale_vec::4X", 64, "ue4m3", 4), ("mxf4nvf4", "block16", 96, "ue4m3", 6),
    ("mxf4nvf4", "block16", 128, "ue8m0", 4), ("mxf4nvf4", "block32", 96, "ue8m0", 3),
])
def test_tables54_55_scale_factor_counts(kind, q, k, st, sf):
    assert T.scale_factor_count(kind, q, k, st) == sf


@pytest.mark.parametrize("kind,q,k,st,rule", [
    ("mxf4", "scale_vec::4X", 64, "ue8m0", "Table 55"), ("mxf4nvf4", "scale_vec::2X", 64, "ue4m3", "Table 55"),
    ("mxf8f6f4", "scale_vec::1X", 32, "ue4m3", "Table 55"), ("mxf4nvf4", "scale_vec::4X", 96, "ue8m0", "Table 54"),
])
def test_tables54_55_reject(kind, q, k, st, rule):
    with pytest.raises(SpecError, match=rule):
        T.scale_factor_count(kind, q, k, st)


def test_table52():
    assert T.table52_swizzles(16, "K") == T.SWIZZLES
    assert "128B_base32B" not in T.table52_swizzles(8, "MN")
    assert T.table52_swizzles(32, "MN") == ("128B_base32B",)
    assert T.table52_swizzles(4, "MN") == ()

