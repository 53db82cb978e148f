"""A tiny synthetic kernel set for ``tcgen05-cts hazard-score --tests`` (tests/test_hazard_score.py).

Two kernels, read through ``edited_source`` so the score's deletions reach them, and checked by a
*fake* hazard checker (:func:`fake_check`, a sequential scan of the PTX text) instead of the
simulator, so the score's machinery is tested fast and independently of ``ptxsim.hazards``.
Not collected by the self-test run (no ``test_`` prefix).
"""

import pytest

from conformance.harness.execute_batch import edited_source
from generators.ptx.sync_sites import branch_target, label_of, statement
from ptxsim import HazardError

PROXY_LD = """\
.visible .entry k_proxy_ld()
{
    st.shared.u32 [%r1], %r2;
    fence.proxy.async.shared::cta;
    bar.sync 0;
    tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1, %rd2, %r9, %p0;
    tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r3}, [%r4];
    tcgen05.wait::ld.sync.aligned;
    tcgen05.wait::ld.sync.aligned;
    add.u32 %r5, %r3, 1;
    st.global.u32 [%rd3], %r5;
    bar.sync 0;
    ret;
}
"""

COMMIT_WAIT = """\
.visible .entry k_commit_wait()
{
    tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd1, %rd2, %r9, %p0;
    tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r6];
$L_w:
    mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r6], 0;
    @!%p1 bra $L_w;
    tcgen05.fence::after_thread_sync;
    tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r3}, [%r4];
    tcgen05.wait::ld.sync.aligned;
    st.global.u32 [%rd3], %r3;
    bra.uni $L_end;
    tcgen05.wait::ld.sync.aligned;
$L_end:
    ret;
}
"""

KERNELS = {"k_proxy_ld": PROXY_LD, "k_commit_wait": COMMIT_WAIT}


def fake_check(ptx: str) -> None:
    """Raise HazardError (or TimeoutError) for the few rules these kernels need; follow ``bra.uni``."""
    dirty = mma = committed = waited = fenced = False
    pending: set[str] = set()
    skip_to = None
    for line in ptx.split("\n"):
        if skip_to is not None and label_of(line) != skip_to:
            continue
        skip_to = None
        if label_of(line) is not None or branch_target(line) is not None:
            if statement(line).startswith("bra.uni"):
                skip_to = branch_target(line)                # unconditional: the code after it is dead
            continue
        op = statement(line)
        if op.startswith("trap"):
            raise RuntimeError("fake: trap")
        if any(r in op for r in pending) and not op.startswith("tcgen05.wait::ld"):
            raise HazardError("fake: register used before wait::ld", rule="wait-ld")
        if op.startswith("st.shared"):
            dirty = True
        elif op.startswith("fence.proxy.async"):
            dirty = False
        elif op.startswith("tcgen05.mma"):
            if dirty:
                raise HazardError("fake: generic write read by the async proxy", rule="proxy-fence")
            mma = True
        elif op.startswith("tcgen05.commit"):
            committed = True
        elif op.startswith("mbarrier.try_wait"):
            if not committed:
                raise TimeoutError("fake: the wait's mbarrier never completes")
            waited = True
        elif op.startswith("tcgen05.fence::after_thread_sync"):
            fenced = waited
        elif op.startswith("tcgen05.ld"):
            if "commit" in ptx.split("tcgen05.ld")[0] and mma and not (waited and fenced):
                raise HazardError("fake: ld of an MMA's result not ordered after it", rule="async-read")
            pending.add(op.split("{")[1].split("}")[0])
        elif op.startswith("tcgen05.wait::ld"):
            pending.clear()


@pytest.mark.execute
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.hazard_kernel(n, p)) for n, p in KERNELS.items()])
def test_sample_kernel(name):
    fake_check(edited_source(name, KERNELS[name]))
