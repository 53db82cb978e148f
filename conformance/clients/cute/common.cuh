// Pieces every CuTe corpus kernel shares (tcgen05-cts real-client corpus, issue 17).  Written for this
// project; uses only the public CuTe API of nvidia-cutlass 4.2.0.0.  cute_build.CuteProgram puts this
// text in front of every family's header, so it is part of every program's cache key.
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm100.hpp>
#include <cute/atom/copy_traits_sm100.hpp>
#include <cute/arch/tmem_allocator_sm100.hpp>
#include <cute/arch/cluster_sm90.hpp>
#include <cutlass/arch/barrier.h>

namespace cts {
using namespace cute;

// Copy a partitioned global tile to its shared-memory image, pairs of elements per thread so that
// two 4-bit elements of one byte are written by the same thread (subbyte references read-modify-write).
template <class G, class S>
CUTE_DEVICE void copy_to_smem(G const& g, S& s, int pair_stride) {
  int n = int(size(s));
  for (int j = threadIdx.x; j < n / 2; j += blockDim.x) {
    int i0 = (j / pair_stride) * 2 * pair_stride + j % pair_stride;
    s(i0) = g(i0);
    s(i0 + pair_stride) = g(i0 + pair_stride);
  }
}

// Epilogue: the accumulator in Tensor Memory -> registers (the CuTe TMEM load atom Load) -> global C.
template <class Load, class TC, class Acc, class GC>
CUTE_DEVICE void store_accumulator(Acc const& tCtAcc, GC& tCgC) {
  auto t2r = make_tmem_copy(Load{}, tCtAcc);
  auto thr = t2r.get_slice(threadIdx.x);
  Tensor tDgC = thr.partition_D(tCgC);
  Tensor tDrC = make_tensor<TC>(shape(tDgC));
  copy(t2r, thr.partition_S(tCtAcc), tDrC);
  cutlass::arch::fence_view_async_tmem_load();
  copy(tDrC, tDgC);
}

}  // namespace cts
