"""Corpus entries: a kernel, its compile configuration, and how to build one exact case.

A kernel's parameters (Triton signature order, constexprs left out) are described by argument
specs; Triton's host-side launcher conventions are reproduced by :mod:`conformance.clients.launch`
(a host tensor descriptor expands to its 128-byte tensor map, shape and strides; two scratch
pointers are appended).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


@dataclass(frozen=True)
class In:
    """A pointer parameter: a global buffer holding ``data`` (C order, its raw bytes)."""

    data: np.ndarray


@dataclass(frozen=True)
class Out:
    """A pointer parameter: a zero-filled buffer of ``shape``/``dtype`` read back as output ``name``."""

    name: str
    shape: tuple[int, ...]
    dtype: Any


@dataclass(frozen=True)
class Scalar:
    """An integer or float parameter (its PTX type comes from the Triton signature)."""

    value: int | float


@dataclass(frozen=True)
class Desc:
    """A host-side TMA tensor descriptor (Triton ``TensorDescriptor``) over a 2-5D tensor.

    ``data`` is the tensor (an input), or ``out`` names an output whose zeroed buffer it covers;
    ``block`` is the box shape, outermost first (Triton's ``block_shape``)."""

    block: tuple[int, ...]
    data: np.ndarray | None = None
    out: Out | None = None


@dataclass(frozen=True)
class TensorMap:
    """A ``CUtensorMap`` parameter the kernel's own host code encodes (``cuTensorMapEncodeTiled``):
    over ``data`` (an input) or the zeroed buffer of output ``out``, with the launcher's own view of
    it, innermost first: ``dims`` (elements), ``strides`` (bytes of dimensions 1..rank-1), ``box``;
    ``dtype`` and ``swizzle`` as ``ptxsim.tensormap_tiled`` names them."""

    dims: tuple[int, ...]
    strides: tuple[int, ...]
    box: tuple[int, ...]
    dtype: str
    swizzle: str
    data: np.ndarray | None = None
    out: Out | None = None


@dataclass(frozen=True)
class Case:
    """One run: the arguments (signature order, constexprs left out), the grid in programs and the
    expected outputs by name (compared bit for bit after conversion to the output dtype)."""

    args: tuple
    grid: tuple[int, int, int]
    expected: dict[str, np.ndarray]
    note: str = ""


#: The family vocabulary of ``ClientKernel.families``: each name, the regex an executed instruction
#: spelling must match for a kernel to exercise it (checked against the simulator's trace), and
#: the PTX ISA section it belongs to.  The first family names the kernel's JUnit section.
FAMILIES: dict[str, tuple[str | None, str]] = {
    "mma": (r"^tcgen05\.mma\.", "9.7.16.10.9"),
    "mma_block_scale": (r"^tcgen05\.mma\..*\.block_scale", "9.7.16.10.7"),
    "mma_cta_pair": (r"^tcgen05\.mma\.(sp\.)?cta_group::2", "9.7.16.10.9"),
    "mma_ws": (r"^tcgen05\.mma\.ws", "9.7.16.10.9.3"),
    "mma_sp": (r"^tcgen05\.mma\.sp", "9.7.16.10.9.2"),
    "tmem": (r"^tcgen05\.(ld|st)\.", "9.7.16.8"),
    "tmem_ld_red": (r"^tcgen05\.ld\.red", "9.7.16.8.3"),
    "tcgen05_cp": (r"^tcgen05\.cp\.", "9.7.16.9.2"),
    "commit_multicast": (r"^tcgen05\.commit\..*multicast", "9.7.16.6.3"),
    "tma": (r"^cp\.(reduce\.)?async\.bulk\.tensor", "9.7.9.27"),
    "pipeline": (r"^mbarrier\.try_wait", "9.7.16.6"),
    "warp_specialize": (r"^(bar|barrier)\.", "9.7.16.6"),
    "launch": (None, ""),
}


@dataclass(frozen=True)
class ClientKernel:
    """One corpus configuration.

    ``families`` lists the tcgen05 families the kernel is meant to exercise (the first is its
    JUnit section, ``clients:<family>``); the simulator's trace says what it really executed.
    ``make_case(rng)`` builds the inputs (exact by construction) and the expected outputs."""

    name: str
    language: str                      # "triton" | "gluon" | "cute" | "cuda"
    fn: Any                            # the @triton.jit / @gluon.jit function, or a cute_build.CuteEntry
    signature: dict[str, str]
    constexprs: dict[str, Any]
    make_case: Callable[[np.random.Generator], Case]
    families: tuple[str, ...]
    num_warps: int = 4
    num_stages: int = 3
    num_ctas: int = 1
    options: dict[str, Any] = field(default_factory=dict)
    arch: int = 100                    # 100: sm_100a, 103: sm_103a
    inexact: str = ""                  # why an exact comparison is impossible ("" = bit-exact)
    divisible: tuple[str, ...] = ()    # parameters specialised as 16-divisible (the JIT's "D": tt.divisibility)

    def __post_init__(self) -> None:
        unknown = [f for f in self.families if f not in FAMILIES]
        if not self.families or unknown:
            raise ValueError(f"{self.name}: families expects names from {', '.join(FAMILIES)}, but got {unknown or '()'}")

    def case(self) -> Case:
        """The case every runner uses: inputs seeded by ``crc32(name)`` (``generators.inputs.seed_of``),
        so a failure's reproduce line reruns the same inputs."""
        from generators.inputs import seed_of

        return self.make_case(np.random.default_rng(seed_of(self.name)))

    @property
    def client(self) -> str:
        """The real client whose code generation the kernel brings in: ``triton`` (Triton and Gluon),
        ``cutlass`` (CuTe atoms) or ``flashinfer`` (its CUDA sources, language ``cuda``)."""
        return {"cute": "cutlass", "cuda": "flashinfer"}.get(self.language, "triton")

    @property
    def section(self) -> str:
        return f"clients:{self.families[0]}"

    @property
    def target(self) -> str:
        return f"sm_{self.arch}a"


@dataclass(frozen=True)
class Compiled:
    """What a launch needs from Triton's compile output."""

    ptx: str
    name: str
    shared: int
    num_warps: int
    num_ctas: int
    global_scratch_size: int
    global_scratch_align: int
    profile_scratch_size: int
    profile_scratch_align: int
    tensordesc_meta: tuple
    triton_version: str
    scratch_params: bool = True      # Triton's launcher appends the global/profile scratch pointers


    @property
    def threads(self) -> int:
        return 32 * self.num_warps
