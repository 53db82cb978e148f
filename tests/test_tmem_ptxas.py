"""The assembler agrees with the model's legality rules: Tables 47/48 (ld/st .num x .shape),
tcgen05.ld.red qualifiers, tcgen05.cp shape/multicast/decompression forms, tcgen05.shift.

ptxas is an independent oracle of what is legal PTX (it knows nothing of this code); tests skip
when no ptxas is found (``--ptxas PATH`` or on PATH)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from reference.errors import SpecError
from reference.tables import LDST_NUMS, LDST_SHAPES
from reference.tmem_cp import CP_SHAPES, check_cp
from reference.tmem_fragments import check_ld_red, fragment_map

pytestmark = pytest.mark.assemble


@pytest.fixture(scope="module")
def ptxas(request):
    paths = request.config.getoption("--ptxas") or [shutil.which("ptxas")]
    if not paths[0]:
        pytest.skip("no ptxas: pass --ptxas PATH or put ptxas on PATH")
    return paths[0]


def _assembles(ptxas: str, body: str, target: str = "sm_100a") -> bool:
    ptx = (".version 8.8\n.target {t}\n.address_size 64\n.visible .entry k() {{\n"
           "  .reg .b32 r<300>;\n{b}\n  ret;\n}}\n").format(t=target, b=body)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        proc = subprocess.run([ptxas, f"-arch={target}", str(src), "-o", str(Path(tmp) / "k.o")],
                              capture_output=True, text=True, timeout=60)
    return proc.returncode == 0


def _regs(count: int) -> str:
    return "{" + ", ".join(f"r{i}" for i in range(count)) + "}"


def _ldst(op: str, shape: str, num: int, regs: int, pack: bool) -> str:
    split = ", 2" if shape == "16x32bx2" else ""
    mod = (".pack::16b" if op == "ld" else ".unpack::16b") if pack else ""
    if op == "ld":
        return f"  tcgen05.ld.sync.aligned.{shape}.x{num}{mod}.b32 {_regs(regs)}, [r299]{split};"
    return f"  tcgen05.st.sync.aligned.{shape}.x{num}{mod}.b32 [r299]{split}, {_regs(regs)};"


@pytest.mark.parametrize("op", ["ld", "st"])
def test_tables_47_48_agree_with_ptxas(ptxas, op):
    legal, illegal = [], []
    for shape in LDST_SHAPES:
        for num in LDST_NUMS:
            try:
                regs = fragment_map(shape, num, half_split=2 if shape == "16x32bx2" else None, op=op).registers
                legal += [_ldst(op, shape, num, regs, pack) for pack in (False, True)]
            except SpecError:
                illegal.append(_ldst(op, shape, num, min(256, num * 4), False))
    assert _assembles(ptxas, "\n".join(legal))
    assert len(illegal) == 3                      # the NA cells of the table
    for line in illegal:
        assert not _assembles(ptxas, line), line


RED_FORMS = [("32x32b", 2, "min", "f32", True, True), ("32x32b", 128, "max", "u32", False, False),
             ("16x32bx2", 8, "max", "u32", False, False), ("16x32bx2", 4, "min", "s32", False, False),
             ("32x32b", 1, "min", "f32", False, False), ("16x64b", 2, "min", "u32", False, False),
             ("32x32b", 2, "max", "s32", True, False), ("32x32b", 4, "min", "u32", False, True)]


@pytest.mark.parametrize("shape,num,red,dtype,abs_,nan", RED_FORMS)
def test_ld_red_rules_agree_with_ptxas(ptxas, shape, num, red, dtype, abs_, nan):
    try:
        check_ld_red(shape, num, red, dtype, abs_=abs_, nan=nan)
        ok = True
    except SpecError:
        ok = False
    mods = (".abs" if abs_ else "") + (".NaN" if nan else "")
    split = ", 16" if shape == "16x32bx2" else ""
    line = f"  tcgen05.ld.red.sync.aligned.{shape}.x{num}.{red}{mods}.{dtype} {_regs(num)}, r298, [r299]{split};"
    assert _assembles(ptxas, line, target="sm_103a") == ok


@pytest.mark.parametrize("shape", sorted(CP_SHAPES))
def test_cp_forms_agree_with_ptxas(ptxas, shape):
    for multicast in (None, "warpx2::02_13", "warpx2::01_23", "warpx4"):
        for fmt in ("", ".b8x16.b4x16_p64", ".b8x16.b6x16_p32"):
            try:
                check_cp(shape, multicast, fmt.split(".")[-1] or None)
                ok = True
            except SpecError:
                ok = False
            mc = f".{multicast}" if multicast else ""
            line = f"  mov.b64 %rd1, 0;\n  tcgen05.cp.cta_group::1.{shape}{mc}{fmt} [r299], %rd1;"
            assert _assembles(ptxas, "  .reg .b64 %rd<2>;\n" + line) == ok, line


def test_shift_assembles(ptxas):
    for group in (1, 2):
        assert _assembles(ptxas, f"  tcgen05.shift.cta_group::{group}.down [r299];")


def test_one_cta_group_per_kernel_agrees_with_ptxas(ptxas):
    """§9.7.16.7.1: ptxas rejects a kernel mixing .cta_group::1 and ::2, as the checker does."""
    from reference.tmem_alloc import check_allocations

    for groups in ((1, 1), (2, 2), (1, 2), (2, 1)):
        body = "\n".join(f"  tcgen05.shift.cta_group::{g}.down [r299];" for g in groups)
        ok = check_allocations([("shift", g) for g in groups]) is None
        assert ok == (groups[0] == groups[1])
        assert _assembles(ptxas, body) == ok


@pytest.mark.parametrize("ncols", [16, 32, 48, 96, 128, 512, 1024])
def test_alloc_ncols_agree_with_ptxas(ptxas, ncols):
    """tcgen05.alloc's immediate nCols: ptxas and the checker accept the same values. (ptxas checks
    only "multiple of 32" for tcgen05.dealloc; the checker applies the text's rule to both.)"""
    from reference.tmem_alloc import check_allocations

    body = ("  .shared .b32 s;\n"
            f"  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [s], {ncols};")
    assert _assembles(ptxas, body) == (check_allocations([("alloc", ncols, 1, 0, "x"), ("dealloc", "x", ncols, 1, 0)]) is None)
