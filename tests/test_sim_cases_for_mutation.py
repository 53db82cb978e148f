"""Fault-free simulator cases shared by the self-tests and the stand-in execution tier."""

import pytest

from tests import test_sim_mma_sp as warp
from tests import test_sim_tcgen05_cp as cp
from tests import test_sim_tcgen05_ldst as ldst
from tests import test_sim_tcgen05_mma as mma
from tests import test_sim_tcgen05_mma_ops as ops

pytestmark = pytest.mark.reference

CASES = {
    "ld_16x64b": lambda: ldst.test_ld_shapes_against_closed_forms("16x64b", 4, None, False),
    "ld_pack": lambda: ldst.test_ld_shapes_against_closed_forms("16x32bx2", 2, 8, True),
    "st_unpack": lambda: ldst.test_st_shapes_against_closed_forms("16x64b", 1, None, True),
    "cp_4bit": lambda: cp.test_cp_shapes("128x256b", None),
    "mma_f16": lambda: mma.test_f16_dense_layout_d(True),
    "mma_i8_sat": lambda: mma.test_i8_saturate_and_wrap(True),
    "mma_pair": mma.test_cta_group_2_m256,
    "mma_tmem_a": ops.test_collector_use_without_fill_reads_memory,
    "warp_sp": warp.test_s8_m16n8k32_satfinite,
}
NAMES = sorted(CASES)


def test_cases_table_is_importable():
    assert len(NAMES) == len(CASES) >= 5
