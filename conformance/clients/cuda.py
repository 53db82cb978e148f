"""The client tier on a real GPU: the :mod:`ptxsim` device API over the CUDA driver.

Triton's launcher uses ``cuLaunchKernelEx`` (cluster dimensions as a launch attribute) and
``cuTensorMapEncodeTiled``; PyCUDA exposes neither, so this adapter calls ``libcuda`` through
ctypes inside a context this process opened through PyCUDA (``conformance.harness.device_cuda``).  It offers exactly what :func:`conformance.clients.launch.run_case` uses: ``load`` (PTX
text, JIT-compiled by the driver), ``memory.alloc/write/read/free``, ``run`` and
``tensormap_tiled`` (the real encoder, same arguments as ``ptxsim.tensormap_tiled``).
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass

import numpy as np

from ptxsim.ptx.compiler import param_value_bytes
from ptxsim.ptx.parser import parse_ptx

_DTYPES = {"uint8": 0, "uint16": 1, "uint32": 2, "int32": 3, "uint64": 4, "int64": 5, "float16": 6, "float32": 7,
           "float64": 8, "bfloat16": 9, "float32_ftz": 10, "tfloat32": 11, "tfloat32_ftz": 12,
           "16u4_align8b": 13, "16u4_align16b": 14, "16u6_align16b": 15}
_SWIZZLES = {"none": 0, "32B": 1, "64B": 2, "128B": 3, "128B_atom_32B": 4, "128B_atom_32B_flip_8B": 5,
             "128B_atom_64B": 6}
_INTERLEAVES = {"none": 0, "16B": 1, "32B": 2}
_L2 = {"none": 0, "64B": 1, "128B": 2, "256B": 3}
_OOB = {"none": 0, "nan_request_zero_fma": 1}
_CLUSTER_DIMENSION = 4                      # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION


class _Attr(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint), ("pad", ctypes.c_char * 4), ("value", ctypes.c_uint * 16)]


class _Config(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("shared", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("attrs", ctypes.POINTER(_Attr)), ("nattrs", ctypes.c_uint)]


def param_blobs(ptx_params, values) -> list[bytes]:
    """One little-endian blob per kernel parameter, as ``cuLaunchKernelEx``'s ``kernelParams``
    points at them (the simulator's own per-parameter packing, ``ptxsim.ptx.compiler.param_value_bytes``)."""
    if len(ptx_params) != len(values):
        raise ValueError(f"kernel expects {len(ptx_params)} parameters, but got {len(values)}")
    return [param_value_bytes(p, v) for p, v in zip(ptx_params, values, strict=True)]


@dataclass
class CudaClientModule:
    handle: ctypes.c_void_p
    params: dict


class _Memory:
    def __init__(self, lib) -> None:
        self.lib = lib

    def alloc(self, nbytes: int) -> int:
        ptr = ctypes.c_uint64()
        _check(self.lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(max(int(nbytes), 1))), "cuMemAlloc")
        _check(self.lib.cuMemsetD8_v2(ptr, ctypes.c_ubyte(0), ctypes.c_size_t(max(int(nbytes), 1))), "cuMemsetD8")
        return ptr.value

    def write(self, address: int, data) -> None:
        raw = np.ascontiguousarray(data).tobytes() if isinstance(data, np.ndarray) else bytes(data)
        _check(self.lib.cuMemcpyHtoD_v2(ctypes.c_uint64(address), raw, ctypes.c_size_t(len(raw))), "cuMemcpyHtoD")

    def read(self, address: int, nbytes: int) -> bytes:
        buf = ctypes.create_string_buffer(int(nbytes))
        _check(self.lib.cuMemcpyDtoH_v2(buf, ctypes.c_uint64(address), ctypes.c_size_t(int(nbytes))), "cuMemcpyDtoH")
        return buf.raw

    def free(self, address: int) -> None:
        self.lib.cuMemFree_v2(ctypes.c_uint64(address))


def _check(result: int, what: str) -> None:
    if result != 0:
        raise RuntimeError(f"{what} failed with CUDA error {result}")


class CudaClientDevice:
    """The ptxsim device API on the GPU of the harness's CUDA backend (its context is current)."""

    kind = "cuda"

    def __init__(self, backend, lib=None) -> None:
        self.backend = backend
        self.compute_capability = backend.compute_capability
        self.lib = lib if lib is not None else ctypes.CDLL("libcuda.so.1")
        self.memory = _Memory(self.lib)

    def load(self, ptx: str) -> CudaClientModule:
        handle = ctypes.c_void_p()
        data = ptx.encode() + b"\0"
        _check(self.lib.cuModuleLoadData(ctypes.byref(handle), data), "cuModuleLoadData")
        module = parse_ptx(ptx)
        return CudaClientModule(handle, {name: k.params for name, k in module.kernels.items()})

    def run(self, module: CudaClientModule, kernel_name: str, params, grid=(1, 1, 1), block=(1, 1, 1),
            cluster=(1, 1, 1), shared_bytes: int = 0) -> None:
        func = ctypes.c_void_p()
        _check(self.lib.cuModuleGetFunction(ctypes.byref(func), module.handle, kernel_name.encode()),
               "cuModuleGetFunction")
        if shared_bytes > 48 * 1024:
            _check(self.lib.cuFuncSetAttribute(func, 8, ctypes.c_int(int(shared_bytes))), "cuFuncSetAttribute")
        blobs = [ctypes.create_string_buffer(b, len(b)) for b in param_blobs(module.params[kernel_name], params)]
        pointers = (ctypes.c_void_p * len(blobs))(*[ctypes.cast(b, ctypes.c_void_p) for b in blobs])
        attr = _Attr()
        attr.id = _CLUSTER_DIMENSION
        attr.value[0], attr.value[1], attr.value[2] = (int(x) for x in cluster)
        config = _Config((ctypes.c_uint * 3)(*grid), (ctypes.c_uint * 3)(*block), int(shared_bytes), None,
                         ctypes.pointer(attr), 1 if tuple(cluster) != (1, 1, 1) else 0)
        start = time.perf_counter()
        _check(self.lib.cuLaunchKernelEx(ctypes.byref(config), func, pointers, None), "cuLaunchKernelEx")
        _check(self.lib.cuCtxSynchronize(), f"{kernel_name} (cuCtxSynchronize)")
        return time.perf_counter() - start

    def tensormap_tiled(self, dtype, rank, global_address, global_dims, global_strides, box_dims, element_strides,
                        interleave="none", swizzle="none", l2_promotion="none", oob_fill="none") -> bytes:
        out = (ctypes.c_ubyte * 128)()
        u64, u32 = ctypes.c_uint64, ctypes.c_uint32
        _check(self.lib.cuTensorMapEncodeTiled(
            out, _DTYPES[dtype], u32(rank), ctypes.c_void_p(global_address), (u64 * rank)(*global_dims),
            (u64 * max(rank - 1, 1))(*global_strides), (u32 * rank)(*box_dims), (u32 * rank)(*element_strides),
            _INTERLEAVES[interleave], _SWIZZLES[swizzle], _L2[l2_promotion], _OOB[oob_fill]), "cuTensorMapEncodeTiled")
        return bytes(out)


def client_device(backend) -> CudaClientDevice:
    """The adapter over a CUDA context of this process (``--device cuda``).

    The harness's own kernels run in a launcher process (``conformance.harness.cuda_launcher``);
    the client tier calls ``libcuda`` here, so it opens this process's context
    (``conformance.harness.device_cuda.open_cuda_device``, popped at exit) when ``backend`` is not one."""
    if not hasattr(backend, "_ctx"):
        from conformance.harness.device_cuda import open_cuda_device

        in_process, why = open_cuda_device()
        if in_process is None:
            raise OSError(f"no CUDA context for the client tier: {why}")
        backend = in_process
    return CudaClientDevice(backend)
