"""Optional cross-check: the hardware model against MMA-Sim itself (PyPI ``mmasim`` >= 2.1, torch).

Skips with a reason when ``mmasim`` (or torch) does not import; torch stays out of the default
install. Run it with both on ``PYTHONPATH`` (docs/mma.md, "Optional MMA-Sim cross-check").

Every variant MMA-Sim models for tcgen05 (``mmasim/nv_ptx/isa_tcgen05mma.py``: kind::f16 with f32
and f16 D, tf32, all 25 f8f6f4 operand pairs with f32 and f16 D, mxf8f6f4 block32, mxf4 block32,
mxf4nvf4 block32 and block16 with ue8m0 and ue4m3 scales) is compared bit for bit on one
M = 128 x N = 40 MMA: 5120 output elements. Each row of A and each column of B draws its codes
from one of five regimes (:data:`REGIMES`), so that all 25 pairings occur; C mixes
random codes, zeros, values that nearly cancel the dot product and values of its size.

Input conventions of mmasim 2.1.1 (read from ``mmasim/nv_ptx`` and ``mmasim/arithmetic``): f16,
bf16, f32 and fp8 operands as torch tensors of those dtypes (tf32 as float32); fp6 codes in bits
5:0 and fp4 codes in bits 5:2 of a uint8 for kind::f8f6f4 / mxf8f6f4; kind::mxf4(nvf4) packs two
e2m1 per byte along K, the first element in the high nibble; scales as float8_e8m0fnu (ue8m0) or
float8_e4m3fn (ue4m3); ``TCGen05MMA(arch, shape_and_type)(A, B, C)`` and
``TCGen05MMABlockScale(arch, shape_and_type)(A, B, C, scale_A, scale_B)``.
"""

import zlib

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

M, N = 128, 40         # 5120 elements per variant; MMA-Sim's block-scaled shapes need M = 128
F8 = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")
TORCH_DTYPES = {"f32": "float32", "tf32": "float32", "f16": "float16", "bf16": "bfloat16",
                "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "ue8m0": "float8_e8m0fnu", "ue4m3": "float8_e4m3fn"}
INT_VIEW = {1: np.int8, 2: np.int16, 4: np.int32}

# "any": uniform over every code (Inf, NaN, subnormals, zeros included, and tf32's / ue4m3's
# ignored bits); "near": finite, exponent field within +-2 of a random centre (many terms of one
# size: cancellation, alignment at the truncation boundary); "tiny": exponent field 0 or 1
# (subnormals and the smallest normals); "rare": "near" with about 2 % codes drawn from "any";
# "sparse": "near" with half the codes +-0 (zero products: e_zero, all-zero groups of mxf4).
REGIMES = ("any", "near", "tiny", "rare", "sparse")


def _seed(*key) -> int:
    return zlib.crc32(repr(key).encode())          # stable across runs (hash() is salted)


def _width(f) -> int:
    return f.container_bits if f.name in ("tf32", "ue4m3") else f.bits


def _field_codes(rng, f, expo, shape):
    """Codes with the given exponent fields; sign, mantissa and ignored bits random."""
    width = _width(f)
    shift = f.mantissa_bits + (13 if f.name == "tf32" else 0)     # tf32: the 13 ignored bits too
    free = rng.integers(0, 1 << width, size=shape, dtype=np.uint64)
    keep = ((1 << shift) - 1) | ((1 << (width - 1)) if (f.signed or f.name == "ue4m3") else 0)
    return (free & np.uint64(keep)) | (expo.astype(np.uint64) << np.uint64(shift))


def regime_codes(rng, fmt, regime, shape):
    """Codes of ``fmt`` drawn from one of :data:`REGIMES`."""
    f = F.get_format(fmt)
    anycodes = rng.integers(0, 1 << _width(f), size=shape, dtype=np.uint64)
    top = (1 << f.exponent_bits) - 1
    hi = top - 1 if f.has_inf else top              # all-ones field: Inf/NaN in IEEE-like formats
    if regime == "any":
        out = anycodes
    elif regime == "tiny":
        out = _field_codes(rng, f, rng.integers(0, 2, size=shape), shape)
    else:
        centre = int(rng.integers(0, hi + 1))
        out = _field_codes(rng, f, np.clip(centre + rng.integers(-2, 3, size=shape), 0, hi), shape)
        if f.name in ("e4m3", "ue4m3"):             # S.1111.111 is their NaN: keep "near" finite
            out = np.where((out & np.uint64(0x7F)) == 0x7F, out ^ np.uint64(1), out)
        if f.name == "ue8m0":                       # 0xFF is NaN
            out = np.minimum(out, np.uint64(0xFE))
        if regime == "rare":
            out = np.where(rng.random(shape) < 0.02, anycodes, out)
        if regime == "sparse":
            signed_zero = (1 << (_width(f) - 1)) if f.signed else 0
            zeros = rng.choice(np.array([0, signed_zero], dtype=np.uint64), size=shape)
            out = np.where(rng.random(shape) < 0.5, zeros, out)
    return out.astype(f.code_dtype)


def blocked_codes(rng, fmt, shape, axis):
    """Codes whose rows of A (``axis`` 0) or columns of B (``axis`` 1) take REGIMES[index % 5]."""
    full = [regime_codes(rng, fmt, r, shape) for r in REGIMES]
    which = np.arange(shape[axis]) % len(REGIMES)
    which = which[:, None] if axis == 0 else which[None, :]
    return np.choose(np.broadcast_to(which, shape), full)


def accumulator_codes(rng, d_type, dot):
    """C codes: a quarter each random codes, +-0, -dot nearly cancelling (0-3 ulps off) and
    dot * 2^j, |j| <= 4 (same size). ``dot`` is a float64 estimate of A.B."""
    f = F.get_format(d_type)
    finite = np.where(np.isfinite(dot), dot, 0.0)
    limit = F.max_finite(d_type)
    sign_bit = 1 << (f.bits - 1)
    cancel = F.encode(d_type, np.clip(-finite, -limit, limit), rounding="rz").astype(np.int64)
    mag = np.clip((cancel & (sign_bit - 1)) + rng.integers(-3, 4, size=dot.shape), 0, None)
    cancel = (cancel & sign_bit) | mag
    same = F.encode(d_type, np.clip(finite * np.exp2(rng.integers(-4, 5, size=dot.shape)), -limit, limit))
    zero = np.where(rng.random(dot.shape) < 0.5, 0, sign_bit)
    anycodes = rng.integers(0, 1 << f.bits, size=dot.shape, dtype=np.uint64)
    pick = rng.integers(0, 4, size=dot.shape)
    choices = [x.astype(np.int64) for x in (anycodes, zero, cancel, same)]
    return np.choose(pick, choices).astype(f.code_dtype)


def _estimate(a_type, b_type, a, b, sa=None, sb=None):
    av, bv = F.decode(a_type, a), F.decode(b_type, b)
    if sa is not None:
        av, bv = av * sa, bv * sb
    with np.errstate(invalid="ignore", over="ignore"):
        return np.nan_to_num(av, nan=0.0, posinf=0.0, neginf=0.0) @ np.nan_to_num(bv, nan=0.0, posinf=0.0, neginf=0.0)


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


def _assert_same_bits(ours, sim, inputs):
    bad = np.argwhere(ours != sim)
    if bad.size:
        i, j = bad[0]
        picks = {"a": lambda v: v[i], "scale_a": lambda v: v[i], "b": lambda v: v[:, j], "scale_b": lambda v: v[:, j]}
        detail = {k: picks.get(k, lambda v: v[i, j])(v) for k, v in inputs.items()}
        pytest.fail(f"{len(bad)} of {ours.size} elements differ; first at ({i}, {j}): ours {ours[i, j]:#x}, "
                    f"MMA-Sim {sim[i, j]:#x}; input codes {detail}")


# (kind, a_type, b_type, d_type, scale_type, block, scale_vec): every tcgen05 variant of mmasim 2.1.1
VARIANTS = ([("f16", "f16", "f16", "f32", None, None, None), ("f16", "bf16", "bf16", "f32", None, None, None),
             ("f16", "f16", "f16", "f16", None, None, None), ("tf32", "tf32", "tf32", "f32", None, None, None)]
            + [("f8f6f4", a, b, d, None, None, None) for d in ("f32", "f16") for a in F8 for b in F8]
            + [("mxf8f6f4", a, b, "f32", "ue8m0", "block32", "1X") for a in F8 for b in F8]
            + [("mxf4", "e2m1", "e2m1", "f32", "ue8m0", "block32", "2X"),
               ("mxf4nvf4", "e2m1", "e2m1", "f32", "ue8m0", "block32", "2X"),
               ("mxf4nvf4", "e2m1", "e2m1", "f32", "ue8m0", "block16", "4X"),
               ("mxf4nvf4", "e2m1", "e2m1", "f32", "ue4m3", "block16", "4X")])
K = {"f16": 16, "tf32": 8, "f8f6f4": 32, "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}


def _ident(v):
    return "-".join(x for x in v[:6] if x)


def random_inputs(v, salt=0):
    """Codes ``a``, ``b``, ``c`` (+ ``scale_a``, ``scale_b``) of one M x N case of variant ``v``."""
    kind, a_type, b_type, d_type, s_type, block, _ = v
    rng = np.random.default_rng(_seed("mmasim", v, salt))
    k = K[kind]
    x = {"a": blocked_codes(rng, a_type, (M, k), 0), "b": blocked_codes(rng, b_type, (k, N), 1)}
    sva = svb = None
    if s_type:
        sf = k // int(block.removeprefix("block"))
        x["scale_a"], x["scale_b"] = blocked_codes(rng, s_type, (M, sf), 0), blocked_codes(rng, s_type, (sf, N), 1)
        sva = np.repeat(F.decode(s_type, x["scale_a"]), k // sf, axis=1)
        svb = np.repeat(F.decode(s_type, x["scale_b"]), k // sf, axis=0)
    x["c"] = accumulator_codes(rng, d_type, _estimate(a_type, b_type, x["a"], x["b"], sva, svb))
    return x


def mmasim_bits(v, x):
    """D codes MMA-Sim computes for the codes ``x`` (its public API only)."""
    kind, a_type, b_type, d_type, s_type, block, _ = v
    shape = f"m{M}n{N}k{K[kind]}.kind::{kind}"
    if kind in ("mxf4", "mxf4nvf4"):
        ta, tb = _pack_fp4_along(x["a"], 1), _pack_fp4_along(x["b"], 0)
    else:
        ta, tb = _tensor(a_type, x["a"], f8f6f4=True), _tensor(b_type, x["b"], f8f6f4=True)
    if s_type is None:
        got = TCGen05MMA("Blackwell", f"{shape}.{d_type}.{a_type}.{b_type}")(ta, tb, _tensor(d_type, x["c"]))
    else:
        sim = TCGen05MMABlockScale("Blackwell", f"{shape}.{block}.{d_type}.{a_type}.{b_type}.{s_type}")
        got = sim(ta, tb, _tensor(d_type, x["c"]), _tensor(s_type, x["scale_a"]), _tensor(s_type, x["scale_b"]))
    return _d_bits(got, d_type)


@pytest.mark.parametrize("v", VARIANTS, ids=_ident)
def test_hardware_model_bit_exact(v):
    """hardware model (``mma(..., model="hardware")``) == MMA-Sim on 5120 random elements."""
    kind, a_type, b_type, d_type, s_type, _, scale_vec = v
    x = random_inputs(v)
    op = MmaOp(kind, a_type, b_type, d_type, M, N, scale_type=s_type, scale_vec=scale_vec)
    ours = mma(op, x["a"], x["b"], x["c"], model="hardware", scale_a=x.get("scale_a"), scale_b=x.get("scale_b")).d
    _assert_same_bits(ours, mmasim_bits(v, x), x)


def _negated(fmt, codes):
    """Codes of -x: the sign bit flipped (MMA-Sim has no negate qualifier)."""
    return codes ^ np.array(1 << (_width(F.get_format(fmt)) - 1), dtype=codes.dtype)     # tf32: bit 31


CLI_VARIANTS = [v for v in VARIANTS if v[0] != "f8f6f4" and v[0] != "mxf8f6f4"] + [
    ("f8f6f4", "e4m3", "e2m1", "f32", None, None, None), ("f8f6f4", "e3m2", "e5m2", "f16", None, None, None),
    ("mxf8f6f4", "e2m3", "e4m3", "f32", "ue8m0", "block32", "1X")]
FLAGS = [(), ("--negate-a",), ("--negate-b", "--no-accumulate")]


@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: "+".join(f) or "plain")
@pytest.mark.parametrize("v", CLI_VARIANTS, ids=_ident)
def test_cli_hardware_model_bit_exact(v, flags, tmp_path):
    """``tcgen05-cts mma --model hardware`` == MMA-Sim, negation and enable-input-d = false
    given to MMA-Sim as negated codes and a zero C (the issue's CLI contract check)."""
    from conformance.commands.cli import main

    kind, a_type, b_type, d_type, s_type, _, scale_vec = v
    x = random_inputs(v, salt=flags)
    with open(tmp_path / "in.npz", "wb") as fh:
        np.savez(fh, **x)
    args = ["mma", "--kind", kind, "--a-type", a_type, "--b-type", b_type, "--d-type", d_type, "--model", "hardware"]
    if s_type:
        args += ["--scale-type", s_type, "--scale-vec", scale_vec]
    assert main([*args, *flags, str(tmp_path / "in.npz"), str(tmp_path / "out.npz")]) == 0
    with np.load(tmp_path / "out.npz") as out:
        ours = out["d"]
    sim_in = dict(x)
    if "--negate-a" in flags:
        sim_in["a"] = _negated(a_type, x["a"])
    if "--negate-b" in flags:
        sim_in["b"] = _negated(b_type, x["b"])
    if "--no-accumulate" in flags:
        sim_in["c"] = np.zeros_like(x["c"])
    _assert_same_bits(ours, mmasim_bits(v, sim_in), x)
