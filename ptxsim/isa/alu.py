"""Integer arithmetic, logic, shifts, comparisons and basic float instructions (PTX ISA §9.7.1-9.7.3).

Semantics chosen where PTX leaves a result undefined (kernels must not depend on them):
integer division and remainder by zero give all ones (the H100's values); ``fma``/``mad``
on f32 are computed in f64 and rounded once more to f32 (exact product, one possible double
rounding of the sum).
"""

from __future__ import annotations

import numpy as np

from ptxsim.engine.machine import per_thread
from ptxsim.isa import floats as ops_float
from ptxsim.isa.float_round import flush
from ptxsim.isa.floats import FLOAT_TYPES, compile_arith, compile_negabs
from ptxsim.ptx.parser import Pair, Vec
from ptxsim.ptx.registry import Unsupported, opcode
from ptxsim.ptx.types import TYPES

INTS = tuple(f"{k}{b}" for k in "sub" for b in (16, 32, 64))
SINTS = ("s16", "s32", "s64")
FLOATS = ("f32", "f64")
BITS = ("b16", "b32", "b64")
U32 = TYPES["u32"]
PRED = TYPES["pred"]


def _wide(t):
    return TYPES[f"{t.kind}{2 * t.bits}"]


def _ops(k, ins, n):
    return k.operands(ins, n)


def _unary(ins, k, t, fn):
    d, a = _ops(k, ins, 2)
    ra, w = k.reader(a, t), k.writer(d, t)
    return lambda m, s: w(m, s, fn(ra(m, s)))


def _binary(ins, k, t, fn, tb=None, td=None):
    d, a, b = _ops(k, ins, 3)
    ra, rb, w = k.reader(a, t), k.reader(b, tb or t), k.writer(d, td or t)
    return lambda m, s: w(m, s, fn(ra(m, s), rb(m, s)))


# -- moves --------------------------------------------------------------------------------------

@opcode("mov")
def compile_mov(ins, q, k):
    t = q.take_type()
    d, a = _ops(k, ins, 2)
    if t.kind == "pred":
        ra, w = k.pred_reader(a), k.pred_writer(d)
        return lambda m, s: w(m, s, ra(m, s))
    if isinstance(a, Vec):                          # pack: mov.b64 d, {lo, hi}
        parts = a.items
        pt = TYPES[f"b{t.bits // len(parts)}"]
        readers = [k.reader(p, pt) for p in parts]
        w = k.writer(d, t)
        shifts = [np.uint64(pt.bits * i) for i in range(len(parts))]

        def pack(m, s):
            acc = np.uint64(0)
            for r, sh in zip(readers, shifts, strict=True):
                acc = acc | (np.asarray(r(m, s)).astype(np.uint64) << sh)
            w(m, s, t.from_u64(acc))
        return pack
    if isinstance(d, Vec):                          # unpack: mov.b64 {lo, hi}, a
        parts = d.items
        pt = TYPES[f"b{t.bits // len(parts)}"]
        ra = k.reader(a, TYPES[f"b{t.bits}"])
        writers = [k.writer(p, pt) for p in parts]
        shifts = [np.uint64(pt.bits * i) for i in range(len(parts))]

        def unpack(m, s):
            v = np.asarray(ra(m, s)).astype(np.uint64)
            for w, sh in zip(writers, shifts, strict=True):
                w(m, s, pt.from_u64(v >> sh))
        return unpack
    space = k.symbol_space(a)
    if space is not None and space not in ("shared", "global", "const", "local"):
        raise Unsupported(f"taking the address of a .{space} symbol is not modelled")
    return _unary(ins, k, t, lambda x: x)


# -- integer and float arithmetic -----------------------------------------------------------------

def _magnitude(a, t):
    """|a| as the unsigned type of ``t``'s width (|INT_MIN| = 2^(bits-1) fits)."""
    u = np.asarray(a).astype(t.udtype)
    if t.kind == "s":
        u = np.where(np.asarray(a) < 0, t.udtype(0) - u, u).astype(t.udtype)
    return u


def _negate_where(neg, u, t):
    """``u`` (unsigned) negated modulo 2^bits where ``neg``, as type ``t``."""
    return np.where(neg, t.udtype(0) - u, u).astype(t.udtype).view(t.dtype)


def _all_ones(t):
    return np.array(t.mask, dtype=t.udtype).view(t.dtype)


def _div_trunc(a, b, t):
    """Quotient rounded towards zero, on magnitudes (INT_MIN / x exact; INT_MIN / -1 wraps to
    INT_MIN).  Division by zero gives all ones (PTX leaves it undefined; the H100's value)."""
    a = np.asarray(a)
    b = np.asarray(b)
    if t.kind == "f":
        return a / b
    zero = b == 0
    ub = np.where(zero, t.udtype(1), _magnitude(b, t)).astype(t.udtype)
    q = _magnitude(a, t) // ub
    neg = ((a < 0) ^ (b < 0)) if t.kind == "s" else False
    return np.where(zero, _all_ones(t), _negate_where(neg, q, t))


def _rem_trunc(a, b, t):
    """Remainder with the dividend's sign.  Remainder by zero gives all ones (PTX leaves it
    undefined; the H100 writes all ones at every width: docs/sim.md)."""
    a = np.asarray(a)
    b = np.asarray(b)
    zero = b == 0
    ub = np.where(zero, t.udtype(1), _magnitude(b, t)).astype(t.udtype)
    r = _magnitude(a, t) % ub
    neg = (a < 0) if t.kind == "s" else False
    return np.where(zero, _all_ones(t), _negate_where(neg, r, t))


def _mul_hi(a, b, t):
    if t.bits <= 32:
        w = _wide(t)
        return (a.astype(w.dtype) * b.astype(w.dtype)) >> t.bits if hasattr(a, "astype") else \
            (w.dtype(a) * w.dtype(b)) >> t.bits
    au = np.asarray(a).astype(np.uint64)
    bu = np.asarray(b).astype(np.uint64)
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a0, a1, b0, b1 = au & m32, au >> s32, bu & m32, bu >> s32
    mid = (a0 * b0 >> s32) + (a1 * b0 & m32) + (a0 * b1 & m32)
    hi = a1 * b1 + (a1 * b0 >> s32) + (a0 * b1 >> s32) + (mid >> s32)
    if t.kind == "s":
        hi = hi - np.where(np.asarray(a) < 0, bu, 0).astype(np.uint64) - np.where(np.asarray(b) < 0, au, 0).astype(np.uint64)
    return hi


CARRY_TYPES = ("u32", "s32", "u64", "s64")


def carry_flag(m) -> np.ndarray:
    """CC.CF of every thread (PTX ISA §9.7.1.x extended-precision arithmetic), 0 or 1."""
    return m.extension("carry.cf", lambda m: np.zeros(m.T, dtype=np.uint64))


def _carry(ins, k, t, op: str, carry_in: bool, carry_out: bool):
    """add/sub/mad.lo/mad.hi with carry-in from and/or carry-out to CC.CF (§9.7.2 add.cc, addc,
    sub.cc, subc, mad.cc, madc): for sub, CF is the borrow."""
    if t.name not in CARRY_TYPES:
        raise Unsupported(f"carry arithmetic expects .u32, .s32, .u64 or .s64, but got .{t.name}")
    ut = TYPES[f"u{t.bits}"]
    ops = _ops(k, ins, 4 if op.startswith("mad") else 3)
    readers = [k.reader(o, ut) for o in ops[1:]]
    w = k.writer(ops[0], ut)
    sub = op == "sub"
    one = np.uint64(1)

    def run(m, s):
        cf = carry_flag(m)
        vals = [np.broadcast_to(np.asarray(r(m, s)).astype(np.uint64), (s.n,)) for r in readers]
        cin = np.array(cf[s.ix]) if carry_in else np.zeros(s.n, dtype=np.uint64)
        if op.startswith("mad"):             # .hi of .s32/.s64 is the signed product's upper half
            a, b = vals[0].astype(ut.dtype).view(t.dtype), vals[1].astype(ut.dtype).view(t.dtype)
            prod = _mul_hi(a, b, t) if op == "madhi" else (a * b)
            x, y = np.asarray(prod).astype(ut.dtype).astype(np.uint64), vals[2]
        else:
            x, y = vals
        if t.bits == 32:
            if sub:
                r = x.astype(np.int64) - y.astype(np.int64) - cin.astype(np.int64)
                c = (r < 0).astype(np.uint64)
            else:
                r = x + y + cin
                c = r >> np.uint64(32)
            r = np.asarray(r).astype(np.uint64) & np.uint64(0xFFFFFFFF)
        elif sub:
            r1 = x - y
            r = r1 - cin
            c = ((x < y) | (r1 < cin)).astype(np.uint64)
        else:
            r1 = x + y
            r = r1 + cin
            c = ((r1 < x) | (r < r1)).astype(np.uint64)
        w(m, s, r.astype(ut.dtype))
        if carry_out:
            cf[s.ix] = c & one
    return run


@opcode("addc", "subc")
def compile_addc(ins, q, k):
    cc = q.flag("cc")
    t = q.take_type(CARRY_TYPES)
    return _carry(ins, k, t, ins.parts[0][:3], carry_in=True, carry_out=cc)


@opcode("madc")
def compile_madc(ins, q, k):
    mode = q.take("lo", "hi", required=True)
    cc = q.flag("cc")
    t = q.take_type(CARRY_TYPES)
    return _carry(ins, k, t, "mad" + mode, carry_in=True, carry_out=cc)


@opcode("add", "sub")
def compile_add(ins, q, k):
    sub = ins.parts[0] == "sub"
    t = q.take_type(INTS + FLOAT_TYPES)
    if t.name in FLOAT_TYPES:
        return compile_arith(ins, q, k, ins.parts[0], t)
    if q.flag("sat"):
        if t.name != "s32":
            raise Unsupported(".sat expects type .s32")
        lo, hi = -(1 << 31), (1 << 31) - 1

        def sat(a, b):
            r = np.asarray(a, np.int64) - b if sub else np.asarray(a, np.int64) + b
            return np.clip(r, lo, hi)
        return _binary(ins, k, t, sat)
    if q.flag("cc"):
        return _carry(ins, k, t, "sub" if sub else "add", carry_in=False, carry_out=True)
    return _binary(ins, k, t, (lambda a, b: a - b) if sub else (lambda a, b: a + b))


@opcode("mul")
def compile_mul(ins, q, k):
    mode = q.take("lo", "hi", "wide")
    t = q.take_type(INTS + FLOAT_TYPES)
    if t.name in FLOAT_TYPES:
        if mode:
            raise Unsupported(f".{mode} with a float type")
        return compile_arith(ins, q, k, "mul", t)
    if mode is None:
        raise Unsupported("integer mul expects .lo, .hi or .wide")
    if mode == "wide":
        if t.bits == 64:
            raise Unsupported(".wide expects a 16- or 32-bit type")
        w = _wide(t)
        return _binary(ins, k, t, lambda a, b: np.asarray(a).astype(w.dtype) * np.asarray(b).astype(w.dtype), td=w)
    if mode == "hi":
        return _binary(ins, k, t, lambda a, b: _mul_hi(np.asarray(a), np.asarray(b), t))
    return _binary(ins, k, t, lambda a, b: a * b)


@opcode("mad", "fma")
def compile_mad(ins, q, k):
    mode = q.take("lo", "hi", "wide")
    t = q.take_type(INTS + FLOAT_TYPES)
    if t.name in FLOAT_TYPES:
        return compile_arith(ins, q, k, "fma", t)
    d, a, b, c = _ops(k, ins, 4)
    if ins.parts[0] == "fma":
        raise Unsupported("fma expects a float type")
    if mode is None:
        raise Unsupported("integer mad expects .lo, .hi or .wide")
    if q.flag("sat"):
        raise Unsupported(".sat on mad is not modelled")
    if q.flag("cc"):
        if mode == "wide":
            raise Unsupported("mad.wide takes no .cc")
        return _carry(ins, k, t, "mad" + mode, carry_in=False, carry_out=True)
    td = _wide(t) if mode == "wide" else t
    ra, rb, rc, w = k.reader(a, t), k.reader(b, t), k.reader(c, td), k.writer(d, td)
    if mode == "wide":
        return lambda m, s: w(m, s, np.asarray(ra(m, s)).astype(td.dtype) * np.asarray(rb(m, s)).astype(td.dtype) + rc(m, s))
    if mode == "hi":
        return lambda m, s: w(m, s, _mul_hi(np.asarray(ra(m, s)), np.asarray(rb(m, s)), t).astype(t.udtype).view(t.dtype) + rc(m, s))
    return lambda m, s: w(m, s, ra(m, s) * rb(m, s) + rc(m, s))


@opcode("div", "rem")
def compile_div(ins, q, k):
    rem = ins.parts[0] == "rem"
    t = q.take_type(INTS + FLOAT_TYPES)
    if t.name in FLOAT_TYPES:
        if rem:
            raise Unsupported("rem expects an integer type")
        return compile_arith(ins, q, k, "div", t)
    return _binary(ins, k, t, (lambda a, b: _rem_trunc(a, b, t)) if rem else (lambda a, b: _div_trunc(a, b, t)))


@opcode("min", "max")
def compile_minmax(ins, q, k):
    fn = np.minimum if ins.parts[0] == "min" else np.maximum
    t = q.take_type(INTS + FLOAT_TYPES)
    if t.name in FLOAT_TYPES:
        return ops_float.compile_minmax(ins, q, k, ins.parts[0] == "min", t)
    if q.flag("relu"):                 # min/max.relu.s32: negative results clamp to 0
        if t.name != "s32":
            raise Unsupported(".relu expects .s32 (or .s16x2)")
        return _binary(ins, k, t, lambda a, b: np.maximum(fn(a, b), 0).astype(t.dtype))
    return _binary(ins, k, t, fn)


@opcode("neg", "abs")
def compile_neg(ins, q, k):
    t = q.take_type(SINTS + FLOAT_TYPES)
    if t.name in FLOAT_TYPES:          # sign-bit flip / clear, NaN payload kept
        return compile_negabs(ins, q, k, ins.parts[0] == "neg", t)
    if ins.parts[0] == "neg":
        return _unary(ins, k, t, lambda a: -np.asarray(a))
    return _unary(ins, k, t, lambda a: np.abs(np.asarray(a)))


# -- logic and shifts -------------------------------------------------------------------------

@opcode("and", "or", "xor")
def compile_logic(ins, q, k):
    fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[ins.parts[0]]
    t = q.take_type(BITS + ("pred",))
    if t.kind == "pred":
        d, a, b = _ops(k, ins, 3)
        ra, rb, w = k.pred_reader(a), k.pred_reader(b), k.pred_writer(d)
        return lambda m, s: w(m, s, fn(ra(m, s), rb(m, s)))
    return _binary(ins, k, t, fn)


@opcode("not", "cnot")
def compile_not(ins, q, k):
    t = q.take_type(BITS + ("pred",))
    if ins.parts[0] == "cnot":
        return _unary(ins, k, t, lambda a: (np.asarray(a) == 0).astype(t.dtype))
    if t.kind == "pred":
        d, a = _ops(k, ins, 2)
        ra, w = k.pred_reader(a), k.pred_writer(d)
        return lambda m, s: w(m, s, ~np.asarray(ra(m, s)))
    return _unary(ins, k, t, np.invert)


@opcode("shl", "shr")
def compile_shift(ins, q, k):
    t = q.take_type(BITS + INTS)
    bits = t.bits
    if ins.parts[0] == "shl":
        def fn(a, b):
            a = np.asarray(a).astype(t.udtype)
            b = np.asarray(b)
            return np.where(b >= bits, 0, a << np.minimum(b, bits - 1).astype(t.udtype))
    elif t.kind == "s":
        def fn(a, b):
            return np.asarray(a) >> np.minimum(np.asarray(b), bits - 1).astype(t.dtype)
    else:
        def fn(a, b):
            a = np.asarray(a).astype(t.udtype)
            b = np.asarray(b)
            return np.where(b >= bits, 0, a >> np.minimum(b, bits - 1).astype(t.udtype))
    return _binary(ins, k, t, fn, tb=U32)


# -- comparisons --------------------------------------------------------------------------------

_CMP = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal,
}
_UNORDERED = {"equ": "eq", "neu": "ne", "ltu": "lt", "leu": "le", "gtu": "gt", "geu": "ge"}
_BOOL = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


HALVES = ("f16", "bf16", "f16x2", "bf16x2")


def _comparison(cmp: str, t):
    is_float = t.kind == "f" or t.name in HALVES
    if cmp in ("num", "nan"):
        if not is_float:
            raise Unsupported(f".{cmp} expects a float type")
        return (lambda a, b: ~(np.isnan(a) | np.isnan(b))) if cmp == "num" else (lambda a, b: np.isnan(a) | np.isnan(b))
    if cmp in _UNORDERED:
        if not is_float:
            raise Unsupported(f".{cmp} expects a float type")
        base = _CMP[_UNORDERED[cmp]]
        return lambda a, b: base(a, b) | np.isnan(a) | np.isnan(b)
    if cmp in ("lo", "ls", "hi", "hs") and t.kind not in "bu":
        raise Unsupported(f".{cmp} expects an unsigned type")
    if cmp in ("lo", "ls", "hi", "hs") and t.name in HALVES:
        raise Unsupported(f".{cmp} expects an unsigned type")
    if is_float and cmp == "ne":
        return lambda a, b: np.not_equal(a, b) & ~(np.isnan(a) | np.isnan(b))
    return _CMP[cmp]


def _lane_comparison(k, a, b, t, cmp: str, ftz: bool):
    """``compare(m, s)`` -> one bool array per lane (two for .f16x2/.bf16x2, lane 0 the low half)
    of ``a cmp b`` on type ``t``; ``.ftz`` flushes subnormal float inputs to zero first."""
    if ftz and t.name not in ("f32", "f16", "f16x2"):
        raise Unsupported(f".ftz is not allowed with .{t.name}")
    fn = _comparison(cmp, t)
    if t.name in HALVES:
        dt = ops_float.ELEM[t.name][0]
        ra, rb = ops_float._reader(k, a, t), ops_float._reader(k, b, t)

        def lanes(m, s):
            out = []
            for x, y in zip(ra(m, s), rb(m, s), strict=True):
                x, y = (flush(v, dt) if ftz else v for v in (x, y))
                with np.errstate(invalid="ignore"):
                    out.append(np.asarray(fn(x.astype(np.float64), y.astype(np.float64))))
            return out
        return lanes
    ra, rb = k.reader(a, t), k.reader(b, t)

    def scalar(m, s):
        x, y = ra(m, s), rb(m, s)
        if ftz:
            x, y = flush(x, np.float32), flush(y, np.float32)
        return [np.asarray(fn(x, y))]
    return scalar


SETP_TYPES = INTS + FLOATS + BITS + HALVES


@opcode("setp")
def compile_setp(ins, q, k):
    """``setp.CmpOp{.BoolOp}{.ftz}.type p[|q], a, b{, {!}c}``.  Scalar types: p = cmp BoolOp c,
    q = !cmp BoolOp c.  .f16x2/.bf16x2: p from the low halves, q from the high halves, each
    combined with c (PTX ISA half precision comparison instructions: setp)."""
    cmp = q.take(*_CMP, *_UNORDERED, "num", "nan", required=True)
    boolop = q.take(*_BOOL)
    ftz = q.flag("ftz")
    t = q.take_type(SETP_TYPES)
    ops = k.operands(ins, 4 if boolop else 3)
    dest = ops[0]
    compare = _lane_comparison(k, ops[1], ops[2], t, cmp, ftz)
    rc = k.pred_reader(ops[3]) if boolop else None
    comb = _BOOL.get(boolop)
    wp = k.pred_writer(dest.first if isinstance(dest, Pair) else dest)
    wq = k.pred_writer(dest.second) if isinstance(dest, Pair) else None
    packed = t.name in ("f16x2", "bf16x2")
    if packed and wq is None:
        raise Unsupported(f"setp.{t.name} expects a predicate pair p|q")

    def run(m, s):
        lanes = [per_thread(np.asarray(r), s.n) for r in compare(m, s)]
        p, notp = (lanes[0], lanes[1]) if packed else (lanes[0], ~lanes[0])
        if comb is not None:
            c = rc(m, s)
            p, notp = comb(p, c), comb(notp, c)
        wp(m, s, p)
        if wq is not None:
            wq(m, s, notp)
    return run


#: what ``set`` writes for true, per destination type (false is 0): all ones for integers,
#: 1.0 for floats (per half for the packed types)
_SET_TRUE = {"u32": 0xFFFFFFFF, "s32": 0xFFFFFFFF, "f32": 0x3F800000, "u16": 0xFFFF, "s16": 0xFFFF,
             "f16": 0x3C00, "bf16": 0x3F80}
_SET_TRUE_HALF = {"u32": 0xFFFF, "s32": 0xFFFF, "f16x2": 0x3C00, "bf16x2": 0x3F80}


@opcode("set")
def compile_set(ins, q, k):
    """``set.CmpOp{.BoolOp}{.ftz}.dtype.stype d, a, b{, {!}c}``: d = (a CmpOp b) BoolOp c as all
    ones (integer dtype) or 1.0 (float dtype), else 0 (PTX ISA comparison instructions: set; half
    precision: set.f16x2 etc., each half independently)."""
    cmp = q.take(*_CMP, *_UNORDERED, "num", "nan", required=True)
    boolop = q.take(*_BOOL)
    ftz = q.flag("ftz")
    dt = q.take_type(tuple(_SET_TRUE) + tuple(_SET_TRUE_HALF))
    st = q.take_type(SETP_TYPES)
    packed = st.name in ("f16x2", "bf16x2")
    table = _SET_TRUE_HALF if packed else _SET_TRUE
    if dt.name not in table or (dt.bits == 16 and st.name not in HALVES) or (dt.name in HALVES and st.name not in HALVES):
        raise Unsupported(f"set.{dt.name}.{st.name} is not a form of set")
    ops = k.operands(ins, 4 if boolop else 3)
    compare = _lane_comparison(k, ops[1], ops[2], st, cmp, ftz)
    rc = k.pred_reader(ops[3]) if boolop else None
    comb = _BOOL.get(boolop)
    true = np.uint64(table[dt.name])
    w = k.writer(ops[0], TYPES["b32"] if packed else TYPES[f"b{dt.bits}"])

    def run(m, s):
        out = np.zeros(s.n, dtype=np.uint64)
        c = rc(m, s) if comb is not None else None
        for i, r in enumerate(compare(m, s)):
            r = np.broadcast_to(r, (s.n,))
            if comb is not None:
                r = comb(r, c)
            out |= np.where(r, true, np.uint64(0)) << np.uint64(16 * i)
        w(m, s, out.astype(np.uint32 if packed or dt.bits == 32 else np.uint16))
    return run


@opcode("selp")
def compile_selp(ins, q, k):
    t = q.take_type(INTS + FLOATS + BITS)
    d, a, b, c = _ops(k, ins, 4)
    ra, rb, rc, w = k.reader(a, t), k.reader(b, t), k.pred_reader(c), k.writer(d, t)
    return lambda m, s: w(m, s, np.where(rc(m, s), ra(m, s), rb(m, s)))


@opcode("slct")
def compile_slct(ins, q, k):
    """``slct{.ftz}.dtype.{s32,f32} d, a, b, c``: d = a where c >= 0, else b (PTX ISA, comparison
    and selection instructions: slct).  With an .f32 ``c``, -0 counts as >= 0, a NaN ``c`` selects b (the
    comparison is false) and ``.ftz`` flushes a subnormal ``c`` to zero of its sign first."""
    ftz = q.flag("ftz")
    t = q.take_type(INTS + FLOATS + BITS)
    ct = q.take_type(("s32", "f32"))
    if ftz and ct.name != "f32":
        raise Unsupported("slct.ftz expects an .f32 selector")
    d, a, b, c = _ops(k, ins, 4)
    ra, rb, rc, w = k.reader(a, t), k.reader(b, t), k.reader(c, ct), k.writer(d, t)

    def run(m, s):
        sel = np.asarray(rc(m, s))
        if ftz:
            sel = flush(sel, np.float32)
        w(m, s, np.where(sel >= 0, ra(m, s), rb(m, s)))
    return run
