// Two-CTA (cta_group::2) block-scaled GEMM tile from CuTe's SM100 2x1SM UMMA atoms (tcgen05-cts corpus, issue 17).
// Written for this project; uses only the public CuTe API of nvidia-cutlass 4.2.0.0.
//
// A cluster of 2 CTAs x 128 threads: C[M,N] = (A*SFA)(B*SFB)^T, K-major.  As in gemm_2sm.cuh, CuTe's 2x1SM atom
// splits A's M and B's N over the pair.  Scale factors follow CUTLASS's 2SM block-scaled mainloop: the scale
// factor tiles are those of the atom's MMA_ScaleFactor, a one-CTA MMA of M/2 rows and N rounded up to 128, so
// each CTA holds the scale factors of its own M/2 rows of A and of *all* N rows of B (SFB the same in both
// CTAs), and the leader CTA copies both CTAs' shared-memory images to their Tensor Memory with one
// SM100_UTCCP_4x32dp128bit_2cta (tcgen05.cp.cta_group::2.32x128b.warpx4) per operand.

namespace cts {
using namespace cute;

template <class Cfg>
CUTE_DEVICE void gemm_bs2(void const* pa, void const* pb, void const* psa, void const* psb, void* pc) {
  using TA = typename Cfg::TA; using TB = typename Cfg::TB; using TSF = typename Cfg::TSF;
  constexpr int M = Cfg::M, N = Cfg::N, K = Cfg::K;
  TiledMMA tiled_mma = make_tiled_mma(typename Cfg::Mma{});
  auto sA_layout = UMMA::tile_to_mma_shape(typename Cfg::AtomA{}, partition_shape_A(tiled_mma, make_shape(Int<M>{}, Int<K>{})));
  auto sB_layout = UMMA::tile_to_mma_shape(typename Cfg::AtomB{}, partition_shape_B(tiled_mma, make_shape(Int<N>{}, Int<K>{})));
  __shared__ alignas(1024) uint8_t smemA[cosize_v<decltype(sA_layout)> * sizeof_bits_v<TA> / 8];
  __shared__ alignas(1024) uint8_t smemB[cosize_v<decltype(sB_layout)> * sizeof_bits_v<TB> / 8];
  __shared__ alignas(128) uint8_t smemSFA[32 * 16];
  __shared__ alignas(128) uint8_t smemSFB[32 * 16];
  __shared__ alignas(8) uint64_t mbar;
  __shared__ uint32_t tmem_base;

  uint32_t rank = cute::block_rank_in_cluster();
  Tensor gA = make_tensor(make_gmem_ptr<TA>(pa), make_layout(make_shape(Int<M>{}, Int<K>{}), make_stride(Int<K>{}, _1{})));
  Tensor gB = make_tensor(make_gmem_ptr<TB>(pb), make_layout(make_shape(Int<N>{}, Int<K>{}), make_stride(Int<K>{}, _1{})));
  Tensor gC = make_tensor(make_gmem_ptr<float>(pc), make_layout(make_shape(Int<M>{}, Int<N>{}), make_stride(Int<N>{}, _1{})));
  ThrMMA thr_mma = tiled_mma.get_slice(rank);
  Tensor tCgC = thr_mma.partition_C(gC);
  Tensor tCsA = make_tensor(make_smem_ptr<TA>(static_cast<void*>(smemA)), sA_layout);
  Tensor tCsB = make_tensor(make_smem_ptr<TB>(static_cast<void*>(smemB)), sB_layout);
  copy_to_smem(thr_mma.partition_A(gA), tCsA, M / 2);
  copy_to_smem(thr_mma.partition_B(gB), tCsB, N / 2);
  // scale-factor images: SFA per CTA (its M/2 rows), SFB the same in both CTAs (all N rows)
  auto sf_layout = tile_to_shape(UMMA::Layout_K_INTER_Atom<uint8_t>{}, make_shape(_32{}, _16{}));
  Tensor sSFA = make_tensor(make_smem_ptr(smemSFA), sf_layout);
  Tensor sSFB = make_tensor(make_smem_ptr(smemSFB), sf_layout);
  uint8_t const* gsa = reinterpret_cast<uint8_t const*>(psa) + rank * 32 * 16;
  uint8_t const* gsb = reinterpret_cast<uint8_t const*>(psb);
  for (int i = threadIdx.x; i < 32 * 16; i += blockDim.x) {
    sSFA(i / 16, i % 16) = gsa[i];
    sSFB(i / 16, i % 16) = gsb[i];
  }

  int warp = threadIdx.x / 32;
  cute::cluster_sync();        // the peer CTA is launched before the pair's collective alloc (§9.7.16.7.1)
  if (warp == 0) {
    TMEM::Allocator2Sm().allocate(512, &tmem_base);
    TMEM::Allocator2Sm().release_allocation_lock();
  }
  if (threadIdx.x == 0) cute::initialize_barrier(mbar, 1);
  cutlass::arch::fence_barrier_init();
  cutlass::arch::fence_view_async_shared();
  cute::cluster_sync();
  Tensor tCtAcc = thr_mma.make_fragment_C(tCgC);
  tCtAcc.data() = tmem_base;
  uint32_t sfa_col = tmem_base + 256, sfb_col = tmem_base + 264;
  if (rank == 0 && warp == 0) {
    Tensor tCrA = thr_mma.make_fragment_A(tCsA);
    Tensor tCrB = thr_mma.make_fragment_B(tCsB);
    if (cute::elect_one_sync()) {
      SM100_UTCCP_4x32dp128bit_2cta::copy(uint64_t(UMMA::make_umma_desc<UMMA::Major::K>(sSFA)), sfa_col);
      SM100_UTCCP_4x32dp128bit_2cta::copy(uint64_t(UMMA::make_umma_desc<UMMA::Major::K>(sSFB)), sfb_col);
    }
    __syncwarp();
    tiled_mma.accumulate_ = UMMA::ScaleOut::Zero;
    CUTE_UNROLL
    for (int k = 0; k < size<2>(tCrA); ++k) {
      uint32_t byte = uint32_t((k * Cfg::SPB) % 4) << 30;      // scale-factor id in TMEM address bits 30-31 (K2)
      Tensor tSFA = make_tensor(make_tmem_ptr<TSF>(sfa_col | byte), Layout<_1>{});
      Tensor tSFB = make_tensor(make_tmem_ptr<TSF>(sfb_col | byte), Layout<_1>{});
      gemm(tiled_mma.with(tiled_mma.accumulate_, tSFA, tSFB), tCrA(_, _, k), tCrB(_, _, k), tCtAcc);
      tiled_mma.accumulate_ = UMMA::ScaleOut::One;
    }
    cutlass::arch::umma_arrive_multicast_2x1SM(&mbar, uint16_t(0b11));
  }
  cute::wait_barrier(mbar, 0);
  store_accumulator<typename Cfg::Load, float>(tCtAcc, tCgC);
  cute::cluster_sync();
  if (warp == 0) TMEM::Allocator2Sm().free(tmem_base, 512);
  cute::cluster_sync();        // each CTA stays active until its peer has issued its dealloc (§9.7.16.5)
}

}  // namespace cts
using namespace cute;   // the configuration structs below name CuTe atoms unqualified
