// Two-CTA (cta_group::2) GEMM tile from CuTe's SM100 2x1SM UMMA atoms (tcgen05-cts corpus, issue 17).
// Written for this project; uses only the public CuTe API of nvidia-cutlass 4.2.0.0.
//
// A cluster of 2 CTAs x 128 threads computes C[M,N] = A[M,K] B[N,K]^T (K-major A and B).  CuTe's
// 2x1SM atom (ThrID = 2) splits A's M and B's N over the pair: each CTA copies its halves into its
// shared memory (same offsets in both), both allocate TMEM with tcgen05.alloc.cta_group::2 after a
// cluster barrier (the peer is launched; another after the dealloc keeps each CTA alive for its peer), the pair
// synchronises (barrier.cluster), CTA 0 issues the MMAs and umma_arrive_multicast_2x1SM signals both
// CTAs' mbarriers; each CTA reads its M/2 rows of the accumulator with a TMEM load atom.

namespace cts {
using namespace cute;

template <class Cfg>
CUTE_DEVICE void gemm_2sm(void const* pa, void const* pb, void* pc) {
  using TA = typename Cfg::TA; using TB = typename Cfg::TB; using TC = typename Cfg::TC;
  constexpr int M = Cfg::M, N = Cfg::N, K = Cfg::K;
  TiledMMA tiled_mma = make_tiled_mma(typename Cfg::Mma{});
  auto sA_layout = UMMA::tile_to_mma_shape(typename Cfg::AtomA{}, partition_shape_A(tiled_mma, make_shape(Int<M>{}, Int<K>{})));
  auto sB_layout = UMMA::tile_to_mma_shape(typename Cfg::AtomB{}, partition_shape_B(tiled_mma, make_shape(Int<N>{}, Int<K>{})));
  __shared__ alignas(1024) uint8_t smemA[cosize_v<decltype(sA_layout)> * sizeof_bits_v<TA> / 8];
  __shared__ alignas(1024) uint8_t smemB[cosize_v<decltype(sB_layout)> * sizeof_bits_v<TB> / 8];
  __shared__ alignas(8) uint64_t mbar;
  __shared__ uint32_t tmem_base;

  uint32_t rank = cute::block_rank_in_cluster();
  Tensor gA = make_tensor(make_gmem_ptr<TA>(pa), make_layout(make_shape(Int<M>{}, Int<K>{}), make_stride(Int<K>{}, _1{})));
  Tensor gB = make_tensor(make_gmem_ptr<TB>(pb), make_layout(make_shape(Int<N>{}, Int<K>{}), make_stride(Int<K>{}, _1{})));
  Tensor gC = make_tensor(make_gmem_ptr<TC>(pc), make_layout(make_shape(Int<M>{}, Int<N>{}), make_stride(Int<N>{}, _1{})));
  ThrMMA thr_mma = tiled_mma.get_slice(rank);
  Tensor tCgA = thr_mma.partition_A(gA);
  Tensor tCgB = thr_mma.partition_B(gB);
  Tensor tCgC = thr_mma.partition_C(gC);
  Tensor tCsA = make_tensor(make_smem_ptr<TA>(static_cast<void*>(smemA)), sA_layout);
  Tensor tCsB = make_tensor(make_smem_ptr<TB>(static_cast<void*>(smemB)), sB_layout);
  for (int i = threadIdx.x; i < size(tCsA); i += blockDim.x) tCsA(i) = tCgA(i);
  for (int i = threadIdx.x; i < size(tCsB); i += blockDim.x) tCsB(i) = tCgB(i);

  int warp = threadIdx.x / 32;
  cute::cluster_sync();        // the peer CTA is launched before the pair's collective alloc (§9.7.16.7.1)
  if (warp == 0) {
    TMEM::Allocator2Sm().allocate(512, &tmem_base);
    TMEM::Allocator2Sm().release_allocation_lock();
  }
  if (threadIdx.x == 0) cute::initialize_barrier(mbar, 1);
  cutlass::arch::fence_barrier_init();
  cutlass::arch::fence_view_async_shared();
  __syncthreads();             // tmem_base is read below (the pair synchronises before the MMA)
  Tensor tCtAcc = thr_mma.make_fragment_C(tCgC);
  tCtAcc.data() = tmem_base;
  auto issue = [&](auto const& tCrA) {
    if (rank == 0 && warp == 0) {
      Tensor tCrB = thr_mma.make_fragment_B(tCsB);
      tiled_mma.accumulate_ = UMMA::ScaleOut::Zero;
      CUTE_UNROLL
      for (int k = 0; k < size<2>(tCrA); ++k) {
        gemm(tiled_mma, tCrA(_, _, k), tCrB(_, _, k), tCtAcc);
        tiled_mma.accumulate_ = UMMA::ScaleOut::One;
      }
      cutlass::arch::umma_arrive_multicast_2x1SM(&mbar, uint16_t(0b11));
    }
  };
  if constexpr (Cfg::A_TMEM) {
    // TS: each CTA writes its M/2 rows of A to its own Tensor Memory (same columns in both) with a CuTe
    // TMEM store atom before the pair synchronises; the leader's MMA reads A from both CTAs.
    Tensor tCtA = thr_mma.make_fragment_A(partition_shape_A(tiled_mma, make_shape(Int<M>{}, Int<K>{})));
    tCtA.data() = tmem_base + Cfg::A_COL;
    auto r2t = make_tmem_copy(typename Cfg::StoreA{}, tCtA);
    auto thr_st = r2t.get_slice(threadIdx.x);
    Tensor tSgA = thr_st.partition_S(tCgA);
    Tensor tSrA = make_fragment_like(tSgA);
    copy(tSgA, tSrA);
    copy(r2t, tSrA, thr_st.partition_D(tCtA));
    cutlass::arch::fence_view_async_tmem_store();
    cute::cluster_sync();
    cutlass::arch::fence_view_async_tmem_store();
    issue(tCtA);
  } else {
    cute::cluster_sync();
    issue(thr_mma.make_fragment_A(tCsA));
  }
  cute::wait_barrier(mbar, 0);
  store_accumulator<typename Cfg::Load, TC>(tCtAcc, tCgC);
  cute::cluster_sync();
  if (warp == 0) TMEM::Allocator2Sm().free(tmem_base, 512);
  cute::cluster_sync();        // each CTA stays active until its peer has issued its dealloc (§9.7.16.5)
}

}  // namespace cts
using namespace cute;   // the configuration structs below name CuTe atoms unqualified
