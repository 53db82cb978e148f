// Encoding oracle (issue 17): the Tensor Memory layout CUTLASS gives block-scaling scale factors.
//
// For each block-scaled MMA atom and tile, builds the scale-factor TMEM tensors the way CUTLASS's
// collectives do and prints where every scale factor lands:
//   * sm100 (cutlass/gemm/collective/sm100_blockscaled_mma_warpspecialized.hpp): the shape of
//     Sm1xxBlockScaledConfig<VS>::deduce_smem_layoutSF{A,B}(TiledMma, TileShape)
//     (cutlass/detail/sm100_blockscaled_layout.hpp) turned into a TMEM tensor with the atom's
//     FrgTypeSF{A,B} (UMMA::tmem_sf_frg, cute/atom/mma_traits_sm100.hpp); MMA k_block k reads
//     tCtSF(_,_,k).
//   * sm103 K = 96 (sm103_blockscaled_mma_warpspecialized.hpp): the per-MMA iteration tensor
//     (((32,4),MN/128),(VS,1)),1,K_SF/VS) with FrgTypeSF of SM103_MXF4_ULTRA_*_VS; MMA j reads
//     tCtSF_mma(_,_,j*stride), stride = 96/VS scale factors.
// One line per (atom, tile, operand):
//   sf ... [smem=o,...] mn=<rows/columns of the tensor> nsf=<SF per index> kidx=<indices along K> cells=c,...
// cells in the order (K index t, SF s < nsf, copy r < reps, row/column x < mn), each
// lane*65536 + column*4 + byte of the TMEM element offset (8-bit elements: TMEM::DP = 1 << 18 per lane,
// 4 per 32-bit column), relative to the tensor's address; smem (sm100): byte offsets, order (t, s, x).
#include <cstdio>
#include <cutlass/numeric_types.h>
#include <cutlass/float8.h>
#include <cutlass/float_subbyte.h>
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm100.hpp>
#include <cutlass/detail/sm100_blockscaled_layout.hpp>

using namespace cute;

template <class Tensor_>
void print_cells(Tensor_ const& t, int mn, int nsf, int kidx) {
  int reps = int(size<0, 0>(t.layout())) / mn;       // copies of the rows along lanes
  printf(" mn=%d nsf=%d kidx=%d reps=%d cells=", mn, nsf, kidx, reps);
  bool first = true;
  for (int k = 0; k < kidx; ++k)
    for (int s = 0; s < nsf; ++s)
      for (int r = 0; r < reps; ++r)
        for (int x = 0; x < mn; ++x) {
          // mode 0 = (((rows), copies), (VS, NSF)); mode 1 = MMA_MN (1); mode 2 = K indices
          long off = long(t.layout()(make_coord(make_coord(x + r * mn, make_coord(0, s)), 0, k)));
          long lane = off >> 18, rest = off & 0x3FFFF;
          printf(first ? "%ld" : ",%ld", lane * 65536 + (rest >> 2) * 4 + (rest & 3));
          first = false;
        }
  printf("\n");
}

template <class T>
constexpr int mn_of(T const& t) { return int(size<0, 0>(t)); }

// sm100 only: the byte offset in shared memory of the same (K index, SF, row/column) in the SF smem
// layout (deduce_smem_layoutSF*), which UTCCP 4x32dp128bit copies into the TMEM tensor above.
template <class Layout_>
void print_smem(Layout_ const& sl, int mn, int nsf, int kidx) {
  printf(" smem=");
  for (int k = 0; k < kidx; ++k)
    for (int s = 0; s < nsf; ++s)
      for (int x = 0; x < mn; ++x)
        printf(k + s + x ? ",%ld" : "%ld", long(sl(make_coord(make_coord(x, make_coord(0, s)), 0, k))));
}

// sm100: SFA and SFB of a TiledMma over TileShape (M, N, K); A only when the collective can build it.
template <class Op, int VS, int TM, int TN, int TK, bool WithA = true>
void sm100(const char* kind, const char* atom, int ctas, const char* alloc) {
  using TiledMma = decltype(make_tiled_mma(Op{}));
  using Cfg = cutlass::detail::Sm1xxBlockScaledConfig<VS>;
  using Tile = Shape<Int<TM>, Int<TN>, Int<TK>>;
  constexpr int nsf = TiledMma::K / VS;
  if constexpr (WithA) {
    auto sa = Cfg::deduce_smem_layoutSFA(TiledMma{}, Tile{});
    auto ta = make_tensor<typename TiledMma::FrgTypeSFA>(shape(sa));
    printf("sf arch=sm100 kind=%s atom=%s vs=%d ctas=%d alloc=%s m=%d n=%d operand=A", kind, atom, VS, ctas, alloc, TM, TN);
    print_smem(sa, mn_of(shape(sa)), nsf, int(size<2>(ta)));
    print_cells(ta, mn_of(shape(sa)), nsf, int(size<2>(ta)));
  }
  auto sb = Cfg::deduce_smem_layoutSFB(TiledMma{}, Tile{});
  auto tb = make_tensor<typename TiledMma::FrgTypeSFB>(shape(sb));
  printf("sf arch=sm100 kind=%s atom=%s vs=%d ctas=%d alloc=%s m=%d n=%d operand=B", kind, atom, VS, ctas, alloc, TM, TN);
  print_smem(sb, mn_of(shape(sb)), nsf, int(size<2>(tb)));
  print_cells(tb, mn_of(shape(sb)), nsf, int(size<2>(tb)));
}

// sm103 K = 96: the collective's per-MMA iteration tensors (MMA j at K index j * 96 / VS).
template <class Op, int VS, int MMA_M, int N_SF, int CTA_K>
void sm103(const char* atom, int ctas, const char* alloc, int n) {
  using Traits = MMA_Traits<Op>;
  auto mn_block = make_shape(_32{}, _4{});
  auto k_single = make_shape(Int<VS>{}, _1{});
  auto sa = make_shape(make_shape(prepend(Int<MMA_M / 128>{}, mn_block), k_single), _1{}, Int<CTA_K / 2 / VS>{});
  auto sb = make_shape(make_shape(prepend(Int<N_SF / 128>{}, mn_block), k_single), _1{}, Int<CTA_K / 2 / VS>{});
  auto ta = make_tensor<typename Traits::FrgTypeSFA>(sa);
  auto tb = make_tensor<typename Traits::FrgTypeSFB>(sb);
  const char* kind = "mxf4nvf4";     // SM103_MXF4_ULTRA_*_VS issue kind::mxf4nvf4 .block16 / .block32 (CU2)
  printf("sf arch=sm103 kind=%s atom=%s vs=%d ctas=%d alloc=%s m=%d n=%d operand=A", kind, atom, VS, ctas, alloc, MMA_M * ctas, n);
  print_cells(ta, MMA_M, 1, int(size<2>(ta)));
  printf("sf arch=sm103 kind=%s atom=%s vs=%d ctas=%d alloc=%s m=%d n=%d operand=B", kind, atom, VS, ctas, alloc, MMA_M * ctas, n);
  print_cells(tb, N_SF, 1, int(size<2>(tb)));
}

using E4 = cutlass::float_e4m3_t;
using E2 = cutlass::float_e2m1_t;
using U8 = cutlass::float_ue8m0_t;
using U4 = cutlass::float_ue4m3_t;
constexpr auto KM = UMMA::Major::K;

#define MXF8(M, N) SM100_MMA_MXF8F6F4_SS<E4, E4, float, U8, M, N, KM, KM>
#define MXF8_2SM(M, N) SM100_MMA_MXF8F6F4_2x1SM_SS<E4, E4, float, U8, M, N, KM, KM>
#define MXF4(M, N, VS, SF) SM100_MMA_MXF4_SS<E2, E2, float, SF, M, N, VS, KM, KM>
#define MXF4_2SM(M, N, VS, SF) SM100_MMA_MXF4_2x1SM_SS<E2, E2, float, SF, M, N, VS, KM, KM>
#define MXF8_SP(M, N) SM100_MMA_MXF8F6F4_SS_SPARSE<E4, E4, float, U8, M, N, KM, KM>
#define MXF4_SP(M, N, VS, SF) SM100_MMA_MXF4NVF4_SS_SPARSE<E2, E2, float, SF, M, N, VS, KM, KM>
#define ULTRA(M, N, VS, SF) SM103::SM103_MXF4_ULTRA_SS_VS<E2, E2, float, SF, M, N, VS, KM, KM>
#define ULTRA_2SM(M, N, VS, SF) SM103::SM103_MXF4_ULTRA_2x1SM_SS_VS<E2, E2, float, SF, M, N, VS, KM, KM>

int main() {
  // cta_group::1, M = 128, N = 64..256 (CUTLASS rounds SF tiles up to 128 rows/columns: Blk_MN)
#define SM100_1CTA(N)                                                                                    \
  sm100<MXF8(128, N), 32, 128, N, 128>("mxf8f6f4", "SM100_MMA_MXF8F6F4_SS", 1, "4by1");                  \
  sm100<MXF4(128, N, 32, U8), 32, 128, N, 256>("mxf4", "SM100_MMA_MXF4_SS", 1, "4by1");                  \
  sm100<MXF4(128, N, 16, U4), 16, 128, N, 256>("mxf4nvf4", "SM100_MMA_MXF4_SS", 1, "4by1");
  SM100_1CTA(64) SM100_1CTA(128) SM100_1CTA(192) SM100_1CTA(256)
  // sparse (tcgen05.mma.sp), cta_group::1 M = 128: logical K = 64 / 128, VS counts logical elements
  // (VS = 64 issues kind::mxf4 .block32, VS = 32 kind::mxf4nvf4 .block16: cute/arch/mma_sm100_umma.hpp:1451-1490)
  sm100<MXF8_SP(128, 128), 64, 128, 128, 256>("mxf8f6f4", "SM100_MMA_MXF8F6F4_SS_SPARSE", 1, "4by1");
  sm100<MXF4_SP(128, 128, 64, U8), 64, 128, 128, 256>("mxf4", "SM100_MMA_MXF4NVF4_SS_SPARSE", 1, "4by1");
  sm100<MXF4_SP(128, 256, 32, U4), 32, 128, 256, 256>("mxf4nvf4", "SM100_MMA_MXF4NVF4_SS_SPARSE", 1, "4by1");
  // cta_group::2, M = 256 (128 rows of A per CTA; SFB of all N columns in each CTA: MMA_ScaleFactor)
#define SM100_2CTA(N)                                                                                    \
  sm100<MXF8_2SM(256, N), 32, 256, N, 128>("mxf8f6f4", "SM100_MMA_MXF8F6F4_2x1SM_SS", 2, "4by1");        \
  sm100<MXF4_2SM(256, N, 32, U8), 32, 256, N, 256>("mxf4", "SM100_MMA_MXF4_2x1SM_SS", 2, "4by1");        \
  sm100<MXF4_2SM(256, N, 16, U4), 16, 256, N, 256>("mxf4nvf4", "SM100_MMA_MXF4_2x1SM_SS", 2, "4by1");
  SM100_2CTA(128) SM100_2CTA(256)
  // cta_group::2, M = 128: the atom's SFB uses ScaleFactorDuplicated2by2 (no collective builds SFA here;
  // SM100_MMA_MXF8F6F4_2x1SM_SS static_asserts M == 256)
  sm100<MXF4_2SM(128, 128, 32, U8), 32, 128, 128, 256, false>("mxf4", "SM100_MMA_MXF4_2x1SM_SS", 2, "2by2");
  sm100<MXF4_2SM(128, 256, 16, U4), 16, 128, 256, 256, false>("mxf4nvf4", "SM100_MMA_MXF4_2x1SM_SS", 2, "2by2");
  // sm_103 K = 96, CTA N = 128/192/256 (sm103 collective; CTA K = 768: 8 MMAs, SF tensors per buffer = CTA_K / 2)
#define SM103_1CTA(N, NSF)                                                                               \
  sm103<ULTRA(128, N, 32, U8), 32, 128, NSF, 768>("SM103_MXF4_ULTRA_SS_VS", 1, "4by1", N);               \
  sm103<ULTRA(128, N, 16, U4), 16, 128, NSF, 768>("SM103_MXF4_ULTRA_SS_VS", 1, "4by1", N);
  SM103_1CTA(128, 128) SM103_1CTA(192, 256) SM103_1CTA(256, 256)
  sm103<ULTRA_2SM(256, 256, 32, U8), 32, 128, 256, 768>("SM103_MXF4_ULTRA_2x1SM_SS_VS", 2, "4by1", 256);
  sm103<ULTRA_2SM(256, 256, 16, U4), 16, 128, 256, 768>("SM103_MXF4_ULTRA_2x1SM_SS_VS", 2, "4by1", 256);
  return 0;
}
