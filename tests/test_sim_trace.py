"""Execution trace (ptxsim/trace.py): instruction counts x threads, decoded tcgen05 features.

Expected counts come from the kernel text (instruction lines x threads that reach them), never
from the simulator's own bookkeeping.
"""

import json
from dataclasses import replace

import numpy as np
import pytest

import tests.sim_mma_cases as C
from ptxsim import Fault, SimDevice, Trace
from ptxsim.device import faults_overridden, override_faults, override_trace
from ptxsim.engine import scheduler
from tests.sim_ptx import ALU, HEAD90, run_kernel

MMA_F16 = "tcgen05.mma.cta_group::1.kind::f16 [%r32], %rd6, %rd7, %r22, %p7;"

BRANCHY = HEAD90 + r"""
.visible .entry branchy(.param .u64 out_ptr)
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;

    ld.param.u64 %rd1, [out_ptr];
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 10;
    @%p1 bra LOW;
    add.u32 %r2, %r1, 100;
    bra.uni JOIN;
LOW:
    mul.lo.u32 %r2, %r1, 3;
    sub.u32 %r2, %r2, 1;
JOIN:
    mov.u32 %r3, 0;
LOOP:
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p2, %r3, 5;
    @%p2 bra LOOP;
    add.u32 %r2, %r2, %r3;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
    ret;
}
"""


def instruction_lines(ptx: str) -> list[str]:
    """Opcode spellings of the instruction lines of a single straight-line kernel body."""
    body = ptx[ptx.index("{", ptx.index(".entry")) + 1:ptx.rindex("}")]
    out = []
    for line in body.splitlines():
        line = line.split("//")[0].strip()
        if not line or line.startswith(".") or line.endswith(":"):
            continue
        words = line.rstrip(";").split()
        out.append(words[1] if words[0].startswith("@") else words[0])
    return out


def test_straight_line_counts_are_instructions_times_threads():
    ops = instruction_lines(ALU)
    dev = SimDevice(trace=True, batch_clusters=2)                  # 3 CTAs: two batches, one trace
    run_kernel(dev, ALU, "alu", 3 * 64 * 32, grid=(3, 1, 1), block=(64, 1, 1))
    s = dev.trace.summary()
    threads = 3 * 64
    assert s["thread_instructions"] == threads * len(ops)
    assert s["instructions"] == {op: threads * ops.count(op) for op in set(ops)}
    assert s["runs"] == 1 and s["seconds"] > 0
    assert dev.trace.rate() == pytest.approx(s["thread_instructions"] / s["seconds"])
    assert all(v == [] for v in s["features"].values())          # no tcgen05 here
    json.dumps(s)


def test_divergent_branches_and_loops_count_the_threads_that_ran():
    dev = SimDevice(trace=True)
    out = run_kernel(dev, BRANCHY, "branchy", 64, block=(64, 1, 1))
    t = np.arange(64)
    assert (out == np.where(t < 10, 3 * t - 1, t + 100) + 5).all()
    low, high, n = 10, 54, 64
    want = {"ld.param.u64": n, "mov.u32": 2 * n, "setp.lt.u32": n + 5 * n, "bra": n + 5 * n,
            "add.u32": high + 5 * n + n, "bra.uni": high, "mul.lo.u32": low, "sub.u32": low,
            "mul.wide.u32": n, "add.s64": n, "st.global.u32": n, "ret": n}
    s = dev.trace.summary()
    assert s["instructions"] == want
    assert s["thread_instructions"] == sum(want.values())


def _lines_with(ptx: str, *needles: str) -> set[int]:
    return {i for i, line in enumerate(ptx.split("\n"), 1) if any(n in line for n in needles)}


def test_executed_lines_are_the_reached_instructions_and_override_trace_wins():
    """Expected lines come from the kernel text: every instruction line but the high branch's
    when every thread takes the LOW path (block of 8 threads, all < 10)."""
    own = Trace(features=False)
    dev = SimDevice(trace=own)
    shared = Trace(features=False)
    with override_trace(shared):
        run_kernel(dev, BRANCHY, "branchy", 8, block=(8, 1, 1))
    assert own.runs == 0 and shared.runs == 1
    body = [i for i, line in enumerate(BRANCHY.split("\n"), 1)
            if line.startswith("    ") and not line.strip().startswith(".") and line.strip().endswith(";")]
    skipped = _lines_with(BRANCHY, "add.u32 %r2, %r1, 100;", "bra.uni JOIN;")
    assert shared.lines == {"branchy": set(body) - skipped}
    run_kernel(dev, BRANCHY, "branchy", 8, block=(8, 1, 1))
    assert own.runs == 1 and own.lines["branchy"] == shared.lines["branchy"]


def test_trace_accumulates_over_runs_and_can_be_attached_later():
    dev = SimDevice()
    assert dev.trace is None
    dev.trace = Trace(features=False)
    run_kernel(dev, BRANCHY, "branchy", 64, block=(64, 1, 1))
    first = dev.trace.thread_instructions
    run_kernel(dev, BRANCHY, "branchy", 64, block=(64, 1, 1))
    assert dev.trace.thread_instructions == 2 * first and dev.trace.runs == 2
    dev.trace.reset()
    assert dev.trace.summary()["thread_instructions"] == 0


def test_tracing_off_wraps_nothing(monkeypatch):
    seen = []
    real = scheduler.run
    monkeypatch.setattr(scheduler, "run", lambda m: (seen.append(m), real(m))[1])
    dev = SimDevice()
    run_kernel(dev, BRANCHY, "branchy", 64, block=(64, 1, 1))
    assert seen and all(m.tally is None and m.faults is dev.active_faults for m in seen)


# -- tcgen05 features through the fault hooks -----------------------------------------------------

def _mma_run(monkeypatch, faults=(), trace=True):
    """The f16 MMA self-test kernel (tests/sim_mma_cases.py) on a device with ``trace``; (out, device)."""
    made = []

    def device(faults=(), **options):
        made.append(SimDevice(faults=faults, trace=trace, **options))
        return made[-1]
    monkeypatch.setattr(C, "SimDevice", device)
    rng = np.random.default_rng(7)
    a, b = rng.integers(-3, 4, (128, 16)), rng.integers(-3, 4, (16, 64))
    img = np.zeros(0x8000, dtype=np.uint8)
    la, sa = C.place(img, C.f16_codes(a), 16, 0, "K")
    lb, sb = C.place(img, C.f16_codes(b.T), 16, 0x4000, "K")
    tmem = np.zeros((1, 128, 128), dtype=np.uint32)
    k = C.MmaKernel(MMA_F16)
    out = k.run(smem=[img], tmem=tmem, a_desc=C.smem_desc(0, la, sa), b_desc=C.smem_desc(0x4000, lb, sb),
                idesc_value=C.idesc(m=128, n=64, a_type="f16", b_type="f16"), enable=False, faults=faults)
    return out, made[0], a @ b


def test_mma_kernel_features(monkeypatch):
    out, dev, want = _mma_run(monkeypatch)
    assert (out[0] == C.f32_bits(want)).all()
    s = dev.trace.summary()
    ins = s["instructions"]
    assert ins["tcgen05.mma.cta_group::1.kind::f16"] == 1                   # issued by one thread
    assert ins["tcgen05.st.sync.aligned.32x32b.x128.b32"] == 128             # preload: every thread
    assert ins["tcgen05.ld.sync.aligned.32x32b.x64.b32"] == 128              # read-back
    f = s["features"]
    assert f["smem_desc"] == [
        {"kind": "f16", "lbo_mode": "relative", "major": "K", "operand": op, "swizzle": "none"} for op in "ab"]
    (idesc,) = f["instr_desc"]
    assert {k: idesc[k] for k in ("kind", "m", "n", "a_type", "b_type", "d_type", "transpose_a", "transpose_b",
                                  "negate_a", "negate_b", "sparse", "max_shift", "scale_type")} == {
        "kind": "f16", "m": 128, "n": 64, "a_type": "f16", "b_type": "f16", "d_type": "f32", "transpose_a": False,
        "transpose_b": False, "negate_a": False, "negate_b": False, "sparse": False, "max_shift": 0,
        "scale_type": None}
    assert f["mma_operands"] == [{"kind": "f16", "enable_input_d": False, "scale_input_d": 0,
                                  "disable_output_lane": False, "column_shift": 0}]
    assert f["mma_result"] == [{"kind": "f16", "d_type": "f32", "cta_group": 1}]
    assert f["tmem_st_map"] == [{"shape": "32x32b", "num": 128, "unpack": False}]
    assert f["tmem_ld_map"] == [{"shape": "32x32b", "num": 64, "pack": False}]
    assert f["mbarrier"] == ["commit"]
    assert s["hook_calls"]["tmem_ld_map"] == 4                               # per warp
    for hook in ("zero_column_mask", "sparsity_metadata", "scale_factors", "cp_decompress", "shift"):
        assert f[hook] == []
    json.dumps(s)


def test_observer_composes_with_faults(monkeypatch):
    if faults_overridden():
        pytest.skip("faults are overridden by the mutation score")
    negate = Fault("negate-a", "instr_desc", lambda d, ctx: replace(d, negate_a=True))
    out, dev, want = _mma_run(monkeypatch, faults=[negate])
    assert (out[0] == C.f32_bits(-want)).all()                               # the fault still applied
    assert dev.trace.summary()["features"]["instr_desc"][0]["negate_a"] is False   # as the kernel asked
    plain, _, _ = _mma_run(monkeypatch, faults=[negate], trace=False)
    assert (plain == out).all()


def test_observer_keeps_probing(monkeypatch):
    if faults_overridden():
        pytest.skip("faults are overridden by the mutation score")
    negate = Fault("negate-a", "instr_desc", lambda d, ctx: replace(d, negate_a=True))
    with override_faults([negate], probe=True) as probe:
        out, dev, want = _mma_run(monkeypatch)
    assert (out[0] == C.f32_bits(want)).all()                                # a probe changes nothing
    assert ("negate-a", 0) in probe.effects
    assert dev.trace.summary()["hook_calls"]["instr_desc"] == 1
