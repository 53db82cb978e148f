"""Float and 16-bit atomics against the words an H100 wrote (h100-battery seed 1, kernel
``atomics``, the "distinct" blocks: one address per thread).  Each row: battery thread, the
memory word before, the operand b (f32/f16x2 use its low 32 bits), c, then the H100's word.

Source: ``/work/shared/hardware/h100-battery/outputs_h100_seed1.npz`` (``hw_atomics``: the
``regions`` section holds the words after the atomics, ``returns`` the old values) and
``seed1/atomics.ptx``; ``seed1/atomics_regions.npy`` the words before.  Each test puts the word
before in the thread's own row (``%rd15``) or in shared memory, runs the block's atomic on it and
returns {word after (low 32 bits), old value} or the 64-bit word after.
"""

import pytest

from tests.sim_op_cases import check_rows

pytestmark = pytest.mark.reference

NEW_AND_OLD_32 = " ld.global.u32 %r1, [%rd15]; mov.b64 %rr, {%r1, %rs};"


def rows_new_old(rows):
    """(thread, before, b, c, new32 | old32 << 32) from (thread, before, b, c, new, old)."""
    return [(t, before, b, c, (new & 0xFFFFFFFF) | (old << 32)) for t, before, b, c, new, old in rows]


def test_global_atom_add_f32_flushes_subnormals_and_writes_canonical_nan():
    """op 30 ``atom.global.add.f32``: NaN results 0x7FFFFFFF (threads 2, 13, 37: a NaN operand or
    old value, payloads dropped); subnormal inputs flush to zero (24: two subnormals give +0; 34:
    -subnormal + subnormal gives +0)."""
    check_rows("atom.global.add.f32 %fs, [%rd15], %fb; mov.b32 %rs, %fs;" + NEW_AND_OLD_32, rows_new_old([
        (2, 0x7f7fffff, 0xffffffffffffffdb, 0, 0x7fffffff, 0x7f7fffff),
        (13, 0x7fc00000, 0x4251e61784636000, 0, 0x7fffffff, 0x7fc00000),
        (24, 0x7b2cb4, 0x2f, 0, 0x0, 0x7b2cb4),
        (34, 0x80504e5c, 0x3ff000000000002b, 0, 0x0, 0x80504e5c),
        (37, 0x7fa00001, 0x4340000000000000, 0, 0x7fffffff, 0x7fa00001),
    ]), "atom.global.add.f32")


def test_shared_atom_add_f32_keeps_subnormals():
    """op 50 ``atom.shared.add.f32`` (region word 128 + thread): NaN 0x7FFFFFFF as in global
    memory, but subnormal inputs and results are kept (threads 10, 13, 15)."""
    body = ("mov.u32 %r3, sbuf; shl.b32 %r4, %r15, 3; add.u32 %r3, %r3, %r4; st.shared.u64 [%r3], %xa; "
            "atom.shared.add.f32 %fs, [%r3], %fb; mov.b32 %rs, %fs; ld.shared.u32 %r1, [%r3]; mov.b64 %rr, {%r1, %rs};")
    check_rows(body, rows_new_old([
        (2, 0xce628d64, 0xffffffffffffffdb, 0, 0x7fffffff, 0xce628d64),
        (8, 0x7fc00000, 0xe4eab22a2442640d, 0, 0x7fffffff, 0x7fc00000),
        (10, 0x2b612c, 0x408e300000000000, 0, 0x2b612c, 0x2b612c),
        (11, 0x8000233f, 0xffffffffb0bd3615, 0, 0xb0bd3615, 0x8000233f),
        (13, 0x711541, 0x4251e61784636000, 0, 0x84627dd5, 0x711541),
        (15, 0x807fffff, 0x16, 0, 0x807fffe9, 0x807fffff),
    ]), "atom.shared.add.f32", decls=".shared .align 8 .b8 sbuf[1024];")


def test_global_atom_add_f64_nan_is_the_operands():
    """op 31 ``atom.global.add.f64`` with a NaN in memory and a NaN operand: the operand's NaN
    (the order of ``add.f64``: b first)."""
    check_rows("atom.global.add.f64 %ds, [%rd15], %db; ld.global.u64 %rr, [%rd15];", [
        (11, 0xffffffffb8b71373, 0xffffffffb0bd3615, 0, 0xffffffffb0bd3615),
        (68, 0xffffffff894fdbea, 0xfffffffffffffffe, 0, 0xfffffffffffffffe),
    ], "atom.global.add.f64")


@pytest.mark.parametrize(("op", "rows"), [
    # op 37: element-wise, NaN 0x7FFF (thread 0: 0x7c63 and 0xff06 are NaNs)
    ("atom.global.add.noftz.f16x2", [
        (0, 0x80441a28, 0x5451da827c63ff06, 0, 0x7fff7fff, 0x80441a28),
        (1, 0xd88d0716, 0xbe39421863b2c4c2, 0, 0x628fc4c2, 0xd88d0716),
        (2, 0x8027a2c8, 0xffffffffffffffdb, 0, 0x7fff7fff, 0x8027a2c8),
    ]),
    # op 38: thread 2: 0x7fa0 and 0xffdb are NaNs: 0x7FFF
    ("atom.global.add.noftz.bf16x2", [
        (0, 0x54db41, 0x5451da827c63ff06, 0, 0x7c63ff06, 0x54db41),
        (1, 0xc7ba4d6c, 0xbe39421863b2c4c2, 0, 0x63b24d6c, 0xc7ba4d6c),
        (2, 0x7fa00001, 0xffffffffffffffdb, 0, 0x7fff7fff, 0x7fa00001),
    ]),
])
def test_atom_add_noftz_of_half_pairs(op, rows):
    """ops 37-38 ``atom.global.add.noftz.f16x2`` / ``.bf16x2`` on the low 32 bits of the word."""
    check_rows(f"{op} %rs, [%rd15], %ub;" + NEW_AND_OLD_32, rows_new_old(rows), op)


def test_atom_cas_b16():
    """op 39 ``atom.global.cas.b16`` on the low 16 bits of the word: even threads compare with
    the value in memory (swap: c's low 16 bits written), odd ones with b's (no swap)."""
    body = ("ld.global.u16 %h3, [%rd15]; and.b32 %r4, %r15, 1; setp.eq.u32 %p1, %r4, 0; selp.b16 %h3, %h3, %hb, %p1; "
            "atom.global.cas.b16 %hs, [%rd15], %h3, %hc; ld.global.u64 %rr, [%rd15];")
    check_rows(body, [
        (0, 0x23bc0e57ec64fa24, 0x5451da827c63ff06, 0x900b8f2e0604e, 0x23bc0e57ec64604e),
        (1, 0x15ae058526191c2a, 0xbe39421863b2c4c2, 0x1acf6f43, 0x15ae058526191c2a),
        (2, 0x317ca1223fd9509b, 0xffffffffffffffdb, 0xffffffffd6a24c1b, 0x317ca1223fd94c1b),
        (3, 0xa8419302cdecd9e7, 0x6c3b7a6d7f7fffff, 0x41a18bb624f6892d, 0xa8419302cdecd9e7),
    ], "atom.cas.b16")
