"""Data movement: ld, st, cvta, mapa, getctarank, atom, red (PTX ISA §9.7.9, §9.7.13).

Memory is sequentially consistent in the simulator, so ordering (.relaxed, .acquire, scopes),
cache (.ca, .nc, .L2::..) and proxy qualifiers are accepted without effect.  Within one
instruction, atomics by several threads on one address apply in thread order.
"""

from __future__ import annotations

import numpy as np

from ptxsim.errors import SimError
from ptxsim.machine import cluster_address
from ptxsim.memory import check_alignment, split_cluster_address
from ptxsim.ptx_parser import Addr, Imm
from ptxsim.ptx_types import TYPES
from ptxsim.registry import ORDERING, Unsupported, opcode

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

    def run(m, s):
        base = np.array(addr(m, s))        # a copy: a destination may be the address register
        if n > 1:
            check_alignment(np.broadcast_to(base, (s.n,)), n * step, what)
        for i, w in enumerate(writers):
            raw = m.load(space, s, base + np.uint64(i * step) if i else base, t.bits, what)
            w(m, s, t.from_u64(raw))
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
        if n > 1:
            check_alignment(np.broadcast_to(base, (s.n,)), n * step, what)
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


def _compile_atomic(ins, q, k, returns: bool):
    space = _space(q, ("global", "shared", "shared::cta", "shared::cluster"))
    _ignore_hints(q)
    op = q.take("add", "and", "or", "xor", "min", "max", "exch", "cas", "inc", "dec", required=True)
    if q.take("v2", "v4", "v8"):
        raise Unsupported("vector atomics are not modelled")
    t = q.take_type(("b32", "b64", "u32", "u64", "s32", "s64", "f32", "f64"))
    if op in ("and", "or", "xor", "exch", "cas") and t.kind == "f":
        raise Unsupported(f"atom.{op} expects an integer or bit type")
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
    fn = _atomic_fn(op, t)
    what = f"{ins.parts[0]}.{space}"

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
