// One-CTA GEMM tile from CuTe's SM100 UMMA atoms (tcgen05-cts real-client corpus, issue 17).
// Written for this project; uses only the public CuTe API of nvidia-cutlass 4.2.0.0.
//
// C[M,N] = A[M,K] * B[N,K]^T, one tile, one CTA of 128 threads:
//   global -> shared by all threads, element by element through CuTe tensors (the smem tensor has
//   the UMMA layout atom's swizzle), or global -> TMEM through a CuTe TMEM store atom (TS: A in TMEM);
//   fence.proxy.async; one warp issues the MMA atom per K block (cute::gemm, elect.sync inside the atom);
//   umma_arrive (tcgen05.commit) on an mbarrier; every thread waits; CuTe TMEM load atom -> registers -> global.
// Cfg supplies: TA TB TC (element types), M N K, MA MB (UMMA::Major), Mma (the atom), AtomA AtomB
// (smem layout atoms), Load (TMEM load atom), A_TMEM (TS form), StoreA (TMEM store atom for TS).

namespace cts {
using namespace cute;

template <UMMA::Major Major, int Rows, int K>
CUTE_HOST_DEVICE constexpr auto gmem_layout() {
  // logical (Rows, K); K-major: row-major [Rows][K]; MN-major: row-major [K][Rows]
  if constexpr (Major == UMMA::Major::K) {
    return make_layout(make_shape(Int<Rows>{}, Int<K>{}), make_stride(Int<K>{}, _1{}));
  } else {
    return make_layout(make_shape(Int<Rows>{}, Int<K>{}), make_stride(_1{}, Int<Rows>{}));
  }
}

template <class Cfg>
CUTE_DEVICE void gemm_1sm(void const* pa, void const* pb, void* pc) {
  using TA = typename Cfg::TA; using TB = typename Cfg::TB; using TC = typename Cfg::TC;
  constexpr int M = Cfg::M, N = Cfg::N, K = Cfg::K;
  TiledMMA tiled_mma = make_tiled_mma(typename Cfg::Mma{});
  auto shape_A = partition_shape_A(tiled_mma, make_shape(Int<M>{}, Int<K>{}));
  auto shape_B = partition_shape_B(tiled_mma, make_shape(Int<N>{}, Int<K>{}));
  auto sB_layout = UMMA::tile_to_mma_shape(typename Cfg::AtomB{}, shape_B);
  __shared__ alignas(1024) uint8_t smemB[cosize_v<decltype(sB_layout)> * sizeof_bits_v<TB> / 8];
  __shared__ alignas(8) uint64_t mbar;
  __shared__ uint32_t tmem_base;

  Tensor gA = make_tensor(make_gmem_ptr(reinterpret_cast<TA const*>(pa)), gmem_layout<Cfg::MA, M, K>());
  Tensor gB = make_tensor(make_gmem_ptr(reinterpret_cast<TB const*>(pb)), gmem_layout<Cfg::MB, N, K>());
  Tensor gC = make_tensor(make_gmem_ptr(reinterpret_cast<TC*>(pc)),
                          make_layout(make_shape(Int<M>{}, Int<N>{}), make_stride(Int<N>{}, _1{})));
  ThrMMA thr_mma = tiled_mma.get_slice(0);
  Tensor tCgA = thr_mma.partition_A(gA);
  Tensor tCgB = thr_mma.partition_B(gB);
  Tensor tCgC = thr_mma.partition_C(gC);
  Tensor tCsB = make_tensor(make_smem_ptr(reinterpret_cast<TB*>(smemB)), sB_layout);
  copy_to_smem(tCgB, tCsB, Cfg::MB == UMMA::Major::K ? N : 1);

  int warp = threadIdx.x / 32;
  if (warp == 0) {
    TMEM::Allocator1Sm().allocate(512, &tmem_base);
    TMEM::Allocator1Sm().release_allocation_lock();
  }
  if (threadIdx.x == 0) cute::initialize_barrier(mbar, 1);
  cutlass::arch::fence_barrier_init();
  __syncthreads();
  Tensor tCtAcc = thr_mma.make_fragment_C(tCgC);
  tCtAcc.data() = tmem_base;

  auto issue = [&](auto const& tCrA) {
    if (warp == 0) {
      tiled_mma.accumulate_ = UMMA::ScaleOut::Zero;
      CUTE_UNROLL
      for (int k = 0; k < size<2>(tCrA); ++k) {
        gemm(tiled_mma, tCrA(_, _, k), thr_mma.make_fragment_B(tCsB)(_, _, k), tCtAcc);
        tiled_mma.accumulate_ = UMMA::ScaleOut::One;
      }
      cutlass::arch::umma_arrive(&mbar);
    }
  };
  if constexpr (Cfg::A_TMEM) {
    // A in Tensor Memory, after the accumulator's columns: written with a CuTe TMEM store atom.
    Tensor tCtA = thr_mma.make_fragment_A(shape_A);
    tCtA.data() = tmem_base + Cfg::A_COL;
    auto r2t = make_tmem_copy(typename Cfg::StoreA{}, tCtA);
    auto thr_st = r2t.get_slice(threadIdx.x);
    Tensor tSgA = thr_st.partition_S(tCgA);
    Tensor tSrA = make_fragment_like(tSgA);
    copy(tSgA, tSrA);
    copy(r2t, tSrA, thr_st.partition_D(tCtA));
    cutlass::arch::fence_view_async_tmem_store();
    cutlass::arch::fence_view_async_shared();
    __syncthreads();
    cutlass::arch::fence_view_async_tmem_store();
    issue(tCtA);
  } else {
    auto sA_layout = UMMA::tile_to_mma_shape(typename Cfg::AtomA{}, shape_A);
    __shared__ alignas(1024) uint8_t smemA[cosize_v<decltype(sA_layout)> * sizeof_bits_v<TA> / 8];
    Tensor tCsA = make_tensor(make_smem_ptr(reinterpret_cast<TA*>(smemA)), sA_layout);
    copy_to_smem(tCgA, tCsA, Cfg::MA == UMMA::Major::K ? M : 1);
    cutlass::arch::fence_view_async_shared();
    __syncthreads();
    issue(thr_mma.make_fragment_A(tCsA));
  }
  cute::wait_barrier(mbar, 0);
  store_accumulator<typename Cfg::Load, TC>(tCtAcc, tCgC);
  __syncthreads();
  if (warp == 0) TMEM::Allocator1Sm().free(tmem_base, 512);
}

}  // namespace cts
using namespace cute;   // the configuration structs below name CuTe atoms unqualified
