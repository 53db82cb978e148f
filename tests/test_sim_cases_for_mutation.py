"""Fault-free simulator cases shared by the self-tests and the stand-in execution tier."""

import pytest

from tests import test_sim_mma_sp as warp
from tests import test_sim_tcgen05_cp as cp
from tests import test_sim_tcgen05_ldst as ldst
from tests import test_sim_tcgen05_mma as mma
from tests import test_sim_tcgen05_mma_ops as ops

pytestmark = pytest.mark.reference

CASES = {
    **{f"ld_{s}_x{n}{'_pack' if p else ''}": (lambda s=s, n=n, h=h, p=p: ldst.test_ld_shapes_against_closed_forms(s, n, h, p))
       for s, n, h, p in ldst.LD_CASES},
    "st_16x128b": lambda: ldst.test_st_shapes_against_closed_forms("16x128b", 2, None, False),
    "st_16x64b_unpack": lambda: ldst.test_st_shapes_against_closed_forms("16x64b", 1, None, True),
    "st_16x32bx2": lambda: ldst.test_st_shapes_against_closed_forms("16x32bx2", 2, 16, False),
    "ld_red_f32": lambda: ldst.test_ld_red("max", "f32", False, True),
    "cp_128x256b": lambda: cp.test_cp_shapes("128x256b", None),
    "cp_64x128b": lambda: cp.test_cp_shapes("64x128b", "warpx2::01_23"),
    "cp_swizzle": cp.test_cp_128b_swizzle,
    "cp_pair": cp.test_cp_cta_pair_reads_each_ctas_own_shared_memory,
    "mma_f16": lambda: mma.test_f16_dense_layout_d(True),
    "mma_f16_no_acc": lambda: mma.test_f16_dense_layout_d(False),
    "mma_transpose_negate": mma.test_f16_transpose_negate,
    "mma_f16_d_scale_input": mma.test_f16_d_in_f16_and_scale_input_d,
    "mma_kinds": mma.test_tf32_i8_f8_kinds,
    "mma_i8_sat": lambda: mma.test_i8_saturate_and_wrap(True),
    "mma_pair": mma.test_cta_group_2_m256,
    "mma_pair_layout_b": mma.test_cta_group_2_m128_layout_b,
    "mma_layout_f": mma.test_layout_f_m64_lane_alignment_16,
    "mma_collector": ops.test_collector_use_without_fill_reads_memory,
    "mma_ws_m32": ops.test_ws_m32_layout_g,
    "mma_mxf4": ops.test_block_scaled_mxf4_2x,
    "mma_f8f6f4_e2m1": lambda: ops.test_f8f6f4_padded_and_swizzled_operands("e2m1", "128B"),
    "mma_f8f6f4_e5m2": lambda: ops.test_f8f6f4_padded_and_swizzled_operands("e5m2", "64B"),
    "warp_sp_s8": warp.test_s8_m16n8k32_satfinite,
    "warp_sp_f16": lambda: warp.test_f16_m16n8k16(3),
    "cp_decompress_4": lambda: cp.test_cp_decompression("b4x16_p64", 4),
    "cp_decompress_6": lambda: cp.test_cp_decompression("b6x16_p32", 6),
    "shift_pair": lambda: cp.test_shift_down(2),
    "mma_dol": mma.test_disable_output_lane,
    "mma_dol_pair": mma.test_disable_output_lane_cta_pair,
    "mma_tmem_a_ashift": ops.test_a_in_tmem_and_ashift,
    "mma_sparse_sel2": lambda: ops.test_sparse_f16(2),
    "mma_ws_zcm_shift": ops.test_ws_m64_zero_column_mask_and_shift,
    "mma_mxf8f6f4_ids": lambda: ops.test_block_scaled_mxf8f6f4(2, 1),
    "mma_numerics_probes": mma.test_numerics_probes_hardware_model,
    **{f"mma_a_layout_{i}": (lambda p=p: ops.test_a_layouts_transposed_base_offset_unaligned_start(*p))
       for i, p in enumerate([("tf32", "tf32", "MN", "128B_base32B", 0x0, None), ("f8f6f4", "e4m3", "MN", "128B", 0x0, None),
                              ("f16", "f16", "K", "128B", 0x180, 0x100), ("f16", "f16", "K", "none", 0x30, None)])},
    "mma_mixed_types_bf16": mma.test_mixed_types_and_bf16,
    "mma_mxf4nvf4_ue4m3": ops.test_block_scaled_mxf4nvf4_ue4m3_4x_sign_ignored,
}
NAMES = sorted(CASES)


def test_cases_table_is_importable():
    assert len(NAMES) == len(CASES) >= 20
