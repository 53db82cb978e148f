"""``SimDevice()`` with its defaults runs client kernels that are *not* in the corpus (issue 24, item 6).

Triton 3.9 and Gluon configurations with block sizes, types and pipeline depths (``num_stages``) no
corpus configuration has are compiled here (cached like the corpus, ``conformance.clients.build``)
and run through a plain ``SimDevice()``: every output must equal the float64 numpy product the
configuration computes (``conformance.clients.launch.compare``), with no ``HazardError``.  The
default device follows the readings every known client follows (``ptxsim.hazards.CLIENT_READINGS``);
``SimDevice(strict=True)`` reports the same kernels at the letter of the spec (``tcgen05-fence``).
Deleting a synchronization step of one of them is still caught under the defaults.

One documented exception: Triton's tf32 TMA pipeline with ``num_stages >= 2`` overwrites the single
staging tile of the transposed B operand while the previous iteration's MMA may still read it (a real
race, docs/sim.md "Hazard checker", triage of client reports), and is reported as ``smem-overwrite``.
"""

from __future__ import annotations

import dataclasses

import pytest

from conformance.clients.build import triton_or_skip_reason

pytestmark = pytest.mark.clients

_SKIP = triton_or_skip_reason()
CLEAN_CONFIGS = 10          # the clean configurations of _outside_configs (one test each)


def _outside_configs():
    """(Triton and Gluon configurations not in the corpus, the tf32 TMA race configuration)."""
    from conformance.clients import kernels_dot as dot
    from conformance.clients import kernels_gluon as gluon

    S = dot.Shape
    clean = [
        dot.ptr_config("outside.bf16_ptr_m128n128k32_s3", "bf16", S(128, 128, 128, 128, 128, 32), stages=3),
        dot.ptr_config("outside.f16_ptr_m64n32k64_amn_s3", "f16", S(64, 32, 192, 64, 32, 64), a_major="MN", stages=3),
        dot.ptr_config("outside.e5m2_ptr_m128n32k64_s4", "e5m2", S(128, 32, 256, 128, 32, 64), stages=4),
        dot.ptr_config("outside.tf32_ptr_m128n64k32_s3", "tf32", S(128, 64, 128, 128, 64, 32), precision="tf32",
                       stages=3),
        dot.tma_config("outside.f16_tma_m128n32k64_s2", "f16", S(128, 32, 192, 128, 32, 64), stages=2),
        dot.tma_config("outside.bf16_tma_m64n128k32_s3", "bf16", S(64, 128, 128, 64, 128, 32), stages=3),
        gluon._mma_config("outside_mma_ss_bf16_m128n32k64", 128, 32, 64, dtype="bf16"),
        gluon._mma_config("outside_mma_ts_f16_m128n128k16", 128, 128, 16, a_tmem=True, families=("mma", "tmem")),
        gluon._tma_config("outside_mma_tma_f16_m128n32k128", 128, 32, 64, 2),
        gluon._mma_2cta_config("outside_mma_2cta_f16_m256n32k32", 256, 32, 32),
    ]
    race = dot.tma_config("outside.tf32_tma_m128n32k32_s3", "tf32", S(128, 32, 128, 128, 32, 32), precision="tf32",
                          stages=3)
    return clean, race


def _identity(k) -> tuple:
    """What makes two configurations the same kernel and launch (the name aside)."""
    return (k.language, getattr(k.fn, "__name__", str(k.fn)), repr(sorted(k.constexprs.items())),
            repr(sorted(k.signature.items())), k.num_warps, k.num_stages, k.num_ctas, k.arch)


def _run(kernel, device, ptx_edit=None):
    """Outputs' mismatch descriptions (empty: exact) of one configuration on ``device``."""
    from conformance.clients.build import compile_kernel
    from conformance.clients.launch import compare, run_case

    compiled = compile_kernel(kernel)
    if ptx_edit is not None:
        compiled = dataclasses.replace(compiled, ptx=ptx_edit(compiled.ptx))
    case = kernel.case()
    return compare(kernel, case, run_case(device, kernel, compiled, case).outputs)


@pytest.fixture(scope="module")
def configs():
    if _SKIP:
        pytest.skip(_SKIP)
    from conformance.clients.corpus import load_corpus

    clean, race = _outside_configs()
    assert len(clean) == CLEAN_CONFIGS
    corpus = {_identity(k) for k in load_corpus(("triton",))}
    inside = [k.name for k in clean + [race] if _identity(k) in corpus]
    assert not inside, f"configurations expected outside the corpus, but the corpus has {inside}"
    return clean, race


@pytest.mark.parametrize("index", range(CLEAN_CONFIGS))
def test_outside_corpus_kernel_runs_exactly_on_the_default_device(configs, index):
    from ptxsim import HazardError, SimDevice

    kernel = configs[0][index]
    assert _run(kernel, SimDevice()) == []
    with pytest.raises(HazardError) as info:          # the letter of the spec: no tcgen05.fence anywhere
        _run(kernel, SimDevice(strict=True))
    assert info.value.rule == "tcgen05-fence", str(info.value)


def test_tf32_tma_pipeline_race_is_reported_on_the_default_device(configs):
    from ptxsim import HazardError, SimDevice

    race = configs[1]
    with pytest.raises(HazardError) as info:
        _run(race, SimDevice())
    exc = info.value
    assert exc.rule == "smem-overwrite" and "tcgen05.mma" in exc.first and "st.shared" in exc.second, str(exc)
    assert _run(race, SimDevice(waive_hazards=("smem-overwrite",))) == []


def _without_last_wait_before_ld(ptx: str) -> str:
    """The PTX without the mbarrier wait that orders the MMA's completion before the epilogue's first
    tcgen05.ld: the last ``mbarrier.try_wait`` before it and the loop's branch back (Triton's and
    Gluon's inline-asm wait loops: ``waitLoop: try_wait complete; @!complete bra.uni waitLoop;``),
    as comments (the line numbers stay)."""
    lines = ptx.split("\n")
    first_ld = next(i for i, line in enumerate(lines) if "tcgen05.ld." in line)
    wait = max(i for i in range(first_ld) if "mbarrier.try_wait" in lines[i])
    assert "bra" in lines[wait + 1], lines[wait + 1]
    for i in (wait, wait + 1):
        lines[i] = "// deleted: " + lines[i].strip()
    return "\n".join(lines)


@pytest.mark.parametrize("index", [0, 6])         # a Triton and a Gluon kernel
def test_deleted_completion_wait_is_caught_on_the_default_device(configs, index):
    from ptxsim import HazardError, SimDevice

    with pytest.raises(HazardError) as info:
        _run(configs[0][index], SimDevice(), _without_last_wait_before_ld)
    assert info.value.rule in ("async-read", "async-write"), str(info.value)
