"""Expected results per family: one small oracle module per family group.

    from conformance.harness.oracles import expected
    exp = expected(case, inputs, numerics="spec", mode="semantic")   # -> Expected (sections)

Why here (``conformance/``) and not in ``generators/``: the generators produce kernels and inputs;
what a correct device must return is the harness's judgement, computed from the *logical* inputs
with the reference's semantic models (``reference.mma_semantics``, ``reference.tmem_fragments``,
``reference.tmem_cp``, ``reference.tmem_shift``, ...) and placed with the reference's maps -- never
with the generators' packing code, and never with the simulator's readers.

Modules: ``mma.py`` (tcgen05.mma*, §9.7.16.6.4 patterns), ``movement.py`` (ld, ld.red, st, wait,
cp, shift, fence, commit, alloc), ``warp.py`` (warp-level mma.sp), ``common.py`` (sections, masks,
the output layout read from the kernel's steps).
"""

from __future__ import annotations

from conformance.harness.oracles import movement as _mv
from conformance.harness.oracles.common import Expected, OracleError, Section, output_pieces
from conformance.harness.oracles.mma import mma_expected, pattern_expected
from conformance.harness.oracles.warp import warp_expected

__all__ = ["Expected", "OracleError", "Section", "expected", "output_pieces"]

ORACLES = {
    "mma": mma_expected, "mma.sp": mma_expected, "mma.ws": mma_expected, "mma.ws.sp": mma_expected,
    "sync": pattern_expected, "warp.mma.sp": warp_expected,
    "ld": _mv.ld_expected, "ld.red": _mv.ld_expected, "st": _mv.st_expected, "wait": _mv.wait_expected,
    "cp": _mv.cp_expected, "commit": _mv.cp_expected, "fence": _mv.fence_expected, "shift": _mv.shift_expected,
    "alloc": _mv.alloc_expected,
}


def expected(case, inputs, *, numerics: str = "spec", mode: str = "semantic") -> Expected:
    """The expected sections of ``case`` given its synthesized ``inputs``."""
    try:
        oracle = ORACLES[case.family]
    except KeyError:
        raise OracleError(f"oracle expects a family of {', '.join(ORACLES)}, but got {case.family!r}") from None
    return oracle(case, inputs, case.kernel, numerics, mode)
