"""The hazard checker: synchronization rules of §9.7.16.6 and of the async proxy, enforced.

The simulator itself is sequentially consistent, so a kernel that forgets a wait or a fence can
still compute the right answer in it.  With ``SimDevice(hazards=True)`` (the default) every batch
machine carries a :class:`Hazards` (``machine.hz``; ``None`` when off, and then nothing here runs)
that keeps shadow state next to the simulated memories and raises :class:`~ptxsim.errors.HazardError`
the moment a kernel relies on an ordering the PTX ISA does not give it.  Each error names both PTX
lines, the threads and the rule (id and section); docs/sim.md "Hazard checker" lists the rules and
the conservative choices made where the spec is silent.

Happens-before across threads is tracked with vector clocks over the threads of a cluster
(synchronization never leaves a cluster): ``vc[t, u]`` is the latest epoch of thread ``u`` (its
cluster-local index) that thread ``t`` has synchronized with.  A thread's own epoch advances at
each release it performs (an mbarrier arrival, a ``tcgen05.commit``, a ``bar``/``barrier.cluster``
arrival, ``tcgen05.fence::before_thread_sync``); an event of thread ``u`` stamped with epoch ``e``
is ordered before thread ``t``'s current instruction when ``vc[t, u] >= e``.  tcgen05 operations
need more than that (§9.7.16.6.3): a second clock ``vt`` only moves through the
``fence::before_thread_sync`` -> synchronization -> ``fence::after_thread_sync`` pattern (and
through ``tcgen05.commit``, which performs the before-fence implicitly, §9.7.16.6.4.2).

Whether acquire/release synchronization alone moves ``vt`` too (spec question Q-SYNC-FENCE) and
whether a CTA of a pair may exit right after its part of a collective dealloc (Q-PAIR-DEALLOC) are
the device's readings: ``SimDevice()`` follows :data:`CLIENT_READINGS`, what every known client
does, and ``SimDevice(strict=True)`` (the suite's execution tier) the questions' picks.

The package, by rule family (each a mixin of :class:`Hazards`; no module imports a later one):

==============  ===================================================================================
``common``      sections, async-operation kinds and pipelined pairs, :func:`hazard`, array helpers
``clocks``      :class:`Clocks`, the vector clocks
``records``     records of tcgen05 operations: a ld/st's cells per warp, pipelined chains, effects
``tmem``        tcgen05.ld/st and tcgen05.wait; the Tensor Memory shadow
``async_ops``   issued and completed mma/cp/shift: pipelined pairs, the fence pattern across threads
``alloc``       tcgen05.alloc/dealloc
``sync``        mbarrier, bar/barrier, barrier.cluster: the edges of happens-before; mbarrier-init
``smem``        shared memory between the generic and async proxies; bulk copies and stores
``pair``        the CTA pair (.cta_group::2)
``checker``     :class:`Hazards`: the families combined, exits and fences
==============  ===================================================================================
"""

from ptxsim.hazards.checker import CLIENT_READINGS, Hazards
from ptxsim.hazards.clocks import Clocks
from ptxsim.hazards.common import _distinct, _uniform, hazard

__all__ = ["CLIENT_READINGS", "Clocks", "Hazards", "hazard", "_distinct", "_uniform"]
