"""Issue 25: the corpus kernels built from CUTLASS 4.2's sm_103a K = 96 mainloop (example 89) and the sparse
block-scaled cta_group::2 atoms (examples 84a/84b) against the readings they bear on (docs/clients-cute.md CU9, CU10).

* ``SimDevice()`` runs them bit-exactly (conformance/test_clients.py); here: the letter of the spec reports what
  they rely on -- under ``Q-K96-M128`` = ``table-39`` the M = 128 K = 96 MMA is refused naming Table 39, and under
  ``Q-MMA-CP-ORDER`` = ``listed`` (the pick; ``SimDevice(strict=True)``) the scale-factor copy over the previous
  MMAs' factors is the hazard ``tmem-overwrite``;
* the trace shows the instruction forms and descriptor fields the kernels stand for (K = 96 bit, the absolute
  leading-dimension mode, the hardware-proven kind spellings, tcgen05.cp.cta_group::2 of metadata and factors).
"""

from __future__ import annotations

import pytest

from conformance.clients.cute_build import cute_or_skip_reason

pytestmark = pytest.mark.clients

_SKIP = cute_or_skip_reason()


@pytest.fixture(scope="module")
def kernels():
    if _SKIP:
        pytest.skip(_SKIP)
    from conformance.clients.kernels_cute import configs

    return {k.name: k for k in configs() if "k96" in k.name or "_sp_2sm_m256n128" in k.name}


def _run(kernel, device):
    from conformance.clients.cute_build import compile_client
    from conformance.clients.launch import compare, run_case

    case = kernel.case()
    return compare(kernel, case, run_case(device, kernel, compile_client(kernel), case).outputs)


def test_k96_m128_is_refused_under_table39(kernels):
    from ptxsim import SimDevice
    from ptxsim.errors import SpecViolation

    with pytest.raises(SpecViolation, match=r"Table 39.*M for kind::mxf4nvf4 cta_group::1 dense K=96 expects"):
        _run(kernels["cute.k96_nvf4_ue4m3_m128n128"], SimDevice(readings={"Q-K96-M128": "table-39"}))
    assert _run(kernels["cute.k96_nvf4_ue4m3_2sm_m256n128"], SimDevice(readings={"Q-K96-M128": "table-39"})) == []


@pytest.mark.parametrize("name", ["cute.k96_nvf4_ue4m3_m128n128", "cute.k96_mxf4_ue8m0_m128n128"])
def test_scale_factor_refill_races_at_the_letter_of_the_spec(kernels, name):
    from ptxsim import HazardError, SimDevice

    with pytest.raises(HazardError) as info:
        _run(kernels[name], SimDevice(strict=True))
    exc = info.value
    assert exc.rule == "tmem-overwrite" and "tcgen05.mma" in exc.first and "tcgen05.cp" in exc.second, str(exc)
    assert _run(kernels[name], SimDevice(readings={"Q-MMA-CP-ORDER": "in-order"})) == []


def test_n192_tells_the_k96_scale_factor_groups_apart(kernels):
    """Q-K96-SFW: at N = 192 CUTLASS lays SFB out for 256 rows, so the next set of 4 factors of a block16 MMA with id 2
    is 8 columns on (group-of-4, the pick), not 6 (compact); N = 128 and 256 are the same under both readings."""
    from ptxsim import SimDevice

    compact = SimDevice(readings={"Q-K96-SFW": "compact"})
    problems = _run(kernels["cute.k96_nvf4_ue4m3_m128n192"], compact)
    assert problems and "elements differ" in problems[0], problems
    assert _run(kernels["cute.k96_nvf4_ue4m3_m128n256"], SimDevice(readings={"Q-K96-SFW": "compact"})) == []


def test_traces_show_the_forms_the_kernels_stand_for(kernels):
    from ptxsim import SimDevice

    want = {
        "cute.k96_nvf4_ue4m3_m128n128": ("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16", 128, {0, 2}),
        "cute.k96_mxf4_ue8m0_m128n128": ("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block32", 128,
                                         {0, 1, 2, 3}),
        "cute.k96_nvf4_ue4m3_2sm_m256n128": ("tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.block16", 256, {0, 2}),
    }
    for name, (spelling, m, ids) in want.items():
        dev = SimDevice(trace=True)
        assert _run(kernels[name], dev) == []
        s = dev.trace.summary()
        assert spelling in s["instructions"], name
        idesc = s["features"]["instr_desc"]
        assert {(d["k96"], d["m"]) for d in idesc} == {(True, m)}, name
        assert {d["a_scale_id"] for d in idesc} == ids, name
        modes = {(d["operand"], d["lbo_mode"]) for d in s["features"]["smem_desc"] if d["operand"] in "ab"}
        assert modes == {("a", "absolute"), ("b", "absolute")}, name
    for name, kind in (("cute.nvf4_ue4m3_sp_2sm_m256n128k256", "mxf4nvf4.block_scale.block16"),
                       ("cute.mxf8_e4m3_e2m1_sp_2sm_m256n128k128", "mxf8f6f4.block_scale")):
        dev = SimDevice(trace=True)
        assert _run(kernels[name], dev) == []
        ins = dev.trace.summary()["instructions"]
        assert f"tcgen05.mma.sp.cta_group::2.kind::{kind}" in ins, name
        assert {"tcgen05.cp.cta_group::2.128x128b", "tcgen05.cp.cta_group::2.32x128b.warpx4"} <= set(ins), name


def test_provenance_names_sources_in_the_wheel(kernels):
    """Every issue-25 kernel records its package, version and NVIDIA sources, and the sources are in the wheel."""
    import importlib.util
    from pathlib import Path

    from conformance.clients.kernels_cute import PROVENANCE

    assert set(PROVENANCE) == set(kernels)
    root = Path(next(iter(importlib.util.find_spec("cutlass_library").submodule_search_locations))) / "source"
    for name, p in PROVENANCE.items():
        assert p["package"] == "nvidia-cutlass" and p["version"] == "4.2.0.0", name
        missing = [s for s in p["sources"] if not (root / s).is_file()]
        assert not missing, (name, missing)
        assert p["atom"] in (root / "include/cute/arch/mma_sm100_umma.hpp").read_text(), name
