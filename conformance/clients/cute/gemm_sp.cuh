// One-CTA structured-sparse GEMM tile from CuTe's SM100 sparse UMMA atoms (tcgen05-cts corpus, issue 17).
// Written for this project; uses only the public CuTe/CUTLASS API of nvidia-cutlass 4.2.0.0.
//
// C[M,N] = A[M,K] B[N,K]^T with A 2:4 (1:2 for tf32) structured-sparse, K = one metadata atom of
// CUTLASS's Sm1xxGemmSparseConfig (TensorEAtomK: 128 for f16/i8/f8, 64 for tf32):
//   * compressed A (M x K/2) goes to shared memory in the dense layout atom; the MMA fragment is CuTe's
//     sparse view of the same bytes (Layout_K_*_SpAtom over a sparse_ptr, UMMA::sparse_smem_desc);
//   * metadata: global bytes (row m, byte b = chunks 2b and 2b+1 of row m, first chunk in the low nibble)
//     are placed in shared memory at CUTLASS's offline metadata permutation (Sm1xxGemmSparseConfig::
//     TensorEAtom, offsets in sparse_elem units), then one SM100_UTCCP_128dp128bit_1cta copies the 128 x 16 B
//     image to Tensor Memory (row r -> lane r), as CUTLASS's sparse mainloop does;
//   * the MMA takes the metadata as CuTe's tmem_e_frg tensor (UMMA::tmem_e_frg), K block k passed with
//     TiledMMA::with(tCtE(_,_,k)) (CuTe derives the sparsity selector from the address);
//   * tcgen05.commit; TMEM load atom -> global.
#include <cutlass/gemm/collective/builders/sm1xx_sparse_config.inl>

namespace cts {
using namespace cute;

// The MMA K loop of gemm_sp and gemm_sp2 (the issuing thread): K block k passes its metadata slice tCtE(_,_,k);
// a block-scaled configuration also its scale factors k*SPB.. of each row: set g = (k*SPB)/4 (4 columns each),
// byte (k*SPB)%4, which CuTe carries in TMEM address bits 30-31 (finding K2).
template <class Cfg, class TiledMma, class FrgA, class FrgB, class FrgE, class Acc>
CUTE_DEVICE void sp_mma_k_blocks(TiledMma& tiled_mma, FrgA const& tCrA, FrgB const& tCrB, FrgE const& tCtE, Acc& tCtAcc,
                                 uint32_t tmem_base) {
  constexpr int G = Cfg::SF_GROUPS;      // sets of 4 factors a row (column groups), A's then B's
  tiled_mma.accumulate_ = UMMA::ScaleOut::Zero;
  CUTE_UNROLL
  for (int k = 0; k < size<2>(tCrA); ++k) {
    if constexpr (Cfg::SCALED) {
      int g = (k * Cfg::SPB) / 4;
      uint32_t byte = uint32_t((k * Cfg::SPB) % 4) << 30;
      Tensor tSFA = make_tensor(make_tmem_ptr<typename Cfg::TSF>((tmem_base + Cfg::SF_COL + 4 * g) | byte), Layout<_1>{});
      Tensor tSFB = make_tensor(make_tmem_ptr<typename Cfg::TSF>((tmem_base + Cfg::SF_COL + 4 * (G + g)) | byte), Layout<_1>{});
      gemm(tiled_mma.with(tiled_mma.accumulate_, tCtE(_, _, k), tSFA, tSFB), tCrA(_, _, k), tCrB(_, _, k), tCtAcc);
    } else {
      gemm(tiled_mma.with(tCtE(_, _, k)), tCrA(_, _, k), tCrB(_, _, k), tCtAcc);
    }
    tiled_mma.accumulate_ = UMMA::ScaleOut::One;
  }
}

// Block-scaled sparse (Cfg::SCALED, SM100_MMA_MXF8F6F4_SS_SPARSE): scale factors as in gemm_bs.cuh, 32-row
// images copied with SM100_UTCCP_4x32dp128bit_1cta, K block k's ids in TMEM address bits 30-31.
template <class Cfg>
CUTE_DEVICE void gemm_sp(void const* pa, void const* pb, void const* pe, void* pc,
                         void const* psa = nullptr, void const* psb = nullptr) {
  using TA = typename Cfg::TA; using TB = typename Cfg::TB; using TC = typename Cfg::TC;
  constexpr int M = Cfg::M, N = Cfg::N, K = Cfg::K;
  using TiledMma = decltype(make_tiled_mma(typename Cfg::Mma{}));
  TiledMma tiled_mma;
  using AMma = typename TiledMma::ValTypeA;           // sparse_elem<2, TA>
  using EMma = typename TiledMma::ValTypeE;           // sparse_elem<S, uint8_t>
  using SC = cutlass::Sm1xxGemmSparseConfig<AMma, cutlass::layout::RowMajor, EMma>;
  constexpr int ES = EMma::sparsity;                  // logical K elements per metadata byte
  static_assert(K == int(typename SC::TensorEAtomK{}), "one metadata atom per tile");
  static_assert(M == 128, "CuTe's tmem_e_frg implements M = 128 only");

  auto shape_A = partition_shape_A(tiled_mma, make_shape(Int<M>{}, Int<K>{}));
  auto shape_B = partition_shape_B(tiled_mma, make_shape(Int<N>{}, Int<K>{}));
  auto sA_layout = UMMA::tile_to_mma_shape(typename Cfg::SpAtomA{}, shape_A);
  auto sA_dense = tile_to_shape(typename Cfg::AtomA{}, make_shape(Int<M>{}, Int<Cfg::KC>{}));
  auto sB_layout = UMMA::tile_to_mma_shape(typename Cfg::AtomB{}, shape_B);
  __shared__ alignas(1024) uint8_t smemA[M * Cfg::KC * sizeof_bits_v<typename Cfg::TAS> / 8];
  __shared__ alignas(1024) uint8_t smemB[cosize_v<decltype(sB_layout)> * sizeof_bits_v<TB> / 8];
  __shared__ alignas(128) uint8_t smemE[M * K / ES];
  constexpr int G = Cfg::SF_GROUPS;      // sets of 4 factors a row (column groups), A's then B's
  __shared__ alignas(128) uint8_t smemSF[2 * G][Cfg::SCALED ? 32 * 16 : 1];
  __shared__ alignas(8) uint64_t mbar;
  __shared__ uint32_t tmem_base;
  auto sf_layout = tile_to_shape(UMMA::Layout_K_INTER_Atom<uint8_t>{}, make_shape(_32{}, _16{}));
  if constexpr (Cfg::SCALED) {
    for (int i = threadIdx.x; i < G * 32 * 16; i += blockDim.x) {
      int g = i / 512, r = i % 512;
      Tensor sa = make_tensor(make_smem_ptr(smemSF[g]), sf_layout), sb = make_tensor(make_smem_ptr(smemSF[G + g]), sf_layout);
      sa(r / 16, r % 16) = reinterpret_cast<uint8_t const*>(psa)[i];
      sb(r / 16, r % 16) = reinterpret_cast<uint8_t const*>(psb)[i];
    }
  }

  // compressed A [M][KC] (KC = K/2 elements, or K/4 bytes of packed fp4), B [N][K], metadata [M][K/ES] bytes:
  // all row-major in global memory
  Tensor gA = make_tensor(make_gmem_ptr<typename Cfg::TAS>(pa), make_layout(make_shape(Int<M>{}, Int<Cfg::KC>{}), make_stride(Int<Cfg::KC>{}, _1{})));
  Tensor gB = make_tensor(make_gmem_ptr<TB>(pb), make_layout(make_shape(Int<N>{}, Int<K>{}), make_stride(Int<K>{}, _1{})));
  Tensor gC = make_tensor(make_gmem_ptr<TC>(pc), make_layout(make_shape(Int<M>{}, Int<N>{}), make_stride(Int<N>{}, _1{})));
  uint8_t const* gE = reinterpret_cast<uint8_t const*>(pe);
  ThrMMA thr_mma = tiled_mma.get_slice(0);
  Tensor tCgB = thr_mma.partition_B(gB);
  Tensor tCgC = thr_mma.partition_C(gC);
  Tensor sAd = make_tensor(make_smem_ptr<typename Cfg::TAS>(static_cast<void*>(smemA)), sA_dense);
  Tensor tCsB = make_tensor(make_smem_ptr<TB>(static_cast<void*>(smemB)), sB_layout);
  for (int i = threadIdx.x; i < M * Cfg::KC; i += blockDim.x) sAd(i / Cfg::KC, i % Cfg::KC) = gA(i / Cfg::KC, i % Cfg::KC);
  for (int j = threadIdx.x; j < size(tCsB) / 2; j += blockDim.x) {   // pairs: two fp4 of a byte by one thread
    int i0 = (j / N) * 2 * N + j % N;
    tCsB(i0) = tCgB(i0);
    tCsB(i0 + N) = tCgB(i0 + N);
  }
  typename SC::TensorEAtom e_atom;
  for (int i = threadIdx.x; i < M * K / ES; i += blockDim.x) {
    int m = i / (K / ES), b = i % (K / ES);
    smemE[e_atom(m, b * ES) / ES] = gE[i];
  }

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
  Tensor tCtE = make_tensor<typename TiledMma::FrgTypeE>(shape_A);
  uint32_t e_col = tmem_base + Cfg::E_COL;
  tCtE.data() = e_col;
  if (warp == 0) {
    Tensor tCsA = make_tensor(make_smem_ptr<AMma>(static_cast<void*>(smemA)), sA_layout);
    Tensor tCrA = thr_mma.make_fragment_A(tCsA);
    Tensor tCrB = thr_mma.make_fragment_B(tCsB);
    if (cute::elect_one_sync()) {
      auto e_src = make_tensor(make_smem_ptr(smemE),
                               tile_to_shape(UMMA::Layout_K_INTER_Atom<uint8_t>{}, make_shape(Int<128>{}, _16{})));
      SM100_UTCCP_128dp128bit_1cta::copy(uint64_t(UMMA::make_umma_desc<UMMA::Major::K>(e_src)), e_col);
      if constexpr (Cfg::SCALED) {
        for (int j = 0; j < 2 * G; ++j)
          SM100_UTCCP_4x32dp128bit_1cta::copy(
              uint64_t(UMMA::make_umma_desc<UMMA::Major::K>(make_tensor(make_smem_ptr(smemSF[j]), sf_layout))),
              tmem_base + Cfg::SF_COL + 4 * j);
      }
    }
    __syncwarp();
    sp_mma_k_blocks<Cfg>(tiled_mma, tCrA, tCrB, tCtE, tCtAcc, tmem_base);
    cutlass::arch::umma_arrive(&mbar);
  }
  cute::wait_barrier(mbar, 0);
  store_accumulator<typename Cfg::Load, TC>(tCtAcc, tCgC);
  __syncthreads();
  if (warp == 0) TMEM::Allocator1Sm().free(tmem_base, 512);
}

// cta_group::2 (SM100_MMA_*_2x1SM_SS_SPARSE, a cluster of 2 CTAs, M = 256): each CTA holds its 128 rows of
// compressed A and of metadata (same smem offsets, same TMEM columns) and its N/2 rows of B; the leader copies
// both CTAs' metadata with one SM100_UTCCP_128dp128bit_2cta and issues the MMAs (as gemm_2sm.cuh).
// Block-scaled (Cfg::SCALED; CUTLASS example 84a/84b's SM100_MMA_MXF4NVF4_2x1SM_SS_SPARSE /
// SM100_MMA_MXF8F6F4_2x1SM_SS_SPARSE): as gemm_bs2.cuh, each CTA holds the scale factors of its 128 rows of A and
// of all N rows of B (the atom's MMA_ScaleFactor), sets of 4 a row as 32-row images, each copied to both CTAs'
// Tensor Memory by the leader with SM100_UTCCP_4x32dp128bit_2cta (tcgen05.cp.cta_group::2.32x128b.warpx4).
// Cfg::B_IMAGE: B arrives as the bytes of its shared-memory image along K (unpacked 4-bit elements of kind::mxf8f6f4:
// 16 elements packed in the low 8 bytes of each 16-byte unit, what TMA's 16U4_ALIGN16B mode writes).
template <class Cfg>
CUTE_DEVICE void gemm_sp2(void const* pa, void const* pb, void const* pe, void* pc,
                          void const* psa = nullptr, void const* psb = nullptr) {
  using TB = typename Cfg::TB; using TC = typename Cfg::TC; using TAS = typename Cfg::TAS;
  using TBS = cute::conditional_t<Cfg::B_IMAGE, uint8_t, TB>;   // B's shared-memory element (CUTLASS's SmemAllocTypeB)
  constexpr int M = Cfg::M, N = Cfg::N, K = Cfg::K, MC = M / 2, KC = Cfg::KC;
  using TiledMma = decltype(make_tiled_mma(typename Cfg::Mma{}));
  TiledMma tiled_mma;
  using AMma = typename TiledMma::ValTypeA;
  using EMma = typename TiledMma::ValTypeE;
  using SC = cutlass::Sm1xxGemmSparseConfig<AMma, cutlass::layout::RowMajor, EMma>;
  constexpr int ES = EMma::sparsity;
  static_assert(K == int(typename SC::TensorEAtomK{}) && MC == 128, "one metadata atom of 128 rows per CTA");

  auto shape_A = partition_shape_A(tiled_mma, make_shape(Int<M>{}, Int<K>{}));
  auto shape_B = partition_shape_B(tiled_mma, make_shape(Int<N>{}, Int<K>{}));
  auto sA_layout = UMMA::tile_to_mma_shape(typename Cfg::SpAtomA{}, shape_A);
  auto sA_dense = tile_to_shape(typename Cfg::AtomA{}, make_shape(Int<MC>{}, Int<KC>{}));
  auto sB_layout = UMMA::tile_to_mma_shape(typename Cfg::AtomB{}, shape_B);
  __shared__ alignas(1024) uint8_t smemA[MC * KC * sizeof_bits_v<TAS> / 8];
  __shared__ alignas(1024) uint8_t smemB[cosize_v<decltype(sB_layout)> * sizeof_bits_v<TBS> / 8];
  __shared__ alignas(128) uint8_t smemE[MC * K / ES];
  constexpr int G = Cfg::SF_GROUPS;      // sets of 4 factors a row (column groups), A's then B's
  __shared__ alignas(128) uint8_t smemSF[2 * G][Cfg::SCALED ? 32 * 16 : 1];
  __shared__ alignas(8) uint64_t mbar;
  __shared__ uint32_t tmem_base;

  uint32_t rank = cute::block_rank_in_cluster();
  auto sf_layout = tile_to_shape(UMMA::Layout_K_INTER_Atom<uint8_t>{}, make_shape(_32{}, _16{}));
  if constexpr (Cfg::SCALED) {     // SFA: this CTA's 128 rows (its own images); SFB: all N rows, same in both CTAs
    uint8_t const* gsa = reinterpret_cast<uint8_t const*>(psa) + rank * G * 32 * 16;
    for (int i = threadIdx.x; i < G * 32 * 16; i += blockDim.x) {
      int g = i / 512, r = i % 512;
      Tensor sa = make_tensor(make_smem_ptr(smemSF[g]), sf_layout), sb = make_tensor(make_smem_ptr(smemSF[G + g]), sf_layout);
      sa(r / 16, r % 16) = gsa[i];
      sb(r / 16, r % 16) = reinterpret_cast<uint8_t const*>(psb)[i];
    }
  }
  Tensor gA = make_tensor(make_gmem_ptr<TAS>(pa), make_layout(make_shape(Int<M>{}, Int<KC>{}), make_stride(Int<KC>{}, _1{})));
  Tensor gC = make_tensor(make_gmem_ptr<TC>(pc), make_layout(make_shape(Int<M>{}, Int<N>{}), make_stride(Int<N>{}, _1{})));
  uint8_t const* gE = reinterpret_cast<uint8_t const*>(pe) + rank * MC * (K / ES);
  ThrMMA thr_mma = tiled_mma.get_slice(rank);
  Tensor tCgC = thr_mma.partition_C(gC);
  Tensor sAd = make_tensor(make_smem_ptr<TAS>(static_cast<void*>(smemA)), sA_dense);
  Tensor tCsB = make_tensor(make_smem_ptr<TBS>(static_cast<void*>(smemB)), sB_layout);
  for (int i = threadIdx.x; i < MC * KC; i += blockDim.x)
    sAd(i / KC, i % KC) = gA(rank * MC + i / KC, i % KC);
  {                               // B_IMAGE: B's bytes along K as they stand in shared memory, one byte a slot
    Tensor gB = make_tensor(make_gmem_ptr<TBS>(pb), make_layout(make_shape(Int<N>{}, Int<K>{}), make_stride(Int<K>{}, _1{})));
    copy_to_smem(thr_mma.partition_B(gB), tCsB, N / 2);
  }
  typename SC::TensorEAtom e_atom;
  for (int i = threadIdx.x; i < MC * K / ES; i += blockDim.x) {
    int m = i / (K / ES), b = i % (K / ES);
    smemE[e_atom(m, b * ES) / ES] = gE[i];
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
  Tensor tCtE = make_tensor<typename TiledMma::FrgTypeE>(shape_A);
  uint32_t e_col = tmem_base + Cfg::E_COL;
  tCtE.data() = e_col;
  if (rank == 0 && warp == 0) {
    Tensor tCsA = make_tensor(make_smem_ptr<AMma>(static_cast<void*>(smemA)), sA_layout);
    Tensor tCrA = thr_mma.make_fragment_A(tCsA);
    Tensor tCrB = thr_mma.make_fragment_B(tCsB);
    if (cute::elect_one_sync()) {
      auto e_src = make_tensor(make_smem_ptr(smemE),
                               tile_to_shape(UMMA::Layout_K_INTER_Atom<uint8_t>{}, make_shape(Int<128>{}, _16{})));
      SM100_UTCCP_128dp128bit_2cta::copy(uint64_t(UMMA::make_umma_desc<UMMA::Major::K>(e_src)), e_col);
      if constexpr (Cfg::SCALED) {
        for (int j = 0; j < 2 * G; ++j)
          SM100_UTCCP_4x32dp128bit_2cta::copy(
              uint64_t(UMMA::make_umma_desc<UMMA::Major::K>(make_tensor(make_smem_ptr(smemSF[j]), sf_layout))),
              tmem_base + Cfg::SF_COL + 4 * j);
      }
    }
    __syncwarp();
    sp_mma_k_blocks<Cfg>(tiled_mma, tCrA, tCrB, tCtE, tCtAcc, tmem_base);
    cutlass::arch::umma_arrive_multicast_2x1SM(&mbar, uint16_t(0b11));
  }
  cute::wait_barrier(mbar, 0);
  store_accumulator<typename Cfg::Load, TC>(tCtAcc, tCgC);
  cute::cluster_sync();
  if (warp == 0) TMEM::Allocator2Sm().free(tmem_base, 512);
  cute::cluster_sync();        // each CTA stays active until its peer has issued its dealloc (§9.7.16.5)
}

}  // namespace cts
using namespace cute;   // the configuration structs below name CuTe atoms unqualified
