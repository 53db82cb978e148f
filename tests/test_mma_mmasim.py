"""Optional cross-check: the hardware model against MMA-Sim itself (PyPI ``mmasim`` >= 2.1, torch).

Skips with a reason when ``mmasim`` (or torch) does not import; torch stays out of the default
install. Compares bit for bit on >= 1000 random output elements per supported variant, codes drawn
over each whole format (subnormals, zeros, Inf and NaN included).

Input conventions of mmasim 2.1.1 (``mmasim/nv_ptx``, ``mmasim/arithmetic``): f16/bf16/f32/fp8
operands as torch tensors of those dtypes (tf32 as float32); fp6 codes in bits 5:0 and fp4 codes in
bits 5:2 of a uint8 for kind::f8f6f4 / mxf8f6f4; kind::mxf4(nvf4) packs two e2m1 per byte along K,
the first element in the high nibble; scales as float8_e8m0fnu (ue8m0) or float8_e4m3fn (ue4m3).
"""

import numpy as np
import pytest

from reference import formats as F
from reference.mma_qualifiers import MmaOp
from reference.mma_semantics import mma

pytestmark = [pytest.mark.reference, pytest.mark.numerics, pytest.mark.slow]

mmasim = pytest.importorskip("mmasim", reason="mmasim (PyPI, needs torch) is not installed: optional cross-check")
torch = pytest.importorskip("torch", reason="torch is not installed: mmasim cross-check skipped")
try:
    from mmasim.nv_ptx import TCGen05MMA, TCGen05MMABlockScale
except ImportError:  # pragma: no cover - depends on the installed mmasim
    pytest.skip("mmasim API differs: expects mmasim.nv_ptx.TCGen05MMA (mmasim >= 2.1)", allow_module_level=True)

M, N = 128, 8          # 1024 elements per variant
F8 = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")
TORCH_DTYPES = {"f32": "float32", "tf32": "float32", "f16": "float16", "bf16": "bfloat16",
                "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "ue8m0": "float8_e8m0fnu", "ue4m3": "float8_e4m3fn"}
INT_VIEW = {1: np.int8, 2: np.int16, 4: np.int32}


def _random_codes(rng, fmt, shape):
    f = F.get_format(fmt)
    width = f.container_bits if fmt in ("tf32", "ue4m3") else f.bits      # incl. ignored bits
    return rng.integers(0, 1 << width, size=shape, dtype=np.uint64).astype(f.code_dtype)


def _tensor(fmt, codes, *, f8f6f4=False):
    if fmt in ("e2m3", "e3m2", "e2m1"):
        shift = 2 if (fmt == "e2m1" and f8f6f4) else 0          # fp4 sits in bits 5:2, fp6 in 5:0
        return torch.from_numpy((codes.astype(np.uint8) << shift).copy())
    arr = codes.view(INT_VIEW[codes.dtype.itemsize]).copy()
    return torch.from_numpy(arr).view(getattr(torch, TORCH_DTYPES[fmt]))


def _pack_fp4_along(codes, axis):
    c = np.moveaxis(codes.astype(np.uint8), axis, -1)
    packed = (c[..., 0::2] << 4) | c[..., 1::2]
    return torch.from_numpy(np.ascontiguousarray(np.moveaxis(packed, -1, axis)))


def _d_bits(t, d_type):
    return t.view(torch.int32 if d_type == "f32" else torch.int16).numpy().view(np.uint32 if d_type == "f32" else np.uint16)


PLAIN = ([("f16", "f16", "f16", "f32"), ("f16", "bf16", "bf16", "f32"), ("f16", "f16", "f16", "f16"),
          ("tf32", "tf32", "tf32", "f32")]
         + [("f8f6f4", a, b, "f32") for a in F8 for b in F8]
         + [("f8f6f4", a, a, "f16") for a in F8])


@pytest.mark.parametrize("kind,a_type,b_type,d_type", PLAIN, ids=["-".join(p) for p in PLAIN])
def test_plain_kinds_bit_exact(kind, a_type, b_type, d_type):
    rng = np.random.default_rng(abs(hash(("mmasim", kind, a_type, b_type, d_type))) % 2**32)
    k = {"f16": 16, "tf32": 8, "f8f6f4": 32}[kind]
    a, b = _random_codes(rng, a_type, (M, k)), _random_codes(rng, b_type, (k, N))
    c = _random_codes(rng, d_type, (M, N))
    sim = TCGen05MMA("Blackwell", f"m{M}n{N}k{k}.kind::{kind}.{d_type}.{a_type}.{b_type}")
    f8 = kind == "f8f6f4"
    got = sim(_tensor(a_type, a, f8f6f4=f8), _tensor(b_type, b, f8f6f4=f8), _tensor(d_type, c))
    ours = mma(MmaOp(kind, a_type, b_type, d_type, M, N), a, b, c, model="hardware").d
    np.testing.assert_array_equal(ours, _d_bits(got, d_type))


SCALED = ([("mxf8f6f4", a, b, "ue8m0", "block32", "1X") for a in F8 for b in F8]
          + [("mxf4", "e2m1", "e2m1", "ue8m0", "block32", "2X"), ("mxf4nvf4", "e2m1", "e2m1", "ue8m0", "block32", "2X"),
             ("mxf4nvf4", "e2m1", "e2m1", "ue8m0", "block16", "4X"), ("mxf4nvf4", "e2m1", "e2m1", "ue4m3", "block16", "4X")])


@pytest.mark.parametrize("kind,a_type,b_type,s_type,block,scale_vec", SCALED, ids=["-".join(s[:5]) for s in SCALED])
def test_block_scaled_kinds_bit_exact(kind, a_type, b_type, s_type, block, scale_vec):
    rng = np.random.default_rng(abs(hash(("mmasim", kind, a_type, b_type, s_type, block))) % 2**32)
    k = 32 if kind == "mxf8f6f4" else 64
    sf = k // int(block.removeprefix("block"))
    a, b = _random_codes(rng, a_type, (M, k)), _random_codes(rng, b_type, (k, N))
    c = _random_codes(rng, "f32", (M, N))
    sa, sb = _random_codes(rng, s_type, (M, sf)), _random_codes(rng, s_type, (sf, N))
    sim = TCGen05MMABlockScale("Blackwell", f"m{M}n{N}k{k}.kind::{kind}.{block}.f32.{a_type}.{b_type}.{s_type}")
    if kind == "mxf8f6f4":
        ta, tb = _tensor(a_type, a, f8f6f4=True), _tensor(b_type, b, f8f6f4=True)
    else:
        ta, tb = _pack_fp4_along(a, 1), _pack_fp4_along(b, 0)
    got = sim(ta, tb, _tensor("f32", c), _tensor(s_type, sa), _tensor(s_type, sb))
    op = MmaOp(kind, a_type, b_type, "f32", M, N, scale_type=s_type, scale_vec=scale_vec)
    ours = mma(op, a, b, c, model="hardware", scale_a=sa, scale_b=sb).d
    np.testing.assert_array_equal(ours, _d_bits(got, "f32"))
