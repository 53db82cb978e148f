// sm_103a K = 96 block-scaled GEMM tile (tcgen05-cts corpus, issue 25): the pieces of CUTLASS 4.2's SM103 "fp4 ultra"
// mainloop (example 89_sm103_fp4_ultra_gemm; cutlass/gemm/collective/sm103_blockscaled_mma_warpspecialized.hpp),
// driven by this project's own kernel.  Written for this project; uses only the public CuTe/CUTLASS API of
// nvidia-cutlass 4.2.0.0.
//
// One CTA, one k-tile of the collective: C[M,N] = (A*SFA)(B*SFB)^T, K = 768 = 8 MMAs of K = 96 issued with the atom
// SM103_MXF4_ULTRA_SS_VS (cta_group::1, M = 128) or SM103_MXF4_ULTRA_2x1SM_SS_VS, exactly as the collective issues them:
//   * A and B: e2m1, K-major, three shared-memory buffers of 128 bytes (256 elements) per row, each laid out with
//     UMMA::Layout_K_SW128_Atom<uint8_t> as the collective's SmemLayoutA/B ((MN,16 bytes),1,8,buffers); the kernel
//     writes byte c of row m where the collective's TMA writes it (buffer c / 128, 16-byte block (c % 128) / 16);
//   * MMA j reads 48 bytes of each row from 16-byte block kb_j of buffer buf_j and continues in buffer nbuf_j: the
//     zip tensor (tCrA(_,_,kb,buf), tCrA(_,_,0,nbuf), SFA) of the collective, which SM103::mma_unpack turns into a
//     descriptor in the absolute leading-dimension mode (bit 52) whose LBO is the next buffer's start address;
//   * scale factors: the collective's shared-memory atoms (Sm103BlockScaledConfig / sm103_{sfa,sfb}_smem_atom_layout),
//     one buffer per 2 MMAs (block16) or 4 MMAs (block32), each copied to Tensor Memory with the collective's UTCCP
//     tiled copy (SM100_UTCCP_4x32dp128bit_1cta/_2cta over the compact TMEM tensors), MMA j reading the collective's
//     per-MMA iteration tensor at index (j % MmasPerSfBuffer) * sf_stride (3 or 6 factors an MMA);
//   * accumulator in TMEM columns 0..N-1, scale factors after it (the kernel layer's tmem_non_accumulator_base);
//     tcgen05.commit; TMEM load atom -> global.
// Logical inputs: A [M][384] and B [N][384] bytes (packed e2m1, low nibble first), SFA [M][768/VS], SFB [N][768/VS]
// bytes; the kernel places every factor at the logical coordinate (row, k) of the collective's smem layout (what the
// collective's TMA does with the gmem SF layout, Sm103BlockScaledConfig::SfAtom).
#include <cutlass/gemm/collective/collective_mma_decl.hpp>
#include <cutlass/gemm/collective/collective_builder_decl.hpp>
#include <cutlass/gemm/collective/builders/sm103_blockscaled_umma_builder.inl>
#include <cutlass/detail/sm100_tmem_helper.hpp>

namespace cts {
using namespace cute;

template <class Cfg>
CUTE_DEVICE void gemm_k96(void const* pa, void const* pb, void const* psa, void const* psb, void* pc) {
  using TSF = typename Cfg::TSF;
  constexpr int M = Cfg::M, N = Cfg::N, VS = Cfg::VS;
  constexpr int BUFS = 3, KT = 768;                  // one k-tile: 3 buffers of 256 e2m1 a row, 8 MMAs of K = 96
  using TiledMma = decltype(make_tiled_mma(typename Cfg::Mma{}));
  TiledMma tiled_mma;
  constexpr int CTAS = size(typename TiledMma::AtomThrID{});
  constexpr int MC = M / CTAS, NC = N / CTAS;       // rows of A and B each CTA holds
  // the collective's SmemLayoutA / SmemLayoutB with PIPE = 3 (K-major, Step<_1,_2,_3>)
  using SmemLayoutA = decltype(UMMA::tile_to_mma_shape(UMMA::Layout_K_SW128_Atom<uint8_t>{},
      make_shape(make_shape(Int<MC>{}, _16{}), _1{}, _8{}, Int<BUFS>{}), Step<_1, _2, _3>{}));
  using SmemLayoutB = decltype(UMMA::tile_to_mma_shape(UMMA::Layout_K_SW128_Atom<uint8_t>{},
      make_shape(make_shape(Int<NC>{}, _16{}), _1{}, _8{}, Int<BUFS>{}), Step<_1, _2, _3>{}));
  // scale factors: the builder's smem atoms, one stage per SF buffer of the k-tile
  using BSConfig = cutlass::detail::Sm103BlockScaledConfig<VS>;
  using MmaShapeA_MK = decltype(partition_shape_A(TiledMma{}, make_shape(Int<M>{}, Int<KT>{})));
  using MmaShapeB_NK = decltype(partition_shape_B(TiledMma{}, make_shape(Int<N>{}, Int<KT>{})));
  using SmemLayoutAtomSFA = decltype(cutlass::gemm::collective::detail::sm103_sfa_smem_atom_layout<BSConfig, MmaShapeA_MK>());
  using SmemLayoutAtomSFB = decltype(cutlass::gemm::collective::detail::sm103_sfb_smem_atom_layout<
      BSConfig, decltype(make_shape(Int<N>{}, Int<KT>{})), VS>());
  constexpr int SF_BUFS = VS == 16 ? 4 : 2;         // SF_BUFFERS_PER_TILE_K
  constexpr int MMAS_PER_SF = 8 / SF_BUFS;           // MmasPerSfBuffer
  constexpr int SF_STRIDE = VS == 16 ? 6 : 3;        // sf_stride: factors a row per MMA
  using SmemLayoutSFA = decltype(make_layout(append(shape(SmemLayoutAtomSFA{}), Int<SF_BUFS>{}),
                                             append(stride(SmemLayoutAtomSFA{}), size(filter_zeros(SmemLayoutAtomSFA{})))));
  using SmemLayoutSFB = decltype(make_layout(append(shape(SmemLayoutAtomSFB{}), Int<SF_BUFS>{}),
                                             append(stride(SmemLayoutAtomSFB{}), size(filter_zeros(SmemLayoutAtomSFB{})))));

  // dynamic shared memory: A, B (1024-aligned for the 128-byte swizzle), SFA, SFB, barrier, TMEM address
  extern __shared__ uint8_t dyn_smem[];
  uint8_t* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(dyn_smem) + 1023) & ~uintptr_t(1023));
  uint8_t* smemA = base;
  uint8_t* smemB = smemA + cosize_v<SmemLayoutA>;
  TSF* smemSFA = reinterpret_cast<TSF*>(smemB + cosize_v<SmemLayoutB>);
  TSF* smemSFB = smemSFA + cosize_v<SmemLayoutSFA>;
  uint64_t* mbar = reinterpret_cast<uint64_t*>(smemSFB + cosize_v<SmemLayoutSFB>);
  uint32_t* tmem_base = reinterpret_cast<uint32_t*>(mbar + 1);

  uint32_t rank = CTAS == 2 ? cute::block_rank_in_cluster() : 0;
  Tensor sA = make_tensor(make_smem_ptr(smemA), SmemLayoutA{});      // ((MC,16),1,8,3) bytes
  Tensor sB = make_tensor(make_smem_ptr(smemB), SmemLayoutB{});
  uint8_t const* gA = reinterpret_cast<uint8_t const*>(pa) + rank * MC * (KT / 2);
  uint8_t const* gB = reinterpret_cast<uint8_t const*>(pb) + rank * NC * (KT / 2);
  for (int i = threadIdx.x; i < MC * (KT / 2); i += blockDim.x) {
    int m = i / (KT / 2), c = i % (KT / 2);
    sA(make_coord(m, c % 16), 0, (c % 128) / 16, c / 128) = gA[i];
  }
  for (int i = threadIdx.x; i < NC * (KT / 2); i += blockDim.x) {
    int n = i / (KT / 2), c = i % (KT / 2);
    sB(make_coord(n, c % 16), 0, (c % 128) / 16, c / 128) = gB[i];
  }
  Tensor sSFA = make_tensor(make_smem_ptr(smemSFA), SmemLayoutSFA{});  // (MN, K of one SF buffer, SF buffer)
  Tensor sSFB = make_tensor(make_smem_ptr(smemSFB), SmemLayoutSFB{});
  constexpr int KB = KT / SF_BUFS, PER_ROW = KT / VS;                 // K of one SF buffer; factors a row
  TSF const* gSFA = reinterpret_cast<TSF const*>(psa) + rank * MC * PER_ROW;   // each CTA: its M/2 rows
  TSF const* gSFB = reinterpret_cast<TSF const*>(psb);                         // all N rows in every CTA
  // logical (row, k) of an SF buffer -> its coordinate in the tiled atom ((atom MN, atom K), MN blocks, K blocks)
  auto sf_at = [](auto& t, int r, int k, int buf) -> decltype(auto) {
    constexpr int AMN = size<0, 0>(decltype(t.layout()){}), AK = size<0, 1>(decltype(t.layout()){});
    return t(make_coord(make_coord(r % AMN, k % AK), r / AMN, k / AK, buf));
  };
  for (int i = threadIdx.x; i < MC * PER_ROW; i += blockDim.x) {
    int m = i / PER_ROW, s = i % PER_ROW;
    sf_at(sSFA, m, (s * VS) % KB, (s * VS) / KB) = gSFA[i];
  }
  constexpr int SFB_ROWS = cutlass::round_up(N, 128);                // N = 192: SFB laid out for 256 rows (the builder)
  for (int i = threadIdx.x; i < SFB_ROWS * PER_ROW; i += blockDim.x) {
    int n = i / PER_ROW, s = i % PER_ROW;
    sf_at(sSFB, n, (s * VS) % KB, (s * VS) / KB) = n < N ? gSFB[i] : TSF(0);
  }

  int warp = threadIdx.x / 32;
  using Allocator = cute::conditional_t<CTAS == 2, TMEM::Allocator2Sm, TMEM::Allocator1Sm>;
  if constexpr (CTAS == 2) cute::cluster_sync();   // the peer is launched before the pair's collective alloc
  if (warp == 0) {
    Allocator().allocate(512, tmem_base);
    Allocator().release_allocation_lock();
  }
  if (threadIdx.x == 0) cute::initialize_barrier(*mbar, 1);
  cutlass::arch::fence_barrier_init();
  cutlass::arch::fence_view_async_shared();
  if constexpr (CTAS == 2) cute::cluster_sync(); else __syncthreads();

  Tensor gC = make_tensor(make_gmem_ptr<float>(pc), make_layout(make_shape(Int<M>{}, Int<N>{}), make_stride(Int<N>{}, _1{})));
  ThrMMA thr_mma = tiled_mma.get_slice(rank);
  Tensor tCgC = thr_mma.partition_C(gC);
  Tensor tCtAcc = thr_mma.make_fragment_C(tCgC);
  tCtAcc.data() = *tmem_base;
  if (rank == 0 && warp == 0) {
    // mma_init of the collective: descriptors, SF TMEM tensors after the accumulator, UTCCP copies
    Tensor tCrA = make_tensor<typename TiledMma::FrgTypeA>(sA);
    Tensor tCrB = make_tensor<typename TiledMma::FrgTypeB>(sB);
    Tensor tCtSFA = make_tensor<typename TiledMma::FrgTypeSFA>(take<0, 3>(shape(SmemLayoutAtomSFA{})));
    tCtSFA.data() = *tmem_base + cutlass::detail::find_tmem_tensor_col_offset(tCtAcc);
    Tensor tCtSFB = make_tensor<typename TiledMma::FrgTypeSFB>(take<0, 3>(shape(SmemLayoutAtomSFB{})));
    tCtSFB.data() = tCtSFA.data().get() + cutlass::detail::find_tmem_tensor_col_offset(tCtSFA);
    auto tCsSFA_compact = make_tensor(sSFA.data(), filter_zeros(sSFA.layout()));
    auto tCtSFA_compact = make_tensor(tCtSFA.data(), filter_zeros(tCtSFA.layout()));
    auto tCsSFB_compact = make_tensor(sSFB.data(), filter_zeros(sSFB.layout()));
    auto tCtSFB_compact = make_tensor(tCtSFB.data(), filter_zeros(tCtSFB.layout()));
    using UtccpOp = cute::conditional_t<CTAS == 2, SM100_UTCCP_4x32dp128bit_2cta, SM100_UTCCP_4x32dp128bit_1cta>;
    auto tCtSFA_compact_copy = make_tensor(tCtSFA_compact.data(), append<3>(tCtSFA_compact(_, _0{}, _0{}).layout()));
    auto tCtSFB_compact_copy = make_tensor(tCtSFB_compact.data(), append<3>(tCtSFB_compact(_, _0{}, _0{}).layout()));
    auto copy_sfa = make_utccp_copy(UtccpOp{}, tCtSFA_compact_copy);
    auto copy_sfb = make_utccp_copy(UtccpOp{}, tCtSFB_compact_copy);
    auto thr_sfa = copy_sfa.get_slice(0);
    auto thr_sfb = copy_sfb.get_slice(0);
    auto tCsSFA_s2t = get_utccp_smem_desc_tensor<UtccpOp>(thr_sfa.partition_S(tCsSFA_compact));
    auto tCtSFA_s2t = thr_sfa.partition_D(tCtSFA_compact);
    auto tCsSFB_s2t = get_utccp_smem_desc_tensor<UtccpOp>(thr_sfb.partition_S(tCsSFB_compact));
    auto tCtSFB_s2t = thr_sfb.partition_D(tCtSFB_compact);
    // the per-MMA iteration tensors ((MN/128,(32,4)),(VS,1)),1,K_SF/VS)
    constexpr int MMA_M = M / CTAS, MMA_N_SF = cutlass::round_up(N, 128);   // CTA_N_SF
    constexpr int MMA_K_SF = KT / 2;
    auto mn_block = make_shape(_32{}, _4{});
    auto k_single = make_shape(Int<VS>{}, Int<1>{});
    auto iter_sfa = make_shape(make_shape(prepend(Int<MMA_M / 128>{}, mn_block), k_single), _1{}, Int<MMA_K_SF / VS>{});
    auto iter_sfb = make_shape(make_shape(prepend(Int<MMA_N_SF / 128>{}, mn_block), k_single), _1{}, Int<MMA_K_SF / VS>{});
    Tensor tCtSFA_mma = make_tensor<typename TiledMma::FrgTypeSFA>(iter_sfa);
    tCtSFA_mma.data() = tCtSFA.data();
    Tensor tCtSFB_mma = make_tensor<typename TiledMma::FrgTypeSFB>(iter_sfb);
    tCtSFB_mma.data() = tCtSFB.data();

    // the collective's MMA j: (16-byte block, buffer, next buffer) of A and B (the "Note the 3." comments)
    constexpr int KBLK[8] = {0, 3, 6, 1, 4, 7, 2, 5};
    constexpr int BUF[8] = {0, 0, 0, 1, 1, 1, 2, 2};
    constexpr int NEXT[8] = {0, 0, 1, 1, 1, 2, 2, 2};
    tiled_mma.accumulate_ = UMMA::ScaleOut::Zero;
    CUTE_UNROLL
    for (int j = 0; j < 8; ++j) {
      if (j % MMAS_PER_SF == 0 && cute::elect_one_sync()) {
        copy(copy_sfa, tCsSFA_s2t(_, _, _, _, j / MMAS_PER_SF), tCtSFA_s2t);
        copy(copy_sfb, tCsSFB_s2t(_, _, _, _, j / MMAS_PER_SF), tCtSFB_s2t);
      }
      __syncwarp();
      int sf = (j % MMAS_PER_SF) * SF_STRIDE;
      cute::gemm(tiled_mma,
                 make_zip_tensor(tCrA(_, _, KBLK[j], BUF[j]), tCrA(_, _, 0, NEXT[j]), tCtSFA_mma(_, _, sf)),
                 make_zip_tensor(tCrB(_, _, KBLK[j], BUF[j]), tCrB(_, _, 0, NEXT[j]), tCtSFB_mma(_, _, sf)),
                 tCtAcc);
      tiled_mma.accumulate_ = UMMA::ScaleOut::One;
    }
    if constexpr (CTAS == 2) cutlass::arch::umma_arrive_multicast_2x1SM(mbar, uint16_t(0b11));
    else cutlass::arch::umma_arrive(mbar);
  }
  cute::wait_barrier(*mbar, 0);
  store_accumulator<typename Cfg::Load, float>(tCtAcc, tCgC);
  if constexpr (CTAS == 2) cute::cluster_sync(); else __syncthreads();
  if (warp == 0) Allocator().free(*tmem_base, 512);
  if constexpr (CTAS == 2) cute::cluster_sync();   // each CTA stays until its peer has issued its dealloc
}

}  // namespace cts
using namespace cute;   // the configuration structs below name CuTe atoms unqualified
