"""One-instruction kernels over recorded operand rows, for the tests whose expected values are
an H100's recorded words (``/work/shared/hardware/h100-battery``, seed 1: the kernel, op block and
thread are cited beside each row).

:func:`run_rows` runs ``body`` once per row (one thread each) with the row's three 64-bit
operands in ``%xa %xb %xc`` and their views: ``%ua %ub %uc`` (low 32 bits), ``%uah`` (high half
of a), ``%ha %hb %hc`` (low 16 bits), ``%fa %fb %fc`` (low 32 bits as f32), ``%da %db %dc`` (f64),
``%hz`` = 0; the body leaves its 64-bit result in ``%rr``.  The register names are the battery's,
so a body is the battery's op block.  ``%r15`` is the thread index and ``%rd15`` the address of
the thread's row (a at +0), which a body may use as memory; ``decls`` adds module-scope
declarations (a ``.shared`` buffer).  The views are the battery's own lines
(:data:`conformance.battery.gen_opblock.OPERAND_VIEWS`).
"""

from __future__ import annotations

import numpy as np

from conformance.battery.gen_opblock import OPERAND_VIEWS
from ptxsim import SimDevice
from tests.sim_ptx import HEAD90

_KERNEL = HEAD90 + r"""
DECLS
.visible .entry rows(.param .u64 in_ptr, .param .u64 out_ptr)
{
  .reg .pred %p<8>, %ps;
  .reg .b16 %ha, %hb, %hc, %hz, %hs, %h<8>;
  .reg .b32 %ua, %ub, %uc, %uah, %ubh, %uch, %rs, %rs2, %r<16>;
  .reg .f32 %fa, %fb, %fc, %fs, %f<8>;
  .reg .b64 %xa, %xb, %xc, %rr, %rd<16>;
  .reg .f64 %da, %db, %dc, %ds, %d<8>;

  mov.u32 %r15, %tid.x;
  mul.wide.u32 %rd14, %r15, 24;
  ld.param.u64 %rd15, [in_ptr];
  cvta.to.global.u64 %rd15, %rd15;
  add.u64 %rd15, %rd15, %rd14;
  ld.global.u64 %xa, [%rd15];
  ld.global.u64 %xb, [%rd15+8];
  ld.global.u64 %xc, [%rd15+16];
VIEWS
  mov.u64 %rr, 0;
  {
  BODY
  }
  mul.wide.u32 %rd14, %r15, 8;
  ld.param.u64 %rd15, [out_ptr];
  cvta.to.global.u64 %rd15, %rd15;
  add.u64 %rd15, %rd15, %rd14;
  st.global.u64 [%rd15], %rr;
}
""".replace("VIEWS", OPERAND_VIEWS)


def kernel(body: str, decls: str = "") -> str:
    return _KERNEL.replace("BODY", body).replace("DECLS", decls)


def run_rows(body: str, rows, decls: str = "") -> list[int]:
    """``%rr`` of every row ``(a, b, c)`` (the first three items of each row are used)."""
    dev = SimDevice()
    data = np.array([[int(x) & (2**64 - 1) for x in r[:3]] for r in rows], dtype=np.uint64)
    src = dev.memory.alloc(data.nbytes)
    dev.memory.write(src, data.view(np.uint8).reshape(-1))
    out = dev.memory.alloc(8 * len(rows))
    dev.run(dev.load(kernel(body, decls)), "rows", [src, out], (1, 1, 1), (len(rows), 1, 1))
    return dev.memory.read_array(out, 8 * len(rows)).view(np.uint64).tolist()


def check_rows(body: str, rows, what: str, decls: str = "") -> None:
    """Each row is ``(thread, a, b, c, expected)``; the message names the row's battery thread."""
    got = run_rows(body, [r[1:4] for r in rows], decls)
    bad = [f"thread {r[0]}: a=0x{r[1]:x} b=0x{r[2]:x} c=0x{r[3]:x}: expects 0x{r[4]:x} (H100), but got 0x{g:x}"
           for r, g in zip(rows, got, strict=True) if g != r[4]]
    assert not bad, f"{what}:\n  " + "\n  ".join(bad)
