"""PTX parser of the simulator: the grammar subset the generated kernels use."""

import pytest

from ptxsim.errors import PtxSyntaxError
from ptxsim.ptx_parser import Addr, Imm, Label, Name, Not, Pair, Vec, parse_int, parse_ptx

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
    assert [r.name for r in k.regs] == ["%p0", "%p1", "%p2", "%r0", "%r1", "%r2", "%r3", "extra", "inner"]
    smem, dyn = k.variables
    assert (smem.space, smem.align, smem.count, smem.extern) == ("shared", 1024, 4096, False)
    assert (dyn.count, dyn.extern) == (0, True)


def test_instructions_and_operands():
    body = parse_ptx(MODULE).kernels["k"].body
    instrs = [b for b in body if not isinstance(b, Label)]
    assert isinstance(body[1], Label) and body[1].name == "$L__BB0_1"
    pack, bra, setp, ld, st, movf, add8, add2, movs, mova, mma, ret = instrs
    assert pack.operands == (Name("inner"), Vec((Name("%r0"), Name("%r1"))))
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
