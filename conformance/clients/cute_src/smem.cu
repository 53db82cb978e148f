// Encoding oracle (issue 17): CuTe's canonical UMMA shared-memory layouts and descriptors.
//
// For every UMMA layout atom (cute/atom/mma_traits_sm100.hpp: UMMA::Layout_{K,MN}_{INTER,SW32,SW64,
// SW128}_Atom, Layout_MN_SW128_32B_Atom) and element size, tiles the atom to a shape with
// tile_to_shape (MN mode fastest, as CUTLASS's collectives do) over a 1024-byte aligned buffer and
// prints
//   layout ... bits=b,b,...   the bit offset of element (mn, k) from the buffer, mn-major order
//                             (rows = mn, then k), through CuTe's swizzled smem pointer;
//   sdesc  ... value=0x...    UMMA::make_umma_desc<Major> of each MMA-K block of an MMA-sized tile,
//                             advanced as CuTe's DescriptorIterator does (start address += offset).
// On the host the start address of the buffer reads as 0 (CuTe prints an ERROR line for it), so the
// start field holds the block's offset.  Sub-byte operands: packed e2m1 (kind::mxf4*) is
// cutlass::float_e2m1_t, whose element positions are found by writing one element at a time;
// the unpacked 4/6-bit types of kind::f8f6f4 are laid out with uint8_t, as CUTLASS allocates them
// (SmemAllocType, cutlass/gemm/collective/sm100_mma_warpspecialized.hpp).
#include <cstdio>
#include <cstring>
#include <cutlass/numeric_types.h>
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm100.hpp>

using namespace cute;
alignas(1024) static unsigned char buf[1 << 18];

template <class T>
long bit_of(T* base, T* p) { return long(reinterpret_cast<char*>(p) - reinterpret_cast<char*>(base)) * 8; }

// bit offsets of every element of a byte-or-wider tensor
template <class T, class Layout>
void print_bits(Layout const& sl, int MN, int K) {
  T* base = reinterpret_cast<T*>(buf);
  Tensor t = make_tensor(make_smem_ptr(base), sl);
  printf(" bits=");
  for (int i = 0; i < MN; ++i)
    for (int j = 0; j < K; ++j)
      printf(i + j ? ",%ld" : "%ld", bit_of(base, raw_pointer_cast(&t(i, j))));
  printf("\n");
}

// packed 4-bit: write each element alone into a zeroed buffer and find the nibble it landed in
template <class Layout>
void print_bits_e2m1(Layout const& sl, int MN, int K) {
  using T = cutlass::float_e2m1_t;
  int bytes = int(cosize(sl)) / 2 + 16;
  memset(buf, 0, bytes);
  Tensor t = make_tensor(make_smem_ptr(recast_ptr<T>(buf)), sl);   // a sub-byte iterator
  printf(" bits=");
  for (int i = 0; i < MN; ++i) {
    for (int j = 0; j < K; ++j) {
      t(i, j) = T(1.0f);
      long bit = -1;
      for (int b = 0; b < bytes; ++b) {
        if (buf[b]) { bit = 8L * b + ((buf[b] & 0x0F) ? 0 : 4); buf[b] = 0; break; }
      }
      printf(i + j ? ",%ld" : "%ld", bit);
    }
  }
  printf("\n");
}

template <class T, class Atom, int MN, int K, bool Packed4 = false>
void layout(const char* atom, const char* major, const char* swz, const char* dtype, const char* kind) {
  auto sl = tile_to_shape(Atom{}, make_shape(Int<MN>{}, Int<K>{}));
  printf("layout atom=%s major=%s swizzle=%s dtype=%s kind=%s mn=%d k=%d", atom, major, swz, dtype, kind, MN, K);
  if constexpr (Packed4) print_bits_e2m1(sl, MN, K); else print_bits<T>(sl, MN, K);
}

template <UMMA::Major Mj, class T, class Atom, int MN, int K, int MMAK>
void sdesc(const char* atom, const char* swz, const char* dtype, const char* kind) {
  auto sl = tile_to_shape(Atom{}, make_shape(Int<MN>{}, Int<K>{}));
  Tensor t = make_tensor(make_smem_ptr(recast_ptr<T>(buf)), sl);
  Tensor blocks = zipped_divide(t, make_shape(Int<MN>{}, Int<MMAK>{}));      // ((MN,MMAK),(1,K/MMAK))
  Tensor d = make_tensor<UMMA::smem_desc<Mj>>(blocks);
  for (int kb = 0; kb < K / MMAK; ++kb) {
    uint64_t v = d(0, make_coord(0, kb));
    printf("sdesc atom=%s major=%s swizzle=%s dtype=%s kind=%s mn=%d k=%d kblock=%d value=0x%016llx\n", atom,
           Mj == UMMA::Major::K ? "K" : "MN", swz, dtype, kind, MN, MMAK, kb, (unsigned long long)v);
  }
}

using cutlass::half_t;
using cutlass::tfloat32_t;
using cutlass::float_e4m3_t;
using cutlass::float_e2m1_t;
using UMMA::Major;

// One element type: every atom its size allows (Table 52), a few tiles each, and the descriptors.
// KW: K extent of one K-major swizzle row (elements); AMN: MN extent of one MN-major atom.
#define K_ATOMS(T, DT, KIND, BITS)                                                                                    \
  layout<T, UMMA::Layout_K_INTER_Atom<T>, 8, 256 / BITS>("Layout_K_INTER_Atom", "K", "none", DT, KIND);               \
  layout<T, UMMA::Layout_K_INTER_Atom<T>, 24, 512 / BITS>("Layout_K_INTER_Atom", "K", "none", DT, KIND);              \
  layout<T, UMMA::Layout_K_SW32_Atom<T>, 16, 256 / BITS>("Layout_K_SW32_Atom", "K", "32B", DT, KIND);                 \
  layout<T, UMMA::Layout_K_SW64_Atom<T>, 16, 512 / BITS>("Layout_K_SW64_Atom", "K", "64B", DT, KIND);                 \
  layout<T, UMMA::Layout_K_SW128_Atom<T>, 8, 1024 / BITS>("Layout_K_SW128_Atom", "K", "128B", DT, KIND);              \
  layout<T, UMMA::Layout_K_SW128_Atom<T>, 24, 1024 / BITS>("Layout_K_SW128_Atom", "K", "128B", DT, KIND);             \
  sdesc<Major::K, T, UMMA::Layout_K_INTER_Atom<T>, 128, 1024 / BITS, 256 / BITS>("Layout_K_INTER_Atom", "none", DT, KIND); \
  sdesc<Major::K, T, UMMA::Layout_K_SW32_Atom<T>, 64, 512 / BITS, 256 / BITS>("Layout_K_SW32_Atom", "32B", DT, KIND);  \
  sdesc<Major::K, T, UMMA::Layout_K_SW64_Atom<T>, 128, 512 / BITS, 256 / BITS>("Layout_K_SW64_Atom", "64B", DT, KIND); \
  sdesc<Major::K, T, UMMA::Layout_K_SW128_Atom<T>, 128, 1024 / BITS, 256 / BITS>("Layout_K_SW128_Atom", "128B", DT, KIND); \
  sdesc<Major::K, T, UMMA::Layout_K_SW128_Atom<T>, 256, 1024 / BITS, 256 / BITS>("Layout_K_SW128_Atom", "128B", DT, KIND);

#define MN_ATOMS(T, DT, KIND, BITS)                                                                                   \
  layout<T, UMMA::Layout_MN_INTER_Atom<T>, 256 / BITS, 16>("Layout_MN_INTER_Atom", "MN", "none", DT, KIND);           \
  layout<T, UMMA::Layout_MN_SW32_Atom<T>, 512 / BITS, 16>("Layout_MN_SW32_Atom", "MN", "32B", DT, KIND);              \
  layout<T, UMMA::Layout_MN_SW64_Atom<T>, 1024 / BITS, 16>("Layout_MN_SW64_Atom", "MN", "64B", DT, KIND);             \
  layout<T, UMMA::Layout_MN_SW128_Atom<T>, 1024 / BITS, 8>("Layout_MN_SW128_Atom", "MN", "128B", DT, KIND);           \
  layout<T, UMMA::Layout_MN_SW128_Atom<T>, 2048 / BITS, 24>("Layout_MN_SW128_Atom", "MN", "128B", DT, KIND);          \
  sdesc<Major::MN, T, UMMA::Layout_MN_INTER_Atom<T>, 128, 4096 / BITS, 256 / BITS>("Layout_MN_INTER_Atom", "none", DT, KIND); \
  sdesc<Major::MN, T, UMMA::Layout_MN_SW32_Atom<T>, 64, 1024 / BITS, 256 / BITS>("Layout_MN_SW32_Atom", "32B", DT, KIND); \
  sdesc<Major::MN, T, UMMA::Layout_MN_SW64_Atom<T>, 128, 1024 / BITS, 256 / BITS>("Layout_MN_SW64_Atom", "64B", DT, KIND); \
  sdesc<Major::MN, T, UMMA::Layout_MN_SW128_Atom<T>, 128, 1024 / BITS, 256 / BITS>("Layout_MN_SW128_Atom", "128B", DT, KIND); \
  sdesc<Major::MN, T, UMMA::Layout_MN_SW128_Atom<T>, 1024 / BITS * 2, 1024 / BITS, 256 / BITS>("Layout_MN_SW128_Atom", "128B", DT, KIND);

int main() {
  K_ATOMS(half_t, "f16", "-", 16)
  MN_ATOMS(half_t, "f16", "-", 16)
  K_ATOMS(float_e4m3_t, "e4m3", "-", 8)
  MN_ATOMS(float_e4m3_t, "e4m3", "-", 8)
  K_ATOMS(tfloat32_t, "tf32", "-", 32)
  // unpacked 4/6-bit of kind::f8f6f4: CUTLASS lays them out as uint8_t (16 per 16-byte unit)
  K_ATOMS(uint8_t, "e2m1", "f8f6f4", 8)
  MN_ATOMS(uint8_t, "e3m2", "f8f6f4", 8)
  // 32-bit MN-major: only 128B with 32B atomicity (Table 52; CUTLASS sm100_smem_selector)
  layout<tfloat32_t, UMMA::Layout_MN_SW128_32B_Atom<tfloat32_t>, 32, 8>("Layout_MN_SW128_32B_Atom", "MN", "128B_base32B", "tf32", "-");
  layout<tfloat32_t, UMMA::Layout_MN_SW128_32B_Atom<tfloat32_t>, 64, 12>("Layout_MN_SW128_32B_Atom", "MN", "128B_base32B", "tf32", "-");
  sdesc<Major::MN, tfloat32_t, UMMA::Layout_MN_SW128_32B_Atom<tfloat32_t>, 128, 32, 8>("Layout_MN_SW128_32B_Atom", "128B_base32B", "tf32", "-");
  sdesc<Major::MN, tfloat32_t, UMMA::Layout_MN_SW128_32B_Atom<tfloat32_t>, 32, 16, 8>("Layout_MN_SW128_32B_Atom", "128B_base32B", "tf32", "-");
  // packed e2m1 (kind::mxf4, mxf4nvf4): K-major only (Table 49: no transpose)
  layout<float_e2m1_t, UMMA::Layout_K_INTER_Atom<float_e2m1_t>, 8, 64, true>("Layout_K_INTER_Atom", "K", "none", "e2m1", "mxf4");
  layout<float_e2m1_t, UMMA::Layout_K_SW32_Atom<float_e2m1_t>, 8, 64, true>("Layout_K_SW32_Atom", "K", "32B", "e2m1", "mxf4");
  layout<float_e2m1_t, UMMA::Layout_K_SW64_Atom<float_e2m1_t>, 16, 128, true>("Layout_K_SW64_Atom", "K", "64B", "e2m1", "mxf4");
  layout<float_e2m1_t, UMMA::Layout_K_SW128_Atom<float_e2m1_t>, 8, 256, true>("Layout_K_SW128_Atom", "K", "128B", "e2m1", "mxf4");
  layout<float_e2m1_t, UMMA::Layout_K_SW128_Atom<float_e2m1_t>, 16, 256, true>("Layout_K_SW128_Atom", "K", "128B", "e2m1", "mxf4nvf4");
  sdesc<Major::K, float_e2m1_t, UMMA::Layout_K_INTER_Atom<float_e2m1_t>, 128, 256, 64>("Layout_K_INTER_Atom", "none", "e2m1", "mxf4");
  sdesc<Major::K, float_e2m1_t, UMMA::Layout_K_SW32_Atom<float_e2m1_t>, 128, 128, 64>("Layout_K_SW32_Atom", "32B", "e2m1", "mxf4");
  sdesc<Major::K, float_e2m1_t, UMMA::Layout_K_SW64_Atom<float_e2m1_t>, 128, 128, 64>("Layout_K_SW64_Atom", "64B", "e2m1", "mxf4");
  sdesc<Major::K, float_e2m1_t, UMMA::Layout_K_SW128_Atom<float_e2m1_t>, 128, 256, 64>("Layout_K_SW128_Atom", "128B", "e2m1", "mxf4");
  sdesc<Major::K, float_e2m1_t, UMMA::Layout_K_SW128_Atom<float_e2m1_t>, 256, 256, 64>("Layout_K_SW128_Atom", "128B", "e2m1", "mxf4nvf4");
  return 0;
}
