"""CuTe encoding oracle (issue 17): CUTLASS 4.2's CuTe encoders, compiled, against ``reference/``.

Four host programs (``conformance/clients/cute_src/*.cu``, compiled against the wheels' headers and
cached) print CuTe's instruction descriptors (§9.7.16.4.2), shared-memory layouts and descriptors
(§9.7.16.3, §9.7.16.4.1), tcgen05.ld/st fragments (§9.7.16.2.3.1, §9.7.16.8), tcgen05.cp lane
maps (§9.7.16.9) and block-scaling scale-factor TMEM layouts (§9.7.16.10.7).  Every grid point is
compared bit for bit with the reference; the points where CuTe and the reference differ are the
documented findings CU1-CU7 of docs/clients-cute.md, each asserted here as exactly the set that
differs.  Without the clients extra every test skips.
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
    lists K = 96 only as 256xNxK1 with cta_group::2, so exactly those points are outside it (reading
    Q-K96-M128 = table-39); under the pick cute-m128 (CU9, CUTLASS example 89) every legal-by-construction
    point passes."""
    from reference.spec_questions import following

    def outside(rid):
        out = []
        with following({"Q-K96-M128": rid}):
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
                    out.append((r["m"], r["n"]))
        return out

    table39 = outside("table-39")
    assert table39 and set(table39) == {(128, 128)}
    assert outside("cute-m128") == []


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


# ---- block-scaling scale factors in Tensor Memory (§9.7.16.10.7) ------------------------------------

def _sf_cells(r) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CuTe's (lane, column, byte) of every scale factor, indexed [K index, SF, lane copy, row/column]."""
    c = np.array([int(v) for v in str(r["cells"]).split(",")]).reshape(r["kidx"], r["nsf"], r["reps"], r["mn"])
    return c // 65536, c % 65536 // 4, c % 4


def _sf_mmas(r) -> list[tuple[int, int]]:
    """(first K index, scale factors) of each MMA: sm100 reads tCtSF(_,_,k); sm103 K = 96 reads index
    j * 96/VS of the per-MMA iteration tensor (sm103_blockscaled_mma_warpspecialized.hpp)."""
    if r["arch"] == "sm103":
        step = 96 // r["vs"]
        return [(j * step, step) for j in range(r["kidx"] // step)]
    return [(t, r["nsf"]) for t in range(r["kidx"])]


def _sf_reference_cells(mn: int, sf: int, scale_id: int):
    """Where ``reference.tmem_mma_operands.read_scale_factors`` reads scale factor s of row/column x in
    lane quarter q (``tmem-scale-factors``' function): [q, x, s] lane, column, byte."""
    from conformance.commands.tmem import scale_factor_cells

    cells = scale_factor_cells(mn, sf, scale_id)[1]
    return cells[..., 0], cells[..., 1], cells[..., 2]


def _sf_agrees(r, reading: str | None = None) -> bool:
    """Every MMA of record ``r``: CuTe's cells for its scale factors, relative to the MMA's address
    (column, byte = scale id; CuTe's id is TMEM address bits 30-31), equal the reference's."""
    from reference.spec_questions import following

    lane, col, byte = _sf_cells(r)
    mn = r["m"] // r["ctas"] if r["operand"] == "A" else r["n"]     # rows per CTA / all N columns
    with following({"Q-K96-SFW": reading} if reading else {}):
        for t0, sf in _sf_mmas(r):
            assert lane[t0, 0, 0, 0] == 0                             # the address names lane 0
            c0, sid = col[t0, 0, 0, 0], int(byte[t0, 0, 0, 0])
            ref_lane, ref_col, ref_byte = _sf_reference_cells(mn, sf, sid)
            for s in range(sf):
                t, j = (t0 + s, 0) if r["arch"] == "sm103" else (t0, s)
                got = (lane[t, j, :, :mn], col[t, j, :, :mn] - c0, byte[t, j, :, :mn])
                want = (ref_lane[: r["reps"], :, s], ref_col[: r["reps"], :, s], ref_byte[: r["reps"], :, s])
                if r["reps"] != 4 or any((g != w).any() for g, w in zip(got, want, strict=True)):
                    return False
    return True


def test_scale_factor_tmem_layouts_match():
    """CuTe's tmem_sf_frg (ScaleFactorDuplicated4by1) through CUTLASS's SF tile shapes equals the
    reference's placement for every MMA of the grid (1X/2X/4X, K = 96 3X/6X, sparse, cta_group::1 and ::2
    M = 256); each MMA reads Table 54's count (sparse: the logical K, as reference.block_scaling decides).
    CU7: the cta_group::2 M = 128 atom's SFB (ScaleFactorDuplicated2by2) splits N over the lane halves."""
    from reference.block_scaling import resolve_scale_vec

    recs = _records("sf", "sf")
    assert len(recs) == 60
    for r in recs:         # scale factors per MMA = Table 54's SF for the kind, block size and K
        sparse = "SPARSE" in r["atom"]   # VS counts logical elements: block VS/2 over the logical K (2x)
        k = 96 if r["arch"] == "sm103" else {"mxf8f6f4": 32}.get(r["kind"], 64) * (2 if sparse else 1)
        block = r["vs"] // 2 if sparse else r["vs"]
        sf = resolve_scale_vec(r["kind"], f"block{block}", k, "ue4m3" if block == 16 else "ue8m0")[1]
        assert {n for _, n in _sf_mmas(r)} == {sf}, r["atom"]
    split = [r for r in recs if r["alloc"] == "2by2"]
    assert all(_sf_agrees(r) for r in recs if r["alloc"] == "4by1")
    assert split and not any(_sf_agrees(r) for r in split)
    for r in split:        # CU7: column n of SFB in lanes 64*(n // (N/2)) + n % 32 (+32), column (n % (N/2)) // 32
        lane, col, byte = _sf_cells(r)
        n, half = np.arange(r["n"]), r["n"] // 2
        for copy in range(2):
            assert (lane[0, 0, copy, : r["n"]] == 64 * (n // half) + 32 * copy + n % 32).all()
            assert (col[0, 0, copy, : r["n"]] == n % half // 32).all() and (byte[0, 0, copy, : r["n"]] == 0).all()


def test_scale_factor_layouts_bear_on_spec_questions():
    """Q-K96-SFW: for K = 96 with N = 192 CUTLASS lays SFB out over 256 columns, so the next set of four
    bytes is 8 columns on -- the 'group-of-4' reading; 'compact' (6) disagrees exactly there.
    Q-SFB-2CTA: cta_group::2 M = 256 SFB (MMA_ScaleFactor: a 1-SM atom over round_up(N, 128)) holds all N
    columns at the same address in each CTA -- consistent with 'lead', not with 'split' (N/2 per CTA)."""
    recs = [r for r in _records("sf", "sf") if r["alloc"] == "4by1"]
    compact_differs = {(r["arch"], r["vs"], r["n"], r["operand"]) for r in recs if not _sf_agrees(r, "compact")}
    assert compact_differs == {("sm103", 32, 192, "B"), ("sm103", 16, 192, "B")}
    assert all(_sf_agrees(r, "group-of-4") for r in recs)
    two_cta_b = [r for r in recs if r["ctas"] == 2 and r["operand"] == "B"]
    assert two_cta_b and all(r["mn"] >= r["n"] and r["reps"] == 4 for r in two_cta_b)


def test_scale_factor_smem_to_tmem_is_utccp_32x128b_warpx4():
    """The sm100 collectives copy SF smem -> TMEM with SM100_UTCCP_4x32dp128bit (tcgen05.cp .32x128b.warpx4,
    §9.7.16.9): each 512-byte block of the smem layout is 32 source rows of 16 bytes; row r lands in the lanes
    ``cp_destinations`` gives (r + 32 q), byte b of the row in column b // 4, byte b % 4 of a 4-column group."""
    recs = [r for r in _records("sf", "sf") if "smem" in r and r["alloc"] == "4by1"]
    assert len(recs) == 42
    dest = collections.defaultdict(set)
    for row, lane in cp_destinations("32x128b", "warpx4"):
        dest[row].add(lane)
    for r in recs:
        lane, col, byte = _sf_cells(r)
        smem = np.array([int(v) for v in str(r["smem"]).split(",")]).reshape(r["kidx"], r["nsf"], r["mn"])
        assert (smem % 16 == 4 * (col[:, :, 0] % 4) + byte[:, :, 0]).all(), r["atom"]
        row = smem // 16 % 32
        lanes = np.sort(lane, axis=2)                                    # [t, s, copies, x]
        want = np.array([sorted(dest[v]) for v in range(32)])[row]       # [t, s, x, copies]
        assert (lanes == want.transpose(0, 1, 3, 2)).all(), r["atom"]
        block_to_group = {}
        for b, g in zip((smem // 512).ravel(), (col[:, :, 0] // 4).ravel(), strict=True):
            assert block_to_group.setdefault(b, g) == g, r["atom"]       # one copy per 512-byte block


def test_cli_tmem_scale_factors_matches_cute():
    """``tmem-scale-factors`` prints, per (x, s, quarter), the cell CuTe's tmem_sf_frg puts the factor in,
    relative to the MMA's address; with ``--reading Q-K96-SFW=compact`` the N = 192 K = 96 SFB differs."""
    recs = [r for r in _records("sf", "sf") if r["alloc"] == "4by1"]
    for r in recs[::5] + [r for r in recs if r["arch"] == "sm103" and r["n"] == 192 and r["operand"] == "B"]:
        lane, col, byte = _sf_cells(r)
        mn = r["m"] // r["ctas"] if r["operand"] == "A" else r["n"]
        for reading in (["--reading", "Q-K96-SFW=compact"] if r["n"] == 192 and r["arch"] == "sm103" else []), []:
            for t0, sf in _sf_mmas(r)[1:3]:
                c0, sid = col[t0, 0, 0, 0], int(byte[t0, 0, 0, 0])
                got = json.loads(_cli("tmem-scale-factors", "--mn", str(mn), "--sf", str(sf), "--scale-id", str(sid), *reading))
                rows = np.array(got["cells"])
                x, s, q = rows[:, 0], rows[:, 1], rows[:, 2]
                t, j = (t0 + s, 0 * s) if r["arch"] == "sm103" else (t0 + 0 * s, s)
                same = ((lane[t, j, q, x] == rows[:, 3]) & (col[t, j, q, x] - c0 == rows[:, 4])
                        & (byte[t, j, q, x] == rows[:, 5])).all()
                assert same == (not reading or sid + sf <= 4), (r["atom"], r["n"], reading, t0)
