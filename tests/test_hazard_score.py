"""``tcgen05-cts hazard-score`` (issue 14): synchronization sites, deleting them, the redundancy
analyses, the score on a synthetic kernel set (tests/hazard_sample.py, a fake checker), the
negative execution cases' verdict, and bad arguments."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conformance.harness import execute_batch as B
from conformance.harness.device import CaseCrash, CaseTimeout
from conformance.harness.execute_hazard import reported
from generators.ptx import sync_sites as S
from generators.ptx.broken_patterns import NOT_A_HAZARD, broken_forms
from generators.ptx.kernel import render
from generators.ptx.patterns import PATTERNS, pattern_kernel
from generators.ptx.sync_redundancy import redundancy
from generators.variants import cases
from ptxsim import HazardError
from tests.hazard_sample import COMMIT_WAIT, PROXY_LD

pytestmark = pytest.mark.reference

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = str(Path(__file__).resolve().parent / "hazard_sample.py")


def test_sites_of_the_sample_kernels_in_program_order():
    assert [s.key for s in S.sync_sites(PROXY_LD)] == [
        "fence.proxy.async.0", "bar.sync.0", "tcgen05.wait::ld.0", "tcgen05.wait::ld.1", "bar.sync.1"]
    sites = S.sync_sites(COMMIT_WAIT)
    assert [s.kind for s in sites] == [S.COMMIT, S.LOOP, S.AFTER, S.WAIT_LD, S.WAIT_LD]
    loop = sites[1]
    lines = COMMIT_WAIT.split("\n")
    assert [lines[i].strip() for i in loop.lines] == [                       # try_wait and the branch back
        "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r6], 0;", "@!%p1 bra $L_w;"]


# Triton's and Gluon's inline-asm wait loops: every block reuses the label name in its own scope
_SCOPED_WAITS = """\
    bar.sync 0;
{
    .reg .pred complete;
    waitLoop:
    mbarrier.try_wait.parity.shared::cta.b64 complete, [%r5], %r6;
    @!complete bra.uni waitLoop;
}
    add.s32 %r7, %r7, 1;
{
    .reg .pred complete;
    waitLoop:
    mbarrier.try_wait.parity.shared::cta.b64 complete, [%r8], %r6;
    @!complete bra.uni waitLoop;
}
    tcgen05.wait::ld.sync.aligned;"""


def test_wait_loops_with_scoped_labels_are_sites():
    """Each inline-asm block's branch goes to its own ``waitLoop``, the nearest definition."""
    sites = S.sync_sites(_SCOPED_WAITS)
    assert [s.kind for s in sites] == [S.BAR, S.LOOP, S.LOOP, S.WAIT_LD]
    lines = _SCOPED_WAITS.split("\n")
    assert [[lines[i].strip()[:32] for i in s.lines] for s in sites[1:3]] == [
        ["mbarrier.try_wait.parity.shared:", "@!complete bra.uni waitLoop;"]] * 2
    assert "[%r8]" in lines[sites[2].lines[0]] and "[%r5]" in lines[sites[1].lines[0]]
    out = S.delete_site(_SCOPED_WAITS, "mbarrier.try_wait loop.1")
    assert "[%r5]" in [ln for ln in out.split("\n") if "try_wait" in ln and "deleted" not in ln][0]
    assert len(S.sync_sites(out)) == 3


def test_delete_site_keeps_labels_and_line_numbers():
    out = S.delete_site(COMMIT_WAIT, "mbarrier.try_wait loop.0")
    assert len(out.split("\n")) == len(COMMIT_WAIT.split("\n"))
    assert "$L_w:" in out and "mbarrier.try_wait" not in [S.statement(ln)[:17] for ln in out.split("\n")]
    assert [s.kind for s in S.sync_sites(out)] == [S.COMMIT, S.AFTER, S.WAIT_LD, S.WAIT_LD]
    with pytest.raises(ValueError, match="expects one of"):
        S.delete_site(COMMIT_WAIT, "no.such.0")


def test_suite_wait_loop_falls_through_to_its_exit_label():
    kernel = pattern_kernel(PATTERNS[0])
    ptx = render(kernel, "sm_100a", (8, 7))
    site = S.find_site(ptx, "WaitMbarrier.mbarrier.try_wait loop.0")
    deleted = [S.statement(ptx.split("\n")[i]).split()[0] for i in site.lines]
    assert deleted == ["mbarrier.try_wait.parity.relaxed.cluster.shared::cta.b64", "bra", "add.u32", "setp.lt.u32",
                       "bra", "mov.u32"]                                   # the error-1 store goes too


def test_redundancy_analyses_on_the_sample():
    why = {s.key: redundancy(PROXY_LD, s) for s in S.sync_sites(PROXY_LD)}
    assert why["fence.proxy.async.0"] is None and why["bar.sync.0"] is None
    assert "next instruction is the same" in why["tcgen05.wait::ld.0"]
    assert "no tcgen05.ld between" in why["tcgen05.wait::ld.1"]
    assert "only register arithmetic" in why["bar.sync.1"]
    assert all(redundancy(COMMIT_WAIT, s) is None for s in S.sync_sites(COMMIT_WAIT))


def test_trap_site_replaces_the_first_line_and_deletes_the_rest():
    out = S.trap_site(COMMIT_WAIT, "mbarrier.try_wait loop.0").split("\n")
    assert [S.statement(ln) for ln in out if "deleted:" in ln] == ["trap;", ""]


def test_redundancy_of_fences_with_nothing_to_order():
    ptx = ("{\n    st.shared.u32 [%r1], %r2;\n    fence.proxy.async.shared::cta;\n    tcgen05.fence::before_thread_sync;\n"
           "    bar.sync 0;\n    tcgen05.fence::after_thread_sync;\n    ld.shared.u32 %r3, [%r1];\n    ret;\n}")
    why = {s.kind: redundancy(ptx, s) for s in S.sync_sites(ptx)}
    assert "no async-proxy access" in why[S.PROXY]
    assert "no tcgen05 operation precedes" in why[S.BEFORE]
    assert "no tcgen05 operation follows" in why[S.AFTER]
    assert why[S.BAR] is None                                   # ld.shared after it: the barrier orders it


def test_a_loop_around_a_fence_defeats_the_text_order_analyses():
    ptx = "{\n$L_top:\n    tcgen05.fence::before_thread_sync;\n    tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r3}, [%r4];\n" \
          "    tcgen05.wait::ld.sync.aligned;\n    @%p1 bra $L_top;\n    ret;\n}"
    before = S.sync_sites(ptx)[0]
    assert before.kind == S.BEFORE and redundancy(ptx, before) is None


def test_broken_pattern_forms_are_distinct_kernels_with_expected_rules():
    smoke = cases("smoke", families=["sync.hazard"])
    default = cases("default", families=["sync.hazard"])
    assert 4 <= len(smoke) <= 8 < len(default)
    assert {c.params["without"].split(" (")[0] for c in smoke} == {c.params["without"].split(" (")[0] for c in default}
    names = [c.kernel.name for c in default] + [pattern_kernel(p).name for p in PATTERNS]
    assert len(set(names)) == len(names)
    for c in default:
        ptx = render(c.kernel, "sm_100a", (8, 7))
        base = render(pattern_kernel(next(p for p in PATTERNS if p.name == c.params["pattern"])), "sm_100a", (8, 7))
        assert len(S.sync_sites(ptx)) == len(S.sync_sites(base)) - 1
        assert c.params["expect"] and c.legal
    for (pattern, key) in NOT_A_HAZARD:
        p = next(p for p in PATTERNS if p.name == pattern)
        assert key in {s.key for s in S.sync_sites(render(pattern_kernel(p), "sm_100a", (8, 7)))}
        assert key not in {f.key for f in broken_forms(p, pattern_kernel(p))}


def test_edit_sources_reaches_the_service_and_ends_with_the_block():
    case = cases("smoke", families=["fence"])[0]
    svc = B.ExecutionService(None, type("Sim", (), {"kind": "sim"})())
    plain, _ = svc.source(case, "sm_100a")
    gen = svc.generation()
    with B.edit_sources({case.kernel.name: lambda ptx: ptx + "// edited\n"}):
        assert svc.source(case, "sm_100a")[0].endswith("// edited\n")
        assert svc.generation() != gen
    assert svc.source(case, "sm_100a")[0] == plain and svc.generation() != gen


def _run(error=None, status=None):
    return B.CaseRun(error=error, status=status)


def test_negative_case_verdict_reads_the_hazard_rule():
    try:
        try:
            raise HazardError("x", rule="wait-ld")
        except HazardError as exc:
            raise CaseCrash(["c"], "k: HazardError: x") from exc
    except CaseCrash as crash:
        assert reported(_run(crash), "c")[0] == "wait-ld"
    assert reported(_run(CaseTimeout(["c"], "spun")), "c")[0] == "timeout"
    ok = np.array([[0x600D0008, 0, 0, 0]], dtype=np.uint32)
    assert reported(_run(status=ok), "c") == ("", "no error: the kernel ran to its end and the device reported nothing")
    spun = np.array([[0x600D0008, 1, 99, 0]], dtype=np.uint32)
    assert reported(_run(status=spun), "c")[0] == "timeout"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "conformance.commands.cli", "hazard-score", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_hazard_score_on_the_sample_kernels():
    r = cli("--tests", SAMPLE)
    assert r.returncode == 0, r.stderr
    out = r.stdout.rstrip().splitlines()
    assert out[-1] == "caught 5/7"
    assert any(ln.startswith("caught   k_commit_wait mbarrier.try_wait loop.0  by ") for ln in out)
    assert "survivors: 5 (3 provably redundant, 1 not reached by any case, 1 reached and not provably redundant)" in out
    assert any("bar.sync at line 5" in ln and "none fails; not provably redundant" in ln for ln in out)
    assert any("wait::ld at line 13" in ln and "not reached" in ln for ln in out)


def test_hazard_score_two_processes_agree():
    r = cli("--tests", SAMPLE, "-j", "2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.rstrip().splitlines()[-1] == "caught 5/7"


def test_hazard_score_bad_arguments():
    for args, words in ((("-j", "0"), "-j expects"), (("--tests", "/no/such/dir"), "--tests expects"),
                        (("--shard", "3/2"), "--shard expects")):
        r = cli(*args)
        assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = cli("--level", "huge")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_negative_cases_skip_on_a_gpu_and_with_the_checker_off():
    from conformance.harness.execute_batch import ExecCase
    from conformance.harness.execute_hazard import check_hazard_case

    case = cases("smoke", families=["sync.hazard"])[0]
    for device, words in ((type("Gpu", (), {"kind": "cuda"})(), "NotSupported: hazard detection needs the simulated"),
                          (type("Sim", (), {"kind": "sim", "hazards": False})(), "hazard checker off")):
        request = type("Req", (), {"getfixturevalue": lambda self, name, d=device: d})()
        with pytest.raises(pytest.skip.Exception, match=words):
            check_hazard_case(ExecCase(case), request)


def test_a_barrier_followed_by_the_same_barrier_with_nothing_between_is_redundant():
    ptx = ("{\n    st.shared.u32 [%r1], %r2;\n    bar.sync 0;\n    mov.u32 %r5, tc_slot;\n    @%p3 bra $L_a;\n"
           "    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r5], 512;\n$L_a:\n"
           "    tcgen05.fence::before_thread_sync;\n    bar.sync 0;\n    ld.shared.u32 %r3, [%r1];\n    ret;\n}")
    first, second = S.sync_sites(ptx)[0], S.sync_sites(ptx)[2]
    assert "same barrier follows at line 9" in redundancy(ptx, first)
    assert redundancy(ptx, second) is None
    touched = ptx.replace("mov.u32 %r5, tc_slot;", "mov.u32 %r5, tc_slot;\n    ld.shared.u32 %r7, [%r1];")
    assert redundancy(touched, S.sync_sites(touched)[0]) is None        # a read between: the first orders it
    named = ptx.replace("st.shared.u32 [%r1], %r2;", "mov.u32 %r1, tc_slot;\n    st.shared.u32 [%r1], %r2;")
    assert redundancy(named, S.sync_sites(named)[0]) is None            # the alloc's slot was touched before


def test_cta_pair_thread_sync_redundancies():
    ptx = ("{\n    tcgen05.mma.cta_group::2.kind::f16 [%r0], %rd1, %rd2, %r9, %p0;\n$L_w:\n"
           "    mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r6], 0;\n    @!%p5 bra $L_w;\n"
           "    tcgen05.fence::after_thread_sync;\n    tcgen05.fence::before_thread_sync;\n    bar.sync 0;\n"
           "    barrier.cluster.arrive.release.aligned;\n    barrier.cluster.wait.acquire.aligned;\n"
           "    tcgen05.fence::after_thread_sync;\n    tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r3}, [%r4];\n"
           "    tcgen05.wait::ld.sync.aligned;\n    st.global.u32 [%rd3], %r3;\n    ret;\n}")
    why = {s.key: redundancy(ptx, s) for s in S.sync_sites(ptx)}
    assert "another fence::after_thread_sync follows at line 11" in why["tcgen05.fence::after_thread_sync.0"]
    assert why["tcgen05.fence::after_thread_sync.1"] is None          # the ld follows it directly
    assert "cluster barrier (arrive + wait) follows directly" in why["bar.sync.0"]
    assert why["barrier.cluster.0"] is None and why["tcgen05.fence::before_thread_sync.0"] is None


def test_cta_pair_cluster_barrier_redundancy():
    """An aligned cluster barrier is redundant when a later one, with the tcgen05 fence pattern around
    it, orders everything it did and nothing before that touches the peer CTA but the pair's alloc
    (generators/ptx/sync_redundancy.py; the rules peer-launched/active, docs/sim.md)."""
    cluster = "    barrier.cluster.arrive.release.aligned;\n    barrier.cluster.wait.acquire.aligned;\n"
    ptx = ("{\n    ld.global.u32 %r1, [%rd1];\n" + cluster +                       # the prologue: the peer launched
           "    st.shared.u32 [%r8], %r1;\n    @%p3 bra $L_a;\n"
           "    tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r5], 512;\n$L_a:\n"
           "    tcgen05.fence::before_thread_sync;\n    bar.sync 0;\n" + cluster +   # the alloc step
           "    tcgen05.fence::after_thread_sync;\n    ld.shared.b32 %r6, [%r5];\n"
           "    tcgen05.st.sync.aligned.32x32b.x1.b32 [%r6], {%r1};\n    tcgen05.wait::st.sync.aligned;\n"
           "    tcgen05.fence::before_thread_sync;\n    bar.sync 0;\n" + cluster +   # the preload step
           "    tcgen05.fence::after_thread_sync;\n"
           "    tcgen05.mma.cta_group::2.kind::f16 [%r6], %rd2, %rd3, %r9, %p0;\n    ret;\n}")

    def why(text):
        return [redundancy(text, s) for s in S.sync_sites(text) if s.kind == S.CLUSTER]

    prologue, alloc, preload = why(ptx)
    assert prologue is None                 # the alloc (cta_group::2) lies before the next cluster barrier
    assert "aligned cluster barrier of line 19 follows" in alloc
    assert preload is None                  # the MMA touches the peer CTA
    for edit in ("    st.global.u32 [%rd4], %r1;\n",                  # global memory the peer may read
                 "    mapa.shared::cluster.u32 %r7, %r8, 1;\n",       # the peer's shared memory
                 "    tcgen05.commit.cta_group::2.mbarrier::arrive::one.b64 [%r8];\n"):
        touched = ptx.replace("    ld.shared.b32 %r6", edit + "    ld.shared.b32 %r6")
        assert why(touched)[1] is None, edit
    no_bar = ptx.replace("    bar.sync 0;\n" + cluster + "    tcgen05.fence::after_thread_sync;\n    ld.shared",
                         cluster + "    tcgen05.fence::after_thread_sync;\n    ld.shared")
    assert why(no_bar)[1] is None           # the CTA's own threads: nothing else orders the slot's load
    unfenced = ptx.replace("    tcgen05.wait::st.sync.aligned;\n    tcgen05.fence::before_thread_sync;\n",
                           "    tcgen05.wait::st.sync.aligned;\n")
    assert why(unfenced)[1] is None         # the later barrier does not carry the alloc's tcgen05 order
    twice = ptx.replace(cluster, cluster + "    mov.u32 %r2, 1;\n" + cluster, 1)
    first, second = why(twice)[:2]
    assert "follows" in first and "comes right before it" in second


def test_rescore_carries_over_caught_deletions_of_unchanged_kernels(tmp_path):
    """--save, then --rescore: the caught deletions are carried over (not run); a record whose
    kernel hash no longer matches is scored anew; a corrupt file is a one-line error."""
    saved = tmp_path / "score.json"
    r = cli("--tests", SAMPLE, "--save", str(saved))
    assert r.returncode == 0, r.stderr
    data = json.loads(saved.read_text())
    caught = [d for d in data["deletions"] if d["caught_by"]]
    assert len(caught) == 5 and all(len(d["ptx_sha"]) == 64 for d in caught)
    r = cli("--tests", SAMPLE, "--rescore", str(saved))
    out = r.stdout.rstrip().splitlines()
    assert out[-1] == "caught 5/7" and "rescore: 5 caught deletion(s) carried over from the saved result, not run" in out
    assert sum(", carried over)" in ln for ln in out) == 5
    caught[0]["ptx_sha"] = "0" * 64                    # that kernel changed since: score its deletion again
    del caught[1]["ptx_sha"]                           # saved by an older version: trusted, and said so
    saved.write_text(json.dumps(data))
    out = cli("--tests", SAMPLE, "--rescore", str(saved)).stdout.rstrip().splitlines()
    assert out[-1] == "caught 5/7"
    assert "rescore: 4 caught deletion(s) carried over from the saved result, not run, 1 of them saved without a " \
           "kernel hash" in out
    saved.write_text('{"deletions": [{"kernel": "k"}]}')
    r = cli("--tests", SAMPLE, "--rescore", str(saved))
    assert r.returncode == 2 and "--rescore expects a hazard-score result file" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


# -- the path analyses of the two tcgen05 fences (§9.7.16.6.3, §9.7.16.6.4.2) --------------------------

_COMMIT_THEN_FENCE = """{
    @%p1 bra $L_skip;
    tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p2;
    tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r3];
$L_w:
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r3], 0;
    @!%p3 bra $L_w;
    tcgen05.fence::after_thread_sync;
    tcgen05.fence::before_thread_sync;
    mbarrier.arrive.shared::cta.b64 _, [%r4];
$L_skip:
    ret;
}"""


def _why(ptx: str, kind: str, n: int = 0) -> str | None:
    return redundancy(ptx, [s for s in S.sync_sites(ptx) if s.kind == kind][n])


def test_a_before_fence_after_a_commit_on_every_path_is_redundant():
    assert "tcgen05.commit (which performs it)" in _why(_COMMIT_THEN_FENCE, S.BEFORE)


@pytest.mark.parametrize("edit", [
    ("    tcgen05.fence::after_thread_sync;\n", "    tcgen05.fence::after_thread_sync;\n"
     "    tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r9}, [%r1];\n    tcgen05.wait::ld.sync.aligned;\n"),  # ld after commit
    ("    tcgen05.commit.cta_group::1", "    @%p4 tcgen05.commit.cta_group::1"),    # the commit may not run
    ("    @%p1 bra $L_skip;\n", "    @%p1 bra $L_w;\n"),                      # enters past the commit
    ("$L_skip:\n    ret;\n", "$L_skip:\n    @%p5 bra $L_w;\n    ret;\n"),      # loops back over the fence
])
def test_a_before_fence_some_path_reaches_unfenced_is_not_redundant(edit):
    ptx = _COMMIT_THEN_FENCE.replace(*edit)
    assert ptx != _COMMIT_THEN_FENCE
    assert _why(ptx, S.BEFORE) is None


_AFTER_THEN_BRANCHES = """{
$L_top:
    bar.sync 0;
    tcgen05.fence::after_thread_sync;
    @%p1 bra $L_b;
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r3], 0;
    tcgen05.fence::after_thread_sync;
    tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r9}, [%r1];
    tcgen05.wait::ld.sync.aligned;
    bra.uni $L_end;
$L_b:
    @%p2 bra $L_end;
    ld.shared.u32 %r5, [%r6];
    tcgen05.fence::after_thread_sync;
    tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p2;
$L_end:
    ret;
}"""


def test_an_after_fence_followed_by_another_on_every_path_is_redundant():
    assert "on every path from it another fence::after_thread_sync" in _why(_AFTER_THEN_BRANCHES, S.AFTER)
    assert _why(_AFTER_THEN_BRANCHES, S.AFTER, 1) is None        # the ld's own fence
    assert _why(_AFTER_THEN_BRANCHES, S.AFTER, 2) is None        # the mma's own fence


@pytest.mark.parametrize("edit", [
    (" [%r6];\n    tcgen05.fence::after_thread_sync;\n", " [%r6];\n    @%p3 tcgen05.fence::after_thread_sync;\n"),
    ("    @%p2 bra $L_end;\n", "    @%p2 bra $L_end;\n    tcgen05.st.sync.aligned.32x32b.x1.b32 [%r1], {%r9};\n"),
    ("    ld.shared.u32 %r5", "    mbarrier.arrive.shared::cta.b64 _, [%r4];\n    ld.shared.u32 %r5"),  # a release between
    ("$L_end:\n    ret;\n", "$L_end:\n    @%p4 bra $L_top;\n    ret;\n"),        # a loop back over the fence
    ("    @%p1 bra $L_b;\n", "    @%p1 bra $L_elsewhere;\n"),                   # a branch the analysis cannot follow
])
def test_an_after_fence_with_a_path_to_an_unfenced_tcgen05_op_is_not_redundant(edit):
    ptx = _AFTER_THEN_BRANCHES.replace(*edit)
    assert ptx != _AFTER_THEN_BRANCHES
    assert _why(ptx, S.AFTER) is None


def test_generated_before_fences_covered_by_a_commit_are_redundant():
    """composed (§9.7.16.6.4.4): thread 0's before-fence after its commit and wait; the issuer-only
    CTA pair: the WaitMbarrier step's before-fence after the issuing thread's commit and the others'
    Preload fences."""
    composed = next(p for p in PATTERNS if p.name == "non_pipelined_different_thread.composed")
    ptx = render(pattern_kernel(composed), "sm_100a", (8, 7))
    assert "tcgen05.commit" in redundancy(ptx, S.find_site(ptx, "Raw.tcgen05.fence::before_thread_sync.0"))
    assert redundancy(ptx, S.find_site(ptx, "Raw.tcgen05.fence::after_thread_sync.0")) is None
    def wait_step(c):
        return render(c.kernel, "sm_100a", (8, 7)).split("// ---- WaitMbarrier ----")[-1].split("// ----")[0]
    pair = next(c for c in cases("smoke", families=["commit"]) if "barrier.cluster" in wait_step(c))
    assert "%crank" in wait_step(pair)                          # issuer-only: the peer CTA skips the wait
    ptx = render(pair.kernel, "sm_100a", (8, 7))
    assert "every path" in redundancy(ptx, S.find_site(ptx, "WaitMbarrier.tcgen05.fence::before_thread_sync.0"))
