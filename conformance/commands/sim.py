"""``tcgen05-cts sim run``: run your own PTX kernel on the simulator (``ptxsim``).

    tcgen05-cts sim run KERNEL.ptx [--kernel NAME] --grid X[,Y[,Z]] --block X[,Y[,Z]]
                        [--cluster X[,Y[,Z]]] [--shared-bytes N] [--param SPEC]... [--trace FILE.json]
                        [--faults-from FILE]... [--max-steps N]

One ``--param`` per ``.param`` of the entry, in declaration order (see :data:`SPEC_HELP`).  Buffers
are allocated in the simulator's global memory; outputs (``buf:out=``, ``buf:inout=``) and the
trace are written only after a successful run, each through a temporary file renamed into place.
Every error is one line ``tcgen05-cts sim run: error: ...`` on stderr naming the argument, exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from conformance.commands.battery import add_parser as add_battery_parser
from conformance.commands.cli import CliError, parse_int

PROG = "tcgen05-cts sim run"

#: scalar spec kinds -> numpy dtype (little-endian bytes are passed to the parameter)
SCALARS = {"u8": np.uint8, "s8": np.int8, "u16": np.uint16, "s16": np.int16, "u32": np.uint32, "s32": np.int32,
           "u64": np.uint64, "s64": np.int64, "b8": np.uint8, "b16": np.uint16, "b32": np.uint32, "b64": np.uint64,
           "f16": np.float16, "f32": np.float32, "f64": np.float64}

SPEC_HELP = """parameter specs, one per .param in order:
  buf:in=FILE                  a buffer holding FILE's bytes (.npy: the array's raw data); passes its address
  buf:out=FILE:DTYPE:SHAPE     a zeroed buffer of SHAPE (e.g. 128x128) DTYPE elements, saved to FILE after the run
                               (.npy: an array; other names: raw bytes)
  buf:inout=FILE               FILE loaded, then saved back after the run (same dtype/shape)
  buf:zeros=N                  N zeroed scratch bytes (e.g. Triton's global_scratch)
  u8|s8|u16|s16|u32|s32|u64|s64|b8|b16|b32|b64:VALUE   an integer (decimal or 0x-hex)
  f16|f32|f64:VALUE            a float
  bytes:FILE                   a .b8 array parameter (e.g. a 128-byte tensor map) holding FILE's bytes
  null                         a 0 pointer"""


@dataclass
class Param:
    """One parsed ``--param`` spec."""

    index: int
    text: str
    kind: str                                  # buf-in | buf-out | buf-inout | buf-zeros | scalar | bytes | null
    path: Path | None = None
    dtype: np.dtype | None = None
    shape: tuple[int, ...] = ()
    nbytes: int = 0
    scalar: bytes = b""
    data: bytes = b""
    address: int = 0
    array_like: dict = field(default_factory=dict)   # buf-inout: dtype/shape of the loaded .npy

    @property
    def name(self) -> str:
        return f"--param {self.index + 1} ({self.text!r})"


def _fail(p: Param, message: str) -> CliError:
    return CliError(f"{p.name} {message}")


def parse_spec(index: int, text: str) -> Param:
    """A :class:`Param` from its spec text (syntax only; files are read later)."""
    p = Param(index, text, "")
    head, sep, rest = text.partition(":")
    if text == "null":
        p.kind = "null"
        return p
    if not sep:
        raise _fail(p, "expects KIND:VALUE (buf:..., u32:5, f32:1.5, bytes:FILE) or null")
    if head == "buf":
        mode, eq, value = rest.partition("=")
        if not eq or not value:
            raise _fail(p, "expects buf:in=FILE, buf:out=FILE:DTYPE:SHAPE, buf:inout=FILE or buf:zeros=N")
        if mode == "in" or mode == "inout":
            p.kind, p.path = f"buf-{mode}", Path(value)
        elif mode == "out":
            parts = value.rsplit(":", 2)
            if len(parts) != 3 or not all(parts):
                raise _fail(p, "expects buf:out=FILE:DTYPE:SHAPE (e.g. c.npy:float32:128x128)")
            path, dtype, shape = parts
            try:
                p.dtype = np.dtype(dtype)
            except TypeError:
                raise _fail(p, f"expects a numpy dtype name (float32, int32, uint8, ...), but got {dtype!r}") from None
            try:
                p.shape = tuple(int(x, 0) for x in shape.lower().split("x"))
            except ValueError:
                raise _fail(p, f"expects SHAPE as sizes joined by x (128x128), but got {shape!r}") from None
            if any(x < 0 for x in p.shape):
                raise _fail(p, f"expects non-negative sizes, but got {shape!r}")
            p.kind, p.path = "buf-out", Path(path)
            p.nbytes = int(np.prod(p.shape)) * p.dtype.itemsize
        elif mode == "zeros":
            try:
                p.nbytes = int(value, 0)
            except ValueError:
                raise _fail(p, f"expects buf:zeros=N with N a byte count, but got {value!r}") from None
            if p.nbytes < 0:
                raise _fail(p, f"expects a non-negative byte count, but got {p.nbytes}")
            p.kind = "buf-zeros"
        else:
            raise _fail(p, f"expects buf:in=, buf:out=, buf:inout= or buf:zeros=, but got buf:{mode}")
        return p
    if head == "bytes":
        if not rest:
            raise _fail(p, "expects bytes:FILE")
        p.kind, p.path = "bytes", Path(rest)
        return p
    if head in SCALARS:
        dt = np.dtype(SCALARS[head])
        p.kind = "scalar"
        if dt.kind == "f":
            try:
                value = float(rest)
            except ValueError:
                raise _fail(p, f"expects a float after {head}:, but got {rest!r}") from None
            p.scalar = np.array(value, dtype=dt).tobytes()
            return p
        try:
            value = int(rest, 0)
        except ValueError:
            raise _fail(p, f"expects a decimal or 0x-hex integer after {head}:, but got {rest!r}") from None
        bits = dt.itemsize * 8
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if head.startswith("s") else (0, (1 << bits) - 1)
        if head.startswith("b"):
            lo = -(1 << (bits - 1))                     # .bN: either reading
        if not lo <= value <= hi:
            raise _fail(p, f"expects a value in [{lo}, {hi}] for {head}, but got {value}")
        p.scalar = (value & ((1 << bits) - 1)).to_bytes(dt.itemsize, "little")
        return p
    raise _fail(p, f"expects a kind among buf, bytes, null, {', '.join(SCALARS)}, but got {head!r}")


def _read_input(p: Param) -> None:
    """Load the file of an input spec (``.npy``: the array's raw data; else the raw bytes)."""
    if not p.path.is_file():
        raise _fail(p, f"expects an existing file, but got {str(p.path)!r}")
    if p.path.suffix == ".npy" and p.kind != "bytes":
        try:
            arr = np.load(p.path, allow_pickle=False)
        except (ValueError, OSError) as exc:
            raise _fail(p, f"expects a .npy array file, but {str(p.path)!r} cannot be loaded: {exc}") from None
        arr = np.ascontiguousarray(arr)
        p.array_like = {"dtype": arr.dtype, "shape": arr.shape}
        p.data = arr.tobytes()
    else:
        p.data = p.path.read_bytes()
    p.nbytes = len(p.data)


def _param_bytes(p: Param, decl, size: int) -> bytes:
    """The parameter's bytes for the ``.param`` ``decl`` of ``size`` bytes."""
    what = f".param .{decl.type}{'' if decl.count is None else f'[{decl.count}]'} {decl.name}"
    if p.kind == "bytes":
        if len(p.data) != size:
            raise _fail(p, f"expects a file of {size} bytes for {what}, but got {len(p.data)} bytes")
        return p.data
    if p.kind == "scalar":
        if len(p.scalar) != size or decl.count is not None:
            raise _fail(p, f"expects a {size}-byte value for {what}, but got a {len(p.scalar)}-byte one")
        return p.scalar
    if size != 8 or decl.count is not None:                     # pointers and null
        raise _fail(p, f"is a 64-bit pointer, but {what} takes {size} bytes")
    return int(p.address).to_bytes(8, "little")


def _write_atomically(path: Path, write) -> None:
    """``write(file)`` into a temporary file next to ``path``, renamed over it when complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _dims(text: str, what: str) -> tuple[int, ...]:
    try:
        dims = tuple(parse_int(x.strip()) for x in text.split(","))
    except argparse.ArgumentTypeError:
        raise CliError(f"{what} expects 1-3 comma-separated positive integers, but got {text!r}") from None
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise CliError(f"{what} expects 1-3 comma-separated positive integers, but got {text!r}")
    return dims


def _one_line(exc: BaseException) -> str:
    from ptxsim.errors import UnimplementedError

    if isinstance(exc, UnimplementedError):
        text = f"{len(exc.items)} instruction(s) not implemented by the simulator: " + "; ".join(exc.items)
    else:
        text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    notes = getattr(exc, "__notes__", None) or ()
    text = " ".join([text, *(f"({n})" for n in notes)])
    return " ".join(text.split())


def run_handler(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except CliError as exc:
        message = str(exc)
    except Exception as exc:  # noqa: BLE001  (the simulator's errors, and any other: one line, never a traceback)
        from ptxsim.errors import SimError
        from reference.errors import SpecError

        if isinstance(exc, (SimError, SpecError)):
            message = f"{args.ptx}: {type(exc).__name__}: {_one_line(exc)}"
        elif isinstance(exc, (ValueError, OSError, KeyError)):
            message = _one_line(exc)
        else:                                   # a simulator bug: still one line, with where it happened
            message = f"internal error ({type(exc).__name__}): {_one_line(exc)}"
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def _run(args: argparse.Namespace) -> int:
    from ptxsim import SimDevice, load_faults
    from ptxsim.ptx.compiler import _size_of

    grid, block = _dims(args.grid, "--grid"), _dims(args.block, "--block")
    cluster = _dims(args.cluster, "--cluster") if args.cluster else None
    if args.shared_bytes < 0:
        raise CliError(f"--shared-bytes expects a non-negative byte count, but got {args.shared_bytes}")
    specs = [parse_spec(i, text) for i, text in enumerate(args.param or [])]
    ptx_path = Path(args.ptx)
    if not ptx_path.is_file():
        raise CliError(f"KERNEL.ptx expects an existing PTX file, but got {args.ptx!r}")
    faults = []
    for path in args.faults_from or []:
        try:
            faults.extend(load_faults(path))
        except ValueError as exc:
            raise CliError(f"--faults-from {exc}") from None
    dev = SimDevice(faults=faults, trace=bool(args.trace), max_steps=args.max_steps)
    try:
        module = dev.load(ptx_path.read_text())
    except UnicodeDecodeError:
        raise CliError(f"KERNEL.ptx expects PTX text, but {args.ptx!r} is not UTF-8 text (a cubin?)") from None
    names = list(module.kernels)
    name = args.kernel
    if name is None:
        if len(names) != 1:
            raise CliError(f"--kernel expects one of {', '.join(names) or '(none)'} ({args.ptx} has "
                           f"{len(names)} .entry), but got none")
        name = names[0]
    elif name not in module.kernels:
        raise CliError(f"--kernel expects one of {', '.join(names) or '(none)'}, but got {name!r}")
    decls = module.kernels[name].kernel.params
    if len(specs) != len(decls):
        listed = ", ".join(f".{d.type} {d.name}" for d in decls) or "none"
        raise CliError(f"--param expects {len(decls)} spec(s) for the .param list of {name} ({listed}), "
                       f"but got {len(specs)}")
    for p in specs:
        if p.kind in ("buf-in", "buf-inout", "bytes"):
            _read_input(p)
    values = []
    for p, decl in zip(specs, decls, strict=True):
        if p.kind.startswith("buf-"):
            p.address = dev.memory.alloc(max(p.nbytes, 16))
            if p.data:
                dev.memory.write(p.address, p.data)
        values.append(_param_bytes(p, decl, _size_of(decl.type, decl.count)))
    seconds = dev.run(module, name, values, grid, block, cluster, shared_bytes=args.shared_bytes)
    # -- outputs: only after a successful run ----------------------------------------------------
    pending = []
    for p in specs:
        if p.kind not in ("buf-out", "buf-inout"):
            continue
        raw = dev.memory.read(p.address, p.nbytes)
        if p.kind == "buf-out":
            arr = None if p.path.suffix != ".npy" else np.frombuffer(raw, dtype=p.dtype).reshape(p.shape)
        else:
            like = p.array_like
            arr = None if not like else np.frombuffer(raw, dtype=like["dtype"]).reshape(like["shape"])
        pending.append((p.path, raw, arr))
    for path, raw, arr in pending:
        _write_atomically(path, (lambda f, raw=raw: f.write(raw)) if arr is None
                          else (lambda f, arr=arr: np.save(f, arr, allow_pickle=False)))
    trace_line = ""
    if args.trace:
        summary = dev.trace.summary()
        summary.update(kernel=name, ptx=str(ptx_path), grid=list(grid), block=list(block))
        text = json.dumps(summary, indent=1) + "\n"
        _write_atomically(Path(args.trace), lambda f: f.write(text.encode()))
        n = summary["thread_instructions"]
        trace_line = f", {n} thread-instructions ({n / seconds if seconds > 0 else 0.0:,.0f}/s), trace {args.trace}"
    print(f"{name}: ran in {seconds:.3f} s{trace_line}")
    return 0


def register(subparsers) -> None:
    sim = subparsers.add_parser("sim", help="the PTX simulator (ptxsim) on your own kernels",
                                description="the PTX simulator (ptxsim): see docs/sim.md")
    sub = sim.add_subparsers(dest="sim_command", metavar="SUBCOMMAND", parser_class=type(sim))
    sub.required = True
    run = sub.add_parser("run", help="run one kernel of a PTX file with the given parameters",
                         description=__doc__.split("\n\n")[0] + "\n\n" + SPEC_HELP,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("ptx", metavar="KERNEL.ptx", help="PTX text (not a cubin)")
    run.add_argument("--kernel", default=None, help="the .entry to run (default: the only one)")
    run.add_argument("--grid", required=True, help="CTAs: X[,Y[,Z]]")
    run.add_argument("--block", required=True, help="threads per CTA: X[,Y[,Z]]")
    run.add_argument("--cluster", default=None, help="CTAs per cluster: X[,Y[,Z]] (default: the kernel's "
                     ".reqnctapercluster, else 1)")
    run.add_argument("--shared-bytes", type=parse_int, default=0, help="dynamic shared memory per CTA in bytes")
    run.add_argument("--param", action="append", metavar="SPEC", help="one per .param, in order (see above)")
    run.add_argument("--trace", metavar="FILE.json", default=None,
                     help="write the execution trace (instruction counts, tcgen05 features) as JSON")
    run.add_argument("--faults-from", action="append", metavar="FILE", help="activate the FAULTS of a fault file")
    run.add_argument("--max-steps", type=parse_int, default=50_000_000, help="instruction issue limit (StepLimit)")
    run.set_defaults(func=run_handler)
    add_battery_parser(sub)
