// One-CTA block-scaled GEMM tile from CuTe's SM100 UMMA atoms (tcgen05-cts corpus, issue 17).
// Written for this project; uses only the public CuTe API of nvidia-cutlass 4.2.0.0.
//
// C[M,N] = (A * SFA) (B * SFB)^T.  A, B: global -> shared through CuTe tensors with the layout atoms'
// swizzle.  Scale factors: global -> shared (rows of 16 bytes, the K-major no-swizzle canonical layout,
// descriptor from UMMA::make_umma_desc) -> Tensor Memory with a CuTe UTCCP atom (tcgen05.cp), one
// TMEM column per K block (bytes 0.. of the column: that block's scale factors).  One thread issues the
// copies and the MMAs (TiledMMA::with(accumulate, SFA, SFB) per K block); tcgen05.commit; TMEM load atom.

namespace cts {
using namespace cute;

// Scale-factor source rows (ROWS x W bytes, W = 16 or 32 for the 256-bit UTCCP shapes) in shared memory,
// K-major INTERLEAVE canonical layout.
template <int ROWS, int W>
CUTE_DEVICE auto sf_smem(uint8_t* base, uint8_t const* g) {
  auto layout = tile_to_shape(UMMA::Layout_K_INTER_Atom<uint8_t>{}, make_shape(Int<ROWS>{}, Int<W>{}));
  Tensor s = make_tensor(make_smem_ptr(base), layout);
  for (int i = threadIdx.x; i < ROWS * W; i += blockDim.x) s(i / W, i % W) = g[i];
  return s;
}

template <class Cfg>
CUTE_DEVICE void gemm_bs(void const* pa, void const* pb, void const* psa, void const* psb, void* pc) {
  using TA = typename Cfg::TA; using TB = typename Cfg::TB; using TSF = typename Cfg::TSF;
  constexpr int M = Cfg::M, N = Cfg::N, K = Cfg::K;
  TiledMMA tiled_mma = make_tiled_mma(typename Cfg::Mma{});
  auto sA_layout = UMMA::tile_to_mma_shape(typename Cfg::AtomA{}, partition_shape_A(tiled_mma, make_shape(Int<M>{}, Int<K>{})));
  auto sB_layout = UMMA::tile_to_mma_shape(typename Cfg::AtomB{}, partition_shape_B(tiled_mma, make_shape(Int<N>{}, Int<K>{})));
  __shared__ alignas(1024) uint8_t smemA[cosize_v<decltype(sA_layout)> * sizeof_bits_v<TA> / 8];
  __shared__ alignas(1024) uint8_t smemB[cosize_v<decltype(sB_layout)> * sizeof_bits_v<TB> / 8];
  __shared__ alignas(128) uint8_t smemSFA[Cfg::SFA_ROWS * Cfg::SFA_W];
  __shared__ alignas(128) uint8_t smemSFB[Cfg::SFB_ROWS * Cfg::SFB_W];
  __shared__ alignas(8) uint64_t mbar;
  __shared__ uint32_t tmem_base;

  Tensor gA = make_tensor(make_gmem_ptr<TA>(pa),
                          make_layout(make_shape(Int<M>{}, Int<K>{}), make_stride(Int<K>{}, _1{})));
  Tensor gB = make_tensor(make_gmem_ptr<TB>(pb),
                          make_layout(make_shape(Int<N>{}, Int<K>{}), make_stride(Int<K>{}, _1{})));
  Tensor gC = make_tensor(make_gmem_ptr(reinterpret_cast<float*>(pc)),
                          make_layout(make_shape(Int<M>{}, Int<N>{}), make_stride(Int<N>{}, _1{})));
  ThrMMA thr_mma = tiled_mma.get_slice(0);
  Tensor tCgC = thr_mma.partition_C(gC);
  Tensor tCsA = make_tensor(make_smem_ptr<TA>(static_cast<void*>(smemA)), sA_layout);
  Tensor tCsB = make_tensor(make_smem_ptr<TB>(static_cast<void*>(smemB)), sB_layout);
  copy_to_smem(thr_mma.partition_A(gA), tCsA, M);
  copy_to_smem(thr_mma.partition_B(gB), tCsB, N);
  Tensor sSFA = sf_smem<Cfg::SFA_ROWS, Cfg::SFA_W>(smemSFA, reinterpret_cast<uint8_t const*>(psa));
  Tensor sSFB = sf_smem<Cfg::SFB_ROWS, Cfg::SFB_W>(smemSFB, reinterpret_cast<uint8_t const*>(psb));

  int warp = threadIdx.x / 32;
  if (warp == 0) {
    TMEM::Allocator1Sm().allocate(512, &tmem_base);
    TMEM::Allocator1Sm().release_allocation_lock();
  }
  if (threadIdx.x == 0) cute::initialize_barrier(mbar, 1);
  cutlass::arch::fence_barrier_init();
  cutlass::arch::fence_view_async_shared();
  __syncthreads();
  Tensor tCtAcc = thr_mma.make_fragment_C(tCgC);
  tCtAcc.data() = tmem_base;
  uint32_t sfa_col = tmem_base + 256, sfb_col = tmem_base + 256 + 8;   // 8 columns each at most
  if (warp == 0) {
    Tensor tCrA = thr_mma.make_fragment_A(tCsA);
    Tensor tCrB = thr_mma.make_fragment_B(tCsB);
    if (cute::elect_one_sync()) {
      Cfg::CpA::copy(uint64_t(UMMA::make_umma_desc<UMMA::Major::K>(sSFA)), sfa_col);
      Cfg::CpB::copy(uint64_t(UMMA::make_umma_desc<UMMA::Major::K>(sSFB)), sfb_col);
    }
    __syncwarp();
    tiled_mma.accumulate_ = UMMA::ScaleOut::Zero;
    CUTE_UNROLL
    for (int k = 0; k < size<2>(tCrA); ++k) {
      // K block k reads scale factors k*SPB.. of each row: byte (k*SPB) % 4 of the columns, which CuTe
      // carries in TMEM address bits 30-31 (make_runtime_instr_desc_block_scaled takes the SF id from them)
      uint32_t byte = uint32_t((k * Cfg::SPB) % 4) << 30;
      Tensor tSFA = make_tensor(make_tmem_ptr<TSF>(sfa_col | byte), Layout<_1>{});
      Tensor tSFB = make_tensor(make_tmem_ptr<TSF>(sfb_col | byte), Layout<_1>{});
      gemm(tiled_mma.with(tiled_mma.accumulate_, tSFA, tSFB), tCrA(_, _, k), tCrB(_, _, k), tCtAcc);
      tiled_mma.accumulate_ = UMMA::ScaleOut::One;
    }
    cutlass::arch::umma_arrive(&mbar);
  }
  cute::wait_barrier(mbar, 0);
  store_accumulator<typename Cfg::Load, float>(tCtAcc, tCgC);
  __syncthreads();
  if (warp == 0) TMEM::Allocator1Sm().free(tmem_base, 512);
}

}  // namespace cts
using namespace cute;   // the configuration structs below name CuTe atoms unqualified
