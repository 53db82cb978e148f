"""PTX parser of the simulator: the grammar subset the generated kernels use."""

import pytest

from ptxsim.errors import PtxSyntaxError
from ptxsim.ptx.parser import Addr, Imm, Label, Name, Not, Pair, Vec, parse_int, parse_ptx

pytestmark = pytest.mark.reference

MODULE = r"""
// header comment
.version 8.7
.target sm_100a
.address_size 64
.global .align 4 .u32 gtable[3] = {1, 2, 3};

.visible .entry k(
    .param .u64 k_param_0,
    .param .align 8 .b8 k_param_1[16]
)
.reqnctapercluster 2, 1, 1
.maxntid 128, 1, 1
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>, extra;
    .shared .align 1024 .b8 smem[4096];
    .extern .shared .align 16 .b8 dyn[];
    /* block
       comment */
    {
        .reg .b64 inner;
        mov.b64 inner, {%r0, %r1};
    }
$L__BB0_1:
    @!%p1 bra.uni $L__BB0_1;
    setp.eq.and.s32 %p0|%p2, %r1, -0x10, !%p1;
    ld.shared::cta.v2.u32 {%r2, _}, [smem+-16];
    st.global.u32 [%r3 + 8], 0f3F800000;
    mov.f64 extra, 0d3FF0000000000000;
    add.s32 %r1, %r1, 017;
    add.u32 %r1, %r1, 0b101U;
    mov.u32 %r2, %cluster_ctaid.x;
    mov.u32 %r2, smem+64;
    tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r3, %p1;
    ret;
}
"""


def test_module_header_and_entry():
    mod = parse_ptx(MODULE)
    assert mod.version == "8.7" and mod.target == ("sm_100a",) and mod.address_size == 64
    assert mod.variables[0].name == "gtable" and mod.variables[0].init == (1, 2, 3)
    k = mod.kernels["k"]
    assert [p.name for p in k.params] == ["k_param_0", "k_param_1"]
    assert k.params[1].count == 16 and k.params[1].align == 8
    assert k.directives == {"reqnctapercluster": (2, 1, 1), "maxntid": (128, 1, 1)}
    assert [r.name for r in k.regs] == ["%p0", "%p1", "%p2", "%r0", "%r1", "%r2", "%r3", "extra", "inner$1"]
    smem, dyn = k.variables
    assert (smem.space, smem.align, smem.count, smem.extern) == ("shared", 1024, 4096, False)
    assert (dyn.count, dyn.extern) == (0, True)


def test_instructions_and_operands():
    body = parse_ptx(MODULE).kernels["k"].body
    instrs = [b for b in body if not isinstance(b, Label)]
    assert isinstance(body[1], Label) and body[1].name == "$L__BB0_1"
    pack, bra, setp, ld, st, movf, add8, add2, movs, mova, mma, ret = instrs
    assert pack.operands == (Name("inner$1"), Vec((Name("%r0"), Name("%r1"))))
    assert bra.opcode == "bra.uni" and bra.guard == Name("%p1") and bra.guard_neg
    assert setp.parts == ("setp", "eq", "and", "s32")
    assert setp.operands == (Pair(Name("%p0"), Name("%p2")), Name("%r1"), Imm(-16), Not(Name("%p1")))
    assert ld.operands == (Vec((Name("%r2"), Name("_"))), Addr(Name("smem"), -16))
    assert st.operands == (Addr(Name("%r3"), 8), Imm(0x3F800000, "f32"))
    assert movf.operands[1] == Imm(0x3FF0000000000000, "f64")
    assert add8.operands[2] == Imm(15)                       # octal
    assert add2.operands[2] == Imm(5)                        # binary with U suffix
    assert movs.operands[1] == Name("%cluster_ctaid.x")
    assert mova.operands[1] == Name("smem", 64)
    assert mma.parts == ("tcgen05", "mma", "cta_group::1", "kind::f16")
    assert ret.text == "ret;" and ret.line == MODULE.splitlines().index("    ret;") + 1


@pytest.mark.parametrize("text,value", [("0", 0), ("42", 42), ("0x1F", 31), ("0X10U", 16), ("0b1010", 10),
                                        ("010", 8), ("7U", 7)])
def test_integer_literals(text, value):
    assert parse_int(text) == value


@pytest.mark.parametrize("body,line", [
    ("    add.s32 %r1, %r1 %r1;\n", 3),            # missing comma
    ("    ld.global.u32 %r1, [%r1 * 4];\n", 3),    # unsupported address expression
    ("    mov.u32 %r1, #1;\n", 3),                 # stray character
])
def test_syntax_errors_name_the_line(body, line):
    text = ".version 8.0\n.visible .entry k() {\n" + body + "}\n"
    with pytest.raises(PtxSyntaxError, match=f"line {line}"):
        parse_ptx(text)


def test_device_functions_are_refused():
    with pytest.raises(PtxSyntaxError, match=r"\.func"):
        parse_ptx(".version 8.0\n.func f() { ret; }\n")


SCOPED = r"""
.version 9.4
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
    .reg .pred complete;
    .reg .b32 %r<3>;
    .loc 1 6 0                           // debug line info
$L__func_begin0:
    mov.u32 %r0, 0;
    {
    .reg .pred complete;
    waitLoop:
    setp.ne.u32 complete, %r0, 0;
    @!complete bra.uni waitLoop;
    }
    {
    .reg .pred complete;
    .reg .b32 %r<2>;
    waitLoop:
    setp.eq.u32 complete, %r1, 1;
    @complete bra.uni waitLoop;
        {
        add.u32 %r1, %r1, 1;
        bra.uni waitLoop;
        }
    }
    setp.eq.u32 complete, %r2, 0;
    ret;
$L__func_end0:
}
    .file 1 "/tmp/k.py"
    .section .debug_abbrev
    {
.b8 1                                   // Abbreviation Code
.b8 17                                  // DW_TAG_compile_unit
    }
    .section .debug_macinfo { }
"""


def test_nested_scopes_rename_shadowed_registers_and_labels():
    """PTX ISA §4.4 (scope): a { } block may redeclare a register or label of an enclosing or
    sibling block; each use binds to the innermost declaration (Triton's inline-asm wait loops)."""
    body = parse_ptx(SCOPED).kernels["k"].body
    regs = [r.name for r in parse_ptx(SCOPED).kernels["k"].regs]
    assert regs.count("complete") == 1 and len(set(regs)) == len(regs) == 8
    labels = [b.name for b in body if isinstance(b, Label)]
    assert len(labels) == len(set(labels)) == 4 and "$L__func_begin0" in labels
    instrs = [b for b in body if not isinstance(b, Label)]
    first, second = instrs[1], instrs[3]          # the two setp in the two sibling blocks
    assert first.operands[0].text != second.operands[0].text != "complete"
    assert instrs[2].guard.text == first.operands[0].text and instrs[2].operands[0].text == labels[1]
    assert instrs[4].guard.text == second.operands[0].text and instrs[4].operands[0].text == labels[2]
    # the inner %r1 of the second block shadows the outer one, also in its nested block
    assert second.operands[1].text == instrs[5].operands[0].text != "%r1"
    assert instrs[6].operands[0].text == labels[2]                  # label of the enclosing block
    assert instrs[7].operands[0].text == "complete" and instrs[7].operands[1].text == "%r2"


def test_debug_sections_and_file_directives_are_skipped():
    """DWARF ``.section .debug_* { ... }`` groups and ``.file``/``.loc`` carry no semantics."""
    module = parse_ptx(SCOPED)
    assert list(module.kernels) == ["k"] and module.variables == ()
