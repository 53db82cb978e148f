"""Data movement: ld, st, cvta, mapa, getctarank, atom, red (PTX ISA §9.7.9, §9.7.13).

Memory is sequentially consistent in the simulator, so ordering (.relaxed, .acquire, scopes),
cache (.ca, .nc, .L2::..) and proxy qualifiers are accepted without effect.  Within one
instruction, atomics by several threads on one address apply in thread order.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ptxsim.engine.machine import cluster_address
from ptxsim.errors import SimError
from ptxsim.isa.float_round import flush
from ptxsim.isa.floats import canonical_nan, f64_nan
from ptxsim.memory.global_memory import check_alignment, split_cluster_address
from ptxsim.ptx.parser import Addr, Imm
from ptxsim.ptx.registry import ORDERING, Unsupported, opcode
from ptxsim.ptx.types import TYPES

SPACES = ("global", "shared", "shared::cta", "shared::cluster", "local", "param", "param::entry", "const")
CACHE = ("ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc", "unified")
VECTORS = {"v2": 2, "v4": 4, "v8": 8}
DATA_TYPES = tuple(f"{k}{b}" for k in "bus" for b in (8, 16, 32, 64)) + ("f16", "bf16", "f32", "f64")


def _space(q, allowed=SPACES) -> str:
    sp = q.take(*allowed)
    if sp == "param::entry":
        sp = "param"
    return sp or "generic"


def _ignore_hints(q) -> None:
    q.ignore(*ORDERING, *CACHE)
    q.ignore_prefix("L1::", "L2::", "level::")


def state_address(k, op, space: str):
    """Address reader in ``space``; a variable base is converted to the instruction's space."""
    sym_space, addr = k.address(op)
    if sym_space is None or sym_space == space or (space.startswith("shared") and sym_space == "shared"):
        return addr
    if space == "generic" and sym_space in ("global", "const"):
        return addr
    if space == "generic":
        raise Unsupported(f"a generic access to the .{sym_space} variable {op.base.text} needs cvta first")
    raise Unsupported(f"a .{space} access to the .{sym_space} variable {op.base.text}")


def _vector_types(q):
    vec = q.take(*VECTORS)
    t = q.take_type(DATA_TYPES)
    n = VECTORS.get(vec, 1)
    return n, t


@opcode("ld", "ldu")
def compile_ld(ins, q, k):
    space = _space(q)
    _ignore_hints(q)
    n, t = _vector_types(q)
    ops = k.operands(ins, 2, 3)                     # optional cache-policy operand
    writers = [k.writer(x, t) for x in k.vector(ops[0], n)]
    addr = state_address(k, ops[1], space)
    step = t.bits // 8
    what = f"ld.{space}"
    typed = None if t.kind in "bu" else t.dtype       # loads give t.udtype elements (t.from_u64 without its copy)

    def run(m, s):
        base = np.array(addr(m, s))        # a copy: a destination may be the address register
        if n > 1:                          # the whole vector aligned (each thread's address: no broadcast needed)
            check_alignment(base, n * step, what)
        for i, w in enumerate(writers):
            raw = m.load(space, s, base + np.uint64(i * step) if i else base, t.bits, what)
            w(m, s, raw if typed is None else raw.view(typed))     # a new array of t's raw bits
    return run


@opcode("st")
def compile_st(ins, q, k):
    space = _space(q)
    if space in ("param", "const"):
        raise Unsupported(f"st.{space} is not allowed")
    _ignore_hints(q)
    n, t = _vector_types(q)
    ops = k.operands(ins, 2, 3)
    readers = [k.reader(x, t) for x in k.vector(ops[1], n)]
    addr = state_address(k, ops[0], space)
    step = t.bits // 8
    what = f"st.{space}"

    def run(m, s):
        base = addr(m, s)
        values = [t.to_bits(r(m, s)) for r in readers]       # read every source first
        if n > 1:                          # the whole vector aligned (each thread's address: no broadcast needed)
            check_alignment(base, n * step, what)
        for i, v in enumerate(values):
            m.store(space, s, base + np.uint64(i * step) if i else base, v, t.bits, what)
    return run


@opcode("cvta")
def compile_cvta(ins, q, k):
    to = q.flag("to")
    space = q.take("global", "shared", "shared::cta", "shared::cluster", "local", "const", "param", required=True)
    t = q.take_type(("u32", "u64"))
    d, a = k.operands(ins, 2)
    ra, w = k.reader(a, t), k.writer(d, t)
    if to:
        return lambda m, s: w(m, s, m.from_generic(space, ra(m, s)))
    return lambda m, s: w(m, s, m.to_generic(space, ra(m, s)))


@opcode("mapa")
def compile_mapa(ins, q, k):
    space = q.take("shared::cluster") or "generic"
    t = q.take_type(("u32", "u64"))
    d, a, b = k.operands(ins, 3)
    ra, rb, w = k.reader(a, t), k.reader(b, TYPES["u32"]), k.writer(d, t)

    def run(m, s):
        rank = np.asarray(rb(m, s)).astype(np.int64)
        if (rank >= m.cluster_size).any() or (rank < 0).any():
            raise SimError(f"mapa: CTA rank {int(rank.max())} outside the cluster of {m.cluster_size} CTAs")
        addr = np.asarray(ra(m, s)).astype(np.uint64)
        if space == "generic":
            shared = m.from_generic("shared", addr)
            w(m, s, m.to_generic("shared", cluster_address(rank, shared)))
        else:
            w(m, s, cluster_address(rank, addr))
    return run


@opcode("getctarank")
def compile_getctarank(ins, q, k):
    space = q.take("shared::cluster") or "generic"
    t = q.take_type(("u32", "u64"))
    d, a = k.operands(ins, 2)
    ra, w = k.reader(a, t), k.writer(d, TYPES["u32"])

    def run(m, s):
        addr = np.asarray(ra(m, s)).astype(np.uint64)
        if space == "generic":
            addr = m.from_generic("shared", addr)
        tag, _ = split_cluster_address(addr)
        w(m, s, np.where(tag > 0, tag - 1, m.rank_of[s.ix]).astype(np.uint32))
    return run


# -- atomics -----------------------------------------------------------------------------------

def _atomic_fn(op: str, t):
    """new = fn(old, b, c) elementwise, for one thread at a time."""
    if op == "add":
        return lambda old, b, c: old + b
    if op in ("and", "or", "xor"):
        f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        return lambda old, b, c: f(old, b)
    if op == "min":
        return lambda old, b, c: np.minimum(old, b)
    if op == "max":
        return lambda old, b, c: np.maximum(old, b)
    if op == "exch":
        return lambda old, b, c: b
    if op == "cas":
        return lambda old, b, c: c if old == b else old
    if op == "inc":
        return lambda old, b, c: t.dtype(0) if old >= b else old + t.dtype(1)
    if op == "dec":
        return lambda old, b, c: b if (old == 0 or old > b) else old - t.dtype(1)
    raise Unsupported(f"atom/red operation .{op} is not modelled")


#: half-precision atomics (``atom/red.add.noftz``): name -> (element dtype, elements per value)
HALF_ATOMICS = {"f16": (np.float16, 1), "bf16": (ml_dtypes.bfloat16, 1), "f16x2": (np.float16, 2),
                "bf16x2": (ml_dtypes.bfloat16, 2)}
_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _float_sum(x, y, dt, ftz: bool):
    """One float add of arrays of ``dt`` as the H100's atomics compute it (docs/sim.md):
    .f32 writes NaN as 0x7FFFFFFF and, in global memory (``ftz``), flushes subnormal inputs and
    the result to zero of the same sign (PTX ISA §9.7.13 atom: atom.add.f32 is .ftz; the H100's
    shared-memory atom.add.f32 keeps subnormals); .f64 returns NaN operands as ``add.f64``
    does (the operand b first, quieted); .f16/.bf16 (.noftz) keep subnormals and write NaN as
    0x7FFF.  Every sum is rounded to nearest even once (an f64 sum of two narrower values is exact
    or, for bf16, at least 2p+2 bits wide, so rounding it again is correct)."""
    if dt == np.float64:
        with np.errstate(all="ignore"):
            return f64_nan("add", [x, y], x + y)
    ftz = ftz and dt == np.float32
    if ftz:
        x, y = flush(x, dt), flush(y, dt)
    with np.errstate(all="ignore"):
        r = (x.astype(np.float64) + y.astype(np.float64)).astype(dt)
    if ftz:
        r = flush(r, dt)
    return np.where(np.isnan(r), canonical_nan(dt), r).astype(dt)


def atomic_float_add(name: str, ftz: bool):
    """new_bits = add(old_bits, b_bits) on the raw bits of a float atomic's memory word; a packed
    .f16x2/.bf16x2 adds element by element (element 0 in the low half); ``ftz``: see _float_sum."""
    dt, lanes = HALF_ATOMICS.get(name) or ({"f32": np.float32, "f64": np.float64}[name], 1)
    ebits = 8 * np.dtype(dt).itemsize
    udt = _UINT[ebits // 8]
    container = _UINT[ebits * lanes // 8]

    def add(old, b):
        old, b = np.asarray(old, container), np.asarray(b, container)
        out = np.zeros(np.broadcast(old, b).shape, container)
        for lane in range(lanes):
            sh = container(lane * ebits)
            x, y = ((v >> sh).astype(udt).view(dt) for v in (old, b))
            out |= _float_sum(x, y, dt, ftz).view(udt).astype(container) << sh
        return out
    return add


def _compile_atomic(ins, q, k, returns: bool):
    space = _space(q, ("global", "shared", "shared::cta", "shared::cluster"))
    _ignore_hints(q)
    op = q.take("add", "and", "or", "xor", "min", "max", "exch", "cas", "inc", "dec", required=True)
    if q.take("v2", "v4", "v8"):
        raise Unsupported("vector atomics are not modelled")
    noftz = q.flag("noftz")
    t = q.take_type(("b16", "b32", "b64", "u32", "u64", "s32", "s64", "f32", "f64") + tuple(HALF_ATOMICS))
    if op in ("and", "or", "xor", "exch", "cas") and t.kind in ("f", "bf"):
        raise Unsupported(f"atom.{op} expects an integer or bit type")
    if t.name == "b16" and op != "cas":
        raise Unsupported(f"atom.{op}.b16 does not exist (.b16 is for atom.cas only)")
    half = t.name in HALF_ATOMICS
    if half and (op != "add" or not noftz):
        raise Unsupported(f"atom.{op}.{t.name} is not modelled (expects atom/red.add.noftz.{t.name})")
    if noftz and not half:
        raise Unsupported(f".noftz expects a half-precision type, but got .{t.name}")
    ops = list(ins.operands)
    dest = ops.pop(0) if returns else None
    if not ops or not isinstance(ops[0], Addr):
        raise Unsupported("expects an address operand")
    need = 3 if op == "cas" else 2
    if len(ops) not in (need, need + 1):
        raise Unsupported(f"expects {need + (1 if returns else 0)} operands")
    addr = state_address(k, ops[0], space)
    rb = k.reader(ops[1], t)
    rc = k.reader(ops[2], t) if op == "cas" else (lambda m, s: None)
    w = k.writer(dest, t) if returns else None
    what = f"{ins.parts[0]}.{space}"
    if op == "add" and (t.kind in ("f", "bf") or half):
        return _float_atomic_add(addr, rb, w, t, space, what)
    fn = _atomic_fn(op, t)

    def run(m, s):
        view, index = m.locate(space, s, addr(m, s), t.bits, what)
        tv = view.view(t.dtype)
        b = np.broadcast_to(rb(m, s), (s.n,))
        c = rc(m, s)
        c = np.broadcast_to(c, (s.n,)) if c is not None else [None] * s.n
        old = np.empty(s.n, dtype=t.dtype)
        if op == "add" and np.unique(index).size == index.size:       # no collisions: vectorised
            old[:] = tv[index]
            tv[index] = old + b
        else:
            for j in range(s.n):                                       # thread order
                o = tv[index[j]]
                old[j] = o
                tv[index[j]] = fn(o, b[j], c[j])
        if w is not None:
            w(m, s, old)
    return run


def _float_atomic_add(addr, rb, w, t, space: str, what: str):
    """atom/red.add on floats, on the memory word's bits (:func:`atomic_float_add`); threads
    hitting one address add in thread order."""
    adders = {ftz: atomic_float_add(t.name, ftz) for ftz in (False, True)}
    udt = _UINT[t.bits // 8]

    def run(m, s):
        a = addr(m, s)
        add = adders[m.space_of(space, a) == "global"]
        view, index = m.locate(space, s, a, t.bits, what)
        b = np.broadcast_to(np.asarray(t.to_bits(rb(m, s))).astype(udt), (s.n,))
        if np.unique(index).size == index.size:                        # no collisions: vectorised
            old = view[index].copy()
            view[index] = add(old, b)
        else:
            old = np.empty(s.n, udt)
            for j in range(s.n):                                       # thread order
                old[j] = view[index[j]]
                view[index[j]] = add(old[j], b[j])
        if w is not None:
            w(m, s, t.from_u64(old.astype(np.uint64)))
    return run


@opcode("atom")
def compile_atom(ins, q, k):
    return _compile_atomic(ins, q, k, returns=True)


@opcode("red")
def compile_red(ins, q, k):
    return _compile_atomic(ins, q, k, returns=False)


@opcode("prefetch", "prefetchu")
def compile_prefetch(ins, q, k):
    q.take("global", "local")
    q.ignore_prefix("L1", "L2", "tensormap")
    k.operands(ins, 1)
    return lambda m, s: None


#: the value ``createpolicy`` writes.  A cache policy is an opaque 64-bit value (PTX ISA §9.7.9,
#: createpolicy) used only as the ``.L2::cache_hint`` operand of loads, stores, atomics and bulk
#: copies; it changes where data is cached, never a result, so the simulator (one flat memory, no
#: caches) gives every policy the same value and accepts the hint operand without effect.  Kernels
#: must not read a policy's bits (the H100 battery records none).
CACHE_POLICY = np.uint64(0)


@opcode("createpolicy")
def compile_createpolicy(ins, q, k):
    """``createpolicy.fractional.L2::{primary}{.L2::secondary}.b64 p{, fraction}``,
    ``createpolicy.range{.global}.L2::{primary}{.L2::secondary}.b64 p, [a], primary-size,
    total-size`` and ``createpolicy.cvt.L2.b64 p, access-property``: writes :data:`CACHE_POLICY`."""
    form = q.take("fractional", "range", "cvt", required=True)
    q.take("global")
    q.take("L2")
    priorities = [x for x in q.rest if x.startswith("L2::evict_")]
    for x in priorities:
        q.rest.remove(x)
    q.take_type(("b64",))
    if form != "cvt" and not 1 <= len(priorities) <= 2:
        raise Unsupported(f"createpolicy.{form} expects an .L2::evict_* primary priority")
    counts = {"fractional": (1, 2), "range": (4,), "cvt": (2,)}[form]
    ops = k.operands(ins, *counts)
    if form == "fractional" and len(ops) == 2 and isinstance(ops[1], Imm) and not 0.0 < float(ops[1].value) <= 1.0:
        raise Unsupported(f"createpolicy.fractional expects a fraction in (0.0, 1.0], but got {ops[1].value}")
    w = k.writer(ops[0], TYPES["b64"])
    return lambda m, s: w(m, s, CACHE_POLICY)
