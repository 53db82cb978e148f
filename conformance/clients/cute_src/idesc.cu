// Encoding oracle (issue 17): CuTe's tcgen05 instruction descriptors over a parameter grid.
//
// Prints one line per grid point, "idesc key=value ... value=0x........", from
// cute::UMMA::make_instr_desc / make_instr_desc_block_scaled / make_runtime_instr_desc(_block_scaled)
// (cute/arch/mma_sm100_desc.hpp).  The kind word on each line is the tcgen05.mma .kind of the SM100
// MMA atom family that uses these operand types (cute/arch/mma_sm100_umma.hpp); the test checks the
// values bit for bit against reference/instr_descriptor.py (PTX ISA 9.7.16.4.2, Tables 42-44).
#include <cstdio>
#include <utility>
#include <cutlass/numeric_types.h>
#include <cute/arch/mma_sm100_desc.hpp>

using namespace cute;
using UMMA::Major;
using UMMA::ScaleIn;
using UMMA::Saturate;
using UMMA::MaxShift;

template <class T> struct Word;
#define WORD(T, s) template <> struct Word<T> { static constexpr const char* v = s; };
WORD(cutlass::half_t, "f16")
WORD(cutlass::bfloat16_t, "bf16")
WORD(cutlass::tfloat32_t, "tf32")
WORD(float, "f32")
WORD(int32_t, "s32")
WORD(int8_t, "s8")
WORD(uint8_t, "u8")
WORD(cutlass::float_e4m3_t, "e4m3")
WORD(cutlass::float_e5m2_t, "e5m2")
WORD(cutlass::detail::float_e2m3_unpacksmem_t, "e2m3")
WORD(cutlass::detail::float_e3m2_unpacksmem_t, "e3m2")
WORD(cutlass::detail::float_e2m1_unpacksmem_t, "e2m1")
WORD(cutlass::float_e2m1_t, "e2m1")
WORD(cutlass::float_ue8m0_t, "ue8m0")
WORD(cutlass::float_ue4m3_t, "ue4m3")

static const char* major_word(Major m) { return m == Major::K ? "K" : "MN"; }
static const int SHIFTS[4] = {0, 8, 16, 32};

// ---- Table 42 kinds ---------------------------------------------------------------------------
template <class A, class B, class C, int M, int N, Major AM = Major::K, Major BM = Major::K,
          ScaleIn AN = ScaleIn::One, ScaleIn BN = ScaleIn::One, Saturate S = Saturate::False,
          bool SP = false, MaxShift MS = MaxShift::NoShift>
void dense(const char* grid, const char* kind) {
  uint32_t v = uint32_t(UMMA::make_instr_desc<A, B, C, M, N, AM, BM, AN, BN, S, SP, MS>());
  int selectors = SP ? 4 : 1;
  for (int sel = 0; sel < selectors; ++sel) {
    uint32_t value = v;
    if (SP) {  // the runtime form: the sparsity selector (sparse_id2) goes into bits 0-1
      value = uint32_t(UMMA::make_runtime_instr_desc<A, B, C, M, N, AM, BM, AN, BN, S, SP, MS>(uint16_t(sel)) >> 32);
    }
    printf("idesc grid=%s kind=%s a_type=%s b_type=%s d_type=%s m=%d n=%d a_major=%s b_major=%s negate_a=%d "
           "negate_b=%d saturate=%d sparse=%d sparsity_selector=%d max_shift=%d value=0x%08x\n",
           grid, kind, Word<A>::v, Word<B>::v, Word<C>::v, M, N, major_word(AM), major_word(BM), int(AN), int(BN),
           int(S), int(SP), sel, SHIFTS[int(MS)], value);
  }
}

// ---- Tables 43/44 kinds: compile-time descriptor, then the runtime scale-factor ids ------------
template <class A, class B, class SF, int M, int N, Major AM = Major::K, Major BM = Major::K,
          ScaleIn AN = ScaleIn::One, ScaleIn BN = ScaleIn::One, bool SP = false>
void scaled(const char* grid, const char* kind, bool ids = false, bool k96 = false) {
  auto base = UMMA::make_instr_desc_block_scaled<A, B, float, SF, M, N, AM, BM, AN, BN, SP>();
  if (k96) base.k_size_ = 1;  // as SM103::mma_unpack does for the K = 96 atoms (mma_traits_sm100.hpp)
  int n_ids = ids ? 4 : 1;
  for (int sfa = 0; sfa < n_ids; ++sfa) {
    for (int sfb = 0; sfb < n_ids; ++sfb) {
      // TMEM addresses of the scale factors: lane 0, column 0x40; the id is address bits 30-31.
      uint32_t tsfa = (uint32_t(sfa) << 30) | 0x40u, tsfb = (uint32_t(sfb) << 30) | 0x48u;
      uint32_t value = uint32_t(UMMA::make_runtime_instr_desc_block_scaled<SP>(base, tsfa, tsfb) >> 32);
      printf("idesc grid=%s kind=%s a_type=%s b_type=%s scale_type=%s m=%d n=%d a_major=%s b_major=%s negate_a=%d "
             "negate_b=%d sparse=%d a_scale_id=%d b_scale_id=%d k96=%d value=0x%08x\n",
             grid, kind, Word<A>::v, Word<B>::v, Word<SF>::v, M, N, major_word(AM), major_word(BM), int(AN), int(BN),
             int(SP), sfa, sfb, int(k96), value);
    }
  }
}

// ---- grids --------------------------------------------------------------------------------------
// shape: every N = 8..256 step 8 for several M, one type combination per kind.
template <class A, class B, class C, int M, int... I>
void dense_n(const char* kind, std::integer_sequence<int, I...>) { (dense<A, B, C, M, 8 * (I + 1)>("shape", kind), ...); }
template <class A, class B, class SF, int M, int... I>
void scaled_n(const char* kind, std::integer_sequence<int, I...>) { (scaled<A, B, SF, M, 8 * (I + 1)>("shape", kind), ...); }
using N32 = std::make_integer_sequence<int, 32>;

// flags: every major-ness and negate combination of one type combination, plus sparse, saturate, shift.
template <class A, class B, class C, Major AM, Major BM>
void dense_majors(const char* kind) {
  dense<A, B, C, 128, 64, AM, BM, ScaleIn::One, ScaleIn::One>("types", kind);
  dense<A, B, C, 128, 64, AM, BM, ScaleIn::Neg, ScaleIn::One>("types", kind);
  dense<A, B, C, 128, 64, AM, BM, ScaleIn::One, ScaleIn::Neg>("types", kind);
  dense<A, B, C, 128, 64, AM, BM, ScaleIn::Neg, ScaleIn::Neg>("types", kind);
}
template <class A, class B, class C>
void dense_types(const char* kind) {
  dense_majors<A, B, C, Major::K, Major::K>(kind);
  dense_majors<A, B, C, Major::K, Major::MN>(kind);
  dense_majors<A, B, C, Major::MN, Major::K>(kind);
  dense_majors<A, B, C, Major::MN, Major::MN>(kind);
  dense<A, B, C, 128, 64, Major::K, Major::K, ScaleIn::One, ScaleIn::One, Saturate::False, true>("sparse", kind);
  dense<A, B, C, 64, 64, Major::K, Major::K, ScaleIn::One, ScaleIn::One, Saturate::False, false, MaxShift::MaxShift8>("ws", kind);
  dense<A, B, C, 32, 128, Major::K, Major::K, ScaleIn::One, ScaleIn::One, Saturate::False, false, MaxShift::MaxShift16>("ws", kind);
  dense<A, B, C, 128, 256, Major::K, Major::K, ScaleIn::One, ScaleIn::One, Saturate::False, false, MaxShift::MaxShift32>("ws", kind);
}
template <class A, class B, class SF, Major AM, Major BM>
void scaled_majors(const char* kind) {
  scaled<A, B, SF, 128, 64, AM, BM, ScaleIn::One, ScaleIn::One>("types", kind);
  scaled<A, B, SF, 128, 64, AM, BM, ScaleIn::Neg, ScaleIn::One>("types", kind);
  scaled<A, B, SF, 128, 64, AM, BM, ScaleIn::One, ScaleIn::Neg>("types", kind);
  scaled<A, B, SF, 128, 64, AM, BM, ScaleIn::Neg, ScaleIn::Neg>("types", kind);
}
template <class A, class B, class SF>
void scaled_types(const char* kind, bool transpose) {
  scaled_majors<A, B, SF, Major::K, Major::K>(kind);
  if (transpose) {
    scaled_majors<A, B, SF, Major::K, Major::MN>(kind);
    scaled_majors<A, B, SF, Major::MN, Major::K>(kind);
    scaled_majors<A, B, SF, Major::MN, Major::MN>(kind);
  }
  scaled<A, B, SF, 128, 64, Major::K, Major::K, ScaleIn::One, ScaleIn::One, true>("sparse", kind);
  scaled<A, B, SF, 256, 128, Major::K, Major::K, ScaleIn::One, ScaleIn::One, false>("ids", kind, true);
}

using namespace cutlass;
using cutlass::detail::float_e2m1_unpacksmem_t;
using cutlass::detail::float_e2m3_unpacksmem_t;
using cutlass::detail::float_e3m2_unpacksmem_t;

template <class A, class C>
void f8f6f4_row(const char* kind) {
  dense_types<A, float_e4m3_t, C>(kind);
  dense_types<A, float_e5m2_t, C>(kind);
  dense_types<A, float_e2m3_unpacksmem_t, C>(kind);
  dense_types<A, float_e3m2_unpacksmem_t, C>(kind);
  dense_types<A, float_e2m1_unpacksmem_t, C>(kind);
}
template <class A>
void mxf8f6f4_row() {
  scaled_types<A, float_e4m3_t, float_ue8m0_t>("mxf8f6f4", true);
  scaled_types<A, float_e5m2_t, float_ue8m0_t>("mxf8f6f4", true);
  scaled_types<A, float_e2m3_unpacksmem_t, float_ue8m0_t>("mxf8f6f4", true);
  scaled_types<A, float_e3m2_unpacksmem_t, float_ue8m0_t>("mxf8f6f4", true);
  scaled_types<A, float_e2m1_unpacksmem_t, float_ue8m0_t>("mxf8f6f4", true);
}

int main() {
  // shape grid
  {
    dense_n<half_t, half_t, float, 64>("f16", N32{});
    dense_n<half_t, half_t, float, 128>("f16", N32{});
    dense_n<half_t, half_t, float, 256>("f16", N32{});
    dense_n<half_t, half_t, float, 32>("f16", N32{});
    dense_n<tfloat32_t, tfloat32_t, float, 128>("tf32", N32{});
    dense_n<float_e4m3_t, float_e5m2_t, half_t, 128>("f8f6f4", N32{});
    dense_n<int8_t, uint8_t, int32_t, 256>("i8", N32{});
    scaled_n<float_e4m3_t, float_e4m3_t, float_ue8m0_t, 128>("mxf8f6f4", N32{});
    scaled_n<float_e2m1_t, float_e2m1_t, float_ue8m0_t, 256>("mxf4", N32{});
    scaled_n<float_e2m1_t, float_e2m1_t, float_ue4m3_t, 128>("mxf4nvf4", N32{});
  }
  // type x major-ness x negate grid (and sparse, .ws max shift, saturate)
  dense_types<half_t, half_t, half_t>("f16");
  dense_types<half_t, half_t, float>("f16");
  dense_types<bfloat16_t, bfloat16_t, float>("f16");
  dense_types<tfloat32_t, tfloat32_t, float>("tf32");
  f8f6f4_row<float_e4m3_t, float>("f8f6f4");
  f8f6f4_row<float_e5m2_t, float>("f8f6f4");
  f8f6f4_row<float_e2m3_unpacksmem_t, float>("f8f6f4");
  f8f6f4_row<float_e3m2_unpacksmem_t, float>("f8f6f4");
  f8f6f4_row<float_e2m1_unpacksmem_t, float>("f8f6f4");
  f8f6f4_row<float_e4m3_t, half_t>("f8f6f4");
  f8f6f4_row<float_e2m1_unpacksmem_t, half_t>("f8f6f4");
  dense_types<int8_t, int8_t, int32_t>("i8");
  dense_types<int8_t, uint8_t, int32_t>("i8");
  dense_types<uint8_t, int8_t, int32_t>("i8");
  dense_types<uint8_t, uint8_t, int32_t>("i8");
  dense<int8_t, int8_t, int32_t, 128, 64, Major::K, Major::K, ScaleIn::One, ScaleIn::One, Saturate::True>("saturate", "i8");
  dense<uint8_t, int8_t, int32_t, 64, 32, Major::MN, Major::K, ScaleIn::One, ScaleIn::One, Saturate::True, true>("saturate", "i8");
  mxf8f6f4_row<float_e4m3_t>();
  mxf8f6f4_row<float_e5m2_t>();
  mxf8f6f4_row<float_e2m3_unpacksmem_t>();
  mxf8f6f4_row<float_e3m2_unpacksmem_t>();
  mxf8f6f4_row<float_e2m1_unpacksmem_t>();
  scaled_types<float_e2m1_t, float_e2m1_t, float_ue8m0_t>("mxf4", false);
  scaled_types<float_e2m1_t, float_e2m1_t, float_ue8m0_t>("mxf4nvf4", false);
  scaled_types<float_e2m1_t, float_e2m1_t, float_ue4m3_t>("mxf4nvf4", false);
  // K = 96 (SM103_MXF4_ULTRA_SS_VS: cta_group::1 M = 128; SM103_MXF4_ULTRA_2x1SM_SS_VS: M = 128, 256)
  scaled<float_e2m1_t, float_e2m1_t, float_ue8m0_t, 128, 128>("k96", "mxf4nvf4", true, true);
  scaled<float_e2m1_t, float_e2m1_t, float_ue4m3_t, 256, 256>("k96", "mxf4nvf4", true, true);
  scaled<float_e2m1_t, float_e2m1_t, float_ue8m0_t, 256, 16>("k96", "mxf4nvf4", false, true);
  // the trap of the issue: packed float_e2m1_t under a kind::f8f6f4 descriptor is MXF4Format::E2M1 = 1
  dense<float_e2m1_t, float_e4m3_t, float, 128, 64>("trap", "f8f6f4");
  return 0;
}
