"""CuTe encoding oracle (issue 17): CUTLASS 4.2's CuTe encoders, compiled, against ``reference/``.

Three host programs (``conformance/clients/cute_src/*.cu``, compiled with the wheels' nvcc and
cached) print CuTe's instruction descriptors (§9.7.16.4.2), shared-memory layouts and descriptors
(§9.7.16.3, §9.7.16.4.1), tcgen05.ld/st fragments (§9.7.16.2.3.1, §9.7.16.8) and tcgen05.cp lane
maps (§9.7.16.9).  Every grid point is compared bit for bit with the reference; the points where
CuTe and the reference differ are the documented findings CU1-CU5 of docs/clients-cute.md, each
asserted here as exactly the set that differs.  Without the clients extra every test skips.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from conformance.clients.cute_build import cute_or_skip_reason
from reference import tables as T
from reference.errors import SpecError
from reference.instr_descriptor import InstrDescriptor, decode_instr_descriptor
from reference.smem_choice import choose_layout
from reference.smem_descriptor import SmemDescriptor
from reference.tmem_cp import cp_destinations
from reference.tmem_fragments import fragment_map

pytestmark = [pytest.mark.clients,
              pytest.mark.skipif(bool(cute_or_skip_reason()), reason=cute_or_skip_reason() or "CuTe available")]


def _records(program: str, head: str) -> list[dict]:
    from conformance.clients.cute_oracle import oracle_records

    return oracle_records(program).get(head, [])


def _header(name: str) -> str:
    import cutlass_library

    return (Path(cutlass_library.__file__).parent / "source" / "include" / name).read_text()


def _cli(*argv: str) -> str:
    from conformance.commands.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0, argv
    return out.getvalue().strip()


# ---- instruction descriptors (§9.7.16.4.2, Tables 42-44) --------------------------------------------

def _idesc(r: dict) -> InstrDescriptor:
    kw = dict(kind=r["kind"], m=r["m"], n=r["n"], a_type=r["a_type"], b_type=r["b_type"], sparse=bool(r["sparse"]),
              negate_a=bool(r["negate_a"]), negate_b=bool(r["negate_b"]),
              transpose_a=r["a_major"] == "MN", transpose_b=r["b_major"] == "MN")
    if r["kind"] in T.BLOCK_SCALED_KINDS:
        kw.update(scale_type=r["scale_type"], a_scale_id=r["a_scale_id"], b_scale_id=r["b_scale_id"], k96=bool(r["k96"]))
    else:
        kw.update(d_type=r["d_type"], saturate=bool(r["saturate"]), sparsity_selector=r["sparsity_selector"],
                  max_shift=r["max_shift"])
    return InstrDescriptor(**kw)


# CuTe builds these without checking; the reference rejects both CuTe's fields and its value, naming the rule.
SPEC_REJECTED_RULES = ("Table 44", "9.7.16.10.8.4", "Table 49")


def test_idesc_grid_is_bit_exact():
    recs = _records("idesc", "idesc")
    assert len(recs) >= 2200
    seen = collections.Counter()
    for r in recs:
        if r["grid"] == "trap":
            continue
        try:
            desc = _idesc(r)
        except SpecError as exc:                       # CuTe builds it; the spec forbids it
            assert any(rule in str(exc) for rule in SPEC_REJECTED_RULES), (r, exc)
            with pytest.raises(SpecError):
                decode_instr_descriptor(r["value"], r["kind"])
            seen["spec-rejected"] += 1
            continue
        assert desc.encode() == r["value"], (r, hex(desc.encode()))
        assert decode_instr_descriptor(r["value"], r["kind"]) == desc, r    # CuTe's value, our decoder
        seen[r["kind"]] += 1
    assert all(seen[k] >= 30 for k in T.KINDS), seen
    assert sum(seen[k] for k in T.KINDS) >= 2000


def test_idesc_table39_findings():
    """CU2: CuTe's SM103 K = 96 atoms exist for cta_group::1 M = 128 (and ::2 M = 128/256); Table 39
    lists K = 96 only as 256xNxK1 with cta_group::2.  Every other legal-by-construction point passes."""
    outside = []
    for r in _records("idesc", "idesc"):
        if r["grid"] in ("shape", "trap"):
            continue
        try:
            desc = _idesc(r)
        except SpecError:
            continue
        try:
            desc.check_legal()
        except SpecError as exc:
            assert "K=96" in str(exc), (r, exc)
            outside.append((r["m"], r["n"]))
    assert outside and set(outside) == {(128, 128)}


def test_idesc_packed_e2m1_under_f8f6f4_is_e5m2():
    """CU1: float_e2m1_t is MXF4Format::E2M1 = 1, which a kind::f8f6f4 descriptor reads as e5m2;
    kind::f8f6f4 e2m1 must be cutlass::detail::float_e2m1_unpacksmem_t (code 5)."""
    (trap,) = [r for r in _records("idesc", "idesc") if r["grid"] == "trap"]
    assert decode_instr_descriptor(trap["value"], "f8f6f4").a_type == "e5m2"
    unpacked = [r for r in _records("idesc", "idesc")
                if r["kind"] == "f8f6f4" and r["a_type"] == "e2m1" and r["grid"] != "trap"]
    assert unpacked and all((r["value"] >> 7) & 7 == T.A_B_TYPE_CODES["f8f6f4"]["e2m1"] for r in unpacked)


def _cli_idesc_args(r: dict) -> list[str]:
    skip = {"grid", "value"}
    return [a for k, v in r.items() if k not in skip for a in (f"--{k.replace('_', '-')}", str(v))]


def test_cli_reads_and_writes_cute_idesc():
    recs = [r for r in _records("idesc", "idesc") if r["grid"] != "trap"]
    sample = recs[::97] + [r for r in recs if r["grid"] == "k96"][:3]
    for r in sample:
        try:
            desc = _idesc(r)
        except SpecError:
            continue
        got = json.loads(_cli("decode", "idesc", "--kind", r["kind"], "--fields-only", hex(r["value"])))
        assert got == desc.to_json(), r
        assert int(_cli("encode", "idesc", "--fields-only", *_cli_idesc_args(r)), 16) == r["value"], r


# ---- shared-memory layouts and descriptors (§9.7.16.3, §9.7.16.4.1) ---------------------------------

def _kind(r):
    return None if r["kind"] == "-" else r["kind"]


def _cute_bits(r) -> np.ndarray:
    return np.array([int(x) for x in str(r["bits"]).split(",")], dtype=np.int64).reshape(r["mn"], r["k"])


def test_canonical_layout_offsets_match():
    recs = _records("smem", "layout")
    assert len(recs) >= 40
    for r in recs:
        layout = choose_layout(r["major"], r["swizzle"], r["dtype"], r["mn"], r["k"], kind=_kind(r))
        ours, cute = layout.bit_offsets(r["mn"], r["k"]), _cute_bits(r)
        if layout.storage.padded:
            # CU4: CUTLASS lays unpacked 4/6-bit operands out as uint8_t (element i of a 16-byte unit at
            # byte i); the reference packs them at bits [i*b, (i+1)*b) of the unit. Same unit, same index.
            assert (cute // 128 == ours // 128).all() and ((cute % 128) // 8 == (ours % 128) // layout.storage.bits).all(), r["atom"]
        else:
            assert (cute == ours).all(), (r["atom"], r["dtype"], r["mn"], r["k"])


def test_umma_descriptors_match_except_unused_lbo():
    """CU3: for an MN-major swizzled tile one atom wide along MN, CuTe writes LBO = 0 (the stride of a
    size-1 mode); the reference writes the atom size. The LBO is never applied then (m = 1)."""
    recs = _records("smem", "sdesc")
    assert len(recs) >= 150
    unused_lbo = 0
    for r in recs:
        cute = SmemDescriptor.decode(r["value"])
        ours = choose_layout(r["major"], r["swizzle"], r["dtype"], r["mn"], r["k"], cute.start_address, kind=_kind(r))
        if ours.descriptor().encode() == r["value"]:
            continue
        geo_mn = {"32B": 32, "64B": 64, "128B": 128, "128B_base32B": 128}[r["swizzle"]] * 8 // T.ELEMENT_BITS.get(r["dtype"], 8)
        assert r["major"] == "MN" and cute.leading_byte_offset == 0 and r["mn"] <= geo_mn, r
        assert ours.descriptor() == SmemDescriptor(cute.start_address, ours.leading_byte_offset, cute.stride_byte_offset,
                                                   cute.base_offset, cute.lbo_mode, cute.swizzle)
        unused_lbo += 1
    assert unused_lbo == 10


def test_cli_layout_accepts_cute_atom_names():
    for r in _records("smem", "layout")[::7]:
        argv = ["layout", "--atom", r["atom"], "--dtype", r["dtype"], "--mn", str(r["mn"]), "--k", str(r["k"])]
        if _kind(r):
            argv += ["--kind", r["kind"]]
        got = np.array(json.loads(_cli(*argv))["bit_offsets"])
        layout = choose_layout(r["major"], r["swizzle"], r["dtype"], r["mn"], r["k"], kind=_kind(r))
        assert (got == layout.bit_offsets(r["mn"], r["k"])).all()


# ---- tcgen05.ld / tcgen05.st fragments (§9.7.16.2.3.1, §9.7.16.8) -----------------------------------

SHAPES = {"32dp32b": "32x32b", "16dp64b": "16x64b", "16dp128b": "16x128b", "16dp256b": "16x256b", "16dp32b": "16x32bx2"}
ATOM = re.compile(r"SM100_TMEM_(LOAD|STORE)_(\d+dp\d+b)(\d+)x(_16b)?$")


def _atom_ptx(name: str) -> str:
    """The tcgen05 instruction text of a CuTe copy atom (cute/arch/copy_sm100.hpp)."""
    text = _header("cute/arch/copy_sm100.hpp")
    body = text[text.index(f"struct {name}\n"):]
    return re.search(r'asm volatile \("(tcgen05\.[^"]*)"(?:\s*"[^"]*")*', body).group(0)


def test_tmem_copy_atoms_match_fragments():
    recs = _records("tmem", "tmem")
    assert len(recs) == 148            # every SM100_TMEM_{LOAD,STORE}_* atom of copy_traits_sm100.hpp
    for r in recs:
        op, shape, num, pack = ATOM.match(r["atom"]).groups()
        shape, num, pack = SHAPES[shape], int(num), pack is not None
        ptx = _atom_ptx(r["atom"])
        assert f".{shape}.x{num}" in ptx and (".pack::16b" in ptx or ".unpack::16b" in ptx) == pack, ptx
        split = None
        if shape == "16x32bx2":
            split = int(re.search(r"\]\s*,\s*(\d+)\s*[,;]", ptx).group(1))   # CuTe's immHalfSplitoff
            assert split == num * (2 if pack else 1)
        fmap = fragment_map(shape, num, pack=pack, half_split=split, op="ld" if op == "LOAD" else "st")
        assert r["piece"] == (16 if pack else 32)
        cells = np.array([int(c) for c in str(r["cells"]).split(",")])
        lane, col_bit = cells // 65536, cells % 65536
        assert (col_bit % 32 == 0).all()                                   # 16-bit pieces: low halves
        e = fmap.entries
        assert (lane == e[:, 2]).all() and (col_bit // 32 == e[:, 3]).all(), r["atom"]


def test_cli_tmem_fragment_matches_cute_atom():
    for r in _records("tmem", "tmem")[::17]:
        op, shape, num, pack = ATOM.match(r["atom"]).groups()
        argv = ["tmem-fragment", "--shape", SHAPES[shape], "--num", f"x{num}", "--op", "ld" if op == "LOAD" else "st"]
        got = np.array(json.loads(_cli(*argv, *(["--pack16"] if pack else [])))["map"])
        cells = np.array([int(c) for c in str(r["cells"]).split(",")])
        assert (got[:, 2] == cells // 65536).all() and (got[:, 3] == cells % 65536 // 32).all(), r["atom"]


# ---- tcgen05.cp (§9.7.16.9.2) ------------------------------------------------------------------------

CP_FORMS = {"128dp256bit": ("128x256b", None), "128dp128bit": ("128x128b", None), "4dp256bit": ("4x256b", None),
            "4x32dp128bit": ("32x128b", "warpx4"), "2x64dp128bitlw0213": ("64x128b", "warpx2::02_13"),
            "2x64dp128bitlw0123": ("64x128b", "warpx2::01_23")}


def test_utccp_atoms_match_cp_destinations():
    """Lanes each source row reaches, per CuTe's ValID.  CU5: CuTe models .4x256b as a 128-row
    'refresh' (copy_traits_sm100.hpp comment), not as 4 rows to lanes 0/32/64/96 -- not comparable."""
    recs = _records("tmem", "utccp")
    assert len(recs) == 12
    for r in recs:
        form, ctas = re.match(r"SM100_UTCCP_(\w+)_(\d)cta$", r["atom"]).groups()
        shape, multicast = CP_FORMS[form]
        text = _header("cute/arch/copy_sm100.hpp")
        body = text[text.index(f"struct {r['atom']}\n"):]
        assert f"tcgen05.cp.cta_group::{ctas}.{shape}" + (f".{multicast}" if multicast else "") in body[:1500]
        assert r["ctas"] == int(ctas) and r["row_bits"] == T_CP_BITS[shape]
        cute = {(int(s), int(lane)) for s, _, lane, c0, c1 in (e.split(":") for e in r["map"].split(";"))
                if int(c0) == 0 and int(c1) == T_CP_BITS[shape] // 32 - 1}
        assert len(cute) == len(r["map"].split(";"))
        if shape == "4x256b":
            assert cute == {(s, s) for s in range(128)}
            continue
        assert cute == set(cp_destinations(shape, multicast)), r["atom"]


T_CP_BITS = {"128x256b": 256, "4x256b": 256, "128x128b": 128, "64x128b": 128, "32x128b": 128}
