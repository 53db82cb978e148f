"""``tcgen05-cts mma``: recompute the expected D of a captured MMA case (npz in, npz out).

    tcgen05-cts mma --kind KIND --a-type T --b-type T --d-type T
                    [--scale-type T --scale-vec 1X|2X|4X|3X|6X|block16|block32]
                    [--model spec|hardware] [--negate-a] [--negate-b] [--no-accumulate]
                    [--scale-input-d S] [--saturate] IN.npz OUT.npz

IN.npz: ``a`` (M x K codes), ``b`` (K x N codes), ``c`` (M x N codes of the D type: D before the
MMA), and for block-scaled kinds ``scale_a`` (M x SF) and ``scale_b`` (SF x N) codes; one code per
element, unsigned integer arrays. K must be the kind's dense K (Table 39; 96 selects the K = 96
form of mxf4/mxf4nvf4); M and N must be a Table 39 shape for some .cta_group / .ws.

OUT.npz: ``d`` (M x N codes of the D type); the ``spec`` model adds ``d_value`` (float64, exact
value) and ``d_tol`` (float64, allowed |D - d_value|; 0 = exact, inf = unconstrained). Any NaN
satisfies a NaN ``d_value``. ``--saturate`` (kind::i8 only) is the descriptor's saturate bit.
"""

from __future__ import annotations

import argparse

import numpy as np

from conformance.commands.cli import CliError, parse_int
from reference import tables as T
from reference.errors import SpecError
from reference.mma_qualifiers import MmaOp
from reference.mma_semantics import mma

SCALE_VECS = ("1X", "2X", "4X", "3X", "6X", "block16", "block32")


class MmaInputError(CliError, ValueError):
    """Bad IN.npz content. Also a ValueError, so that ``python3 -m conformance.commands.cli`` (where the
    dispatcher's own CliError is ``__main__.CliError``) still prints one line and exits 2."""


def register(subparsers) -> None:
    p = subparsers.add_parser("mma", help="expected D of one tcgen05.mma from operand codes (npz in/out)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", required=True, choices=T.KINDS)
    p.add_argument("--a-type", required=True)
    p.add_argument("--b-type", required=True)
    p.add_argument("--d-type", required=True)
    p.add_argument("--scale-type", default=None, choices=T.SCALE_TYPES)
    p.add_argument("--scale-vec", default=None, choices=SCALE_VECS)
    p.add_argument("--model", default="spec", choices=("spec", "hardware"))
    p.add_argument("--negate-a", action="store_true")
    p.add_argument("--negate-b", action="store_true")
    p.add_argument("--no-accumulate", action="store_true", help="enable-input-d = false: D = A*B")
    p.add_argument("--scale-input-d", type=parse_int, default=0, metavar="S", help="D = A*B + D*2^-S (0..15)")
    p.add_argument("--saturate", action="store_true", help="kind::i8: clamp to the s32 range")
    p.add_argument("input", metavar="IN.npz")
    p.add_argument("output", metavar="OUT.npz")
    p.set_defaults(func=handle)


def _load(path: str) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except (OSError, ValueError) as exc:
        raise MmaInputError(f"cannot read {path}: expects an .npz file, but got {exc}") from None


def _codes(arrays: dict[str, np.ndarray], name: str, ndim: int = 2) -> np.ndarray:
    if name not in arrays:
        raise MmaInputError(f"IN.npz expects an array {name!r}, but got only {sorted(arrays)}")
    arr = arrays[name]
    if arr.dtype.kind != "u" or arr.ndim != ndim:
        raise MmaInputError(f"{name} expects a {ndim}-D unsigned integer array of codes, but got {arr.ndim}-D {arr.dtype}")
    return arr


def _legal_op(args, m: int, n: int, k96: bool) -> MmaOp:
    """An MmaOp for the first (.cta_group, .ws) under which Table 39 allows M x N."""
    common = dict(kind=args.kind, a_type=args.a_type, b_type=args.b_type, d_type=args.d_type, m=m, n=n,
                  k96=k96, scale_type=args.scale_type, scale_vec=args.scale_vec, negate_a=args.negate_a,
                  negate_b=args.negate_b, saturate=args.saturate, enable_input_d=not args.no_accumulate,
                  scale_input_d=args.scale_input_d)
    first: SpecError | None = None
    for cta_group, ws in ((1, False), (2, False), (1, True)):
        try:
            return MmaOp(cta_group=cta_group, ws=ws, **common)
        except SpecError as exc:
            if exc.rule != "Table 39":
                raise
            first = first or exc
    assert first is not None
    raise first


def handle(args) -> int:
    arrays = _load(args.input)
    a, b, c = (_codes(arrays, name) for name in ("a", "b", "c"))
    m, k = a.shape
    n = b.shape[1]
    scaled = args.kind in T.BLOCK_SCALED_KINDS
    k96 = scaled and k == 96
    want_k = T.mma_k(args.kind, False, k96=k96)
    if k != want_k:
        raise MmaInputError(f"a expects K = {want_k} columns for kind::{args.kind} (Table 39, dense), but got shape {a.shape}")
    if b.shape[0] != k:
        raise MmaInputError(f"b expects {k} rows (K), but got shape {b.shape}")
    if c.shape != (m, n):
        raise MmaInputError(f"c expects shape (M, N) = {(m, n)}, but got {c.shape}")
    if args.scale_type is not None and not scaled:
        raise MmaInputError(f"--scale-type expects a block-scaled kind (mxf8f6f4, mxf4, mxf4nvf4), but got kind {args.kind}")
    scale_a = scale_b = None
    if scaled:
        scale_a, scale_b = _codes(arrays, "scale_a"), _codes(arrays, "scale_b")
    elif "scale_a" in arrays or "scale_b" in arrays:
        raise MmaInputError(f"scale_a/scale_b expect a block-scaled kind, but got kind {args.kind}")
    op = _legal_op(args, m, n, k96)
    result = mma(op, a, b, c, model=args.model, scale_a=scale_a, scale_b=scale_b)
    out = {"d": result.d}
    if args.model == "spec":
        out.update(d_value=result.d_value, d_tol=result.d_tol)
    with open(args.output, "wb") as fh:
        np.savez(fh, **out)
    print(f"wrote {args.output}: d {m}x{n} {args.d_type} ({result.model} model)")
    return 0
