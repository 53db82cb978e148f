"""The fault catalogue and ``tcgen05-cts mutation-score`` (on a stand-in execution tier)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ptxsim import HOOKS, Fault, FaultSet
from ptxsim.faults.catalogue import FAULTS

pytestmark = pytest.mark.reference

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = str(Path(__file__).resolve().parent / "sim_exec_sample.py")


def test_catalogue_has_40_distinct_documented_faults_on_every_hook():
    FaultSet(FAULTS)                                              # unique names
    assert len(FAULTS) >= 40
    assert all(f.rationale and len(f.rationale.splitlines()) == 1 for f in FAULTS)
    assert {f.hook for f in FAULTS} == set(HOOKS)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "conformance.commands.cli", "mutation-score", "--tests", SAMPLE,
                           "-k", "mma_f16 or cp_128x256b", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_mutation_score_lines_and_last_line():
    r = cli("--only", "expect-tx-ignored,enable-input-d-inverted,commit-arrives-early")
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith(("caught", "survived"))]
    assert lines[-1] == "caught 2/3"
    assert any(ln.startswith("survived expect-tx-ignored") for ln in lines)   # no case arms a transaction count
    assert any(ln.startswith("caught   enable-input-d-inverted  by ") and "mma_" in ln for ln in lines)
    assert r.stdout.rstrip().splitlines()[-1] == "caught 2/3"


def test_mutation_score_faults_from_file(tmp_path):
    f = tmp_path / "mine.py"
    f.write_text("import numpy as np\nfrom ptxsim import Fault\n"
                 "FAULTS = [Fault('flip-lsb', 'mma_result', lambda v, ctx: np.asarray(v) ^ 1),\n"
                 "          Fault('noop', 'shift', lambda v, ctx: v)]\n")
    r = cli("--faults-from", str(f))
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert any(ln.startswith("survived noop") for ln in out) and out[-1] == "caught 1/2"


def test_mutation_score_bad_input():
    r = cli("--only", "no-such-fault")
    assert r.returncode == 2 and "--only expects" in r.stderr
    r = cli("-j", "0")
    assert r.returncode == 2 and "-j expects" in r.stderr


def test_mutation_score_in_two_processes_agrees(tmp_path):
    """-j 2: two stride shards; a fault is caught when either shard catches it."""
    f = tmp_path / "mine.py"
    f.write_text("import numpy as np\nfrom ptxsim import Fault\n"
                 "FAULTS = [Fault('flip-lsb', 'mma_result', lambda v, ctx: np.asarray(v) ^ 1),\n"
                 "          Fault('noop', 'shift', lambda v, ctx: v)]\n")
    r = cli("--faults-from", str(f), "-j", "2")
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert any(ln.startswith("survived noop") for ln in out) and any(ln.startswith("caught   flip-lsb  by ") for ln in out)
    assert out[-1] == "caught 1/2"


def test_catalogue_faults_are_identity_where_they_do_not_apply():
    """Value-guarded faults leave an inapplicable value alone (e.g. a 32x32b map for a 16x64b fault)."""
    fmap = np.zeros((32, 4, 2), dtype=np.int64)
    from types import SimpleNamespace
    ctx = SimpleNamespace(shape="32x32b", num=4, pack=False, unpack=False, warp=0, instr="", cta=0)
    for f in FAULTS:
        if f.hook == "tmem_ld_map" and "16x" in f.name:
            assert (f.fn(fmap, ctx) == fmap).all(), f.name
    assert isinstance(FAULTS[0], Fault)


def test_smem_units_hook_moves_units_of_the_reference_read():
    """reference.smem_image.read(units=...): the transform sees each element's linear unit address
    and its unit index along the leading dimension (here K-major: k // 8 for 16-bit)."""
    from reference.smem_choice import choose_layout
    from reference.smem_image import pack, read

    codes = np.arange(8 * 16, dtype=np.uint64).reshape(8, 16)
    layout = choose_layout("K", "128B", "f16", 8, 16, 0)
    image = pack(layout, codes)

    seen = {}

    def units(linear, unit):
        seen["unit"] = unit
        return linear
    assert (read(image, layout.descriptor(), 8, 16, "f16", "K", units=units) == codes).all()
    assert (seen["unit"] == np.arange(16)[None, :] // 8).all()
    swapped = read(image, layout.descriptor(), 8, 16, "f16", "K", units=lambda a, u: np.where(u == 0, a + 16, a - 16))
    assert (swapped[:, :8] == codes[:, 8:]).all() and (swapped[:, 8:] == codes[:, :8]).all()



# -- the dry run (ProbeSet) that picks the cases a fault runs in ----------------------------------

def test_probe_passes_values_through_and_records_effects_per_cluster():
    from ptxsim.faults.model import ProbeSet

    def in_place(v, ctx):            # alters its argument: must not reach the simulator's value
        v[0] = 99
        return v

    def boom(v, ctx):
        raise RuntimeError("fault bug")
    probe = ProbeSet([Fault("noop", "shift", lambda v, c: v), Fault("inplace", "shift", in_place),
                      Fault("odd-only", "shift", lambda v, c: v[::-1] if c.cta % 2 else v),
                      Fault("boom", "mma_result", boom)])
    probe.batch(np.array([10, 11]), cluster_size=2)          # machine CTAs 0,1 -> case 10; 2,3 -> 11
    src = np.arange(4)
    for cta in range(4):
        out = probe.apply("shift", src, op="shift", rows=4, instr="", cta=cta)
        assert out is src and (src == np.arange(4)).all()
    probe.apply("mma_result", src, cta=2)
    assert probe.effects == {("inplace", 10), ("inplace", 11), ("odd-only", 10), ("odd-only", 11), ("boom", 11)}
    probe.take([f"c{i}" for i in range(12)])
    assert probe.by_case == {"c10": {"inplace", "odd-only"}, "c11": {"inplace", "odd-only", "boom"}}
    assert probe.effects == set()


def test_same_value_compares_arrays_dataclasses_and_events():
    from ptxsim.faults.model import MbarrierEvent, same_value

    assert same_value(np.arange(3, dtype=np.uint32), np.arange(3, dtype=np.int64))
    assert not same_value(np.arange(3), np.arange(4))
    assert not same_value(np.arange(3), np.arange(3)[::-1])
    assert same_value(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))     # a NaN passed on unchanged
    ev = MbarrierEvent("arrive", 0, 64)
    assert same_value(ev, MbarrierEvent("arrive", 0, 64))
    assert not same_value(ev, None) and not same_value(ev, MbarrierEvent("arrive", 0, 64, count=2))


def test_dry_run_selection_agrees_with_running_every_case():
    """Soundness of running a fault only where the dry run saw it change a value: on real execution
    cases, the first catching case is the same as with --exhaustive (which runs every passing case
    in the same order), fault by fault."""
    only = ("negate-b-ignored,shift-ignored,ld-16x64b-register-order-swapped,cp-nibble-order-swapped,"
            "commit-arrives-early,swizzle-64B-read-as-32B,disable-output-lane-off-by-one,n-off-by-8,"
            "tf32-rounded-instead-of-truncated,expect-tx-ignored")
    base = [sys.executable, "-m", "conformance.commands.cli", "mutation-score", "--level", "smoke",
            "-k", "m128n8 or cp_shift or ld_st or commit", "--only", only]
    fast = subprocess.run(base, capture_output=True, text=True, cwd=ROOT, timeout=600)
    full = subprocess.run(base + ["--exhaustive"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert fast.returncode == 0 and full.returncode == 0, fast.stderr + full.stderr

    def verdicts(out):
        return [ln.split("  (")[0] for ln in out.splitlines() if ln.startswith(("caught", "survived"))]
    assert verdicts(fast.stdout) == verdicts(full.stdout)
    assert verdicts(fast.stdout)[-1].startswith("caught ") and "/10" in verdicts(fast.stdout)[-1]


def test_probe_flags_a_stateful_fault_as_impure():
    from ptxsim.faults.model import ProbeSet

    calls = []

    def every_other(v, ctx):               # keeps state: flips on every second call
        calls.append(1)
        return v[::-1] if len(calls) % 2 == 0 else v
    probe = ProbeSet([Fault("stateful", "shift", every_other), Fault("pure", "shift", lambda v, c: v[::-1])])
    probe.batch(np.array([0]), cluster_size=1)
    probe.apply("shift", np.arange(4), op="shift", rows=4, instr="", cta=0)
    assert probe.impure == {"stateful"}
