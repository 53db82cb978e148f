"""mbarrier semantics and non-tensor bulk copies (``cp.async.bulk`` loads and stores)."""

from __future__ import annotations

import numpy as np

from conformance.battery.spec import HEADER, Battery, buf_in, buf_out, p_buf
from conformance.battery.tile_ptx import (
    bounded_wait,
    copy_into_tile,
    dump_tile,
    fill_tile_with_pattern,
    tile_prologue,
)

# 2. mbarrier semantics and non-tensor bulk copies
# ================================================================================================

def bulk_ptx() -> str:
    """Thread 0 inits mbarrier A (count 4) and B (count 1); threads 0..3 arrive on A, thread 0 with
    expect_tx of all bytes, and issues 5 cp.async.bulk copies (sizes 16..4096, .shared::cluster and
    .shared::cta destinations) that complete on A; every thread waits (bounded). Phase 2 reuses A
    (parity 1) for a second round. Then the CTA dumps the 8 KiB tile. Status words: timeouts."""
    copies1 = [(0, 0, 16), (64, 16, 48), (1024, 1024, 4096), (5200, 333 * 16, 208), (7168, 7168, 1024)]
    copies2 = [(128, 8192, 256), (6144, 2048, 512)]
    tx1 = sum(c[2] for c in copies1)
    tx2 = sum(c[2] for c in copies2)
    lines1 = []
    for i, (d, s, n) in enumerate(copies1):
        dst = "shared::cluster" if i % 2 == 0 else "shared::cta"
        lines1.append(f"  add.u32 %r9, %r1, {d};\n  add.u64 %rd6, %rd5, {s};\n"
                      f"  cp.async.bulk.{dst}.global.mbarrier::complete_tx::bytes [%r9], [%rd6], {n}, [%r2];")
    lines2 = []
    for i, (d, s, n) in enumerate(copies2):
        dst = "shared::cta" if i % 2 == 0 else "shared::cluster"
        lines2.append(f"  add.u32 %r9, %r1, {d};\n  add.u64 %rd6, %rd5, {s};\n"
                      f"  cp.async.bulk.{dst}.global.mbarrier::complete_tx::bytes [%r9], [%rd6], {n}, [%r2];")
    nl = "\n"
    return HEADER + f"""
.shared .align 128 .b8 tile[8192];
.shared .align 8 .b64 bar;

.visible .entry bulk_copy(.param .u64 src, .param .u64 out)
{{
{tile_prologue("src")}
  mov.u32 %r1, tile;
  mov.u32 %r2, bar;
{fill_tile_with_pattern(8192)}
  setp.ne.u32 %p2, %r0, 0;
  @%p2 bra INITED;
  mbarrier.init.shared::cta.b64 [%r2], 4;
INITED:
  fence.proxy.async.shared::cta;
  bar.sync 0;
  setp.lt.u32 %p6, %r0, 4;
  @%p2 bra ARRIVE1;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], {tx1};
{nl.join(lines1)}
  bra ISSUED1;
ARRIVE1:
  @%p6 mbarrier.arrive.shared::cta.b64 _, [%r2];
ISSUED1:
{bounded_wait("WAIT1", "DONE1", 0, timeout_flag="[%rd1]")}
  bar.sync 0;
  // phase 1 (parity 1): thread 0 expects, threads 1..3 arrive plainly, thread 0 arrives with count 1
  @%p2 bra ARRIVE2;
  mbarrier.expect_tx.shared::cta.b64 [%r2], {tx2};
{nl.join(lines2)}
  mbarrier.arrive.shared::cta.b64 _, [%r2];
  bra ISSUED2;
ARRIVE2:
  @%p6 mbarrier.arrive.shared::cta.b64 _, [%r2];
ISSUED2:
{bounded_wait("WAIT2", "DONE2", 1, timeout_flag="[%rd1+4]")}
  bar.sync 0;
{dump_tile(8192)}
  ret;
}}
"""


def bulk_store_ptx() -> str:
    """Non-tensor bulk store and reduction (shared -> global, .bulk_group): the CTA copies src into
    the tile, fence.proxy.async + bar.sync, thread 0 issues 3 bulk stores and 1 bulk add.u32
    reduction into `out` (pre-filled from an input), commit_group, wait_group 0."""
    return HEADER + f"""
.shared .align 128 .b8 tile[4096];

.visible .entry bulk_store(.param .u64 src, .param .u64 out)
{{
{tile_prologue("src")}
  mov.u32 %r1, tile;
{copy_into_tile(4096)}
  fence.proxy.async.shared::cta;
  bar.sync 0;
  setp.ne.u32 %p2, %r0, 0;
  @%p2 bra END;
  cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], 16;
  add.u64 %rd6, %rd1, 48;
  add.u32 %r9, %r1, 256;
  cp.async.bulk.global.shared::cta.bulk_group [%rd6], [%r9], 208;
  add.u64 %rd6, %rd1, 1024;
  add.u32 %r9, %r1, 1024;
  cp.async.bulk.global.shared::cta.bulk_group [%rd6], [%r9], 2048;
  add.u64 %rd6, %rd1, 3072;
  add.u32 %r9, %r1, 3072;
  cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd6], [%r9], 1024;
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
END:
  ret;
}}
"""


def add_bulk(bat: Battery) -> None:
    rng = bat.rng
    src = bat.npy("bulk_src.npy", rng.integers(0, 256, 16384, dtype=np.uint8))
    f = bat.ptx("bulk_copy.ptx", bulk_ptx())
    bat.case(name="bulk_copy", ptx=f, kernel="bulk_copy", block=[128],
             buffers=[buf_in("src", src), buf_out("out", 16 + 8192)], params=[p_buf("src"), p_buf("out")],
             sections=[{"name": "status", "offset": 0, "bytes": 16, "dtype": "u32", "kind": "words",
                        "labels": ["timeout phase0", "timeout phase1", "-", "-"]},
                       {"name": "smem", "offset": 16, "bytes": 8192, "dtype": "u8", "kind": "smem_image",
                        "box_bytes": 8192, "row_bytes": 128, "swizzle": "none"}],
             expect={"status": [0, 0, 0, 0]},
             note="cp.async.bulk.shared::{cluster,cta}.global.mbarrier::complete_tx::bytes, sizes 16..4096, one "
                  "mbarrier (count 4) over two phases (arrive.expect_tx, expect_tx, plain arrivals, parity 0 then 1); "
                  "the whole 8 KiB shared tile is compared")
    dst = rng.integers(0, 2**31, 1024, dtype=np.uint32)
    dfile = bat.npy("bulk_store_dst.npy", dst)
    sfile = bat.npy("bulk_store_src.npy", rng.integers(0, 2**31, 1024, dtype=np.uint32))
    f = bat.ptx("bulk_store.ptx", bulk_store_ptx())
    bat.case(name="bulk_store", ptx=f, kernel="bulk_store", block=[128],
             buffers=[buf_in("src", sfile), buf_in("out", dfile, save=True)], params=[p_buf("src"), p_buf("out")],
             sections=[{"name": "dst", "offset": 0, "bytes": 4096, "dtype": "u32", "kind": "words_flat",
                        "initial": dfile}],
             note="cp.async.bulk.global.shared::cta.bulk_group (16, 208, 2048 bytes) and "
                  "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 (1024 bytes), commit/wait_group")


def mbarrier_ptx() -> tuple[str, list[str]]:
    """Scripted single-thread mbarrier sequences (thread 0; deterministic) writing result words,
    plus a multi-thread multi-phase part. Each `// @op` block uses its own mbarrier object."""
    W = []                          # (block name, body); body writes words via RES(i, reg)
    def blk(name, body):
        W.append((name, body))
    # each block: %r30 = its mbarrier address; results at %rd1 + 4*slot  (slot base in %r31 words)
    blk("init_test_parity", """
  mbarrier.init.shared::cta.b64 [%rB], 3;
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(0, %p1)
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 1;   RES(1, %p1)
  mbarrier.arrive.shared::cta.b64 %rd10, [%rB];
  mbarrier.pending_count.b64 %r5, %rd10;                      RESW(2, %r5)
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(3, %p1)
  mbarrier.arrive.shared::cta.b64 %rd11, [%rB], 2;
  mbarrier.pending_count.b64 %r5, %rd11;                      RESW(4, %r5)
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(5, %p1)
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 1;   RES(6, %p1)
  mbarrier.test_wait.shared::cta.b64 %p1, [%rB], %rd10;      RES(7, %p1)
  mbarrier.test_wait.shared::cta.b64 %p1, [%rB], %rd11;      RES(8, %p1)
  mbarrier.arrive.shared::cta.b64 %rd12, [%rB];
  mbarrier.test_wait.shared::cta.b64 %p1, [%rB], %rd12;      RES(9, %p1)
  mbarrier.pending_count.b64 %r5, %rd12;                      RESW(10, %r5)
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%rB], 0;    RES(11, %p1)
""")
    blk("tx_count", """
  mbarrier.init.shared::cta.b64 [%rB], 2;
  mbarrier.expect_tx.shared::cta.b64 [%rB], 64;
  mbarrier.arrive.shared::cta.b64 _, [%rB], 2;
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(0, %p1)
  mbarrier.complete_tx.shared::cta.b64 [%rB], 32;
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(1, %p1)
  mbarrier.complete_tx.shared::cta.b64 [%rB], 32;
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(2, %p1)
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd10, [%rB], 16;
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 1;   RES(3, %p1)
  mbarrier.pending_count.b64 %r5, %rd10;                      RESW(4, %r5)
  mbarrier.arrive.shared::cta.b64 _, [%rB];
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 1;   RES(5, %p1)
  mbarrier.complete_tx.shared::cta.b64 [%rB], 16;
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 1;   RES(6, %p1)
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(7, %p1)
""")
    blk("complete_before_expect", """
  mbarrier.init.shared::cta.b64 [%rB], 1;
  mbarrier.complete_tx.shared::cta.b64 [%rB], 48;
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(0, %p1)
  mbarrier.expect_tx.shared::cta.b64 [%rB], 48;
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(1, %p1)
  mbarrier.arrive.shared::cta.b64 _, [%rB];
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(2, %p1)
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 1;   RES(3, %p1)
""")
    blk("negative_tx_probe", """
  mbarrier.init.shared::cta.b64 [%rB], 1;
  mbarrier.complete_tx.shared::cta.b64 [%rB], 48;
  mbarrier.arrive.shared::cta.b64 _, [%rB];
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(0, %p1)
  mbarrier.expect_tx.shared::cta.b64 [%rB], 48;
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(1, %p1)
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 1;   RES(2, %p1)
""")
    blk("inval_reinit", """
  mbarrier.init.shared::cta.b64 [%rB], 1;
  mbarrier.arrive.shared::cta.b64 _, [%rB];
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(0, %p1)
  mbarrier.inval.shared::cta.b64 [%rB];
  mbarrier.init.shared::cta.b64 [%rB], 2;
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(1, %p1)
  mbarrier.arrive.shared::cta.b64 _, [%rB];
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(2, %p1)
  mbarrier.arrive.release.cta.shared::cta.b64 _, [%rB];
  mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p1, [%rB], 0;   RES(3, %p1)
""")
    blk("many_phases", """
  mbarrier.init.shared::cta.b64 [%rB], 1;
  mov.u32 %r6, 0;
  mov.u32 %r7, 0;
$L_loop:
  mbarrier.arrive.shared::cta.b64 _, [%rB];
  add.u32 %r6, %r6, 1;
  setp.lt.u32 %p2, %r6, 37;
  @%p2 bra $L_loop;
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 0;   RES(0, %p1)
  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%rB], 1;   RES(1, %p1)
  mbarrier.arrive.shared::cta.b64 %rd10, [%rB];
  mbarrier.test_wait.shared::cta.b64 %p1, [%rB], %rd10;      RES(2, %p1)
""")
    blk("generic_address", """
  cvta.shared.u64 %rd13, %rdB;
  mbarrier.init.b64 [%rd13], 2;
  mbarrier.arrive.b64 %rd10, [%rd13];
  mbarrier.test_wait.parity.b64 %p1, [%rd13], 0;             RES(0, %p1)
  mbarrier.arrive.b64 %rd11, [%rd13];
  mbarrier.try_wait.parity.b64 %p1, [%rd13], 0;              RES(1, %p1)
  mbarrier.test_wait.b64 %p1, [%rd13], %rd10;                RES(2, %p1)
  mbarrier.pending_count.b64 %r5, %rd11;                      RESW(3, %r5)
""")
    return W


def mbarrier_kernel(W) -> str:
    NB = len(W) + 2
    blocks = []
    for k, (name, body) in enumerate(W):
        lines = []
        for line in body.strip("\n").split("\n"):
            code, _, res = line.partition("RES")
            if res:
                kind = "W" if res.startswith("W") else "P"
                arg = res[2:].strip() if kind == "W" else res[1:].strip()
                slot, reg = [x.strip() for x in arg.strip("()").split(",")]
                off = 4 * (16 * k + int(slot))
                lines.append(code.rstrip())
                if kind == "P":
                    lines.append(f"  selp.u32 %r4, 1, 0, {reg};\n  st.global.u32 [%rd1+{off}], %r4;")
                else:
                    lines.append(f"  st.global.u32 [%rd1+{off}], {reg};")
            else:
                lines.append(line.rstrip())
        text = "\n".join(lines).replace("$L_", f"$L{k}_").replace("%rB", "%r30").replace("%rdB", "%rd30")
        blocks.append(f"  // @op {k} {name}\n  {{\n  add.u32 %r30, %r2, {8 * k};\n  cvt.u64.u32 %rd30, %r30;\n"
                      f"{text}\n  }}\n  // @end {k}")
    nl = "\n"
    mt_word = 16 * len(W)           # word offset of the multi-thread part
    return HEADER + f"""
.shared .align 8 .b64 bars[{NB + 4}];

.visible .entry mbarrier_seq(.param .u64 out)
{{
  .reg .pred %p<8>;
  .reg .b32 %r<32>;
  .reg .b64 %rd<32>;
  mov.u32 %r0, %tid.x;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r2, bars;
  setp.ne.u32 %p7, %r0, 0;
  @%p7 bra MT;
{nl.join(blocks)}
MT:
  // multi-thread: barrier M (count = ntid) over 3 phases; thread 0 does expect_tx(64) before its
  // arrival each phase and thread 64 complete_tx(64) before its arrival; every thread records
  // whether each phase wait succeeded (1) within the bound
  add.u32 %r20, %r2, {8 * NB};
  mov.u32 %r21, %ntid.x;
  @%p7 bra MT_INITED;
  mbarrier.init.shared::cta.b64 [%r20], %r21;
MT_INITED:
  bar.sync 0;
  mov.u32 %r22, 0;
MT_PHASE:
  setp.eq.u32 %p5, %r0, 64;
  @!%p7 mbarrier.expect_tx.shared::cta.b64 [%r20], 64;
  @%p5 mbarrier.complete_tx.shared::cta.b64 [%r20], 64;
  mbarrier.arrive.shared::cta.b64 _, [%r20];
  and.b32 %r23, %r22, 1;
{bounded_wait("MT_WAIT", "MT_DONE", "%r23", bar="%r20")}
  selp.u32 %r4, 1, 0, %p3;
  mad.lo.u32 %r24, %r22, %r21, %r0;
  add.u32 %r24, %r24, {mt_word};
  mul.wide.u32 %rd20, %r24, 4;
  add.u64 %rd21, %rd1, %rd20;
  st.global.u32 [%rd21], %r4;
  add.u32 %r22, %r22, 1;
  setp.lt.u32 %p6, %r22, 3;
  @%p6 bra MT_PHASE;
  ret;
}}
"""


def add_mbarrier(bat: Battery) -> None:
    W = mbarrier_ptx()
    f = bat.ptx("mbarrier_seq.ptx", mbarrier_kernel(W))
    nthreads = 128
    seq_words = 16 * len(W)
    total = 4 * (seq_words + 3 * nthreads)
    expected = {"init_test_parity": [0, 1, None, 0, None, 1, 0, 1, 1, 0, None, 1],
                "tx_count": [0, 0, 1, 0, None, 0, 1, 0], "complete_before_expect": [0, 0, 1, 0],
                "negative_tx_probe": [None, None, None],
                "inval_reinit": [1, 0, 0, 1], "many_phases": [1, 0, 1], "generic_address": [0, 1, 1, None]}
    bat.case(name="mbarrier_seq", ptx=f, kernel="mbarrier_seq", block=[nthreads],
             buffers=[buf_out("out", total)], params=[p_buf("out")], ops=[n for n, _ in W],
             sections=[{"name": "seq", "offset": 0, "bytes": 4 * seq_words, "dtype": "u32", "shape": [len(W), 16],
                        "kind": "per_op_words", "expected": expected},
                       {"name": "multi_thread", "offset": 4 * seq_words, "bytes": 4 * 3 * nthreads, "dtype": "u32",
                        "shape": [3, nthreads], "kind": "words"}],
             note="mbarrier semantics, single thread (init, test_wait/try_wait parity and token forms, arrive with "
                  "count, pending_count of arrive tokens, expect_tx/complete_tx incl. complete before expect, "
                  "inval + re-init, 37 phases, generic addresses) and 128 threads over 3 phases with tx; "
                  "seq[op][k] = result k of block op (1 = phase complete); pending_count results are whatever "
                  "the device returns for an arrive token")


# ================================================================================================
