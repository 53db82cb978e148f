// Encoding oracle (issue 17): CuTe's SM100 Tensor Memory copy atoms, evaluated.
//
// tmem: for every SM100_TMEM_LOAD_* / SM100_TMEM_STORE_* atom (cute/atom/copy_traits_sm100.hpp),
//   the register side (DstLayout of a load, SrcLayout of a store: (thread, value bit) -> bit) composed
//   with ValID (bit -> TMEM address, lane at TMEM::DP_b = 1 << 21, column bits below): one number
//   lane * 65536 + column_bit per (thread, 16- or 32-bit register piece), threads outer.
// utccp: for every SM100_UTCCP_* atom (tcgen05.cp), ValID at (row, bit 0 / last bit, copy) -> the
//   TMEM lane and column that source row `row` reaches in its copy `copy`.
// The test compares both with reference/tmem_fragments.py and reference/tmem_cp.py.
#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/copy_traits_sm100.hpp>

using namespace cute;
static constexpr int DP = 1 << 21;

template <class Op, bool Load>
void tmem_atom(const char* name) {
  using Tr = Copy_Traits<Op>;
  using Reg = conditional_t<Load, typename Tr::DstLayout, typename Tr::SrcLayout>;
  using Val = typename Tr::ValID;
  constexpr int threads = size<0>(Reg{});
  constexpr int bits = size<1>(Reg{});
  // a piece is 16 bits when ValID skips the upper half of each 32-bit column (the _16b atoms)
  int piece = 32;
  for (int b = 1; b < 32 && b < int(size(Val{})); ++b) {
    if (int(Val{}(b)) % DP == 32) { piece = 16; break; }
  }
  printf("tmem atom=%s op=%s threads=%d bits=%d piece=%d cells=", name, Load ? "ld" : "st", threads, bits, piece);
  bool first = true;
  for (int t = 0; t < threads; ++t) {
    for (int v = 0; v < bits; v += piece) {
      long addr = long(Val{}(Reg{}(t, v)));
      printf(first ? "%ld" : ",%ld", (addr / DP) * 65536 + addr % DP);
      first = false;
    }
  }
  printf("\n");
}

// ValID modes are (core_matrix_strided = row, core_matrix_leading = bit, [repeat,] broadcast)
// (comment of get_utccp_smem_desc_tensor, cute/atom/mma_traits_sm100.hpp): source row =
// row + rows0 * repeat; copy = the broadcast index.
template <class Op>
void utccp_atom(const char* name) {
  using Tr = Copy_Traits<Op>;
  using Val = typename Tr::ValID;
  constexpr int R = rank(Val{});
  constexpr int rows0 = size<0>(Val{});
  constexpr int rbits = size<1>(Val{});
  int repeat = 1, copies = 1;
  if constexpr (R == 4) { repeat = size<2>(Val{}); copies = size<3>(Val{}); }
  if constexpr (R == 3) { copies = size<2>(Val{}); }
  printf("utccp atom=%s ctas=%d rows=%d row_bits=%d copies=%d map=", name, int(size(typename Tr::ThrID{})),
         rows0 * repeat, rbits, copies);
  bool first = true;
  for (int c = 0; c < copies; ++c) {
    for (int p = 0; p < repeat; ++p) {
      for (int r = 0; r < rows0; ++r) {
        long a0, a1;
        if constexpr (R == 2) { a0 = Val{}(r, 0); a1 = Val{}(r, rbits - 1); }
        else if constexpr (R == 3) { a0 = Val{}(r, 0, c); a1 = Val{}(r, rbits - 1, c); }
        else { a0 = Val{}(r, 0, p, c); a1 = Val{}(r, rbits - 1, p, c); }
        printf("%s%d:%d:%ld:%ld:%ld", first ? "" : ";", r + rows0 * p, c, a0 / DP, (a0 % DP) / 32, (a1 % DP) / 32);
        first = false;
      }
    }
  }
  printf("\n");
}

#define X(OP, NAME) tmem_atom<NAME, OP == 1>(#NAME);
#define LOAD 1
#define STORE 0
#define ALL_TMEM_ATOMS \
  X(LOAD, SM100_TMEM_LOAD_32dp32b1x) \
  X(LOAD, SM100_TMEM_LOAD_32dp32b1x_16b) \
  X(LOAD, SM100_TMEM_LOAD_32dp32b2x) \
  X(LOAD, SM100_TMEM_LOAD_32dp32b2x_16b) \
  X(LOAD, SM100_TMEM_LOAD_32dp32b4x) \
  X(LOAD, SM100_TMEM_LOAD_32dp32b4x_16b) \
  X(LOAD, SM100_TMEM_LOAD_32dp32b8x) \
  X(LOAD, SM100_TMEM_LOAD_32dp32b8x_16b) \
  X(LOAD, SM100_TMEM_LOAD_32dp32b16x) \
  X(LOAD, SM100_TMEM_LOAD_32dp32b16x_16b) \
  X(LOAD, SM100_TMEM_LOAD_32dp32b32x) \
  X(LOAD, SM100_TMEM_LOAD_32dp32b32x_16b) \
  X(LOAD, SM100_TMEM_LOAD_32dp32b64x) \
  X(LOAD, SM100_TMEM_LOAD_32dp32b64x_16b) \
  X(LOAD, SM100_TMEM_LOAD_32dp32b128x) \
  X(LOAD, SM100_TMEM_LOAD_32dp32b128x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b1x) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b1x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b2x) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b2x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b4x) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b4x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b8x) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b8x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b16x) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b16x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b32x) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b32x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b64x) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b64x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b128x) \
  X(LOAD, SM100_TMEM_LOAD_16dp64b128x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b1x) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b1x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b2x) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b2x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b4x) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b4x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b8x) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b8x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b16x) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b16x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b32x) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b32x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b64x) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b64x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b128x) \
  X(LOAD, SM100_TMEM_LOAD_16dp32b128x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp128b1x) \
  X(LOAD, SM100_TMEM_LOAD_16dp128b1x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp128b2x) \
  X(LOAD, SM100_TMEM_LOAD_16dp128b2x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp128b4x) \
  X(LOAD, SM100_TMEM_LOAD_16dp128b4x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp128b8x) \
  X(LOAD, SM100_TMEM_LOAD_16dp128b8x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp128b16x) \
  X(LOAD, SM100_TMEM_LOAD_16dp128b16x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp128b32x) \
  X(LOAD, SM100_TMEM_LOAD_16dp128b32x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp128b64x) \
  X(LOAD, SM100_TMEM_LOAD_16dp128b64x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp256b1x) \
  X(LOAD, SM100_TMEM_LOAD_16dp256b1x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp256b2x) \
  X(LOAD, SM100_TMEM_LOAD_16dp256b2x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp256b4x) \
  X(LOAD, SM100_TMEM_LOAD_16dp256b4x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp256b8x) \
  X(LOAD, SM100_TMEM_LOAD_16dp256b8x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp256b16x) \
  X(LOAD, SM100_TMEM_LOAD_16dp256b16x_16b) \
  X(LOAD, SM100_TMEM_LOAD_16dp256b32x) \
  X(LOAD, SM100_TMEM_LOAD_16dp256b32x_16b) \
  X(STORE, SM100_TMEM_STORE_32dp32b1x) \
  X(STORE, SM100_TMEM_STORE_32dp32b1x_16b) \
  X(STORE, SM100_TMEM_STORE_32dp32b2x) \
  X(STORE, SM100_TMEM_STORE_32dp32b2x_16b) \
  X(STORE, SM100_TMEM_STORE_32dp32b4x) \
  X(STORE, SM100_TMEM_STORE_32dp32b4x_16b) \
  X(STORE, SM100_TMEM_STORE_32dp32b8x) \
  X(STORE, SM100_TMEM_STORE_32dp32b8x_16b) \
  X(STORE, SM100_TMEM_STORE_32dp32b16x) \
  X(STORE, SM100_TMEM_STORE_32dp32b16x_16b) \
  X(STORE, SM100_TMEM_STORE_32dp32b32x) \
  X(STORE, SM100_TMEM_STORE_32dp32b32x_16b) \
  X(STORE, SM100_TMEM_STORE_32dp32b64x) \
  X(STORE, SM100_TMEM_STORE_32dp32b64x_16b) \
  X(STORE, SM100_TMEM_STORE_32dp32b128x) \
  X(STORE, SM100_TMEM_STORE_32dp32b128x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp64b1x) \
  X(STORE, SM100_TMEM_STORE_16dp64b1x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp64b2x) \
  X(STORE, SM100_TMEM_STORE_16dp64b2x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp64b4x) \
  X(STORE, SM100_TMEM_STORE_16dp64b4x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp64b8x) \
  X(STORE, SM100_TMEM_STORE_16dp64b8x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp64b16x) \
  X(STORE, SM100_TMEM_STORE_16dp64b16x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp64b32x) \
  X(STORE, SM100_TMEM_STORE_16dp64b32x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp64b64x) \
  X(STORE, SM100_TMEM_STORE_16dp64b64x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp64b128x) \
  X(STORE, SM100_TMEM_STORE_16dp64b128x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp32b1x) \
  X(STORE, SM100_TMEM_STORE_16dp32b1x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp32b2x) \
  X(STORE, SM100_TMEM_STORE_16dp32b2x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp32b4x) \
  X(STORE, SM100_TMEM_STORE_16dp32b4x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp32b8x) \
  X(STORE, SM100_TMEM_STORE_16dp32b8x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp32b16x) \
  X(STORE, SM100_TMEM_STORE_16dp32b16x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp32b32x) \
  X(STORE, SM100_TMEM_STORE_16dp32b32x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp32b64x) \
  X(STORE, SM100_TMEM_STORE_16dp32b64x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp32b128x) \
  X(STORE, SM100_TMEM_STORE_16dp32b128x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp128b1x) \
  X(STORE, SM100_TMEM_STORE_16dp128b1x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp128b2x) \
  X(STORE, SM100_TMEM_STORE_16dp128b2x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp128b4x) \
  X(STORE, SM100_TMEM_STORE_16dp128b4x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp128b8x) \
  X(STORE, SM100_TMEM_STORE_16dp128b8x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp128b16x) \
  X(STORE, SM100_TMEM_STORE_16dp128b16x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp128b32x) \
  X(STORE, SM100_TMEM_STORE_16dp128b32x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp128b64x) \
  X(STORE, SM100_TMEM_STORE_16dp128b64x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp256b1x) \
  X(STORE, SM100_TMEM_STORE_16dp256b1x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp256b2x) \
  X(STORE, SM100_TMEM_STORE_16dp256b2x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp256b4x) \
  X(STORE, SM100_TMEM_STORE_16dp256b4x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp256b8x) \
  X(STORE, SM100_TMEM_STORE_16dp256b8x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp256b16x) \
  X(STORE, SM100_TMEM_STORE_16dp256b16x_16b) \
  X(STORE, SM100_TMEM_STORE_16dp256b32x) \
  X(STORE, SM100_TMEM_STORE_16dp256b32x_16b)

#define UTCCP_ALL \
  U(SM100_UTCCP_128dp256bit_1cta) U(SM100_UTCCP_128dp256bit_2cta) U(SM100_UTCCP_128dp128bit_1cta) \
  U(SM100_UTCCP_128dp128bit_2cta) U(SM100_UTCCP_4dp256bit_1cta) U(SM100_UTCCP_4dp256bit_2cta) \
  U(SM100_UTCCP_4x32dp128bit_1cta) U(SM100_UTCCP_4x32dp128bit_2cta) \
  U(SM100_UTCCP_2x64dp128bitlw0213_1cta) U(SM100_UTCCP_2x64dp128bitlw0213_2cta) \
  U(SM100_UTCCP_2x64dp128bitlw0123_1cta) U(SM100_UTCCP_2x64dp128bitlw0123_2cta)
#define U(NAME) utccp_atom<NAME>(#NAME);

int main() {
  ALL_TMEM_ATOMS
  UTCCP_ALL
  return 0;
}
