"""Conversions: cvt between integer widths, integers and floats, float widths (PTX ISA §9.7.9.21).

Integer sources are extended by their own signedness, then the destination keeps its bits
(``.sat`` clamps instead); float-to-integer conversions clamp to the destination range and give 0
for NaN (PTX: saturation is implied for float-to-integer); only round-to-nearest-even is
modelled for float results.
"""

from __future__ import annotations

import numpy as np

from ptxsim.ops_alu import _ops
from ptxsim.ptx_types import TYPES
from ptxsim.registry import Unsupported, opcode

_INT_ROUND = ("rni", "rzi", "rmi", "rpi")
_ROUNDERS = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


@opcode("cvt")
def compile_cvt(ins, q, k):
    rnd = q.take("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna")
    sat = q.flag("sat")
    if q.flag("ftz") or q.flag("relu"):
        raise Unsupported("cvt .ftz/.relu are not modelled")
    dt = q.take_type()
    st = q.take_type()
    if dt.name in ("f16x2", "bf16x2"):
        return _cvt_pack(ins, k, dt, st, rnd)
    if sat and dt.kind not in "us":
        raise Unsupported(".sat on a float destination is not modelled")
    ops = _ops(k, ins, 2)
    ra, w = k.reader(ops[1], st), k.writer(ops[0], dt)
    if dt.kind in "bus" and st.kind in "bus":          # integer <-> integer
        if rnd:
            raise Unsupported(f"rounding .{rnd} on an integer conversion")
        if sat:
            return lambda m, s: w(m, s, _int_saturate(np.asarray(ra(m, s)), st, dt))
        return lambda m, s: w(m, s, _int_convert(np.asarray(ra(m, s)), st, dt))
    if dt.kind in "us":                                 # float -> integer: clamps, NaN -> 0
        if rnd not in _INT_ROUND:
            raise Unsupported("float-to-integer cvt expects .rni, .rzi, .rmi or .rpi")
        rounder = _ROUNDERS[rnd]
        lo, hi = _int_range(dt)

        def f2i(m, s):
            x = rounder(np.asarray(ra(m, s), dtype=np.float64))
            x = np.where(np.isnan(x), 0, x)
            if dt.bits < 64:
                w(m, s, np.clip(x, lo, hi).astype(dt.dtype))
            else:           # 2^64 - 1 and 2^63 - 1 are not doubles: clamp exactly in Python
                flat = [min(max(int(v), lo), hi) for v in np.atleast_1d(x)]
                w(m, s, np.array(flat, dtype=np.uint64 if dt.kind == "u" else np.int64).reshape(np.shape(x)))
        return f2i
    if dt.kind in ("f", "bf"):                          # -> float
        widening = st.kind in ("f", "bf") and dt.bits > st.bits
        if widening and rnd is not None:
            raise Unsupported("a widening float cvt takes no rounding qualifier")
        if not widening and rnd != "rn":
            raise Unsupported(f"cvt to .{dt.name} expects .rn (only round-to-nearest-even is modelled)")
        # numpy's casts round to nearest even (int64 -> float32 is one correctly rounded step)
        return lambda m, s: w(m, s, np.asarray(ra(m, s)).astype(dt.dtype))
    raise Unsupported(f"cvt.{dt.name}.{st.name}")


def _int_range(t):
    if t.kind == "s":
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return 0, (1 << t.bits) - 1


def _int_saturate(x, st, dt):
    """cvt.sat between integer types: clamp to the destination's range."""
    lo, hi = _int_range(dt)
    if st.kind == "s":
        x = np.clip(x.astype(np.int64), max(lo, -(1 << 63)), min(hi, (1 << 63) - 1))
    else:
        x = np.minimum(x.astype(np.uint64), np.uint64(hi))
    return x.astype(dt.udtype).view(dt.dtype)


def _int_convert(x, st, dt):
    """Integer conversion: extend by the source's signedness, then keep the destination's bits."""
    wide = x.astype(np.int64) if st.kind == "s" else x.astype(np.uint64)
    return wide.astype(dt.udtype).view(dt.dtype)


def _cvt_pack(ins, k, dt, st, rnd):
    if st.name != "f32" or rnd != "rn":
        raise Unsupported(f"cvt.{dt.name} expects .rn and a .f32 source")
    d, a, b = _ops(k, ins, 3)
    half = TYPES["f16"] if dt.name == "f16x2" else TYPES["bf16"]
    ra, rb, w = k.reader(a, st), k.reader(b, st), k.writer(d, TYPES["b32"])

    def run(m, s):      # d = {cvt(a) in the upper half, cvt(b) in the lower half}
        hi = np.asarray(ra(m, s)).astype(half.dtype).view(np.uint16).astype(np.uint32)
        lo = np.asarray(rb(m, s)).astype(half.dtype).view(np.uint16).astype(np.uint32)
        w(m, s, (hi << np.uint32(16)) | lo)
    return run
