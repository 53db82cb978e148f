"""``tcgen05-cts sim battery``: generate, run on the simulator, compare two result folders."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conformance.battery.generate import generate
from conformance.battery.spec import ELEM_BYTES
from conformance.commands.cli import main

SMALL = ["--only", "ctrl", "--only", "tma_load_u8_sw128", "--only", "bulk_store"]


def _run(tmp_path, name: str, seed: int = 3) -> str:
    out = str(tmp_path / name)
    assert main(["sim", "battery", "--seed", str(seed), "-o", out, *SMALL]) == 0
    return out


def test_run_twice_then_compare_is_identical(tmp_path, capsys):
    a, b = _run(tmp_path, "a"), _run(tmp_path, "b")
    with np.load(f"{a}/outputs.npz") as npz:
        meta = json.loads(str(npz["meta"]))
        assert {"out_ctrl", "out_bulk_store", "out_tma_load_u8_sw128_128x16"} <= set(npz.files)
    assert meta["device"] == "ptxsim" and meta["seed"] == 3 and meta["cases"]["ctrl"]["status"] == "ok"
    capsys.readouterr()
    assert main(["sim", "battery", "compare", a, b]) == 0
    assert capsys.readouterr().out.rstrip().endswith(f"identical: {a} vs {b}")


def test_compare_lists_every_differing_word(tmp_path, capsys):
    a, b = _run(tmp_path, "a"), _run(tmp_path, "b")
    with np.load(f"{b}/outputs.npz") as npz:
        arrays = {k: npz[k].copy() for k in npz.files}
    arrays["out_ctrl"][8 * 13 * 5 + 1] ^= 0x40          # thread 5, op 1, low word's second byte
    arrays["out_bulk_store"][0:8] ^= 0xFF               # two words of the destination
    np.savez(f"{b}/outputs.npz", **arrays)
    capsys.readouterr()
    assert main(["sim", "battery", "compare", a, b]) == 1
    out = capsys.readouterr().out
    assert "ctrl/loop, data-dependent trip count: 1 words differ" in out
    assert "ops thread 5 word 0 | inputs a=0x" in out
    assert "bulk_store: 2 words differ" in out and "dst word 1 |" in out
    assert out.rstrip().endswith("2 unit(s) differ: " + f"{a} vs {b}")


@pytest.mark.parametrize(("argv", "needle"), [
    (["sim", "battery", "-o", "X"], "expects --seed N and -o DIR"),
    (["sim", "battery", "--seed", "1", "-o", "X", "--device", "gpu"], "--device expects sim or cuda, but got 'gpu'"),
    (["sim", "battery", "--seed", "-1", "-o", "X"], "--seed expects 0 <= N < 2^32"),
    (["sim", "battery", "compare", "X"], "positional arguments expect `compare DIR_A DIR_B`"),
    (["sim", "battery", "diff", "X", "Y"], "positional arguments expect `compare DIR_A DIR_B`"),
    (["sim", "battery", "compare", "/nonexistent/a", "/nonexistent/b"], "DIR_A expects a battery result folder"),
])
def test_bad_input_is_one_line_exit_2(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1, err


def test_compare_refuses_different_batteries(tmp_path, capsys):
    a, b = _run(tmp_path, "a", seed=3), _run(tmp_path, "b", seed=4)
    assert main(["sim", "battery", "compare", a, b]) == 2
    assert "DIR_B expects the same battery, but got seed 3" in capsys.readouterr().err


def test_cuda_without_a_gpu_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    import conformance.harness.device_cuda as device_cuda
    monkeypatch.setattr(device_cuda, "open_cuda_device", lambda: (None, "no usable CUDA GPU (test)"))
    assert main(["sim", "battery", "--seed", "1", "-o", str(tmp_path / "c"), "--device", "cuda"]) == 2
    err = capsys.readouterr().err
    assert err == "tcgen05-cts sim battery: error: --device cuda: no usable CUDA GPU (test)\n"


@pytest.mark.parametrize("seed", [1, 7])
def test_generated_tma_copies_never_trap(tmp_path, seed):
    """Every TMA case's innermost box start is a multiple of 16 bytes (an H100 traps otherwise), and a
    narrow store's shared image covers its rows' swizzle spans."""
    manifest = generate(seed, str(tmp_path))
    seen = 0
    for case in manifest["cases"]:
        maps = [p["tmap"] for p in case["params"] if "tmap" in p]
        if not maps:
            continue
        start = [p["value"] for p in case["params"] if p.get("ptype") == "s32"][0]
        assert start * ELEM_BYTES[maps[0]["dtype"]] % 16 == 0, case["name"]
        seen += 1
    assert seen == 45


class _SimAsClient:
    """A stand-in for conformance.clients.cuda's adapter with ptxsim behind it: the same calls
    (load, memory.alloc/write/read/free, run, tensormap_tiled) the --device cuda path makes."""

    def __init__(self, backend) -> None:
        from ptxsim import SimDevice, tensormap_tiled
        self.sim = SimDevice()
        self.memory = self.sim.memory
        self.tensormap_tiled = tensormap_tiled
        self.load = self.sim.load

    def run(self, module, kernel, params, grid, block, shared_bytes=0):
        self.sim.run(module, kernel, params, grid=grid, block=block, shared_bytes=shared_bytes)


def test_cuda_path_plumbing_matches_the_simulator_run(tmp_path, monkeypatch, capsys):
    """--device cuda with a ptxsim-backed client adapter: same parameters, tensor maps (through the
    adapter's encoder) and outputs as --device sim, so only the GPU's own answers can differ."""
    import conformance.clients.cuda as client
    import conformance.harness.device_cuda as device_cuda

    class Backend:
        name, compute_capability, driver_version = "stand-in", (9, 0), 0

    monkeypatch.setattr(device_cuda, "open_cuda_device", lambda: (Backend(), ""))
    monkeypatch.setattr(client, "client_device", _SimAsClient)
    only = ["--only", "tma_", "--only", "bulk_store", "--only", "ctrl"]
    gpu, sim = str(tmp_path / "gpu"), str(tmp_path / "sim")
    assert main(["sim", "battery", "--seed", "2", "-o", gpu, "--device", "cuda", *only]) == 0
    assert main(["sim", "battery", "--seed", "2", "-o", sim, *only]) == 0
    with np.load(f"{gpu}/outputs.npz") as npz:
        meta = json.loads(str(npz["meta"]))
    assert meta["device"] == "stand-in" and "cuLaunchKernelEx" in meta["launch"]
    assert all(r["status"] == "ok" for r in meta["cases"].values()) and len(meta["cases"]) == 47
    capsys.readouterr()
    assert main(["sim", "battery", "compare", gpu, sim]) == 0, capsys.readouterr().out


def test_rerun_a_recorded_battery_and_compare_with_the_h100(tmp_path, capsys):
    import shutil
    from pathlib import Path
    data = Path(__file__).parent / "data" / "hardware" / "h100-battery"
    folder = tmp_path / "seed1"
    shutil.copytree(data / "seed1", folder)
    assert main(["sim", "battery", "--rerun", "-o", str(folder), "--only", "bulk_store",
                 "--only", "tma_load_u8_none"]) == 0
    assert "tma_load_u8_none_16x8                    error: MemoryFault" in capsys.readouterr().out
    assert main(["sim", "battery", "compare", str(folder), str(data / "outputs_h100_seed1.npz")]) == 1
    out = capsys.readouterr().out
    assert "bulk_store: identical" in out and "tma_load_u8_none_256x4: identical" in out
    assert "1 case(s) run on neither side (error, ...)" in out      # the misaligned start: both trap
    assert main(["sim", "battery", "--rerun", "--seed", "1", "-o", str(folder)]) == 2
    assert main(["sim", "battery", "--rerun", "-o", str(tmp_path / "none")]) == 2
    assert "--rerun expects -o DIR holding a battery's manifest.json" in capsys.readouterr().err
