"""Spec questions (reference.spec_questions, generators.probes, conformance.harness.probes;
docs/spec-questions.md): the registry, the readings the simulated device follows, and the
self-test matrix -- for every question and every reading, the simulator set to that reading
makes the probe report exactly that reading."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from generators.probes import PROBES, probe_case, questions_of
from reference import spec_questions as SQ
from reference.errors import SpecError
from reference.zero_column_mask import ZeroColumnMaskDescriptor

ROOT = Path(__file__).resolve().parents[1]


def test_registry_is_well_formed():
    for qid, q in SQ.QUESTIONS.items():
        assert qid == q.id and qid.startswith("Q-")
        ids = q.reading_ids()
        assert len(ids) >= 2 and len(set(ids)) == len(ids), qid
        assert q.pick in ids, qid
        assert q.sections and q.probe and q.listed_in, qid
        assert all(r.sources and r.summary for r in q.readings), qid


def test_probes_cover_the_registry():
    """Every question has a probe kernel, or says why no legal kernel tells its readings apart."""
    assert set(PROBES) <= set(SQ.QUESTIONS)
    without = {q for q in SQ.QUESTIONS if q not in PROBES}
    assert without == {q for q, v in SQ.QUESTIONS.items() if v.no_probe_reason}
    assert not any(SQ.QUESTIONS[q].no_probe_reason for q in PROBES)


@pytest.mark.parametrize("bad, text", [("Q-NOPE=x", "spec question expects one of Q-ZCM-SPAN"),
                                       ("Q-ZCM-SPAN=x", "reading of Q-ZCM-SPAN expects one of examples, table-prose"),
                                       ("Q-ZCM-SPAN", "reading assignment expects QID=READING")])
def test_bad_assignment_is_one_line(bad, text):
    with pytest.raises(SpecError) as info:
        SQ.parse_assignment(bad)
    assert text in str(info.value) and "\n" not in str(info.value)


def test_sim_device_rejects_unknown_readings():
    from ptxsim import SimDevice

    with pytest.raises(SpecError, match="expects one of .*, but got 'Q-NOPE'"):
        SimDevice(readings={"Q-NOPE": "x"})
    assert SimDevice(readings={"Q-ZCM-SPAN": "table-prose"}).readings == {"Q-ZCM-SPAN": "table-prose"}


def test_resolution_order():
    q = "Q-ZCM-SPAN"
    assert SQ.reading(q) == "examples" and not SQ.is_explicit(q)
    try:
        SQ.set_defaults({q: "table-prose"})
        assert SQ.reading(q) == "table-prose" and SQ.is_explicit(q)
        with SQ.following({}, exact=True):          # the simulated device: its own readings only
            assert SQ.reading(q) == "examples" and not SQ.is_explicit(q)
        with SQ.following({q: "examples"}):
            assert SQ.reading(q) == "examples"
    finally:
        SQ.set_defaults({})
    assert SQ.reading(q) == "examples"


def test_zero_column_mask_readings_swap_the_runs():
    """§9.7.16.4.3 example 2 (skip 2, use 3): LSB-first 0000 111 ... vs 000 1111 ..."""
    d = ZeroColumnMaskDescriptor(non_zero_mask=True, skip_span=2, use_span=3)
    bits = lambda r: [(d.mask(128, 14, reading=r) >> j) & 1 for j in range(14)]  # noqa: E731
    assert bits("examples") == [0, 0, 0, 0, 1, 1, 1] * 2
    assert bits("table-prose") == [0, 0, 0, 1, 1, 1, 1] * 2


def test_metadata_0110_readings():
    from reference import sparsity as SP

    assert SP.kept_positions(SP.PATTERN_2_4, np.array([[0b0110]]), reading="as-listed").tolist() == [[[2, 1]]]
    assert SP.kept_positions(SP.PATTERN_2_4, np.array([[0b0110]]), reading="as-ordered").tolist() == [[[1, 2]]]


def test_fp8_alignment_readings():
    """§9.7.16.10.6, Q-FP8-ALIGN: C = 256 and product -2^-18 (e4m3, F = 25: last kept bit 2^-17)."""
    from reference.numerics_hw import hw_fused

    a, b, c = np.array([[2.0 ** -9]]), np.array([[-(2.0 ** -9)]]), np.array([[256.0]])
    d = {r: hw_fused("f8f6f4", "f32", a, b, c, a_fmt="e4m3", b_fmt="e4m3", reading=r)[0, 0]
         for r in ("toward-zero", "toward-minus-inf")}
    assert d == {"toward-zero": 256.0, "toward-minus-inf": 256.0 - 2.0 ** -16}
    # other kinds are not the question: kind::f16 stays toward zero under either reading
    f16 = hw_fused("f16", "f32", np.array([[2.0 ** -14]]), np.array([[-(2.0 ** -14)]]), np.array([[256.0]]),
                   a_fmt="f16", b_fmt="f16", reading="toward-minus-inf")
    assert f16[0, 0] == 256.0


def test_scale_b_parts_readings():
    """§9.7.16.10.7, Q-SFB-2CTA: where B's scale factors live (CTA rank, first column, columns)."""
    from reference.tmem_mma_operands import scale_b_parts

    assert scale_b_parts(256, 2, reading="lead") == ((0, 0, 256),)
    assert scale_b_parts(256, 2, reading="split") == ((0, 0, 128), (1, 128, 128))
    assert scale_b_parts(64, 1, reading="split") == ((0, 0, 64),)          # one CTA: nothing to split


def test_scale_b_by_half_layout():
    """§9.7.16.10.7, Q-SFB-2X2 (docs/clients-cute.md CU7): column n of N = 64 at lane 64*(n // 32) + n % 32
    (and 32 lanes up), cell (n % 32) // 32 = 0, under by-datapath; lane n % 32 of every quarter, cell n // 32,
    replicated. Checked by hand-placed bytes, not by the packer."""
    from reference.tmem_mma_operands import (
        pack_scale_factors,
        read_scale_factors,
        replicated,
        scale_b_by_half,
    )

    codes = (np.arange(64, dtype=np.uint8) + 1)[:, None]
    by_half = pack_scale_factors(codes, 0, by_half=True)
    assert by_half.shape == (128, 1)
    n = np.arange(64)
    for up in (0, 32):
        assert (by_half[64 * (n // 32) + n % 32 + up, 0] & 0xFF).tolist() == codes[:, 0].tolist()
    flat = pack_scale_factors(codes, 0)
    assert flat.shape == (128, 2) and all((flat[32 * q + n % 32, n // 32] & 0xFF).tolist() == codes[:, 0].tolist()
                                          for q in range(4))
    assert replicated(read_scale_factors(by_half, 64, 1, 0, by_half=True))[:, 0].tolist() == codes[:, 0].tolist()
    with pytest.raises(SpecError, match="duplicated to all 32 lane partitions"):
        replicated(read_scale_factors(np.concatenate([by_half, by_half], axis=1), 64, 1, 0))
    assert scale_b_by_half(128, 2, reading="by-datapath") and not scale_b_by_half(128, 2, reading="replicated")
    assert not scale_b_by_half(256, 2, reading="by-datapath") and not scale_b_by_half(128, 1, reading="by-datapath")


def test_unpack_upper_readings():
    """§9.7.16.8.2, Q-UNPACK-UPPER: .unpack::16b writes the halves' low 16 bits; bits 16-31 are 0 (zero)
    or the old cell's (preserved)."""
    from reference.tmem import TensorMemory, TmemAddress
    from reference.tmem_fragments import st

    regs = np.full((32, 1), 0x1234ABCD, dtype=np.uint64)
    for rid, upper in (("zero", 0), ("preserved", 0xBEEF0000)):
        tm = TensorMemory()
        tm.cells[:, :] = 0xBEEFBEEF
        with SQ.following({"Q-UNPACK-UPPER": rid}):
            st(tm, TmemAddress(0, 0), regs, "32x32b", 1, unpack=True, warp_id=0)
        assert [int(tm.cells[5, c]) for c in range(3)] == [upper | 0xABCD, upper | 0x1234, 0xBEEFBEEF], rid


def test_k96_m128_legality_follows_the_reading():
    """§9.7.16.2.1 Table 39, Q-K96-M128 (docs/clients-cute.md CU2, CU9): K = 96 with M = 128 is illegal under
    table-39 and legal (CuTe's sm_103 atoms, CUTLASS example 89) under cute-m128, the pick; M = 256 cta_group::2
    is legal under both.  The variant matrix reads the same table (``shape_table``)."""
    from reference.tables import CUTE_K96_ROWS, TABLE_39, check_shape, shape_table

    assert SQ.QUESTIONS["Q-K96-M128"].pick == "cute-m128"
    for cg, n in ((1, 64), (2, 64)):
        with SQ.following({"Q-K96-M128": "table-39"}), pytest.raises(SpecError, match="M for kind::mxf4 .* K=96 expects"):
            check_shape("mxf4", 128, n, cta_group=cg, k96=True)
        assert check_shape("mxf4nvf4", 128, n, cta_group=cg, k96=True).k == 96
    with pytest.raises(SpecError, match="N for kind::mxf4 cta_group::1 dense M=128 expects"):
        check_shape("mxf4", 128, 8, cta_group=1, k96=True)      # the atoms' N: multiples of 16
    assert check_shape("mxf4", 256, 64, cta_group=2, k96=True).m == (256,)
    with pytest.raises(SpecError):
        check_shape("mxf8f6f4", 128, 64, k96=True)                 # K = 96 stays mxf4 / mxf4nvf4 only
    assert shape_table() == TABLE_39 + CUTE_K96_ROWS
    with SQ.following({"Q-K96-M128": "table-39"}):
        assert shape_table() == TABLE_39


def test_kmajor_base32b_legality_and_rows_follow_the_reading():
    """§9.7.16.10.3 Table 52 vs §9.7.16.10.6 Table 53, Q-KMAJOR-BASE32B: K-major 128B_base32B is refused
    under table-53 (the pick) and legal under legal-8-rows / legal-4-rows, whose SBO steps every 8 / 4
    rows; the case lists keep the pick's matrix whatever the reading. Addresses written out by hand:
    row r at start + (r mod G)*128 + (r div G)*SBO, its 32-byte chunk c at chunk c XOR (address bits 7-8)."""
    from generators.variants.common import operand_layouts
    from reference.smem_image import SmemImage, read
    from reference.smem_layout import SmemLayout, element_storage
    from reference.tables import legal_swizzles

    assert "128B_base32B" not in legal_swizzles(16, "K") and "128B_base32B" in legal_swizzles(16, "K", "legal-8-rows")
    assert legal_swizzles(32, "MN", "legal-4-rows") == ("128B_base32B",)      # MN-major: Table 52 alone
    assert "128B_base32B" not in legal_swizzles(16, "MN", "legal-8-rows")     # 8/16-bit MN-major: never
    storage = element_storage("u8")
    with pytest.raises(SpecError, match=r"Table 53.*Q-KMAJOR-BASE32B"):
        SmemLayout("K", "128B_base32B", storage, 0, 16, 1024)
    for rid, rows_per_sbo in (("legal-8-rows", 8), ("legal-4-rows", 4)):
        with SQ.following({"Q-KMAJOR-BASE32B": rid}):
            assert "sw128b32_k" not in operand_layouts("bf16")
            sbo = 4096                                          # non-compact: the SBO groups are visible
            layout = SmemLayout("K", "128B_base32B", storage, 0, 16, sbo)
            got = layout.bit_offsets(16, 128)[:, ::32] // 8       # the first byte of each 32-byte chunk
            for r in range(16):
                row = (r % rows_per_sbo) * 128 + (r // rows_per_sbo) * sbo
                assert got[r].tolist() == [row + 32 * (c ^ (row >> 7 & 3)) for c in range(4)], (rid, r)
            image = SmemImage(0, bytes(range(256)) * 64)
            codes = read(image, layout.descriptor(), 16, 128, "u8", "K")
            assert codes[:, 0].tolist() == [(int(a) % 256) for a in got[:, 0]], rid


def test_ld_red_signed_zero_readings():
    """§9.7.16.8.3, Q-LDRED-ZERO: min/max of {+0, -0} (register order) under each reading."""
    from reference.tmem_fragments import reduce_lane

    pos, neg = 0x00000000, 0x80000000
    got = {(r, op, first): reduce_lane(np.array([first, neg ^ first ^ pos]), op, "f32", reading=r)
           for r in ("neg-below", "zeros-equal") for op in ("min", "max") for first in (pos, neg)}
    assert got == {("neg-below", "min", pos): neg, ("neg-below", "min", neg): neg,
                   ("neg-below", "max", pos): pos, ("neg-below", "max", neg): pos,
                   ("zeros-equal", "min", pos): pos, ("zeros-equal", "min", neg): neg,
                   ("zeros-equal", "max", pos): pos, ("zeros-equal", "max", neg): neg}
    assert reduce_lane(np.array([pos, 0xBF800000, neg]), "min", "f32", reading="zeros-equal") == 0xBF800000


def test_questions_of_cases():
    probe = {q: probe_case(q) for q in PROBES}
    assert "Q-ZCM-SPAN" in questions_of(probe["Q-ZCM-SPAN"])
    assert "Q-LBO-KSW" in questions_of(probe["Q-LBO-KSW"])
    assert "Q-TF32-TRUNC" in questions_of(probe["Q-TF32-TRUNC"], mode="numerics")
    fp8 = probe["Q-FP8-ALIGN"]
    assert "Q-FP8-ALIGN" in questions_of(fp8, mode="numerics", numerics="hardware")
    assert "Q-FP8-ALIGN" not in questions_of(fp8) + questions_of(fp8, mode="numerics")   # exact / spec bound
    assert set(questions_of(probe["Q-CP-NIBBLE"])) - {"Q-BASE-OFFSET"} == {"Q-CP-NIBBLE"}
    assert "Q-K96-SFW" in questions_of(probe["Q-K96-SFW"])
    assert "Q-K96-M128" in questions_of(probe["Q-K96-M128"]) and "Q-K96-M128" not in questions_of(probe["Q-K96-SFW"])
    kmajor = probe["Q-KMAJOR-BASE32B"]
    assert {kmajor.params["a_operand"], kmajor.params["b_layout"]} == {"sw128b32_k"}
    assert "Q-KMAJOR-BASE32B" in questions_of(kmajor) and "Q-KMAJOR-BASE32B" not in questions_of(probe["Q-LBO-KSW"])
    assert "Q-SFB-2CTA" in questions_of(probe["Q-SFB-2CTA"])
    assert "Q-SFB-2X2" in questions_of(probe["Q-SFB-2X2"]) and "Q-SFB-2X2" not in questions_of(probe["Q-SFB-2CTA"])
    assert "Q-LAYOUT-C" in questions_of(probe["Q-LAYOUT-C"])
    assert "Q-ZCM-SHIFT" in questions_of(probe["Q-ZCM-SHIFT"])
    assert set(questions_of(probe["Q-META-0110"])) <= {"Q-BASE-OFFSET", "Q-META-TMEM"}   # never feeds 0b0110
    assert "Q-META-TMEM" in questions_of(probe["Q-META-TMEM"])
    assert questions_of(probe["Q-LDRED-ZERO"]) == ()           # suite inputs: nonzero distinct magnitudes
    assert questions_of(probe["Q-UNPACK-UPPER"]) == ()         # the upper half is compared once the reading is chosen
    with SQ.following({"Q-UNPACK-UPPER": "preserved"}):
        assert questions_of(probe["Q-UNPACK-UPPER"]) == ("Q-UNPACK-UPPER",)
    # base offset: from the synthesized descriptors when the inputs are known
    from generators.inputs import synthesize

    based = probe["Q-BASE-OFFSET"]
    assert "Q-BASE-OFFSET" in questions_of(based, inputs=synthesize(based))
    unswizzled = probe["Q-CP-NIBBLE"]
    assert "Q-BASE-OFFSET" not in questions_of(unswizzled, inputs=synthesize(unswizzled))


MATRIX = [(q, r) for q in PROBES for r in SQ.QUESTIONS[q].reading_ids()]


@pytest.mark.parametrize("qid, rid", MATRIX, ids=[f"{q}={r}" for q, r in MATRIX])
def test_simulator_set_to_a_reading_is_observed_following_it(qid, rid):
    from conformance.harness.device_sim import SimBackend
    from conformance.harness.probes import observe

    config = types.SimpleNamespace(stash=pytest.Stash())
    obs = observe(config, SimBackend(readings={qid: rid}), qid)
    assert (obs.observed, obs.pick, obs.raw) == (rid, SQ.QUESTIONS[qid].pick, "")
    assert obs.conflict == (rid != SQ.QUESTIONS[qid].pick)


def test_an_undefined_outcome_reading_matches_a_completed_launch_no_other_reading_predicts():
    """Q-KMAJOR-BASE32B's table-53 (``Probe.undefined``): a device that runs the K-major 128B_base32B
    MMA but reads swizzle mode 1 as plain 128B swizzling (fault swizzle-128B-base32B-read-as-128B,
    under legal-8-rows so the simulator does not refuse the layout) computes a D neither legal
    reading predicts: it is observed as table-53, with the differences kept in ``raw``."""
    from conformance.harness.device_sim import SimBackend
    from conformance.harness.probes import observe
    from ptxsim.faults.catalogue import FAULTS

    fault = next(f for f in FAULTS if f.name == "swizzle-128B-base32B-read-as-128B")
    config = types.SimpleNamespace(stash=pytest.Stash())
    obs = observe(config, SimBackend([fault], readings={"Q-KMAJOR-BASE32B": "legal-8-rows"}), "Q-KMAJOR-BASE32B")
    assert obs.observed == "table-53" and not obs.conflict
    assert "[data placed and expected as legal-8-rows]" in obs.raw and "legal-4-rows" in obs.raw


ZCM_CASES = ["--family", "mma.ws", "-k", "zcm_example2 and m32n64 and not sp and b3"]


def _suite(*extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "conformance/test_execute_mma.py",
           "--device", "sim", *ZCM_CASES, *extra]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_dependent_cases_fail_naming_the_question_then_pass_under_the_reading():
    other = _suite("--sim-reading", "Q-ZCM-SPAN=table-prose")
    assert other.returncode == 1, other.stdout[-2000:]
    assert "depends on spec question Q-ZCM-SPAN (device: table-prose; expected values: examples)" in other.stdout
    assert "--reading Q-ZCM-SPAN=table-prose" in other.stdout
    settled = _suite("--sim-reading", "Q-ZCM-SPAN=table-prose", "--reading", "Q-ZCM-SPAN=table-prose")
    assert settled.returncode == 0, settled.stdout[-2000:]
    assert " passed" in settled.stdout and "failed" not in settled.stdout


def test_a_probe_follows_the_readings_observed_on_the_questions_its_case_depends_on():
    """The Q-SFB-2CTA probe case has swizzled tiles (Q-BASE-OFFSET): on a device that departs from
    both picks, each probe still reports its own question's reading."""
    from conformance.harness.device_sim import SimBackend
    from conformance.harness.probes import observe

    config = types.SimpleNamespace(stash=pytest.Stash())
    device = SimBackend(readings={"Q-SFB-2CTA": "split", "Q-BASE-OFFSET": "start-phase"})
    assert observe(config, device, "Q-SFB-2CTA").observed == "split"
    assert observe(config, device, "Q-BASE-OFFSET").observed == "start-phase"
