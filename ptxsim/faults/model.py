"""Fault injection: named hook points where a fault transforms one decoded effect of the hardware.

A fault is ``Fault(name, hook, fn)``; ``fn(value, ctx)`` returns the (possibly) altered value.
``ctx`` is a :class:`types.SimpleNamespace` whose fields each hook documents in :data:`HOOKS`
(also in ``docs/sim.md``).  With no active fault on a hook, :meth:`FaultSet.apply` returns the
value untouched, so the simulator's normal path pays one dict lookup per hook call.

A fault file is a Python module defining ``FAULTS = [Fault(...), ...]``; load it with
:func:`load_faults` (``--faults-from FILE``).
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np


@dataclass(frozen=True)
class Fault:
    """One injectable hardware bug: ``fn(value, ctx) -> value`` at hook point ``hook``."""

    name: str
    hook: str
    fn: Callable[[Any, types.SimpleNamespace], Any]
    rationale: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"Fault name expects a non-empty string, but got {self.name!r}")
        if self.hook not in HOOKS:
            raise ValueError(f"Fault {self.name!r}: hook expects one of {', '.join(HOOKS)}, but got {self.hook!r}")
        if not callable(self.fn):
            raise ValueError(f"Fault {self.name!r}: fn expects a callable (value, ctx) -> value, but got {self.fn!r}")


@dataclass(frozen=True)
class HookSpec:
    """Documentation of a hook point: what ``value`` is and which ``ctx`` fields come with it."""

    value: str
    ctx: str
    where: str


@dataclass(frozen=True)
class MbarrierEvent:
    """An arrive-on / transaction signal about to be applied to one mbarrier object.

    ``kind``: ``arrive`` (mbarrier.arrive*, aggregated over the threads of one instruction that
    target the same object), ``commit`` (tcgen05.commit), ``expect_tx``, ``complete_tx``.
    ``count`` arrivals, ``tx`` transaction bytes (added by expect_tx, removed by complete_tx).
    ``complete_pending`` (commit only): complete the tracked tcgen05 operations before arriving;
    a fault that clears it makes the commit arrive while the operations are still pending.
    Returning ``None`` from a fault drops the event.
    """

    kind: str
    cta: int
    address: int
    count: int = 1
    tx: int = 0
    complete_pending: bool = True


HOOKS: dict[str, HookSpec] = {
    "smem_desc": HookSpec(
        "reference.smem_descriptor.SmemDescriptor (decoded fields)",
        "operand ('a' | 'b' | 's' for tcgen05.cp), raw (the 64-bit descriptor), kind (None for cp), "
        "major ('K' | 'MN'), instr (PTX text), cta",
        "tcgen05.mma*/cp: after decoding a shared memory descriptor, before reading shared memory (per CTA)"),
    "smem_units": HookSpec(
        "numpy int64 array (MN, K): linear (pre-swizzle) byte address of the 16-byte unit of each element",
        "unit (index of the element's unit along the leading dimension), desc (SmemDescriptor after "
        "smem_desc), major, dtype, kind, instr, cta",
        "tcgen05.mma*/cp: reading an operand tile from shared memory, before swizzling the addresses"),
    "instr_desc": HookSpec(
        "reference.instr_descriptor.InstrDescriptor (decoded fields)",
        "kind, raw (the 32-bit descriptor), instr, cta",
        "tcgen05.mma*: after decoding the instruction descriptor, at issue"),
    "zero_column_mask": HookSpec(
        "numpy bool array (N,): True where column n of B is treated as zero",
        "desc (reference.zero_column_mask.ZeroColumnMaskDescriptor), raw, m, n, instr, cta",
        "tcgen05.mma.ws* with a zero-column mask operand, after expanding the mask"),
    "sparsity_metadata": HookSpec(
        "numpy int array (M, chunks, kept): position inside its chunk of each kept element, storage order",
        "kind (tcgen05 kind; warp-level: the kind of the same types), selector, raw (tcgen05: the nibbles "
        "read; mma.sp: the 32 metadata registers), instr, cta",
        "tcgen05.mma.sp* and warp-level mma.sp, after decoding the metadata"),
    "scale_factors": HookSpec(
        "ptxsim.isa.mma_arith.ScaleFactors: a (M, SF) and b (N, SF) uint8 scale codes, a_id, b_id, scale_type",
        "kind, scale_type, raw_a, raw_b (the codes as read), reread(a_id, b_id) -> ScaleFactors, instr, cta; "
        "warp-level: a_id/b_id are byte-id-a/-b, ctx thread_id_a, thread_id_b",
        "tcgen05.mma*.block_scale, after reading the scale factors from Tensor Memory; warp-level "
        "mma.sp .block_scale, after reading them from the scale registers"),
    "tmem_ld_map": HookSpec(
        "numpy int array (32, E, 2): (lane offset, column offset) per thread and entry; E = registers, or "
        "2 x registers with .pack::16b (entry 2i+h = half h of register i)",
        "shape, num, pack, warp (warp of the warpgroup), instr, cta",
        "tcgen05.ld, before reading Tensor Memory (per warp)"),
    "tmem_st_map": HookSpec(
        "numpy int array (32, E, 2), as tmem_ld_map (.unpack::16b: entry 2i+h = half h of register i)",
        "shape, num, unpack, warp, instr, cta",
        "tcgen05.st, before writing Tensor Memory (per warp)"),
    "cp_decompress": HookSpec(
        "numpy uint8 array (rows, row bytes): the 8-bit containers produced by decompression",
        "src_format ('b4x16_p64' | 'b6x16_p32'), raw (source bytes, rows x row bytes), instr, cta",
        "tcgen05.cp with decompression, before writing Tensor Memory"),
    "shift": HookSpec(
        "numpy int array (rows,): source row of each destination row (identity where unchanged); for op "
        "'shift' a longer array also writes rows past the 32-row matrix (clipped at lane 127)",
        "op ('shift' | 'ashift'), rows, instr, cta",
        "tcgen05.shift (32 rows) and tcgen05.mma .ashift (M rows of A), before moving rows"),
    "mma_operands": HookSpec(
        "ptxsim.isa.mma_arith.MmaOperands: enable_input_d, scale_input_d, disable_output_lane (bit "
        "128*cta + lane, or None), column_shift (.ws)",
        "kind, instr, cta",
        "tcgen05.mma*: after reading the operands that are not in a descriptor, at issue"),
    "mma_result": HookSpec(
        "numpy uint32 array (M, N): D codes (f16 in the low 16 bits), before write-back",
        "row, col (broadcastable index arrays), kind, d_type, d_in (D before, codes), enable_input_d, "
        "cta_group (0 for warp-level mma.sp), case (MmaCase), recompute(**changes) -> codes, instr, cta",
        "tcgen05.mma* and warp-level mma.sp, just before write-back"),
    "mbarrier": HookSpec(
        "MbarrierEvent",
        "instr, cta",
        "every arrive/commit/expect_tx/complete_tx signal, before it updates the mbarrier object"),
}


class FaultSet:
    """The active faults, grouped by hook."""

    def __init__(self, faults: Iterable[Fault] = ()) -> None:
        self.faults = tuple(faults)
        seen: set[str] = set()
        by_hook: dict[str, list[Fault]] = {}
        for f in self.faults:
            if not isinstance(f, Fault):
                raise ValueError(f"fault expects a Fault, but got {f!r}")
            if f.name in seen:
                raise ValueError(f"fault name {f.name!r} appears twice")
            seen.add(f.name)
            by_hook.setdefault(f.hook, []).append(f)
        self._by_hook = by_hook

    def active(self, hook: str) -> bool:
        return hook in self._by_hook

    def apply(self, hook: str, value, **ctx):
        """Pass ``value`` through every active fault of ``hook`` (identity when none)."""
        faults = self._by_hook.get(hook)
        if not faults:
            return value
        if hook not in HOOKS:
            raise ValueError(f"hook expects one of {', '.join(HOOKS)}, but got {hook!r}")
        ns = types.SimpleNamespace(**ctx)
        for f in faults:
            value = f.fn(value, ns)
        return value

    def __bool__(self) -> bool:
        return bool(self.faults)


NO_FAULTS = FaultSet()


PURITY_CHECKS = 64


class ProbeSet(FaultSet):
    """A dry run of faults: every hook value passes through *unchanged*, and each fault is tried on
    a copy of it to record where it would have changed a decoded effect.

    ``effects`` collects ``(fault name, cluster)`` pairs (``cluster`` is the launch-wide cluster
    index, i.e. the case, per docs/kernel-abi.md; ``None`` where a hook gave no ``cta``).  A fault
    that raises counts as an effect.  The mutation score uses it: on a deterministic simulator, a
    case in which a (pure) fault returns its input at every hook application runs exactly as
    without the fault, so it cannot catch it and need not be run under it.  The first
    ``PURITY_CHECKS`` calls of each fault are made twice; a fault whose two answers differ (it
    keeps state, or draws random numbers) lands in ``impure``, and the mutation score then runs
    it in every case.
    """

    def __init__(self, faults: Iterable[Fault] = ()) -> None:
        super().__init__(faults)
        self.effects: set[tuple[str, int | None]] = set()
        self.by_case: dict[str, set[str]] = {}       # case ID -> faults with an effect (see take)
        self.impure: set[str] = set()                # faults whose answer changed between two equal calls
        self.checked: dict[str, int] = {}            # fault -> calls checked twice so far
        self._clusters = None
        self._cluster_size = 1

    def batch(self, clusters, cluster_size: int) -> None:
        """The clusters of the launch the next hook calls come from (machine-local CTA -> cluster)."""
        self._clusters = clusters
        self._cluster_size = max(int(cluster_size), 1)

    def take(self, case_ids) -> None:
        """Move ``effects`` of a finished launch into ``by_case`` (cluster ``i`` runs case ``i``)."""
        for name, cluster in self.effects:
            hit = case_ids if cluster is None or not 0 <= cluster < len(case_ids) else [case_ids[cluster]]
            for cid in hit:
                self.by_case.setdefault(cid, set()).add(name)
        self.effects = set()

    def _cluster(self, cta) -> int | None:
        if cta is None or self._clusters is None:
            return None
        i = int(cta) // self._cluster_size
        return int(self._clusters[i]) if 0 <= i < len(self._clusters) else None

    def apply(self, hook: str, value, **ctx):
        faults = self._by_hook.get(hook)
        if not faults:
            return value
        where = self._cluster(ctx.get("cta"))

        def call(fault):          # on private copies: a fault may alter its arguments in place
            return fault.fn(_private(value), types.SimpleNamespace(**{k: _private(v) for k, v in ctx.items()}))
        for f in faults:
            checks = self.checked.get(f.name, 0)
            if (f.name, where) in self.effects and checks >= PURITY_CHECKS:
                continue
            try:
                out = call(f)
                changed = not same_value(out, value)
                if checks < PURITY_CHECKS:        # the same call again must give the same answer
                    self.checked[f.name] = checks + 1
                    if not same_value(call(f), out):
                        self.impure.add(f.name)
            except Exception:  # noqa: BLE001  (a fault that raises would crash the launch: an effect)
                changed = True
            if changed:
                self.effects.add((f.name, where))
        return value


def _private(v):
    """A copy a fault may alter in place without touching the simulator's own value."""
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, (int, float, str, bytes, bool, type(None))) or callable(v):
        return v
    try:
        return copy.deepcopy(v)
    except Exception:  # noqa: BLE001
        return v


def same_value(a, b) -> bool:
    """Whether a fault's output equals its input (arrays by shape and values, dataclasses by field)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        floats = a.dtype.kind in "fc" and b.dtype.kind in "fc"       # NaN equals NaN here
        return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=floats))
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        if type(a) is not type(b):
            return False
        return all(same_value(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    try:
        eq = a == b
        return bool(np.all(eq)) if isinstance(eq, np.ndarray) else bool(eq)
    except Exception:  # noqa: BLE001
        return False


def load_faults(path: str | Path) -> tuple[Fault, ...]:
    """The ``FAULTS`` list of the Python file ``path`` (validated)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"fault file expects an existing Python file, but got {str(path)!r}")
    name = f"_tcgen05_cts_faults_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"fault file {str(path)!r} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    faults = getattr(module, "FAULTS", None)
    if not isinstance(faults, (list, tuple)):
        raise ValueError(f"fault file {str(path)!r} expects a module-level FAULTS list, but got {type(faults).__name__}")
    for f in faults:
        if not isinstance(f, Fault):
            raise ValueError(f"fault file {str(path)!r}: FAULTS expects Fault items, but got {f!r}")
    FaultSet(faults)          # duplicate names are an error
    return tuple(faults)
