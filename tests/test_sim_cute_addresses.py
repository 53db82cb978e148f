"""Scale-factor TMEM addresses as CUTLASS writes them (§9.7.16.10.7; docs/clients.md finding K2).

CuTe's ``make_runtime_instr_desc_block_scaled`` (cute/arch/mma_sm100_desc.hpp) takes the scale-factor
id from bits 31:30 of the TMEM address, and its MMA atoms pass that same address as ``[scale-A-tmem]``.
The simulator accepts those bits when they equal the descriptor's id, and refuses any other value.
"""

from __future__ import annotations

import numpy as np
import pytest

from ptxsim import SimError
from tests.sim_mma_cases import MmaKernel, f32_bits, idesc_scaled, place, smem_desc
from tests.test_sim_tcgen05_mma_ops import e4m3, ints, sf_cells

RNG = np.random.default_rng(17)
MMA = "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%r32], %rd6, %rd7, %r22, [%r35], [%r36], %p7;"


def _run(sfa_address: int, a_id: int):
    m, n, k = 128, 32, 32
    a, b = ints((m, k)), ints((k, n))
    sa_codes, sb_codes = RNG.integers(126, 129, size=(m, 1)), np.full((n, 1), 127)
    img = np.zeros(0x8000, dtype=np.uint8)
    la, sa = place(img, e4m3(a), 8, 0, "K")
    lb, sb = place(img, e4m3(b.T), 8, 0x4000, "K")
    out = MmaKernel(MMA, readback=((0, 32),)).run(
        smem=[img], tmem=sf_cells(sa_codes, sb_codes, a_id, 0), a_desc=smem_desc(0, la, sa),
        b_desc=smem_desc(0x4000, lb, sb), sfa=sfa_address, sfb=110, enable=False,
        idesc_value=idesc_scaled(m=m, n=n, a_type="e4m3", b_type="e4m3", a_id=a_id))[0]
    return out, f32_bits((a * 2.0 ** (sa_codes - 127)) @ b + 0.0)


def test_byte_offset_bits_equal_to_the_scale_factor_id_are_accepted():
    out, want = _run(100 | (2 << 30), a_id=2)
    assert (out == want).all()


def test_byte_offset_bits_other_than_the_scale_factor_id_are_refused():
    with pytest.raises(SimError, match="bits 31:30 of a scale factor address"):
        _run(100 | (1 << 30), a_id=2)


def test_other_lane_bits_are_refused():
    with pytest.raises(SimError, match="lane of a scale factor address"):
        _run(100 | (1 << 16), a_id=0)
