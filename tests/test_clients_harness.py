"""The real-client harness without Triton or a GPU: Triton's launcher conventions, the compile
cache key, the bit-exact comparison, and the CUDA adapter's driver calls through a fake libcuda."""

from __future__ import annotations

import ctypes
from types import SimpleNamespace

import numpy as np
import pytest

from conformance.clients import build, launch
from conformance.clients.cuda import CudaClientDevice, param_blobs
from conformance.clients.model import Case, ClientKernel, Desc, In, Out, Scalar
from ptxsim.ptx.syntax import ParamDecl

pytestmark = pytest.mark.reference


def _fn():                                   # stands in for a @triton.jit function
    return None


def _kernel(**changes) -> ClientKernel:
    fields = dict(name="k", language="triton", fn=_fn, signature={"a": "*fp16", "d": "tensordesc<fp16[64, 32]>",
                                                                  "n": "i32", "BLOCK": "constexpr"},
                  constexprs={"BLOCK": 64}, make_case=lambda rng: None, families=("mma",))
    fields.update(changes)
    return ClientKernel(**fields)


class FakeMemory:
    def __init__(self):
        self.next, self.data = 0x1000, {}

    def alloc(self, n):
        ptr, self.next = self.next, self.next + ((int(n) + 255) // 256 + 1) * 256
        self.data[ptr] = bytearray(int(n))
        return ptr

    def write(self, ptr, raw):
        raw = raw.tobytes() if isinstance(raw, np.ndarray) else bytes(raw)
        self.data[ptr][:len(raw)] = raw

    def read(self, ptr, n):
        return bytes(self.data[ptr][:n])

    def free(self, ptr):
        del self.data[ptr]


class FakeDevice:
    def __init__(self):
        self.memory, self.maps, self.launches = FakeMemory(), [], []

    def load(self, ptx):
        return "module"

    def tensormap_tiled(self, **kw):
        self.maps.append(kw)
        return bytes(128)

    def run(self, module, name, params, grid, block, cluster, shared_bytes):
        self.launches.append(SimpleNamespace(name=name, params=params, grid=grid, block=block, cluster=cluster,
                                             shared=shared_bytes))
        out = params[0]
        self.memory.write(out, np.arange(4, dtype=np.float16))
        return 0.5


def test_launch_follows_tritons_launcher_conventions():
    """triton/backends/nvidia/driver.py (3.9): a host descriptor expands to map, shape (i32),
    strides (i64); dims/strides reversed for cuTensorMapEncodeTiled; two scratch pointers; grid
    x scaled by num_ctas; clusters of num_ctas; 32 * num_warps threads; metadata.shared bytes."""
    kernel = _kernel(num_ctas=2)
    meta = {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [64, 32], "fp4_padded": False}
    compiled = build.Compiled("ptx", "k", 1024, 4, 2, 16, 8, 0, 1, (meta,), "3.9.0")
    data = np.zeros((128, 96), np.float16)
    case = Case((Out("o", (4,), np.float16), Desc((64, 32), data=data), Scalar(7)), (3, 2, 1),
                {"o": np.arange(4, dtype=np.float16)})
    dev = FakeDevice()
    got = launch.run_case(dev, kernel, compiled, case)
    run = dev.launches[0]
    assert run.grid == (6, 2, 1) and run.block == (128, 1, 1) and run.cluster == (2, 1, 1) and run.shared == 1024
    assert run.params[2:5] == [128, 96, 96] and run.params[5] == 1 and run.params[6] == 7
    assert run.params[8] == 0 and run.params[7] != 0                # global scratch allocated, profile null
    (m,) = dev.maps
    assert m["dtype"] == "float16" and m["rank"] == 2 and m["swizzle"] == "128B"
    assert m["global_dims"] == [96, 128] and m["global_strides"] == [192] and m["box_dims"] == [32, 64]
    assert launch.compare(kernel, case, got.outputs) == [] and dev.memory.data == {}      # all freed


def test_compare_reports_count_and_first_difference():
    kernel = _kernel()
    want = np.array([[1, 2], [3, 4]], np.float32)
    case = Case((), (1, 1, 1), {"c": want})
    got = want.copy()
    got[1, 0] = 5
    (msg,) = launch.compare(kernel, case, {"c": got})
    assert "1 of 4 elements differ" in msg and "(1, 0)" in msg and "got 5.0 (0x40a00000), expected 3.0 (0x40400000)" in msg
    assert launch.compare(kernel, Case((), (1, 1, 1), {"c": np.array([0.0], np.float32)}),
                          {"c": np.array([-0.0], np.float32)}), "bit-exact: -0 differs from +0"


def test_signature_argument_count_is_checked():
    with pytest.raises(ValueError, match="signature expects 3 arguments, but the case has 1"):
        launch.run_case(FakeDevice(), _kernel(), build.Compiled("p", "k", 0, 4, 1, 0, 1, 0, 1, (), "3.9.0"),
                        Case((In(np.zeros(4, np.float16)),), (1, 1, 1), {}))


def test_cache_key_changes_with_configuration_and_version():
    a = build.cache_key(_kernel(), "3.9.0")
    assert a == build.cache_key(_kernel(), "3.9.0")
    assert a != build.cache_key(_kernel(num_stages=2), "3.9.0")
    assert a != build.cache_key(_kernel(constexprs={"BLOCK": 128}), "3.9.0")
    assert a != build.cache_key(_kernel(), "3.9.1")
    assert a != build.cache_key(_kernel(arch=103), "3.9.0")


def test_param_blobs_pack_each_parameter_at_its_width():
    params = [ParamDecl("a", "u64"), ParamDecl("b", "u32"), ParamDecl("m", "b8", 64, 128), ParamDecl("f", "f32")]
    blobs = param_blobs(params, [5, -1, bytes(range(128)), 1.5])
    assert blobs[0] == (5).to_bytes(8, "little") and blobs[1] == b"\xff" * 4
    assert blobs[2] == bytes(range(128)) and blobs[3] == np.float32(1.5).tobytes()
    with pytest.raises(ValueError, match="parameter m expects 128 bytes, but got 3"):
        param_blobs(params, [5, 1, b"abc", 1.0])


class FakeLib:
    """Records the driver calls the adapter makes (argument values decoded from ctypes)."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        def call(*args):
            self.calls.append((name, args))
            if name == "cuTensorMapEncodeTiled":
                ctypes.memmove(args[0], bytes(range(128)), 128)
            return 0
        return call


def test_cuda_adapter_encodes_tensor_maps_with_the_driver():
    lib = FakeLib()
    dev = CudaClientDevice(SimpleNamespace(compute_capability=(10, 0)), lib=lib)
    raw = dev.tensormap_tiled(dtype="bfloat16", rank=2, global_address=0x7000, global_dims=[64, 32],
                              global_strides=[128], box_dims=[64, 16], element_strides=[1, 1], swizzle="128B",
                              l2_promotion="128B")
    assert raw == bytes(range(128))
    name, args = lib.calls[-1]
    assert name == "cuTensorMapEncodeTiled" and args[1] == 9 and args[2].value == 2
    assert list(args[4]) == [64, 32] and list(args[5]) == [128] and list(args[6]) == [64, 16]
    assert args[8:] == (0, 3, 2, 0)


def test_without_triton_the_tier_skips_with_a_reason(monkeypatch):
    import importlib

    real = importlib.import_module

    def no_triton(name, *a, **kw):
        if name == "triton":
            raise ImportError("No module named 'triton'")
        return real(name, *a, **kw)

    monkeypatch.setattr(build.importlib, "import_module", no_triton)
    assert "pip install -e '.[clients]'" in build.triton_or_skip_reason()
    monkeypatch.setattr(build.importlib, "import_module", lambda name: SimpleNamespace(__version__="3.8.0"))
    assert "pinned to triton==3.9.0, found 3.8.0" in build.triton_or_skip_reason()


def test_families_come_from_the_vocabulary():
    with pytest.raises(ValueError, match="families expects names from mma, .*but got \\['tcgen05.mma'\\]"):
        _kernel(families=("tcgen05.mma",))
