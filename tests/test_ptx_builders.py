"""PTX builders: spellings, the kernel skeleton (ABI), record packing, TMEM op sequences."""

import re
import struct

import pytest

from generators.inputs import Untestable, case_record, synthesize
from generators.params import Case
from generators.ptx import hooks
from generators.ptx import record as R
from generators.ptx.kernel import WAIT_BOUND, render, tmem_ops
from generators.ptx.mma import MmaSpelling, mma_kernel
from generators.ptx.warp import WarpSparseSpelling
from generators.variants import cases
from reference.targets import ptx_version

pytestmark = pytest.mark.reference

# Expected texts written by hand from the syntax blocks of §9.7.16.10.9.1-4.
SPELLINGS = [
    (MmaSpelling("tf32", dol=True), "tcgen05.mma.cta_group::1.kind::tf32 [%tm_d], %adesc, %bdesc, %idesc, "
     "{%dol0, %dol1, %dol2, %dol3}, %en_d;"),
    (MmaSpelling("f16", cta_group=2, a_tmem=True, ashift=True, collector="a::lastuse", scale_input_d=7),
     "tcgen05.mma.cta_group::2.kind::f16.ashift.collector::a::lastuse [%tm_d], [%tm_a], %bdesc, %idesc, %en_d, 7;"),
    (MmaSpelling("mxf4nvf4", sparse=True, scale_vec="block16", collector="a::fill"),
     "tcgen05.mma.sp.cta_group::1.kind::mxf4nvf4.block_scale.block16.collector::a::fill [%tm_d], %adesc, %bdesc, "
     "[%tm_meta], %idesc, [%tm_sfa], [%tm_sfb], %en_d;"),
    (MmaSpelling("i8", ws=True, sparse=True, a_tmem=True, collector="b3::use", zcm=True),
     "tcgen05.mma.ws.sp.cta_group::1.kind::i8.collector::b3::use [%tm_d], [%tm_a], %bdesc, [%tm_meta], %idesc, "
     "%en_d, %zcm;"),
    (MmaSpelling("mxf8f6f4"), "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%tm_d], %adesc, %bdesc, %idesc, "
     "[%tm_sfa], [%tm_sfb], %en_d;"),
]


@pytest.mark.parametrize("spelling,text", SPELLINGS)
def test_mma_spelling(spelling, text):
    assert spelling.instruction() == text


def test_warp_spelling():
    sp = WarpSparseSpelling("m16n8k32", "f32", "bf16", "bf16", "f32", ordered=True, selector=1, a_regs=4, b_regs=4,
                            c_regs=4, d_regs=4)
    assert sp.instruction() == ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 "
                                "{%d0, %d1, %d2, %d3}, {%a0, %a1, %a2, %a3}, {%b0, %b1, %b2, %b3}, "
                                "{%c0, %c1, %c2, %c3}, %e, 0x1;")


@pytest.fixture(scope="module")
def smoke() -> list[Case]:
    return cases("smoke")


def _ptx(case: Case) -> str:
    t = case.targets[0]
    return render(case.kernel, t, case.ptx_version or ptx_version(t, case.features))


def test_kernels_follow_the_abi(smoke):
    for case in smoke:
        ptx = _ptx(case)
        assert case.instruction in ptx
        assert re.search(rf"\.visible \.entry {case.kernel.name}\(\n\s+\.param \.u64 case_table,\n\s+\.param \.u32 ncases\n\)", ptx)
        assert f".reqntid {case.kernel.threads}, 1, 1" in ptx
        assert (".reqnctapercluster 2, 1, 1" in ptx) == (case.kernel.cta_group == 2)
        assert "st.global.u32 [%status+4], %err;" in ptx and "0x600d0000" in ptx
        labels = re.findall(r"^(\$L\w+):", ptx, re.M)
        assert len(labels) == len(set(labels))


def test_every_wait_loop_is_bounded(smoke):
    for case in smoke:
        ptx = _ptx(case)
        for m in re.finditer(r"^(\$L\w+):\n\s+mbarrier\.try_wait[^\n]*\n\s+@%p5 bra (\$L\w+);\n(.*?)\n\s+@%p6 bra (\$L\w+);",
                             ptx, re.M | re.S):
            assert f"setp.lt.u32 %p6, %spins, {WAIT_BOUND};" in m.group(3) and m.group(4) == m.group(1)
        assert ptx.count("mbarrier.try_wait") == len(re.findall(rf"setp\.lt\.u32 %p6, %spins, {WAIT_BOUND};", ptx))


def test_one_cta_group_per_kernel_and_dealloc(smoke):
    for case in smoke:
        if not case.legal:
            continue
        ptx = _ptx(case)
        groups = set(re.findall(r"cta_group::(\d)", ptx))
        assert len(groups) <= 1, case.case_id
        if "tcgen05.alloc" in ptx:
            assert "tcgen05.dealloc" in ptx and "tcgen05.relinquish_alloc_permit" in ptx


def test_kernels_keyed_by_spelling():
    a, b = mma_kernel(MmaSpelling("f16")), mma_kernel(MmaSpelling("f16"))
    assert a == b and a.name == b.name
    assert mma_kernel(MmaSpelling("f16", dol=True)).name != a.name
    default = cases("smoke", families=["mma"])
    by_instr = {}
    for c in default:
        if c.kernel.ptx_version is None:     # forced-version negative kernels have their own identity
            by_instr.setdefault(c.instruction, set()).add(c.kernel.name)
    assert all(len(v) == 1 for v in by_instr.values())


def test_tmem_ops_and_checker_hook(smoke, monkeypatch):
    seen = []
    monkeypatch.setattr(hooks, "allocation_checker", lambda: (lambda ops: seen.append(ops)))
    for case in smoke:
        ops = tmem_ops(case.kernel)
        if case.kernel.cta_group is None:
            assert ops == ()
            continue
        names = [o.op for o in ops]
        assert names[0] == "alloc" and names[-1] == "dealloc", case.case_id
        assert {o.cta_group for o in ops if o.cta_group is not None} == {case.kernel.cta_group}
        assert hooks.check_tmem_ops(ops) is None
        vocab = hooks.checker_ops(ops)
        assert vocab[0][0] == "alloc" and vocab[0][2] == case.kernel.cta_group
        assert vocab[-1][:3] == ("dealloc", "a0", vocab[0][1])
    assert len(seen) == sum(1 for c in smoke if c.kernel.cta_group is not None)


def test_real_allocation_checker_when_present(smoke):
    if hooks.allocation_checker() is None:
        pytest.skip("reference.tmem_alloc (TMEM issue) not merged yet")
    for case in smoke:
        if case.kernel.cta_group is not None and case.legal:
            assert hooks.check_tmem_ops(tmem_ops(case.kernel)) is None, case.case_id


def test_record_layout():
    ends = sorted((off, off + struct.calcsize(fmt) * n) for off, fmt, n in R.FIELDS.values())
    assert all(a[1] <= b[0] for a, b in zip(ends, ends[1:], strict=False)) and ends[-1][1] == R.RECORD_BYTES
    # common words of docs/kernel-abi.md
    assert [R.offset(n) for n in ("in_ptr", "out_ptr", "status_ptr", "out_words", "flags")] == [0, 8, 16, 24, 28]
    values = {"in_ptr": 0x1000, "out_words": 7, "preload": [1, 2, 3], "a_desc": 1 << 62, "aux": [9]}
    back = R.unpack_case_record(R.pack_case_record(values))
    assert back["in_ptr"] == 0x1000 and back["out_words"] == 7 and back["preload"][:4] == (1, 2, 3, 0)
    assert back["a_desc"] == 1 << 62 and back["aux"][0] == 9
    raw = R.pack_case_record({"out_words": 0x11223344})
    assert raw[24:28] == bytes([0x44, 0x33, 0x22, 0x11])          # little-endian at offset 24
    with pytest.raises(KeyError):
        R.pack_case_record({"nope": 1})


def test_inputs_for_every_smoke_case(smoke):
    for case in smoke:
        if not case.legal:
            continue
        try:
            inputs = synthesize(case)
        except Untestable as exc:          # named reason (docs/execute.md); the harness skips it
            assert str(exc)
            continue
        rec = R.unpack_case_record(case_record(case, inputs))
        assert rec["smem_bytes"] <= R.SMEM_CAPACITY
        assert rec["out_words"] == inputs.out_words > 0
        if case.family.startswith("mma"):
            assert rec["idesc"] == case.params["idesc"]
            regions = [rec["preload"][i:i + 3] for i in range(0, 18, 3) if rec["preload"][i + 1]]
            assert all(off + 128 * cols * 4 <= len(inputs.in_block) for _, cols, off in regions)


def test_case_record_refuses_a_staging_image_not_in_16_byte_units():
    """StageSmem copies 16 bytes per thread (ld.global.v4 / st.shared.v4): smem_bytes and smem_src
    must be multiples of 16, or the copy would run past the image (docs/kernel-abi.md)."""
    from generators.ptx.record import pack_case_record, unpack_case_record

    assert unpack_case_record(pack_case_record({"smem_bytes": 4096, "smem_src": 1024}))["smem_bytes"] == 4096
    for field in ("smem_bytes", "smem_src"):
        with pytest.raises(ValueError, match=f"{field} expects a multiple of 16"):
            pack_case_record({field: 4100})
