"""The hazard checker's bookkeeping (``ptxsim.hazards``), each fast path against a plain one.

The checker's cost work (issue 14, docs/sim.md "Cost") replaced per-group loops by vectorized
joins and per-cell shadows by per-warp records.  Each replacement is checked here against the
simple computation it replaced (written independently in the test), and the proxy-fence count
against the kernel that would tell "first fence after the write" from "last fence"."""

import numpy as np
import pytest

from ptxsim import SimDevice
from ptxsim.hazards import Clocks, _distinct, _uniform
from tests.sim_ptx import run_kernel
from tests.sim_ptx_hazards import PROXY

pytestmark = pytest.mark.reference


class _Machine:
    """The attributes :class:`Clocks` reads: ``ncta`` CTAs of ``ntid`` threads, clusters of ``csize``."""

    def __init__(self, ncta: int, ntid: int, csize: int) -> None:
        self.T, self.ntid, self.ncta, self.cluster_size = ncta * ntid, ntid, ncta, csize
        cta = np.repeat(np.arange(ncta), ntid)
        self.tid_of = np.tile(np.arange(ntid), ncta)
        self.rank_of = cta % csize
        self.cta_of, self.cluster_of = cta, cta // csize


def _scrambled(m, seed: int) -> Clocks:
    """Clocks with random history (what earlier synchronization would have left)."""
    rng = np.random.default_rng(seed)
    c = Clocks(m)
    c.vc[:] = rng.integers(0, 9, c.vc.shape)
    c.vt[:] = np.minimum(c.vc, rng.integers(0, 9, c.vc.shape))
    c.own[:] = rng.integers(9, 12, m.T)
    c.vc[np.arange(m.T), c.lt] = c.own
    c.tfence[:] = rng.integers(0, 9, m.T)
    c.vt[np.arange(m.T), c.lt] = np.minimum(c.vt[np.arange(m.T), c.lt], c.tfence)
    return c


def _copy(c: Clocks) -> Clocks:
    d = object.__new__(Clocks)
    d.__dict__ = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in c.__dict__.items()}
    return d


@pytest.mark.parametrize("ncta,ntid,csize,pick", [(4, 64, 1, "all"), (4, 64, 2, "all"), (6, 32, 2, "some"),
                                                   (3, 96, 1, "unsorted")])
def test_payload_groups_is_payload_per_group(ncta, ntid, csize, pick):
    m = _Machine(ncta, ntid, csize)
    rng = np.random.default_rng(ncta * ntid)
    idx = np.arange(m.T)
    if pick == "some":
        idx = np.sort(rng.choice(m.T, m.T // 3, replace=False))
    elif pick == "unsorted":
        idx = rng.permutation(m.T)
    for by in (m.cta_of, m.cluster_of):
        fast, slow = _scrambled(m, 1), _scrambled(m, 1)
        keys, vc, vt = fast.payload_groups(idx, by[idx])
        want = {int(g): slow.payload(idx[by[idx] == g]) for g in np.unique(by[idx])}
        assert keys.tolist() == sorted(want)
        for i, g in enumerate(keys.tolist()):
            np.testing.assert_array_equal(vc[i], want[g][0])
            np.testing.assert_array_equal(vt[i], want[g][1])
        for name in ("vc", "vt", "own", "tfence"):
            np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)


@pytest.mark.parametrize("ordered", [False, True])
@pytest.mark.parametrize("pick", ["all", "some"])
def test_acquire_groups_is_acquire_per_group(ordered, pick):
    m = _Machine(4, 64, 2)
    rng = np.random.default_rng(7)
    idx = np.arange(m.T) if pick == "all" else np.sort(rng.choice(m.T, 100, replace=False))
    base = _scrambled(m, 3)
    vc = rng.integers(0, 20, (m.ncta, base.width)).astype(np.int32)
    vt = rng.integers(0, 20, (m.ncta, base.width)).astype(np.int32)
    fast, slow = _copy(base), _copy(base)
    fast.acquire_groups(idx, m.cta_of[idx], vc, vt, ordered)
    for g in np.unique(m.cta_of[idx]).tolist():
        slow.acquire(idx[m.cta_of[idx] == g], vc[g], vt[g], ordered)
    for name in ("vc", "vt", "vt_pending", "fresh"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)


@pytest.mark.parametrize("a", [[], [5], [3, 3, 1], list(range(100, 0, -7)) * 3, [0, 10**7, 5]])
def test_distinct_is_unique(a):
    a = np.asarray(a, dtype=np.int64)
    np.testing.assert_array_equal(_distinct(a), np.unique(a))


def test_uniform_group_size():
    assert _uniform(np.array([0, 32, 64]), 96) == 32
    assert _uniform(np.array([0, 32, 40]), 96) == 0
    assert _uniform(np.array([0, 32]), 70) == 0
    assert _uniform(np.array([0]), 7) == 7


# PROXY with a second round after the barrier: every thread writes a buffer the cp does not read
# and fences again.  The cp's operand granules were fenced by the writers' *first* fence, which
# bar.sync orders before the cp; the later fences are not (rule proxy-fence must not take them).
_AFTER_BAR = "    tcgen05.fence::after_thread_sync;\n    ld.shared.u32 %r2, [taddr];\n"
_SECOND_ROUND = """    mov.u32 %r10, other;
    shl.b32 %r11, %r1, 4;
    add.u32 %r12, %r10, %r11;
    st.shared.v4.u32 [%r12], {%r1, %r1, %r1, %r1};
    fence.proxy.async.shared::cta;
"""


def test_a_later_fence_does_not_move_the_fence_of_earlier_writes():
    assert PROXY.count(_AFTER_BAR) == 1
    ptx = PROXY.replace(_AFTER_BAR, _AFTER_BAR + _SECOND_ROUND).replace(
        "    .shared .align 128 .b8 buf[4096];\n",
        "    .shared .align 128 .b8 buf[4096];\n    .shared .align 16 .b8 other[2048];\n")
    run_kernel(SimDevice(), ptx, "proxy", 128, block=(128, 1, 1))
    # and the same second round writing the cp's own operand is reported (its fence is unordered)
    hit = ptx.replace("    mov.u32 %r10, other;\n", "    mov.u32 %r10, buf;\n")
    from ptxsim import HazardError
    with pytest.raises(HazardError) as info:
        run_kernel(SimDevice(), hit, "proxy", 128, block=(128, 1, 1))
    assert info.value.rule in ("proxy-fence", "smem-overwrite"), str(info.value)


def test_compacting_fence_records_keeps_every_granules_fence_epoch():
    """``Hazards._compact_fences`` renumbers the per-thread fence records; what each written granule
    looks up (the writer's first fence after the write, or none yet) must not change."""
    from ptxsim.hazards import Hazards

    rng = np.random.default_rng(5)
    T, G = 8, 200
    hz = object.__new__(Hazards)
    hz.m = type("M", (), {"T": T})()
    hz.g_writer = np.zeros(G, dtype=np.int64)
    hz.g_pfc = np.zeros(G, dtype=np.int32)
    hz.pf_count = np.zeros(T, dtype=np.int32)
    hz.pf_epoch = np.zeros((T, 2), dtype=np.int32)
    hz.pf_wrote = np.zeros(T, dtype=bool)
    own = np.ones(T, dtype=np.int32)
    for _ in range(400):           # random writes and fences, as generic_write / fence record them
        t = int(rng.integers(T))
        if rng.random() < 0.6:
            g = rng.integers(G, size=3)
            hz.g_writer[g], hz.g_pfc[g], hz.pf_wrote[t] = t + 1, hz.pf_count[t], True
        elif hz.pf_wrote[t]:
            if hz.pf_count[t] >= hz.pf_epoch.shape[1]:
                grown = np.zeros((T, 2 * hz.pf_epoch.shape[1]), dtype=np.int32)
                grown[:, :hz.pf_epoch.shape[1]] = hz.pf_epoch
                hz.pf_epoch = grown
            hz.pf_epoch[t, hz.pf_count[t]] = own[t]
            hz.pf_count[t] += 1
            hz.pf_wrote[t] = False
        own[t] += 1
    g = np.flatnonzero(hz.g_writer > 0)
    w = hz.g_writer[g] - 1
    before = hz._proxy_fence_epochs(g, w)
    assert before.any() and (before == 0).any()
    width = hz.pf_epoch.shape[1]
    hz._compact_fences()
    np.testing.assert_array_equal(hz._proxy_fence_epochs(g, w), before)
    assert int(hz.pf_count.max()) < hz.pf_epoch.shape[1]
    assert int(np.unique(hz.g_pfc[g]).size) <= G and width >= 16
