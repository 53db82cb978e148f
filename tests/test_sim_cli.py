"""``tcgen05-cts sim run``: a user's own kernel on the simulator, from the command line."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.sim_ptx import HEAD90

ROOT = Path(__file__).resolve().parents[1]

ADD = HEAD90 + r"""
.visible .entry add(.param .u64 a_ptr, .param .u64 b_ptr, .param .u64 c_ptr, .param .u32 n, .param .f32 scale)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<8>;

    ld.param.u64 %rd1, [a_ptr];
    ld.param.u64 %rd2, [b_ptr];
    ld.param.u64 %rd3, [c_ptr];
    ld.param.u32 %r1, [n];
    ld.param.f32 %f3, [scale];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r2, %r2, %r3, %tid.x;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    mul.wide.u32 %rd4, %r2, 4;
    add.s64 %rd5, %rd1, %rd4;
    add.s64 %rd6, %rd2, %rd4;
    add.s64 %rd7, %rd3, %rd4;
    ld.global.f32 %f1, [%rd5];
    ld.global.f32 %f2, [%rd6];
    add.f32 %f1, %f1, %f2;
    mul.f32 %f1, %f1, %f3;
    st.global.f32 [%rd7], %f1;
DONE:
    ret;
}
"""

# two entries; `bump` adds a u32 to every word of a buffer in place, `table` copies a .b8 [16] param
TWO = HEAD90 + r"""
.visible .entry bump(.param .u64 x_ptr, .param .s32 delta)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [x_ptr];
    ld.param.s32 %r1, [delta];
    mov.u32 %r2, %tid.x;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r3, [%rd3];
    add.s32 %r3, %r3, %r1;
    st.global.u32 [%rd3], %r3;
    ret;
}

.visible .entry table(.param .align 4 .b8 tab[16], .param .u64 out_ptr, .param .u64 unused)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out_ptr];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.param.u32 %r2, [tab+0];
    ld.param.u32 %r3, [tab+12];
    add.u32 %r2, %r2, %r3;
    add.u32 %r2, %r2, %r1;
    st.global.u32 [%rd3], %r2;
    ret;
}
"""


def sim(*args, cwd):
    return subprocess.run([sys.executable, "-m", "conformance.commands.cli", "sim", "run", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.fixture
def add_files(tmp_path):
    (tmp_path / "add.ptx").write_text(ADD)
    np.save(tmp_path / "a.npy", np.arange(300, dtype=np.float32))
    np.save(tmp_path / "b.npy", np.full(300, 0.5, dtype=np.float32))
    return tmp_path


def add_args(d, c="c.npy:float32:300", n="u32:300", **extra):
    return [d / "add.ptx", "--grid", "3", "--block", "128", "--param", f"buf:in={d / 'a.npy'}",
            "--param", f"buf:in={d / 'b.npy'}", "--param", f"buf:out={d / c}", "--param", n, "--param", "f32:2"]


def test_add_kernel_runs_and_writes_output_and_trace(add_files):
    d = add_files
    r = sim(*add_args(d), "--trace", d / "t.json", cwd=d)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    c = np.load(d / "c.npy")
    assert c.dtype == np.float32 and c.shape == (300,)
    assert (c == (np.arange(300) + 0.5) * 2).all()
    t = json.loads((d / "t.json").read_text())
    # 10 instructions up to the branch and the ret for each of 384 threads; 9 more for the 300 in range
    assert t["instructions"]["st.global.f32"] == 300 and t["instructions"]["ld.param.u64"] == 3 * 384
    assert t["thread_instructions"] == 11 * 384 + 9 * 300
    assert t["kernel"] == "add" and t["seconds"] > 0
    assert "thread-instructions" in r.stdout
    assert not list(d.glob(".*.tmp"))


def test_inout_bytes_and_kernel_choice(tmp_path):
    (tmp_path / "two.ptx").write_text(TWO)
    np.save(tmp_path / "x.npy", np.arange(32, dtype=np.uint32).reshape(4, 8))
    r = sim(tmp_path / "two.ptx", "--kernel", "bump", "--grid", "1", "--block", "32",
            "--param", f"buf:inout={tmp_path / 'x.npy'}", "--param", "s32:-1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    x = np.load(tmp_path / "x.npy")
    assert x.shape == (4, 8) and x.dtype == np.uint32
    assert (x.ravel() == (np.arange(32) - 1).astype(np.uint32)).all()
    (tmp_path / "tab.bin").write_bytes(np.array([7, 0, 0, 1000], dtype="<u4").tobytes())
    r = sim(tmp_path / "two.ptx", "--kernel", "table", "--grid", "1", "--block", "8",
            "--param", f"bytes:{tmp_path / 'tab.bin'}", "--param", f"buf:out={tmp_path / 'o.bin'}:uint32:8",
            "--param", "null", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (np.frombuffer((tmp_path / "o.bin").read_bytes(), dtype="<u4") == 1007 + np.arange(8)).all()


def _error(r, *words):
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("tcgen05-cts sim run: error: "), lines[0]
    assert "Traceback" not in r.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_errors_are_one_line_and_lose_nothing(add_files):
    d = add_files
    (d / "c.npy").write_bytes(b"keep me")
    _error(sim(*add_args(d)[:-2], cwd=d), "--param", "5", "got 4")                        # count
    _error(sim(*add_args(d, n="u64:300"), cwd=d), "--param 4", ".u32 n")                   # width
    _error(sim(*add_args(d, n="u32:0x1_0000_0000"), cwd=d), "--param 4")                    # bad integer
    _error(sim(*add_args(d, n="u32:4294967296"), cwd=d), "--param 4", "4294967296")        # range
    _error(sim(*add_args(d, n="wat:1"), cwd=d), "--param 4", "'wat'")                      # kind
    _error(sim(*add_args(d, c="c.npy:float32"), cwd=d), "--param 3", "DTYPE:SHAPE")        # out spec
    _error(sim(*add_args(d, c="c.npy:nosuchtype:300"), cwd=d), "--param 3", "dtype")
    args = add_args(d)
    args[6] = f"buf:in={d / 'missing.npy'}"
    _error(sim(*args, cwd=d), "--param 1", "missing.npy")                                  # missing file
    _error(sim(*add_args(d), "--kernel", "nope", cwd=d), "--kernel", "nope", "add")        # unknown kernel
    _error(sim(*add_args(d), "--grid", "0", cwd=d), "--grid")
    _error(sim(d / "nothere.ptx", "--grid", "1", "--block", "1", cwd=d), "KERNEL.ptx")
    # too small an output buffer: the kernel's store faults; nothing is written
    _error(sim(*add_args(d, c="c.npy:float32:10"), "--trace", d / "t.json", cwd=d), "MemoryFault", "st.global.f32")
    assert (d / "c.npy").read_bytes() == b"keep me" and not (d / "t.json").exists()
    assert not list(d.glob(".*.tmp"))


def test_simulator_errors(tmp_path):
    (tmp_path / "two.ptx").write_text(TWO)
    _error(sim(tmp_path / "two.ptx", "--grid", "1", "--block", "1", cwd=tmp_path), "--kernel", "bump, table")
    bad = ADD.replace("add.f32 %f1, %f1, %f2;", "add.f32 %f1, %f1, %f2;\n    bar.red.popc.u32 %r1, 0, %p1;")
    (tmp_path / "bad.ptx").write_text(bad)
    _error(sim(tmp_path / "bad.ptx", "--grid", "1", "--block", "1", cwd=tmp_path), "UnimplementedError")
    (tmp_path / "loop.ptx").write_text(HEAD90 + ".visible .entry spin()\n{\nL:\n    bra.uni L;\n}\n")
    _error(sim(tmp_path / "loop.ptx", "--grid", "1", "--block", "1", "--max-steps", "1000", cwd=tmp_path),
           "StepLimit")
