"""conformance.harness.toolchain / conformance.harness.sass: discovery order, versions, cache, batching.

A fake ptxas (a Python script) stands in for the real one where the logic, not the assembler,
is under test: it accepts every file unless the file contains ``BAD``, reports errors in the
ptxas format, and, like ptxas 13.0/13.5 after a parse error, blames the *next* file too.
"""

import json
import os
import shutil
import stat
import sys
import textwrap

import pytest

from conformance.harness import sass
from conformance.harness import toolchain as TC

pytestmark = pytest.mark.reference

FAKE = textwrap.dedent('''\
    #!{python}
    import sys, os
    args = sys.argv[1:]
    if args == ["--version"]:
        print("Cuda compilation tools, release 42.1, V42.1.7"); sys.exit(0)
    log = os.environ.get("FAKE_PTXAS_LOG")
    if log:
        open(log, "a").write(" ".join(os.path.basename(a) for a in args if a.endswith(".ptx")) + "\\n")
    files = [a for a in args if a.endswith(".ptx")]
    out = args[args.index("-o") + 1]
    errors, leak = [], False
    for f in files:
        text = open(f).read()
        if "BAD" in text:
            errors.append(f"ptxas {{f}}, line 3; error   : Unknown modifier '.bad'"); leak = True
        elif leak:
            errors.append(f"ptxas {{f}}, line 3; error   : Multiple .cta_group::1 modifiers specified"); leak = False
    if errors:
        print("\\n".join(errors) + "\\nptxas fatal   : Ptx assembly aborted due to errors", file=sys.stderr); sys.exit(255)
    open(out, "wb").write(b"CUBIN" + "".join(files).encode())
''')


@pytest.fixture
def fake_ptxas(tmp_path):
    path = tmp_path / "bin" / "ptxas"
    path.parent.mkdir()
    path.write_text(FAKE.format(python=sys.executable))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_version_and_discovery_order(fake_ptxas, monkeypatch, tmp_path):
    assert TC.tool_version(str(fake_ptxas)) == "42.1.7"
    monkeypatch.setenv(TC.ENV_PTXAS, str(fake_ptxas))
    tool = TC.find_tool("ptxas")
    assert tool.source == TC.ENV_PTXAS and tool.version == "42.1.7"
    # an explicit path wins over the environment
    other = tmp_path / "other" / "ptxas"
    other.parent.mkdir()
    shutil.copy(fake_ptxas, other)
    assert TC.find_tool("ptxas", str(other)).source == "option"
    with pytest.raises(OSError):
        TC.find_tool("ptxas", str(tmp_path / "missing"))


def test_path_is_last(fake_ptxas, monkeypatch):
    monkeypatch.delenv(TC.ENV_PTXAS, raising=False)
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.setattr(TC, "_wheel_candidates", lambda name: [])
    monkeypatch.setenv("PATH", str(fake_ptxas.parent))
    assert TC.find_tool("ptxas").source == "PATH"
    monkeypatch.setenv("CUDA_HOME", str(fake_ptxas.parent.parent))
    (fake_ptxas.parent.parent / "bin").exists()
    assert TC.find_tool("ptxas").source == "CUDA_HOME"


def _assembler(fake_ptxas, tmp_path, **kw):
    tool = TC.Tool("ptxas", str(fake_ptxas), TC.tool_version(str(fake_ptxas)), "test")
    return TC.Assembler(tool, None, cache=tmp_path / "cache", **kw)


def _jobs(n, bad=()):
    return [TC.Job(f"k{i}", "sm_100a", f".entry k{i} {'BAD' if i in bad else ''} {{}}") for i in range(n)]


def test_batch_cache_and_keys(fake_ptxas, tmp_path, monkeypatch):
    log = tmp_path / "log"
    monkeypatch.setenv("FAKE_PTXAS_LOG", str(log))
    asm = _assembler(fake_ptxas, tmp_path, batch_size=8)
    res = asm.assemble(_jobs(10))
    assert all(r.ok for r in res.values()) and asm.stats["ptxas_runs"] == 2        # 8 + 2 files
    again = _assembler(fake_ptxas, tmp_path, batch_size=8).assemble(_jobs(10))
    assert all(r.cached for r in again.values())
    assert len(log.read_text().splitlines()) == 2                                  # no new ptxas run
    j = _jobs(1)[0]
    keys = {asm.key(j), asm.key(TC.Job(j.name, "sm_103a", j.ptx)), asm.key(TC.Job(j.name, j.target, j.ptx + " "))}
    flagged = _assembler(fake_ptxas, tmp_path, flags=("-O0",))
    keys.add(flagged.key(j))
    assert len(keys) == 4
    stored = list((tmp_path / "cache" / "results").rglob("*.json"))
    assert len(stored) == 10 and json.loads(stored[0].read_text())["ok"] is True
    assert not list((tmp_path / "cache").rglob(".tmp-*"))                          # atomic writes left nothing


def test_rejects_are_confirmed_alone(fake_ptxas, tmp_path):
    # k2 is bad; the fake blames k3 too (the ptxas state leak): k3 must still be accepted
    res = _assembler(fake_ptxas, tmp_path).assemble(_jobs(6, bad={2}))
    verdict = {name: r.ok for (name, _), r in res.items()}
    assert verdict == {"k0": True, "k1": True, "k2": False, "k3": True, "k4": True, "k5": True}
    assert "Unknown modifier" in res[("k2", "sm_100a")].diagnostics


def test_parallel_workers(fake_ptxas, tmp_path):
    res = _assembler(fake_ptxas, tmp_path, batch_size=3, workers=3).assemble(_jobs(9, bad={4}))
    assert [res[(f"k{i}", "sm_100a")].ok for i in range(9)] == [i != 4 for i in range(9)]


LISTING = """
        .section        .text.tc_mma_abc,"ax",@progbits
.text.tc_mma_abc:
        /*0000*/                   LDC R1, c[0x0][0x37c] ;
        /*18f0*/               @P0 UTCHMMA.2CTA tmem[UR16], gdesc[UR22], tmem[UR7], idesc[UR5], UR8, UP0 ;
        /*1900*/                   EXIT ;
        .section        .text.tc_warp_def,"ax",@progbits
.text.tc_warp_def:
        /*0100*/                   HMMA.SP.16816.F32 R4, R8, R12, R4, R2, 0x0 ;
        /*0200*/              @!P1 BRA 0x80 ;
"""


def test_sass_parsing():
    ops = sass.parse_opcodes(LISTING)
    assert ops == {"tc_mma_abc": {"LDC", "UTCHMMA", "EXIT"}, "tc_warp_def": {"HMMA", "BRA"}}
    assert sass.has_tensor_mma(ops["tc_mma_abc"]) and sass.has_tensor_mma(ops["tc_warp_def"])
    assert not sass.has_tensor_mma({"LDTM", "STTM", "UTCBAR"})


@pytest.mark.assemble
def test_real_ptxas_state_leak_is_contained(tmp_path):
    """ptxas 13.0/13.5 blame the next file after a parse error; the assembler re-checks alone."""
    tool = TC.find_tool("ptxas")
    if tool is None:
        pytest.skip("NotSupported: no ptxas found")
    head = ".version 8.6\n.target sm_100a\n.address_size 64\n"
    bad = TC.Job("ex_bad", "sm_100a", head + ".visible .entry ex_bad()\n{\n .reg .b32 a, desc, t, i;\n .reg .pred p;\n"
                 " tcgen05.mma.cta_group::1.kind::f16 [t], a-desc, a-desc, i, p;\n ret;\n}\n")
    good = TC.Job("ex_good", "sm_100a", head + ".visible .entry ex_good()\n{\n .reg .b32 t;\n .reg .b64 s;\n"
                  " tcgen05.cp.cta_group::1.128x256b [t], s;\n ret;\n}\n")
    res = TC.Assembler(tool, None, cache=tmp_path).assemble([bad, good])
    assert not res[("ex_bad", "sm_100a")].ok and res[("ex_good", "sm_100a")].ok
    if os.environ.get("TCGEN05_CTS_SHOW"):
        print(res)


def test_claims_share_work_between_processes(fake_ptxas, tmp_path):
    asm = _assembler(fake_ptxas, tmp_path)
    jobs = _jobs(3)
    live = asm._claim_path(jobs[1])
    live.parent.mkdir(parents=True, exist_ok=True)
    live.write_text(str(os.getppid()))                 # claimed by a live process: left to it
    res = asm.assemble([jobs[0]], optional=jobs[1:])
    assert set(res) == {("k0", "sm_100a"), ("k2", "sm_100a")}
    dead = asm._claim_path(jobs[1])
    dead.write_text("999999999")                       # claimed by a process that is gone: stale
    res = asm.assemble([jobs[1]])
    assert res[("k1", "sm_100a")].ok and not dead.exists()
