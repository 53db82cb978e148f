"""ptxas agrees with Table 37 (PTX ISA §9.7.14.3) on immediate block-scale selectors of mma.sp.

The suite's kernels pass ``{byte-id, thread-id}`` as registers (checked by the simulator at run
time); with immediates ptxas range-checks them. Every legal value of ``reference.warp_block_scaling``
assembles, the first value past each range is refused. Skips without ptxas.
"""

import subprocess

import pytest

from conformance.harness.toolchain import find_tool
from generators.ptx.kernel import render
from generators.variants.warp_mma_sp import case_for, spellings
from reference import warp_block_scaling as WB

pytestmark = pytest.mark.assemble

VECS = [("mxf8f6f4", "scale_vec::1X", "ue8m0", 1), ("mxf4", "scale_vec::2X", "ue8m0", 2),
        ("mxf4nvf4", "scale_vec::4X", "ue4m3", 4)]


def _ptx(kind, vec, stype, sel):
    sp = next(s for s in spellings() if (s.kind, s.scale_vec, s.scale_type) == (kind, vec, stype))
    text = render(case_for(sp).kernel, "sm_120a", (8, 8))
    return text.replace("{%bida, %tida}", f"{{{sel[0]}, {sel[1]}}}").replace("{%bidb, %tidb}", f"{{{sel[2]}, {sel[3]}}}")


@pytest.mark.parametrize("kind,vec,stype,sf", VECS, ids=[v[1] for v in VECS])
def test_ptxas_accepts_exactly_table_37(kind, vec, stype, sf, tmp_path):
    tool = find_tool("ptxas")
    if tool is None:
        pytest.skip("NotSupported: no ptxas found ($TCGEN05_CTS_PTXAS, the toolchain extra, PATH)")
    byte_ids = WB.BYTE_IDS[sf]
    legal = [(max(byte_ids), max(WB.THREAD_IDS_A), max(byte_ids), max(WB.THREAD_IDS_B))]
    illegal = [(max(byte_ids) + 1, 0, 0, 0), (0, max(WB.THREAD_IDS_A) + 1, 0, 0), (0, 0, max(byte_ids) + 1, 0),
               (0, 0, 0, max(WB.THREAD_IDS_B) + 1)]
    if sf == 2:
        illegal.append((1, 0, 0, 0))                    # 2X: byte-id 0 or 2 only
    for sel, ok in [(s, True) for s in legal] + [(s, False) for s in illegal]:
        path = tmp_path / "k.ptx"
        path.write_text(_ptx(kind, vec, stype, sel))
        r = subprocess.run([tool.path, "-arch=sm_120a", str(path), "-o", str(tmp_path / "k.cubin")],
                           capture_output=True, text=True, timeout=120)
        assert (r.returncode == 0) == ok, (sel, r.stderr[:300])
