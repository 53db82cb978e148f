"""Execution trace: what a launch executed (instruction spellings x threads) and which decoded
tcgen05 features it used.

``SimDevice(trace=True)`` (or ``dev.trace = Trace()``) records every ``run`` into ``dev.trace``:

* instruction counts: the scheduler adds the number of threads of each executed group to a
  per-instruction tally (``Machine.tally``, one int per compiled instruction); after the batch the
  tally is folded into counts per opcode spelling (``tcgen05.mma.cta_group::1.kind::f16``).  A
  guarded instruction counts every thread that reaches it (predicated-off threads included), a
  failing wait loop every spin;
* features: an observer (:class:`Observer`) stands in front of the launch's fault set.  At every
  hook call it records a few decoded fields of the value (as the kernel asked for them, before any
  fault), then passes the value to the real faults unchanged: faults still apply, probes still
  probe.  With tracing off nothing is wrapped and the tally is ``None`` (one ``is None`` test per
  instruction run);
* executed source lines: ``lines[kernel]`` is the set of 1-based PTX line numbers of the
  instructions some thread reached in a launch of entry ``kernel`` (the hazard score tells from it
  whether any case executes a synchronization site);
* ``thread_instructions`` (the sum of the counts) and ``seconds`` (wall time of the launches),
  so ``thread_instructions / seconds`` is the simulator's speed.

``trace.summary()`` is a JSON-able dict (see :meth:`Trace.summary`).
"""

from __future__ import annotations

import json
from collections import Counter

#: hooks the observer records, and the fields it keeps of each call
FEATURE_HOOKS = ("smem_desc", "instr_desc", "zero_column_mask", "sparsity_metadata", "scale_factors",
                 "tmem_ld_map", "tmem_st_map", "cp_decompress", "shift", "mma_operands", "mma_result", "mbarrier")

_INSTR_DESC_FIELDS = ("kind", "m", "n", "a_type", "b_type", "d_type", "sparse", "sparsity_selector", "saturate",
                      "negate_a", "negate_b", "transpose_a", "transpose_b", "max_shift", "scale_type", "a_scale_id",
                      "b_scale_id", "k96")


def _plain(v):
    """A JSON scalar for ``v`` (numpy scalars to Python, other objects to str)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    item = getattr(v, "item", None)
    if callable(item):
        try:
            return _plain(item())
        except (TypeError, ValueError):
            pass
    return str(v)


def _features(hook: str, value, ctx: dict) -> dict:
    """The recorded fields of one hook call (documented in docs/sim.md, "Execution trace")."""
    get = ctx.get
    if hook == "smem_desc":
        return {"operand": get("operand"), "kind": get("kind"), "major": get("major"),
                "swizzle": getattr(value, "swizzle", None), "lbo_mode": getattr(value, "lbo_mode", None)}
    if hook == "instr_desc":
        return {f: getattr(value, f, None) for f in _INSTR_DESC_FIELDS}
    if hook == "zero_column_mask":
        desc = get("desc")
        return {"m": get("m"), "n": get("n"), "non_zero_mask": getattr(desc, "non_zero_mask", None),
                "column_shift": getattr(desc, "column_shift", None)}
    if hook == "sparsity_metadata":
        return {"kind": get("kind"), "selector": get("selector")}
    if hook == "scale_factors":
        return {"kind": get("kind"), "scale_type": getattr(value, "scale_type", get("scale_type")),
                "a_id": getattr(value, "a_id", None), "b_id": getattr(value, "b_id", None)}
    if hook == "tmem_ld_map":
        return {"shape": get("shape"), "num": get("num"), "pack": get("pack")}
    if hook == "tmem_st_map":
        return {"shape": get("shape"), "num": get("num"), "unpack": get("unpack")}
    if hook == "cp_decompress":
        return {"src_format": get("src_format")}
    if hook == "shift":
        return {"op": get("op"), "rows": get("rows")}
    if hook == "mma_operands":
        return {"kind": get("kind"), "enable_input_d": getattr(value, "enable_input_d", None),
                "scale_input_d": getattr(value, "scale_input_d", None),
                "disable_output_lane": getattr(value, "disable_output_lane", None) is not None,
                "column_shift": getattr(value, "column_shift", None)}
    if hook == "mma_result":
        return {"kind": get("kind"), "d_type": get("d_type"), "cta_group": get("cta_group")}
    if hook == "mbarrier":
        return {"kind": getattr(value, "kind", None)}
    return {}


def is_approximate(opcode: str) -> bool:
    """Whether an instruction spelling is an approximation whose exact bits the ISA leaves open
    (``.approx`` forms, ``div.full``): the simulator models those within the stated error bound."""
    parts = opcode.split(".")
    return "approx" in parts or (parts[0] == "div" and "full" in parts)


class Observer:
    """A fault set's stand-in that records the features of every hook call, then delegates.

    It never changes a value: ``apply`` returns whatever the wrapped fault set returns.  ``active``
    is true for the hooks it records (so handlers that only call a hook when a fault is active
    call it) and for whatever the wrapped set has active."""

    def __init__(self, inner, trace: Trace) -> None:
        self.inner = inner
        self.trace = trace

    @property
    def faults(self):
        return self.inner.faults

    def active(self, hook: str) -> bool:
        return hook in FEATURE_HOOKS or self.inner.active(hook)

    def apply(self, hook: str, value, **ctx):
        if hook in FEATURE_HOOKS:
            self.trace.observe(hook, value, ctx)
        return self.inner.apply(hook, value, **ctx)

    def __bool__(self) -> bool:
        return bool(self.inner)

    def __getattr__(self, name):          # ProbeSet.batch/effects/...: the wrapped set's
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


class Trace:
    """Accumulates instruction counts, features, thread-instructions and seconds over launches.

    ``features=False`` counts instructions only (no observer: hook calls cost what they cost
    without tracing; the benchmark measures speed that way)."""

    def __init__(self, features: bool = True) -> None:
        self.features = bool(features)
        self.reset()

    def reset(self) -> None:
        self.counts: Counter = Counter()                     # spelling -> thread-executions
        self.lines: dict[str, set[int]] = {}                 # entry name -> executed 1-based PTX lines
        self.found: dict[str, set[str]] = {h: set() for h in FEATURE_HOOKS}     # hook -> JSON of records
        self.calls: Counter = Counter()                      # hook -> calls
        self.seconds = 0.0
        self.runs = 0

    # -- recording (called by SimDevice.run and the observer) -----------------------------------

    def wrap(self, faults):
        """The fault set a traced launch runs with."""
        return Observer(faults, self) if self.features else faults

    def new_tally(self, program) -> list[int]:
        return [0] * len(program.code)

    def add_tally(self, program, tally: list[int]) -> None:
        """Fold one batch's per-instruction thread counts into counts per spelling."""
        code = program.code
        counts = self.counts
        lines = self.lines.setdefault(program.kernel.name, set())
        for pc in range(min(program.length, len(tally))):        # the synthetic end-of-kernel ret is left out
            n = tally[pc]
            if n:
                instr = code[pc].instr
                counts[instr.opcode] += n
                lines.add(instr.line)

    def add_run(self, seconds: float) -> None:
        self.seconds += float(seconds)
        self.runs += 1

    def observe(self, hook: str, value, ctx: dict) -> None:
        self.calls[hook] += 1
        try:
            record = {k: _plain(v) for k, v in _features(hook, value, ctx).items()}
        except Exception as exc:  # noqa: BLE001  (an observer never breaks a launch)
            record = {"unrecorded": f"{type(exc).__name__}: {exc}"}
        self.found[hook].add(json.dumps(record, sort_keys=True))

    # -- results -----------------------------------------------------------------------------------

    @property
    def approximate(self) -> dict[str, int]:
        """The executed approximate instructions (:func:`is_approximate`), spelling -> threads: their
        results are the simulator's model within the ISA's error bound, not the hardware's bits."""
        return {op: n for op, n in sorted(self.counts.items()) if is_approximate(op)}

    @property
    def thread_instructions(self) -> int:
        return int(sum(self.counts.values()))

    def rate(self) -> float:
        """Thread-instructions per second of launch wall time (0.0 before any launch)."""
        return self.thread_instructions / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> dict:
        """``{"instructions": {spelling: threads}, "features": {hook: [record, ...]},
        "hook_calls": {hook: calls}, "approximate": {spelling: threads}, "thread_instructions": N,
        "seconds": s, "runs": launches}``.

        Records are dicts of plain values, each distinct record once, sorted; ``features["mbarrier"]``
        lists event kinds as strings.  Every hook of :data:`FEATURE_HOOKS` is a key (empty when not
        called; all empty with ``features=False``)."""
        features: dict[str, list] = {}
        for hook in FEATURE_HOOKS:
            records = [json.loads(r) for r in sorted(self.found[hook])]
            if hook == "mbarrier":
                records = sorted({r.get("kind") for r in records if r.get("kind") is not None})
            features[hook] = records
        return {
            "instructions": dict(sorted(self.counts.items())),
            "features": features,
            "hook_calls": dict(sorted(self.calls.items())),
            "approximate": self.approximate,
            "thread_instructions": self.thread_instructions,
            "seconds": self.seconds,
            "runs": self.runs,
        }


__all__ = ["FEATURE_HOOKS", "Observer", "Trace", "is_approximate"]
