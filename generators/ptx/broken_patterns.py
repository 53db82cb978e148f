"""Broken forms of the canonical synchronization patterns (§9.7.16.6.4): one step removed.

Each pattern kernel (``patterns.py``) is generated again with one synchronization step of the
pattern deleted (``KernelSpec.without``, a ``sync_sites`` key): the steps of the pattern's own
body (``Raw``), the wait that orders its completion before the read-back (``WaitMbarrier``) and,
for the bulk-copy pattern, the wait for the copy (``StageSmem``). These are negative execution
cases: on the simulated device the hazard checker must raise ``HazardError`` with one of the
expected rule ids (a removed ``tcgen05.commit`` instead leaves its wait unsatisfied: the device
reports a timeout).

A few deletions are *not* hazards in these kernels and are not generated (``NOT_A_HAZARD``,
with the reason); the hazard score reports them as survivors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from generators.ptx.kernel import KernelSpec, render
from generators.ptx.patterns import Pattern
from generators.ptx.sync_sites import sync_sites

TIMEOUT = "timeout"

#: site kind -> (short name of the step, the hazard rule ids that report its absence)
#: site kind -> (short name of the step, the hazard rule ids that report its absence; the ids of
#: ``ptxsim.hazards``, docs/sim.md "Hazard checker")
STEP_RULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "tcgen05.wait::ld": ("wait::ld", ("wait-ld",)),
    "tcgen05.wait::st": ("wait::st", ("wait-st",)),
    "tcgen05.fence::before_thread_sync": ("fence::before_thread_sync", ("tcgen05-fence",)),
    "tcgen05.fence::after_thread_sync": ("fence::after_thread_sync", ("tcgen05-fence",)),
    # no wait at all: the access is ordered neither after the asynchronous operation's completion
    # (async-read / async-write) nor after the other thread's tcgen05 operation (tmem-race)
    "mbarrier.try_wait loop": ("mbarrier wait", ("async-read", "async-write", "tmem-race")),
    "tcgen05.commit": ("commit", (TIMEOUT,)),
}
STEPS = ("Raw", "WaitMbarrier")
ROLE = {"WaitMbarrier": "completion", "StageSmem": "bulk copy"}

#: (pattern, site key) -> why removing it is no hazard in that kernel
NOT_A_HAZARD: dict[tuple[str, str], str] = {
    **{(p, "Raw.tcgen05.wait::ld.0"): "warp 1 only reads %v0 afterwards (a true register dependency, "
       "respected without tcgen05.wait::ld, §9.7.16.6.4.5) and writes no Tensor Memory; the read-back's own "
       "wait::ld completes the load before the deallocation" for p in ("non_pipelined_different_thread.mma_ld",
                                                                    "non_pipelined_different_thread.composed")},
    ("non_pipelined_different_thread.composed", "Raw.tcgen05.fence::after_thread_sync.0"):
        "thread 0 issues no tcgen05 operation after it; the chain commit -> try_wait -> arrive -> try_wait orders the "
        "MMA before warp 1's fence::after_thread_sync",
    ("non_pipelined_different_thread.composed", "Raw.tcgen05.fence::before_thread_sync.0"):
        "the commit already performed the before-fence for the MMA (§9.7.16.6.4.2) and thread 0 waited for it",
}


@dataclass(frozen=True)
class BrokenForm:
    """A pattern kernel without one step: the site key, the step in words, the expected rules."""

    key: str
    step: str
    expect: tuple[str, ...]

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9]+", "_", self.step).strip("_")


def broken_forms(p: Pattern, kernel: KernelSpec) -> tuple[BrokenForm, ...]:
    """Every broken form of pattern ``p`` (whose kernel is ``kernel``), in program order."""
    bulk_wait = "StageSmem.mbarrier.try_wait loop.0" if p.bulk_staging else None
    sites = [s for s in sync_sites(render(kernel, "sm_100a", (8, 7)))
             if (s.step in STEPS or s.key == bulk_wait) and s.kind in STEP_RULES and (p.name, s.key) not in NOT_A_HAZARD]
    out = []
    for s in sites:
        name, rules = STEP_RULES[s.kind]
        same = [o for o in sites if o.step == s.step and o.kind == s.kind]
        role = ROLE.get(s.step, "")
        if len(same) > 1:
            role = f"{role} #{same.index(s) + 1}".strip()
        out.append(BrokenForm(s.key, f"{name} ({role})" if role else name, rules))
    return tuple(out)


def broken_kernel(kernel: KernelSpec, form: BrokenForm) -> KernelSpec:
    return replace(kernel, without=form.key)
