"""tcgen05 allocation rules, commit, and the plug-in API for asynchronous tcgen05 handlers."""

from dataclasses import replace

import numpy as np
import pytest

from ptxsim import Fault, SimDevice, SimError
from ptxsim.errors import SpecViolation
from ptxsim.ptx.registry import HANDLERS, opcode
from ptxsim.tcgen05.core import TMEM_FILL, cta_group, single_thread, tensor_core
from tests.sim_ptx import HEAD100, run_kernel
from tests.sim_ptx_tcgen05 import TCGEN05_ALLOC, TCGEN05_DIVERGED, TCGEN05_LEAK, TCGEN05_PAIR

pytestmark = pytest.mark.reference


def test_alloc_writes_column_addresses_and_commit_arrives():
    out = run_kernel(SimDevice(), TCGEN05_ALLOC, "tmem_alloc", 128 * 3, extra=(64,)).reshape(128, 3)
    # 64 columns at column 0, then 32 columns in the first free 32-aligned block (lane 0 in bits 31-16)
    assert out[:, 0].tolist() == [0] * 128 and out[:, 1].tolist() == [64] * 128
    assert out[:, 2].tolist() == [0] * 128            # commit with nothing pending arrives at once


@pytest.mark.parametrize("ncols,rule", [(48, "R1"), (16, "R1"), (1024, "R1"), (32, "R2")])
def test_alloc_rules(ncols, rule):
    """R1: nCols a power of 2 in [32, 512]; R2: a first allocation of 32 then one of 64 increases."""
    dev = SimDevice()
    if rule == "R2":
        ptx = TCGEN05_ALLOC.replace("[taddr+4], 32;", "[taddr+4], 64;").replace("%r4, 32;", "%r4, 64;")
    else:
        ptx = TCGEN05_ALLOC
    with pytest.raises(SpecViolation, match=rule):
        run_kernel(dev, ptx, "tmem_alloc", 128 * 3, extra=(ncols,))


def test_cta_pair_multicast_commit_reaches_both_ctas():
    out = run_kernel(SimDevice(), TCGEN05_PAIR, "tmem_pair", 4 * 64 * 2, grid=(4, 1, 1),
                     block=(64, 1, 1)).reshape(4, 64, 2)
    assert (out[..., 0] == 0).all()          # same column in both CTAs of each pair
    assert (out[..., 1] == 0).all()          # rank 0's commit arrived on both mbarriers


def test_cta_pair_commit_to_rank_0_only_times_out_in_rank_1():
    only_rank0 = TCGEN05_PAIR.replace("mov.b16 %h1, 3;", "mov.b16 %h1, 1;")
    out = run_kernel(SimDevice(), only_rank0, "tmem_pair", 2 * 64 * 2, grid=(2, 1, 1),
                     block=(64, 1, 1)).reshape(2, 64, 2)
    assert (out[0, :, 1] == 0).all() and (out[1, :, 1] == 100).all()


def test_cta_group_2_needs_a_peer():
    no_cluster = TCGEN05_PAIR.replace(".reqnctapercluster 2, 1, 1\n", "")
    with pytest.raises(SimError, match="needs a cluster of at least 2 CTAs"):
        run_kernel(SimDevice(), no_cluster, "tmem_pair", 64 * 2, block=(64, 1, 1))


def test_exit_with_allocated_columns():
    dev = SimDevice()
    with pytest.raises(SpecViolation, match="R7.*32 Tensor Memory columns still allocated"):
        dev.run(dev.load(TCGEN05_LEAK), "tmem_leak", [], (1, 1, 1), (32, 1, 1))


def test_aligned_instruction_in_a_diverged_warp():
    dev = SimDevice()
    with pytest.raises(SimError, match="16 of the 32 live threads of warp 0"):
        dev.run(dev.load(TCGEN05_DIVERGED), "tmem_diverged", [], (1, 1, 1), (32, 1, 1))


def test_mixed_cta_groups_are_refused_at_load():
    ptx = TCGEN05_LEAK.replace("ret;", "tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n    ret;")
    with pytest.raises(SpecViolation, match=r"line \d+: .*R5"):       # a SimError naming the PTX line
        SimDevice().load(ptx)


# -- the plug-in API: a test-only asynchronous instruction ----------------------------------------

EVENTS: list[str] = []


@pytest.fixture
def fake_async_op():
    """``tcgen05.testop.cta_group::1 taddr, value``: writes value to TMEM lane 0 when it completes."""
    @opcode("tcgen05.testop")
    def compile_testop(ins, q, k):
        group = cta_group(q, k)
        taddr, value = k.operands(ins, 2)
        from ptxsim.ptx.types import TYPES
        rt, rv = k.reader(taddr, TYPES["u32"]), k.reader(value, TYPES["u32"])

        def run(m, s):
            tc = tensor_core(m)
            cols = np.broadcast_to(rt(m, s), (s.n,)) & 0xFFFF
            vals = np.broadcast_to(rv(m, s), (s.n,))
            for t, col, v in zip(s.idx.tolist(), cols.tolist(), vals.tolist(), strict=True):
                cta = int(m.cta_of[t])
                tc.require_allocated(cta, col, 1, "tcgen05.testop")

                def effect(cta=cta, col=col, v=v):
                    EVENTS.append(f"effect {int(tc.tmem[cta, 0, col]):#x} -> {v}")
                    tc.tmem[cta, 0, col] = v
                tc.issue(t, group, "mma", effect)
        return run
    EVENTS.clear()
    yield
    HANDLERS.pop("tcgen05.testop")


PIPE = HEAD100 + r"""
// thread 0 issues the test op and commits; everyone waits (bounded); out[0] = spins of thread 0
.visible .entry pipe(.param .u64 out_ptr)
{
    .reg .pred %p<3>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<2>;
    .shared .align 8 .b64 bar;
    .shared .align 4 .b32 taddr;
    ld.param.u64 %rd1, [out_ptr];
    mov.u32 %r1, %tid.x;
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [taddr], 32;
    ld.shared.u32 %r2, [taddr];
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra INITED;
    mbarrier.init.shared::cta.b64 [bar], 1;
INITED:
    bar.sync 0;                                 // orders the init before the others' try_wait (§9.7.13.15.9)
    @%p1 bra WAIT0;
    tcgen05.testop.cta_group::1 %r2, 1234;
    tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];
WAIT0:
    mov.u32 %r3, 0;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
    @%p2 bra DONE;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p1, %r3, 50;
    @%p1 bra WAIT;
DONE:
    @%p1 bra OUT;
    st.global.u32 [%rd1], %r3;
OUT:
    tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;
    ret;
}
"""


def _run_pipe(faults=()):
    def spy(event, ctx):
        EVENTS.append(event.kind)
        return event
    dev = SimDevice([*faults, Fault("spy", "mbarrier", spy)])
    return int(run_kernel(dev, PIPE, "pipe", 1, block=(32, 1, 1))[0])


def test_async_effect_runs_at_commit(fake_async_op):
    """Issue queues the effect; the commit completes it (on TMEM still holding the fill) and arrives."""
    assert _run_pipe() == 0
    assert EVENTS == ["commit", f"effect {TMEM_FILL:#x} -> 1234"]


def test_commit_arriving_early_leaves_the_effect_pending(fake_async_op):
    early = Fault("commit-early", "mbarrier",
                  lambda ev, ctx: replace(ev, complete_pending=False) if ev.kind == "commit" else ev)
    assert _run_pipe([early]) == 0
    assert EVENTS == ["commit"]          # arrived, but the operation never completed


def test_tmem_starts_with_the_fill_pattern():
    assert TMEM_FILL not in (0, 0xDEADBEEF)
    assert single_thread(5).idx.tolist() == [5]
