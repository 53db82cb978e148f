"""Warp-level block-scale operands (PTX ISA §9.7.14.3) against CuTe's own SM120 atoms, compiled.

A host program (built with the nvidia-cutlass / nvcc wheels, ``conformance.clients.cute_build``)
lays scale codes ``row * SF + j`` over a (16, K) tile whose K blocks of VS elements share one factor
(and ``col * SF + j`` over (8, K)), partitions them with the sparse block-scaled atoms' ``SFALayout`` /
``SFBLayout`` and packs each thread's factors into the atom's SF register type
(``recast<RegTypeSF>(filter_zeros(...))``, as the atoms' call does). Every lane CuTe loads a factor into
must hold, in byte j, the factor that ``reference.warp_block_scaling`` says the instruction reads
from that lane and byte with byte-id 0 (CuTe's atoms pass byte-id 0) and the thread-id of the lane's
position in its quad (CuTe broadcasts A over both thread pairs and B over all four threads).
Skips with the tier's reason when the wheels are missing; the compile (~15 s) is cached.
"""

import pytest

from conformance.clients.cute_build import cute_or_skip_reason, run_host
from reference import warp_block_scaling as WB

pytestmark = pytest.mark.reference

ATOMS = {   # name -> (atom, K, VS)
    "k64_1X": ("SM120_SPARSE_16x8x64_TN_VS<float_e4m3_t, float_e4m3_t, float, float_ue8m0_t, 64>", 64, 64),
    "k128_2X": ("SM120_SPARSE_16x8x128_TN_VS<float_e2m1_t, float_e2m1_t, float, float_ue8m0_t, 64>", 128, 64),
    "k128_4X": ("SM120_SPARSE_16x8x128_TN_VS<float_e2m1_t, float_e2m1_t, float, float_ue4m3_t, 32>", 128, 32),
}

PROGRAM = r"""
#include <cstdio>
#include <cstdint>
#include <type_traits>
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm120.hpp>
#include <cute/atom/mma_traits_sm120_sparse.hpp>
using namespace cute;

template <class Op, int K, int VS>
void dump(const char* name) {
  using Traits = MMA_Traits<Op>;
  constexpr int SF = K / VS;
  using RegSF = typename std::remove_extent<typename Op::SFARegisters>::type;
  static uint8_t ca[16 * SF], cb[8 * SF];
  for (int i = 0; i < 16 * SF; ++i) ca[i] = uint8_t(i);
  for (int i = 0; i < 8 * SF; ++i) cb[i] = uint8_t(i);
  auto la = make_layout(make_shape(Int<16>{}, make_shape(Int<VS>{}, Int<SF>{})),
                        make_stride(Int<SF>{}, make_stride(_0{}, _1{})));
  auto lb = make_layout(make_shape(Int<8>{}, make_shape(Int<VS>{}, Int<SF>{})),
                        make_stride(Int<SF>{}, make_stride(_0{}, _1{})));
  Tensor ta = make_tensor(&ca[0], composition(la, typename Traits::SFALayout{}));
  Tensor tb = make_tensor(&cb[0], composition(lb, typename Traits::SFBLayout{}));
  for (int t = 0; t < 32; ++t) {
    Tensor ra = recast<RegSF>(filter_zeros(ta(t, _)));
    Tensor rb = recast<RegSF>(filter_zeros(tb(t, _)));
    printf("%s %d %d %u %u %d %d\n", name, int(sizeof(RegSF)), t, unsigned(ra(0)), unsigned(rb(0)),
           int(size(ra)), int(size(rb)));
  }
}

int main() {
@CALLS@
  return 0;
}
"""


@pytest.fixture(scope="module")
def cute_rows():
    reason = cute_or_skip_reason()
    if reason:
        pytest.skip(reason)
    calls = "\n".join(f'  dump<SM120::BLOCKSCALED::SPARSE::{atom}, {k}, {vs}>("{name}");'
                      for name, (atom, k, vs) in ATOMS.items())
    out = run_host(PROGRAM.replace("@CALLS@", calls))
    rows: dict[str, list[tuple[int, ...]]] = {}
    for line in out.split("\n"):
        if line.strip():
            name, *nums = line.split()
            rows.setdefault(name, []).append(tuple(int(x) for x in nums))
    return rows


@pytest.mark.parametrize("name", sorted(ATOMS))
def test_cute_registers_hold_what_the_reference_reads(cute_rows, name):
    _, k, vs = ATOMS[name]
    sf = k // vs
    lines = cute_rows[name]
    assert len(lines) == 32
    for reg_bytes, lane, ra, rb, na, nb in lines:
        assert (reg_bytes, na, nb) == (sf, 1, 1)              # one register of SF bytes per thread
        tid_a, tid_b = (lane % 4) // 2, lane % 4
        for j in range(sf):
            code_a, code_b = (ra >> (8 * j)) & 0xFF, (rb >> (8 * j)) & 0xFF
            row, chunk = divmod(code_a, sf)
            assert chunk == j
            assert WB.scale_a_source(sf, 0, tid_a, row, j) == (lane, j), (name, lane, j)
            col, chunk = divmod(code_b, sf)
            assert chunk == j
            assert WB.scale_b_source(sf, 0, tid_b, col, j) == (lane, j), (name, lane, j)
