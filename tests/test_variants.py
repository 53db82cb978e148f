"""Variant enumeration: levels, coverage of Table 39, IDs, legality read from the reference."""

import collections
import itertools
import os
import subprocess
import sys

import pytest

from generators.variants import FAMILIES, cases
from generators.variants import mma as V
from generators.variants.common import operand_layouts
from reference import tables as T
from reference.targets import legal_targets

pytestmark = pytest.mark.reference


@pytest.fixture(scope="module")
def smoke():
    return cases("smoke")


@pytest.fixture(scope="module")
def default():
    return cases("default")


def test_smoke_size_and_families(smoke):
    assert len(smoke) <= 300
    assert set(FAMILIES) <= {c.family for c in smoke}


def test_smoke_has_every_table39_row(smoke):
    seen = {(c.params["kind"], c.params["ws"], c.params["cta_group"], c.params["sparse"], c.params["k"])
            for c in smoke if c.family.startswith("mma") and c.legal}
    rows = {(r.kind, r.ws, r.cta_group, r.sparse, r.k) for r in T.shape_table()}   # with CuTe's K = 96 M = 128 rows
    assert rows <= seen


def test_default_has_every_table39_combination(default):
    expected = set()
    for row in T.shape_table():         # Table 39 and, under Q-K96-M128 = cute-m128 (the pick), CUTE_K96_ROWS
        for combo, m, n in itertools.product(T.TYPE_COMBOS[row.kind], row.m, row.n):
            expected.add((row.kind, combo.d_type, combo.a_type, combo.b_type, combo.scale_type, row.cta_group,
                          row.sparse, row.ws, m, n, row.k))
    got = {(p["kind"], p["d_type"], p["a_type"], p["b_type"], p["scale_type"], p["cta_group"], p["sparse"], p["ws"],
            p["m"], p["n"], p["k"]) for c in default if c.family.startswith("mma") and c.legal for p in [c.params]}
    assert expected == got


def test_ids_unique_and_dot_paths(default):
    ids = [c.case_id for c in default]
    assert len(ids) == len(set(ids))
    assert all(i.startswith(("tcgen05.", "mma.sp")) and " " not in i for i in ids)


def test_example_id_of_the_issue():
    row = next(r for r in T.TABLE_39 if r.kind == "f16" and not r.ws and r.cta_group == 1 and not r.sparse)
    base = V.Base(row, T.TypeCombo("f32", "bf16", "bf16"), 128, 256)
    r = dict(V.covering_rows(row)[0])
    r.update(a_operand="sw128_k", b_layout="sw128_k", collector=None, ashift=False, dol=None, scale_input_d=None,
             enable_input_d=False, negate="none", selector=0)
    assert V.case_id(base, r) == "tcgen05.mma.cta_group::1.kind::f16.dense.m128n256.f32.bf16.bf16.a_smem.sw128_k.b_sw128_k"


def test_order_and_ids_stable_across_processes():
    code = "from generators.variants import cases; import hashlib; " \
           "print(hashlib.sha256('\\n'.join(c.case_id for c in cases('smoke')).encode()).hexdigest())"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    outs = {subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert len(outs) == 1 and len(next(iter(outs))) == 65


def test_legal_mma_cases_pass_the_reference(default):
    for c in default:
        if not (c.family.startswith("mma") and c.legal):
            continue
        p = c.params
        assert c.targets and set(c.targets) <= set(legal_targets(c.features))
        if p["k"] == 96:
            assert c.targets == ("sm_103a",)
        if p["kind"] == "i8":
            assert not any(t.endswith("f") for t in c.targets)
        if p["a_operand"] != "tmem":
            assert p["a_operand"] in operand_layouts(p["a_type"])
        assert p["b_layout"] in operand_layouts(p["b_type"])
        if p["ashift"]:
            assert p["a_operand"] == "tmem" and p["m"] in (128, 256) and p["collector"] not in ("a::fill", "a::use")


def test_default_covers_every_spelling_axis_value(default):
    values = collections.defaultdict(set)
    for c in default:
        if c.family.startswith("mma") and c.legal:
            for axis in V.KERNEL_AXES:
                values[(c.family, axis)].add(c.params[axis])
    assert values[("mma", "scale_input_d")] == {None, *range(16)}
    assert values[("mma.sp", "scale_input_d")] == {None, *range(16)}
    assert values[("mma", "collector")] == {None, "a::fill", "a::use", "a::lastuse", "a::discard"}
    assert values[("mma.ws", "collector")] == {None} | {f"b{i}::{op}" for i in range(4) for op in V.COLLECTOR_OPS}
    assert values[("mma", "ashift")] == {False, True} and values[("mma.ws", "zcm")] >= {None, "example2"}
    assert values[("mma", "scale_vec")] == {None, "scale_vec::1X", "block32", "scale_vec::2X", "scale_vec::4X", "block16"}


def test_default_is_pairwise_within_each_group(default):
    by_row = collections.defaultdict(list)
    for c in default:
        if c.family.startswith("mma") and c.legal:
            p = c.params
            by_row[(p["kind"], p["ws"], p["cta_group"], p["sparse"], p["k"])].append(p)
    for row in T.TABLE_39[:6]:
        ca = V.covering_rows(row)
        names = [a for a in V.KERNEL_AXES + V.RUNTIME_AXES if len({r[a] for r in ca}) > 1]
        have = {tuple(p[a] for a in names) for p in by_row[(row.kind, row.ws, row.cta_group, row.sparse, row.k)]}
        for r in ca:          # every covering-array row that some base accepts is used
            if any(V._valid(b, r) for b in V._bases(row)[:40]):
                assert tuple(r[a] for a in names) in have


def test_negative_cases(default):
    neg = [c for c in default if not c.legal]
    assert len(neg) >= 40
    assert all(c.rule and len(c.targets) == 1 and ".invalid." in c.case_id for c in neg)
    slugs = {c.params["slug"] for c in neg}
    for required in ("ws_with_cta_group_2", "scale_input_d_with_f8f6f4", "scale_input_d_16", "kind_i8_on_sm_100f",
                     "ld_red_on_sm_100a", "collector_a_fill_with_ashift", "missing_block_scale_mxf8f6f4",
                     "dol_8_with_cta_group_1", "ld_16x256b_x64"):
        assert required in slugs


def test_filters():
    ws = cases("smoke", families=["mma.ws"])
    assert ws and {c.family for c in ws} == {"mma.ws"}
    sec = cases("smoke", sections=["9.7.16.8"])
    assert sec and all(c.section.startswith("9.7.16.8") for c in sec)
    with pytest.raises(ValueError):
        cases("smoke", families=["nope"])
    with pytest.raises(ValueError):
        cases("huge")


def test_exhaustive_row_has_every_spelling():
    row = next(r for r in T.TABLE_39 if r.kind == "i8" and r.ws and not r.sparse)
    pairs = V._exhaustive_pairs(row)
    spellings = {V.spelling(b.row, r) for b, r in pairs}
    axes = V._group_axes(row)
    full = {V.spelling(row, dict(zip(V.KERNEL_AXES, vals, strict=False)) | {"ashift": False})
            for vals in itertools.product(*(axes[a] for a in V.KERNEL_AXES))}
    assert spellings == full


def test_one_kernel_per_spelling_and_version(default):
    seen = {}
    for c in default:
        key = (c.kernel.instruction, c.kernel.ptx_version, c.kernel.family)
        assert seen.setdefault(c.kernel.name, key) == key
