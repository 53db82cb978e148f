"""Running a compiled corpus kernel the way Triton's launcher would, on any device with the
:mod:`ptxsim` API (``load``, ``memory.alloc/write/read``, ``run``, ``tensormap_tiled``).

Triton's launcher conventions (``triton/backends/nvidia/driver.py``, 3.9), reproduced here:

* parameters follow the signature with constexprs left out; a host ``TensorDescriptor`` expands
  to the 128-byte ``CUtensorMap`` (a ``.param .align 64 .b8 [128]`` grid constant), then the
  shape (i32 each) and the strides (i64 each);
* the map is ``cuTensorMapEncodeTiled`` with dims and byte strides reversed (innermost first),
  element strides 1, no interleave, the swizzle and element type from the compile metadata
  (``tensordesc_meta``), NaN OOB fill only for ``padding="nan"``;
* two pointers follow: the global and profile scratch buffers (``grid * num_ctas * size`` bytes,
  a null pointer when the size is 0);
* the launch grid is ``(gx * num_ctas, gy, gz)`` CTAs in clusters of ``(num_ctas, 1, 1)``, with
  ``32 * num_warps`` threads and ``metadata.shared`` bytes of dynamic shared memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conformance.clients.build import Compiled
from conformance.clients.model import Case, ClientKernel, Desc, In, Out, Scalar, TensorMap

#: CUtensorMapDataType values (cuda.h) -> tensormap_tiled dtype names.
TMA_DTYPES = {0: "uint8", 1: "uint16", 2: "uint32", 3: "int32", 4: "uint64", 5: "int64", 6: "float16",
              7: "float32", 8: "float64", 9: "bfloat16", 10: "float32_ftz", 11: "tfloat32", 12: "tfloat32_ftz",
              13: "16u4_align8b", 14: "16u4_align16b", 15: "16u6_align16b"}
#: Triton's device-side type codes differ from cuda.h for 8-10 (driver.py TMA_DTYPE_DEVICE_TO_HOST).
_DEVICE_TO_HOST = {**{i: i for i in range(16)}, 8: 10, 9: 8, 10: 9}
#: CUtensorMapSwizzle values -> tensormap_tiled swizzle names.
TMA_SWIZZLES = {0: "none", 1: "32B", 2: "64B", 3: "128B", 4: "128B_atom_32B", 5: "128B_atom_32B_flip_8B",
                6: "128B_atom_64B"}
_INT_TYPES = {"i1": np.int8, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u1": np.uint8,
              "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
_FLOAT_TYPES = {"fp16": np.float16, "fp32": np.float32, "f32": np.float32, "fp64": np.float64}


@dataclass
class Launched:
    """Outputs of one run by name, and the simulated seconds (``None`` on a GPU)."""

    outputs: dict[str, np.ndarray]
    seconds: float | None


def _array_bytes(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def tensor_map(device, address: int, data_shape, meta: dict) -> bytes:
    """The descriptor's 128-byte map as Triton's ``fill_tma_descriptor_tiled`` builds it."""
    shape = list(data_shape)
    rank = len(shape)
    elem_size = int(meta["elem_size"])
    if meta.get("fp4_padded"):
        shape[-1] *= 2
    strides = [int(np.prod(shape[i + 1:])) for i in range(rank)]             # C-contiguous, elements
    dims = shape[::-1]
    byte_strides = [elem_size * strides[rank - 2 - i] for i in range(rank - 1)]
    return _encoder(device)(
        dtype=TMA_DTYPES[_DEVICE_TO_HOST[int(meta["elem_type"])]], rank=rank, global_address=address,
        global_dims=dims, global_strides=byte_strides, box_dims=list(meta["block_size"])[::-1],
        element_strides=[1] * rank, interleave="none", swizzle=TMA_SWIZZLES[int(meta["swizzle"])],
        l2_promotion="128B", oob_fill="none")


def _encoder(device):
    """The device's ``cuTensorMapEncodeTiled``, or the simulator's own encoding (ptxsim.memory.tensormap)."""
    encode = getattr(device, "tensormap_tiled", None)
    if encode is None:
        from ptxsim import tensormap_tiled as encode
    return encode


def explicit_tensor_map(device, address: int, spec: TensorMap) -> bytes:
    """A kernel launcher's own map (:class:`conformance.clients.model.TensorMap`): no interleave, element
    strides 1, no L2 promotion, zero OOB fill, as FlashInfer's ``EncodeTiled`` (``cake_vsa_binding.cu``)."""
    rank = len(spec.dims)
    return _encoder(device)(
        dtype=spec.dtype, rank=rank, global_address=address, global_dims=list(spec.dims),
        global_strides=list(spec.strides), box_dims=list(spec.box), element_strides=[1] * rank,
        interleave="none", swizzle=spec.swizzle, l2_promotion="none", oob_fill="none")


def run_case(device, kernel: ClientKernel, compiled: Compiled, case: Case, module=None) -> Launched:
    """Allocate, launch and read back one case; every buffer is freed afterwards."""
    mem = device.memory
    module = module if module is not None else device.load(compiled.ptx)
    params: list = []
    outputs: list[tuple[Out, int]] = []
    allocations: list[int] = []
    descs = iter(compiled.tensordesc_meta)

    def alloc(nbytes: int, data: bytes | None = None) -> int:
        ptr = mem.alloc(max(int(nbytes), 16))
        allocations.append(ptr)
        if data is not None:
            mem.write(ptr, data)
        return ptr

    value_types = [t for n, t in kernel.signature.items() if n not in kernel.constexprs and t != "constexpr"]
    if len(value_types) != len(case.args):
        raise ValueError(f"{kernel.name}: signature expects {len(value_types)} arguments, but the case has {len(case.args)}")
    try:
        for arg, ptype in zip(case.args, value_types, strict=True):
            if isinstance(arg, In):
                params.append(alloc(arg.data.nbytes, _array_bytes(arg.data)))
            elif isinstance(arg, Out):
                ptr = alloc(int(np.prod(arg.shape)) * np.dtype(arg.dtype).itemsize)
                outputs.append((arg, ptr))
                params.append(ptr)
            elif isinstance(arg, Scalar):
                if ptype in _FLOAT_TYPES:
                    params.append(_FLOAT_TYPES[ptype](arg.value))
                else:
                    params.append(int(_INT_TYPES.get(ptype, np.int64)(arg.value)))
            elif isinstance(arg, Desc):
                meta = next(descs, None)
                if meta is None:
                    raise ValueError(f"{kernel.name}: a tensor descriptor argument needs Triton's tensordesc_meta")
                if arg.out is not None:
                    shape = arg.out.shape
                    ptr = alloc(int(np.prod(shape)) * np.dtype(arg.out.dtype).itemsize)
                    outputs.append((arg.out, ptr))
                else:
                    shape = arg.data.shape
                    ptr = alloc(arg.data.nbytes, _array_bytes(arg.data))
                params.append(tensor_map(device, ptr, shape, meta))
                params.extend(int(s) for s in shape)
                params.extend(int(np.prod(shape[i + 1:])) for i in range(len(shape)))
            elif isinstance(arg, TensorMap):
                if arg.out is not None:
                    ptr = alloc(int(np.prod(arg.out.shape)) * np.dtype(arg.out.dtype).itemsize)
                    outputs.append((arg.out, ptr))
                else:
                    ptr = alloc(arg.data.nbytes, _array_bytes(arg.data))
                params.append(explicit_tensor_map(device, ptr, arg))
            else:
                raise TypeError(f"{kernel.name}: unknown argument spec {arg!r}")
        programs = int(np.prod(case.grid))
        for size in (compiled.global_scratch_size, compiled.profile_scratch_size) if compiled.scratch_params else ():
            params.append(alloc(programs * compiled.num_ctas * size) if size else 0)
        gx, gy, gz = case.grid
        seconds = device.run(module, compiled.name, params, grid=(gx * compiled.num_ctas, gy, gz),
                             block=(compiled.threads, 1, 1), cluster=(compiled.num_ctas, 1, 1),
                             shared_bytes=compiled.shared)
        result = {}
        for out, ptr in outputs:
            nbytes = int(np.prod(out.shape)) * np.dtype(out.dtype).itemsize
            result[out.name] = np.frombuffer(mem.read(ptr, nbytes), dtype=out.dtype).reshape(out.shape).copy()
        return Launched(result, seconds if isinstance(seconds, float) else None)
    finally:
        for ptr in allocations:
            mem.free(ptr)


def compare(kernel: ClientKernel, case: Case, got: dict[str, np.ndarray]) -> list[str]:
    """Mismatch descriptions (empty when every output equals its expected value bit for bit)."""
    problems = []
    for name, want in case.expected.items():
        have = got[name]
        want = np.asarray(want).astype(have.dtype) if want.dtype != have.dtype else want
        a, b = have.view(np.uint8).reshape(have.shape + (-1,)), want.view(np.uint8).reshape(want.shape + (-1,))
        bad = np.flatnonzero(np.any(a != b, axis=-1).reshape(-1))
        if bad.size:
            first = np.unravel_index(bad[0], have.shape)
            problems.append(f"{kernel.name}: output {name}: {bad.size} of {have.size} elements differ; first at "
                            f"{tuple(int(i) for i in first)}: got {_show(have[first])}, expected {_show(want[first])}")
    return problems


def _show(x) -> str:
    """A value and its bits: ``5.0 (0x40a00000)``."""
    raw = np.asarray(x).tobytes()[::-1].hex()
    return f"{np.asarray(x).item()!r} (0x{raw})"
