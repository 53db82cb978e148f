"""Compiling corpus kernels with Triton 3.9 for sm_100a/sm_103a, cached on disk.

The cache key is the SHA-256 of the kernel module's source text, the configuration (signature,
constexprs, options, target) and the Triton version, so editing a kernel, changing a parameter or
upgrading Triton recompiles.  The cache lives in ``$TCGEN05_CTS_CACHE`` or ``.cts-cache/clients``
under the repository root (ignored by git).  Without Triton, :func:`triton_or_skip_reason` says why.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import os
import tempfile
from pathlib import Path

from conformance.clients.model import ClientKernel, Compiled  # noqa: F401  (Compiled: this module's result type)

TRITON_PIN = "3.9.0"
ROOT = Path(__file__).resolve().parents[2]


def triton_or_skip_reason() -> str:
    """"" when Triton is importable, else the reason the client tier skips."""
    try:
        triton = importlib.import_module("triton")
    except ImportError:
        return f"NotSupported: the real-client tier needs Triton (pip install -e '.[clients]', triton=={TRITON_PIN})"
    if getattr(triton, "__version__", "") != TRITON_PIN:
        return f"NotSupported: the real-client corpus is pinned to triton=={TRITON_PIN}, found {triton.__version__}"
    return ""


def cache_dir() -> Path:
    return Path(os.environ.get("TCGEN05_CTS_CACHE", ROOT / ".cts-cache")) / "clients"


def cache_key(kernel: ClientKernel, triton_version: str) -> str:
    module = inspect.getmodule(_python_fn(kernel.fn))
    source = inspect.getsource(module) if module is not None else inspect.getsource(_python_fn(kernel.fn))
    config = json.dumps({"name": kernel.fn.__name__ if hasattr(kernel.fn, "__name__") else str(kernel.fn),
                         "language": kernel.language, "signature": kernel.signature,
                         "constexprs": {k: repr(v) for k, v in kernel.constexprs.items()},
                         "num_warps": kernel.num_warps, "num_stages": kernel.num_stages, "num_ctas": kernel.num_ctas,
                         "options": {k: repr(v) for k, v in sorted(kernel.options.items())}, "arch": kernel.arch,
                         "triton": triton_version, **({"divisible": list(kernel.divisible)} if kernel.divisible else {})},
                        sort_keys=True)
    return hashlib.sha256((source + "\0" + config).encode()).hexdigest()[:32]


def divisibility_attrs(kernel: ClientKernel) -> dict:
    """The JIT's specialisation attributes for ``kernel.divisible``: a pointer argument whose address, or
    an integer whose value, is a multiple of 16 gets ``tt.divisibility = 16`` (``parse_attr("D")``), so
    loads vectorise as they do when Triton launches a kernel on 16-byte-aligned tensors."""
    names = list(_python_fn(kernel.fn).__code__.co_varnames[:_python_fn(kernel.fn).__code__.co_argcount])
    unknown = [n for n in kernel.divisible if n not in names]
    if unknown:
        raise ValueError(f"{kernel.name}: divisible names {unknown} are not parameters of {names}")
    return {(names.index(n),): [["tt.divisibility", 16]] for n in kernel.divisible}


def _python_fn(fn):
    return getattr(fn, "fn", fn)


def compile_kernel(kernel: ClientKernel, *, use_cache: bool = True) -> Compiled:
    """Triton's PTX for ``kernel`` (from the cache when the key matches); a CuTe kernel's PTX from
    :func:`conformance.clients.cute_build.compile_client`, a FlashInfer one's from
    :func:`conformance.clients.flashinfer_build.compile_client`."""
    if kernel.language == "cute":
        from conformance.clients.cute_build import compile_client

        return compile_client(kernel)
    if kernel.language == "cuda":
        from conformance.clients.flashinfer_build import compile_client

        return compile_client(kernel)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    key = cache_key(kernel, triton.__version__)
    path = cache_dir() / f"{kernel.name}-{key}.json"
    if use_cache and path.exists():
        try:
            return _from_json(json.loads(path.read_text()))
        except (ValueError, KeyError, TypeError):
            pass                                # a corrupt entry is recompiled and replaced
    if kernel.language == "gluon":
        from triton.experimental.gluon._runtime import GluonASTSource as Source
    else:
        Source = ASTSource
    src = Source(fn=kernel.fn, signature=dict(kernel.signature), constexprs=dict(kernel.constexprs),
                 attrs=divisibility_attrs(kernel))
    options = {"num_warps": kernel.num_warps, "num_stages": kernel.num_stages, "num_ctas": kernel.num_ctas,
               **kernel.options}
    compiled = triton.compile(src, target=GPUTarget("cuda", kernel.arch, 32), options=options)
    md = compiled.metadata
    meta = getattr(md, "tensordesc_meta", None) or ()
    record = {"ptx": compiled.asm["ptx"], "name": md.name, "shared": int(md.shared), "num_warps": int(md.num_warps),
              "num_ctas": int(md.num_ctas), "global_scratch_size": int(md.global_scratch_size),
              "global_scratch_align": int(md.global_scratch_align),
              "profile_scratch_size": int(md.profile_scratch_size),
              "profile_scratch_align": int(md.profile_scratch_align),
              "tensordesc_meta": [dict(m) if m is not None else None for m in meta],
              "triton_version": triton.__version__}
    if use_cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(record, f)
        os.replace(tmp, path)
    return _from_json(record)


def _from_json(record: dict) -> Compiled:
    meta = tuple(None if m is None else dict(m) for m in record["tensordesc_meta"])
    return Compiled(record["ptx"], record["name"], record["shared"], record["num_warps"], record["num_ctas"],
                    record["global_scratch_size"], record["global_scratch_align"], record["profile_scratch_size"],
                    record["profile_scratch_align"], meta, record["triton_version"])
