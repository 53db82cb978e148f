"""Warp-level block-scaled mma.sp on the simulator against hand-built registers and hand-computed D.

The simulator reads scale factors through ``reference.warp_block_scaling``, so the execution tier
alone would not notice a wrong lane/byte map there. Here the scale registers are written by hand
from the public facts (PTX ISA §9.7.14.3 text: thread-id-a picks lanes 4q+2t, 4q+2t+1,
thread-id-b lane 4q+t, byte-id the byte / byte pair; CUTLASS SM120 SFALayout: of a pair, the
first lane holds row q, the second row q+8; SFBLayout: quad q holds column q; K block j in byte
byte-id + j), as literal lane lists; every byte the instruction must not read holds a decoy scale
(2^3), and D is computed here from the unscaled block products: a wrong lane or byte changes D.
"""

from dataclasses import replace

import numpy as np
import pytest

from conformance.harness.device import CaseBuffers
from conformance.harness.device_sim import SimBackend
from conformance.harness.oracles.common import piece
from conformance.harness.oracles.warp import warp_d
from generators.inputs import case_record, synthesize
from generators.inputs.block import InBlocks, register_bytes
from generators.inputs.types import CaseInputs
from generators.params import Case
from generators.ptx.kernel import render
from generators.variants.warp_mma_sp import case_for, spellings
from ptxsim.faults.catalogue import FAULTS
from reference import formats as F
from reference import sparsity as SP
from reference import warp_mma_fragments as WF

pytestmark = pytest.mark.reference

DECOY = 127 + 3        # ue8m0 2^3; in ue4m3 (bias 7): 0x50 = 2^3
DECOY_UE4M3 = 0x50
# rows 0..15 of A -> lane, by thread-id-a; columns 0..7 of B -> lane, by thread-id-b (from the facts above)
A_LANES = {0: [0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29],
           1: [2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31]}
B_LANES = {t: [4 * q + t for q in range(8)] for t in range(4)}


def _case(kind: str, vec: str | None, stype: str, a_type: str = "e2m1") -> Case:
    sp = next(s for s in spellings() if s.kind == kind and s.scale_vec == vec and s.scale_type == stype
              and s.a_type == a_type and s.b_type == a_type)
    return case_for(sp)


def _codes(stype: str, values) -> np.ndarray:
    return F.encode(stype, np.asarray(values, dtype=np.float64)).astype(np.uint32)


def _scale_regs(stype, sa, sb, sel):
    """Scale registers by hand: decoys everywhere, then each factor in its lane and byte."""
    decoy = DECOY_UE4M3 if stype == "ue4m3" else DECOY
    word = decoy * 0x01010101
    ra, rb = np.full(32, word, dtype=np.uint32), np.full(32, word, dtype=np.uint32)
    byte_a, tid_a, byte_b, tid_b = sel
    for j in range(sa.shape[1]):
        for m, lane in enumerate(A_LANES[tid_a]):
            ra[lane] = (int(ra[lane]) & ~(0xFF << 8 * (byte_a + j))) | (int(sa[m, j]) << 8 * (byte_a + j))
        for n, lane in enumerate(B_LANES[tid_b]):
            rb[lane] = (int(rb[lane]) & ~(0xFF << 8 * (byte_b + j))) | (int(sb[j, n]) << 8 * (byte_b + j))
    return ra, rb


def _run(case: Case, inputs: CaseInputs, faults=(), edit=lambda text: text) -> np.ndarray:
    dev = SimBackend(faults)
    target = case.targets[0]
    module = dev.load(edit(render(case.kernel, target, case.ptx_version or (8, 8))))
    res = dev.launch(module, case.kernel.name, case_record(case, inputs), [CaseBuffers(inputs.in_bytes, inputs.out_words)],
                     (1, 1, 1), (32, 1, 1))
    assert int(np.asarray(res.status_words[0]).ravel()[0]) == 0x600D0007     # reached the end, results written
    p = piece(case.kernel, inputs.record, "registers")
    out = np.asarray(res.outputs[0], dtype=np.uint32)[p.offset:p.offset + 32 * 4].reshape(32, 4)
    return WF.gather(WF.cd_fragment(32), out).astype(np.uint32)


def _with_scales(case, sel, sa, sb, stype):
    """The synthesized case with its scale registers and selectors replaced by the hand-built ones."""
    inputs = synthesize(case)
    nwords = len(inputs.in_block) // 4 // 32
    regs = np.frombuffer(inputs.in_block[: 32 * nwords * 4], dtype=np.uint32).reshape(32, nwords).copy()
    ra, rb = _scale_regs(stype, sa, sb, sel)
    regs[:, -2], regs[:, -1] = ra, rb
    blocks = InBlocks(1)
    rec = {"regs_src": blocks.add(register_bytes(regs)), "aux": list(sel)}
    return CaseInputs(rec, blocks.blocks(), inputs.out_words, inputs.logical, inputs.decisions)


def _block_products(lg, sf):
    """P[j] = A[:, block j] @ B[block j, :] (unscaled), from the logical operands."""
    a = SP.expand(lg.pattern, F.decode(lg.a_type, lg.a), lg.meta, fill=0.0)
    b = F.decode(lg.b_type, lg.b)
    w = lg.k // sf
    return [a[:, w * j:w * (j + 1)] @ b[w * j:w * (j + 1), :] for j in range(sf)]


# (kind, scale_vec, scale type, A type, SF, selectors {byte-id-a, thread-id-a, byte-id-b, thread-id-b})
HAND = [
    ("mxf8f6f4", "scale_vec::1X", "ue8m0", "e4m3", 1, (2, 1, 3, 2)),
    ("mxf8f6f4", None, "ue8m0", "e2m3", 1, (0, 0, 1, 3)),
    ("mxf4", "scale_vec::2X", "ue8m0", "e2m1", 2, (2, 0, 0, 1)),
    ("mxf4nvf4", "scale_vec::4X", "ue4m3", "e2m1", 4, (0, 1, 0, 0)),
]


@pytest.mark.parametrize("kind,vec,stype,a_type,sf,sel", HAND, ids=[f"{h[0]}-{h[1]}-{h[5]}" for h in HAND])
def test_scaled_d_matches_the_hand_computation(kind, vec, stype, a_type, sf, sel):
    case = _case(kind, vec, stype, a_type)
    # scale values: row m, block j -> 2^((m + j) % 3 - 1); column n, block j -> 2^((n + 2j) % 3 - 1)
    va = np.array([[2.0 ** ((m + j) % 3 - 1) for j in range(sf)] for m in range(16)])
    vb = np.array([[2.0 ** ((n + 2 * j) % 3 - 1) for n in range(8)] for j in range(sf)])
    inputs = _with_scales(case, sel, _codes(stype, va), _codes(stype, vb), stype)
    lg = inputs.logical["warp"]
    blocks = _block_products(lg, sf)
    want = sum(va[:, j:j + 1] * vb[j:j + 1, :] * blocks[j] for j in range(sf)) + F.decode("f32", lg.c)
    got = F.decode("f32", _run(case, inputs))
    np.testing.assert_array_equal(got, want)
    # the unscaled product differs (the scales matter), and the oracle agrees with the hand matrix
    assert not np.array_equal(sum(blocks) + F.decode("f32", lg.c), want)
    lg2 = replace(lg, scales=replace(lg.scales, a=_codes(stype, va).astype(np.uint8), b=_codes(stype, vb).astype(np.uint8)))
    np.testing.assert_array_equal(F.decode("f32", warp_d(lg2)), want)


def test_byte_id_swap_fault_is_seen():
    kind, vec, stype, a_type, sf, sel = HAND[0]
    case = _case(kind, vec, stype, a_type)
    va, vb = np.full((16, 1), 2.0), np.full((1, 8), 0.5)
    inputs = _with_scales(case, sel, _codes(stype, va), _codes(stype, vb), stype)
    fault = next(f for f in FAULTS if f.name == "warp-scale-byte-ids-swapped")
    # values, not codes: the inputs carry special values (issue 15) and a NaN's code is the model's choice
    np.testing.assert_array_equal(F.decode("f32", _run(case, inputs)), F.decode("f32", warp_d(replace(
        inputs.logical["warp"], scales=replace(inputs.logical["warp"].scales, a=_codes(stype, va).astype(np.uint8),
                                                b=_codes(stype, vb).astype(np.uint8))))))
    assert not np.array_equal(_run(case, inputs, [fault]), _run(case, inputs))


def test_immediate_selectors_read_like_register_selectors():
    kind, vec, stype, a_type, sf, sel = HAND[2]
    case = _case(kind, vec, stype, a_type)
    va = np.array([[2.0 ** ((m + j) % 3 - 1) for j in range(sf)] for m in range(16)])
    vb = np.array([[2.0 ** ((n + j) % 3 - 1) for n in range(8)] for j in range(sf)])
    inputs = _with_scales(case, sel, _codes(stype, va), _codes(stype, vb), stype)

    def immediates(text):
        assert "{%bida, %tida}" in text and "{%bidb, %tidb}" in text
        return text.replace("{%bida, %tida}", f"{{{sel[0]}, {sel[1]}}}").replace("{%bidb, %tidb}", f"{{{sel[2]}, {sel[3]}}}")
    np.testing.assert_array_equal(_run(case, inputs, edit=immediates), _run(case, inputs))
