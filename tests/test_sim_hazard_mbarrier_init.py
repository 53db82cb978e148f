"""Rule ``mbarrier-init`` of the hazard checker (PTX ISA §9.7.13.15, subsection §9.7.13.15.9
mbarrier.init and the object's lifecycle: an mbarrier object must be initialized before any other
mbarrier operation uses it).  The init is a shared-memory write by one thread, so another thread's
``mbarrier.arrive``/``try_wait``/``test_wait`` (or ``tcgen05.commit``'s arrive, a bulk copy's
complete-tx) must be ordered after it by synchronization: fence.mbarrier_init, then a barrier."""

import pytest

from ptxsim import HazardError, SimDevice
from tests.sim_ptx import HEAD100, run_kernel
from tests.sim_ptx_hazards import without

pytestmark = pytest.mark.reference

# thread 0 initializes the mbarrier, thread ARRIVER arrives; all 64 threads wait on it; the bar.sync
# orders the init before the other threads' use
MBAR_INIT = HEAD100 + r"""
.visible .entry mbinit(.param .u64 out_ptr)
.reqntid 64, 1, 1
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .shared .align 8 .b64 bar;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra INITED;
    mbarrier.init.shared::cta.b64 [bar], 1;
INITED:
    fence.mbarrier_init.release.cluster;
    bar.sync 0;                                                          // @sync
    setp.ne.u32 %p3, %r1, ARRIVER;
    @%p3 bra ARRIVED;
    mbarrier.arrive.shared::cta.b64 _, [bar];
ARRIVED:
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @!%p2 bra WAIT;
    ret;
}
"""


def kernel(arriver: int) -> str:
    return MBAR_INIT.replace("ARRIVER", str(arriver))


@pytest.mark.parametrize("arriver", [0, 32])
def test_mbarrier_use_after_init_clean(arriver):
    run_kernel(SimDevice(), kernel(arriver), "mbinit", 64, block=(64, 1, 1))


@pytest.mark.parametrize("arriver", [0, 32])
def test_mbarrier_use_before_init_is_ordered(arriver):
    with pytest.raises(HazardError) as e:
        run_kernel(SimDevice(), without(kernel(arriver), "sync"), "mbinit", 64, block=(64, 1, 1))
    assert e.value.rule == "mbarrier-init", e.value
    assert e.value.section == "9.7.13.15.9"
    assert "mbarrier.init" in e.value.first


def test_mbarrier_own_init_needs_no_sync():
    """The initing thread's own use is in program order: a single thread needs no barrier."""
    ptx = without(kernel(0), "sync").replace(".reqntid 64, 1, 1", ".reqntid 1, 1, 1")
    run_kernel(SimDevice(), ptx, "mbinit", 1, block=(1, 1, 1))


def test_mbarrier_init_rule_can_be_waived():
    run_kernel(SimDevice(waive_hazards=("mbarrier-init",)), without(kernel(0), "sync"), "mbinit", 64,
               block=(64, 1, 1))


def test_commit_arrival_is_a_use():
    """tcgen05.commit's arrive-on operation (§9.7.16.6.4.2) uses the mbarrier like mbarrier.arrive."""
    ptx = kernel(32).replace("mbarrier.arrive.shared::cta.b64 _, [bar];",
                             "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];")
    run_kernel(SimDevice(), ptx, "mbinit", 64, block=(64, 1, 1))
    with pytest.raises(HazardError, match="mbarrier-init") as e:
        run_kernel(SimDevice(), without(ptx, "sync"), "mbinit", 64, block=(64, 1, 1))
    assert "tcgen05.commit" in e.value.second and "0:32" in e.value.threads
