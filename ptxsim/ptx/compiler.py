"""Compile one parsed ``.entry`` into executable form: symbol tables, layouts, one Op per instruction.

Handlers (see :mod:`ptxsim.ptx.registry`) build their executors from the accessors here:

* ``k.reader(operand, ptype)`` -> ``read(machine, sel)``: the operand as ``ptype`` values, one per
  selected thread (a numpy array, possibly a *view* of the register row: read every operand before
  writing), or a numpy scalar for immediates and symbols.
* ``k.writer(operand, ptype)`` -> ``write(machine, sel, values)`` (``_`` sinks discard).
* ``k.pred_reader(operand)`` / ``k.pred_writer(operand)``: predicates (``!p`` allowed in reads).
* ``k.address(addr)`` -> ``(space, fn)``: the address of ``[base+imm]`` (uint64 per thread or a
  scalar) and the state space of a variable base (``None`` for a register base).
"""

from __future__ import annotations

import numpy as np

from ptxsim.errors import PtxSyntaxError, SimError, SpecViolation, UnimplementedError, where
from ptxsim.memory.global_memory import SHARED_BASE
from ptxsim.ptx.parser import Addr, BranchTargets, Imm, Instr, Kernel, Label, Module, Name, Not, Pair, Vec
from ptxsim.ptx.registry import (
    Block,
    Branch,
    Exit,
    IndirectBranch,
    Op,
    Plain,
    Quals,
    Unsupported,
    find_handler,
)
from ptxsim.ptx.types import TYPES, PtxType
from reference.errors import SpecError

SPECIAL_REGISTERS = frozenset(
    [f"%{b}.{c}" for b in ("tid", "ntid", "ctaid", "nctaid", "clusterid", "nclusterid", "cluster_ctaid",
                           "cluster_nctaid") for c in "xyz"]
    + ["%cluster_ctarank", "%cluster_nctarank", "%is_explicit_cluster", "%laneid", "%warpid", "%nwarpid",
       "%smid", "%nsmid", "%gridid", "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge",
       "%lanemask_gt", "%dynamic_smem_size", "%total_smem_size"])
#: special registers of type .pred (PTX ISA chapter 10, Special Registers: %is_explicit_cluster is
#: declared ``.sreg .pred``)
PREDICATE_SPECIAL_REGISTERS = frozenset(["%is_explicit_cluster"])


def _size_of(type_name: str, count: int | None) -> int:
    bits = TYPES[type_name].bits if type_name in TYPES else None
    if bits is None:
        raise PtxSyntaxError(f"variable type .{type_name} is not supported by the simulator")
    return max(bits // 8, 1) * (1 if count is None else count)


def _layout(decls, base: int) -> tuple[dict[str, int], int]:
    """Offsets of variables laid out in declaration order with their alignment; total end."""
    offsets, top = {}, base
    for d in decls:
        align = d.align or max(TYPES[d.type].bits // 8, 1)
        top = (top + align - 1) // align * align
        offsets[d.name] = top
        top += _size_of(d.type, d.count)
    return offsets, top


def param_value_bytes(p, value) -> bytes:
    """The bytes of one ``.param`` value: ``bytes`` of exactly the declared size for arrays, else
    an int or float stored in the declared type (little-endian)."""
    size = _size_of(p.type, p.count)
    if isinstance(value, (bytes, bytearray)):
        if len(value) != size:
            raise ValueError(f"parameter {p.name} expects {size} bytes, but got {len(value)}")
        return bytes(value)
    return np.array(TYPES[p.type].scalar(value)).tobytes()


class KernelProgram:
    """A compiled kernel: ``code`` (one :class:`Op` per instruction) plus its symbol tables."""

    def __init__(self, module: Module, kernel: Kernel, global_symbols: dict[str, int] | None = None) -> None:
        self.module = module
        self.kernel = kernel
        self.name = kernel.name
        self.state: dict = {}                  # handler-private, per kernel (e.g. tcgen05 cta_group)
        self._regs(kernel)
        self._variables(module, kernel, global_symbols or {})
        self._params(kernel)
        self.labels: dict[str, int] = {}
        instrs: list[Instr] = []
        self.branch_targets: dict[str, BranchTargets] = {}
        for item in kernel.body:
            if isinstance(item, BranchTargets):
                if item.name in self.branch_targets:
                    raise PtxSyntaxError(f"line {item.line}: .branchtargets {item.name} defined twice")
                self.branch_targets[item.name] = item
            elif isinstance(item, Label):
                if item.name in self.labels:
                    raise PtxSyntaxError(f"line {item.line}: label {item.name} defined twice")
                self.labels[item.name] = len(instrs)
            else:
                instrs.append(item)
        self.instrs = instrs
        self.index_of = {id(ins): i for i, ins in enumerate(instrs)}
        self.ld_rows = _ld_destinations(instrs, self.regs)      # hazard checker rule wait-ld
        self._ld_row = {name: i for i, name in enumerate(self.ld_rows)}
        self.code: list[Op] = []
        problems: list[str] = []
        for ins in instrs:
            try:
                self.code.append(self._compile(ins))
            except Unsupported as exc:
                problems.append(f"{where(ins)}: {exc}")
                self.code.append(None)
            except SpecError as exc:            # a rule of the ISA broken at load (e.g. mixed .cta_group)
                raise SpecViolation(f"{where(ins)}: {exc}") from exc
            except SimError:
                raise
            except Exception as exc:            # a handler bug: still a SimError naming the line
                raise SimError(f"{where(ins)}: the simulator failed to compile this instruction "
                               f"({type(exc).__name__}: {exc})") from exc
        if problems:
            raise UnimplementedError(problems)
        end = len(self.code)
        for op in self.code:
            if isinstance(op, Branch):
                if op.target not in self.labels:
                    raise PtxSyntaxError(f"{where(op.instr)}: label {op.target} is not defined")
                op.pc = self.labels[op.target]
            elif isinstance(op, IndirectBranch):
                table = self.branch_targets.get(op.table)
                if table is None:
                    raise PtxSyntaxError(f"{where(op.instr)}: {op.table} is not a .branchtargets list")
                missing = [lab for lab in table.labels if lab not in self.labels]
                if missing:
                    raise PtxSyntaxError(f"line {table.line}: .branchtargets label(s) {', '.join(missing)} not defined")
                op.labels = table.labels
                op.pcs = np.array([self.labels[lab] for lab in table.labels], dtype=np.int64)
        # threads falling off the end (or branching to a label after the last instruction) exit
        tail = Exit()
        tail.instr = Instr("ret", (), line=instrs[-1].line if instrs else kernel.line, text="(end of kernel)")
        self.code.append(tail)
        self.length = end

    # -- tables -------------------------------------------------------------------------------

    def _regs(self, kernel: Kernel) -> None:
        self.regs: dict[str, tuple[int, PtxType]] = {}
        self.preds: dict[str, int] = {}
        for decl in kernel.regs:
            if decl.name in self.regs or decl.name in self.preds:
                raise PtxSyntaxError(f"line {decl.line}: register {decl.name} declared twice (nested scopes "
                                     "redeclaring a name are not supported by the simulator)")
            if decl.type == "pred":
                self.preds[decl.name] = len(self.preds)
            elif decl.type in TYPES:
                self.regs[decl.name] = (len(self.regs), TYPES[decl.type])
            else:
                raise PtxSyntaxError(f"line {decl.line}: register type .{decl.type} is not supported by the simulator")
        self.nregs = len(self.regs)
        self.npreds = len(self.preds)

    def _variables(self, module: Module, kernel: Kernel, global_symbols: dict[str, int]) -> None:
        shared = [v for v in (*module.variables, *kernel.variables) if v.space == "shared"]
        static = [v for v in shared if not (v.extern and v.count == 0)]
        dynamic = [v for v in shared if v.extern and v.count == 0]
        offsets, top = _layout(static, SHARED_BASE)
        self.static_shared_end = top
        align = max([v.align or 16 for v in dynamic] + [16])
        dyn_base = (top + align - 1) // align * align
        for v in dynamic:
            offsets[v.name] = dyn_base
        self.dynamic_shared_base = dyn_base
        self.symbols: dict[str, tuple[str, int]] = {n: ("shared", a) for n, a in offsets.items()}
        local_offsets, local_top = _layout([v for v in kernel.variables if v.space == "local"], 0)
        self.symbols.update({n: ("local", a) for n, a in local_offsets.items()})
        self.local_bytes = (local_top + 15) // 16 * 16
        for v in (*module.variables, *kernel.variables):
            if v.space in ("global", "const"):
                if v.name not in global_symbols:
                    raise PtxSyntaxError(f"line {v.line}: .{v.space} variable {v.name} has no device address")
                self.symbols[v.name] = (v.space, global_symbols[v.name])

    def shared_bytes(self, dynamic: int = 0) -> int:
        """Bytes of shared memory per CTA (counted from address 0) with ``dynamic`` extern bytes."""
        end = max(self.static_shared_end, self.dynamic_shared_base + int(dynamic)) if dynamic else self.static_shared_end
        return ((end + 15) // 16 * 16) - SHARED_BASE

    def _params(self, kernel: Kernel) -> None:
        self.param_layout: dict[str, tuple[int, str, int]] = {}
        top = 0
        for p in kernel.params:
            size = _size_of(p.type, p.count)
            align = p.align or max(TYPES[p.type].bits // 8, 1)
            top = (top + align - 1) // align * align
            self.param_layout[p.name] = (top, p.type, size)
            top += size
        self.param_bytes = top

    def pack_params(self, values) -> bytes:
        """The parameter buffer for ``values`` (ints, in declaration order; arrays as bytes)."""
        params = list(self.kernel.params)
        if len(values) != len(params):
            raise ValueError(f"kernel {self.name} expects {len(params)} parameters, but got {len(values)}")
        buf = bytearray(self.param_bytes)
        for p, v in zip(params, values, strict=True):
            off, _, size = self.param_layout[p.name]
            buf[off:off + size] = param_value_bytes(p, v)
        return bytes(buf)

    # -- compile ------------------------------------------------------------------------------

    def _compile(self, ins: Instr) -> Op:
        found = find_handler(ins.parts)
        if found is None:
            raise Unsupported(f"no simulator handler for instruction {ins.opcode}")
        n, handler = found
        q = Quals(ins.parts[n:])
        self._writes = set()                   # destination registers the handler asks writers for
        result = handler(ins, q, self)
        q.done()
        op = result if isinstance(result, Op) else Plain(result)
        op.instr = ins
        if isinstance(op, Plain) and self._ld_row:
            rows = self.ld_rows_of(self._writes)
            if rows.size:
                op.fn = _ld_checked(op.fn, rows, ins)
        if ins.guard is not None:
            op.guard, op.neg = self.pred_index(ins.guard), ins.guard_neg
            if isinstance(op, Plain):
                op.fn = _guarded(op.fn, op.guard, op.neg)
            elif isinstance(op, Block):
                raise Unsupported("a guard predicate on a blocking instruction is not supported by the simulator")
        return op

    def ld_rows_of(self, names) -> np.ndarray:
        """Rows (in ``ld_rows``) of the registers ``names`` that some tcgen05.ld writes."""
        return np.array(sorted({self._ld_row[n] for n in names if n in self._ld_row}), dtype=np.int64)

    # -- operand accessors --------------------------------------------------------------------

    def pred_index(self, name: Name) -> int:
        if name.text not in self.preds:
            raise Unsupported(f"{name.text} is not a declared predicate register")
        return self.preds[name.text]

    def operands(self, ins: Instr, *counts: int) -> tuple:
        if len(ins.operands) not in counts:
            raise Unsupported(f"expects {' or '.join(map(str, counts))} operands, but got {len(ins.operands)}")
        return ins.operands

    def immediate(self, op: Imm, t: PtxType):
        """The typed numpy scalar of an immediate for an instruction of type ``t``."""
        if op.form == "int":
            return t.scalar(int(op.value))
        if op.form == "float":
            return t.scalar(float(op.value))
        if op.form == "f32":
            f = np.array(op.value, dtype=np.uint32).view(np.float32)[()]
        else:
            f = np.array(op.value, dtype=np.uint64).view(np.float64)[()]
        if t.kind in ("f", "bf"):
            return t.dtype(f)
        return t.scalar(int(op.value))                        # bits of a 0f literal in a .b32 move

    def reader(self, op, t: PtxType):
        """``read(machine, sel)`` for a source operand of type ``t`` (see the module docstring)."""
        if isinstance(op, Imm):
            value = self.immediate(op, t)
            return lambda m, s: value
        if isinstance(op, Not) or (isinstance(op, Name) and op.text in self.preds):
            if t.kind != "pred":
                raise Unsupported(f"predicate {op} used as a .{t.name} value")
            return self.pred_reader(op)
        if not isinstance(op, Name):
            raise Unsupported(f"operand {op} is not a register, immediate or symbol")
        text = op.text
        if op.offset and text not in self.symbols:
            raise Unsupported(f"{text}{op.offset:+d}: only variables take an offset outside brackets")
        if text in self.regs:
            i, _ = self.regs[text]
            if t.bits == 64 and t.kind in "bu":
                return lambda m, s: m.R[i, s.ix]
            udt = t.udtype                         # t.from_u64 inlined (the row is an array already)
            if t.kind in "bu":
                return lambda m, s: m.R[i, s.ix].astype(udt)
            dt = t.dtype
            return lambda m, s: m.R[i, s.ix].astype(udt).view(dt)
        if text in PREDICATE_SPECIAL_REGISTERS:
            if t.kind != "pred":
                raise Unsupported(f"{text} is a .pred special register, read here as .{t.name}")
            return self.pred_reader(op)
        if text in SPECIAL_REGISTERS:
            conv = t.from_u64
            return lambda m, s: conv(m.special(text)[s.ix])
        if text in self.symbols:
            value = t.scalar(self.symbols[text][1] + op.offset)
            return lambda m, s: value
        if text in self.param_layout:              # a kernel parameter's .param address (cvta.param makes it generic)
            value = t.scalar(self.param_layout[text][0] + op.offset)
            return lambda m, s: value
        raise Unsupported(f"{text} is not a declared register, special register, variable or parameter")

    def symbol_space(self, op) -> str | None:
        """State space of a variable operand (``shared``, ``global``, ...), else None."""
        return self.symbols[op.text][0] if isinstance(op, Name) and op.text in self.symbols else None

    def writer(self, op, t: PtxType):
        """``write(machine, sel, values)`` for a destination of type ``t``."""
        if isinstance(op, Name) and op.text == "_":
            return lambda m, s, v: None
        if isinstance(op, Name) and op.text in self.preds:
            return self.pred_writer(op)
        if not isinstance(op, Name) or op.text not in self.regs:
            raise Unsupported(f"destination {getattr(op, 'text', op)} is not a declared register")
        self._writes.add(op.text)
        i, rt = self.regs[op.text]
        bits = rt.bits
        if t.bits > bits:
            mask = np.uint64((1 << bits) - 1)

            def write_narrow(m, s, v):
                m.R[i, s.ix] = t.to_u64(v, 64) & mask
            return write_narrow

        return _register_write(i, t, bits)

    def register_rows(self, ops, t: PtxType) -> np.ndarray | None:
        """Rows of ``R`` of the operands ``ops`` when they are distinct registers, each at least
        ``t.bits`` wide, of a ``.b``/``.u`` type ``t``: reading or writing them all at once (one
        index for many registers, :func:`read_rows`/:func:`write_rows`) is then what their
        :meth:`reader`/:meth:`writer` one by one do. None otherwise."""
        if t.kind not in "bu":
            return None
        rows = []
        for op in ops:
            if not isinstance(op, Name) or op.offset or op.text not in self.regs:
                return None
            i, rt = self.regs[op.text]
            if rt.bits < t.bits:
                return None
            rows.append(i)
        if len(set(rows)) != len(rows):
            return None
        return np.array(rows, dtype=np.intp)

    def pred_reader(self, op):
        if isinstance(op, Name) and op.text in PREDICATE_SPECIAL_REGISTERS:
            text = op.text
            return lambda m, s: m.special(text)[s.ix] != 0
        if isinstance(op, Not):
            i = self.pred_index(op.name)
            return lambda m, s: ~m.P[i, s.ix]
        if isinstance(op, Imm):
            value = bool(op.value)
            return lambda m, s: np.bool_(value)
        i = self.pred_index(op)
        return lambda m, s: m.P[i, s.ix]

    def pred_writer(self, op):
        if isinstance(op, Name) and op.text == "_":
            return lambda m, s, v: None
        i = self.pred_index(op)

        def write(m, s, v):
            m.P[i, s.ix] = v
        return write

    def address(self, op) -> tuple[str | None, object]:
        """``(space of a variable base or None, addr(machine, sel))`` for ``[base+imm]``."""
        if not isinstance(op, Addr):
            raise Unsupported(f"expects an address operand [..], but got {op}")
        off = op.offset
        if op.base is None:
            value = np.uint64(off & (2**64 - 1))
            return None, lambda m, s: value
        text = op.base.text
        if text in self.param_layout:
            value = np.uint64(self.param_layout[text][0] + off)
            return "param", lambda m, s: value
        if text in self.symbols:
            space, base = self.symbols[text]
            value = np.uint64(base + off)
            return space, lambda m, s: value
        if text in self.regs:
            i, _ = self.regs[text]
            if off == 0:
                return None, lambda m, s: m.R[i, s.ix]
            delta = np.uint64(off & (2**64 - 1))
            return None, lambda m, s: m.R[i, s.ix] + delta
        raise Unsupported(f"address base {text} is not a register, variable or parameter")

    def vector(self, op, n: int | None = None) -> tuple:
        """The items of a ``{..}`` operand (or the operand alone when ``n`` is 1)."""
        if isinstance(op, Vec):
            if n is not None and len(op.items) != n:
                raise Unsupported(f"expects a vector of {n} operands, but got {len(op.items)}")
            return op.items
        if n in (None, 1):
            return (op,)
        raise Unsupported(f"expects a vector of {n} operands, but got {op}")


def register_names(operands) -> list[str]:
    """Every name an instruction's operands mention (registers among them), recursively."""
    out = []
    for op in operands:
        if isinstance(op, Name):
            out.append(op.text)
        elif isinstance(op, Addr):
            if op.base is not None:
                out.append(op.base.text)
        elif isinstance(op, Vec):
            out.extend(register_names(op.items))
        elif isinstance(op, Not):
            out.append(op.name.text)
        elif isinstance(op, Pair):
            out.extend((op.first.text, op.second.text))
    return out


def _ld_destinations(instrs, regs) -> tuple[str, ...]:
    """The registers some ``tcgen05.ld`` of the kernel writes (destinations and ``.red`` value)."""
    names = []
    for ins in instrs:
        if ins.opcode.startswith("tcgen05.ld.") and ins.operands:
            dests = ins.operands[:2] if ".red." in ins.opcode else ins.operands[:1]
            names.extend(n for n in register_names(dests) if n in regs and n not in names)
    return tuple(names)


def _register_write(i: int, t: PtxType, bits: int):
    """``write(machine, sel, values)`` of values of type ``t`` into register row ``i`` of width
    ``bits`` >= ``t.bits``: ``t.to_u64(values, bits)`` stored, without its final conversion to
    uint64 (the row's assignment widens the unsigned bits exactly as that conversion does)."""
    dt, udt = t.dtype, t.udtype
    if t.kind in "bu":
        def write(m, s, v):
            m.R[i, s.ix] = np.asarray(v, dtype=dt)
    elif t.kind == "s" and bits > t.bits:                 # sign-extended to the register's width
        sdt, wdt = np.dtype(f"int{bits}"), np.dtype(f"uint{bits}")

        def write(m, s, v):
            m.R[i, s.ix] = np.asarray(v, dtype=dt).astype(sdt).view(wdt)
    else:
        def write(m, s, v):
            m.R[i, s.ix] = np.asarray(v, dtype=dt).view(udt)
    return write


def read_rows(m, s, rows: np.ndarray, t: PtxType) -> np.ndarray:
    """``[thread, k]``: register ``rows[k]`` (:meth:`KernelProgram.register_rows`) of each thread
    of ``s`` as type ``t`` (its low bits, as the reader of each register gives them)."""
    if isinstance(s.ix, slice):
        return m.R[rows, s.ix].T.astype(t.udtype, order="C")
    return m.R[rows[:, None], s.ix].T.astype(t.udtype, order="C")


def write_rows(m, s, rows: np.ndarray, values: np.ndarray) -> None:
    """Write ``values[thread, k]`` (unsigned, at most 64 bits) into register ``rows[k]``
    (:meth:`KernelProgram.register_rows`) of each thread of ``s``, zero-extended."""
    by_row = np.ascontiguousarray(values.T)           # a contiguous source scatters twice as fast
    if isinstance(s.ix, slice):
        m.R[rows, s.ix] = by_row
    else:
        m.R[rows[:, None], s.ix] = by_row


def _ld_checked(fn, rows: np.ndarray, ins):
    """``fn`` preceded by the hazard check of rule wait-ld (it overwrites tcgen05.ld destinations)."""
    def run(m, s):
        hz = m.hz
        if hz is not None and hz.ld_any:
            hz.check_regs(s, rows, ins)
        fn(m, s)
    return run


def _guarded(fn, gi: int, neg: bool):
    def run(m, s):
        mask = m.P[gi, s.ix]
        sub = s.narrow(~mask if neg else mask)
        if sub is not None:
            fn(m, sub)
    return run

