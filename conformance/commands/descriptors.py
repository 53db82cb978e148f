"""``tcgen05-cts decode`` / ``tcgen05-cts encode``: the three descriptors of §9.7.16.4.

Users paste a descriptor value seen in a failing kernel and read its fields, or build one::

    tcgen05-cts decode smem 0x4000404000100040
    tcgen05-cts decode idesc 0x08400490 --kind f16
    tcgen05-cts decode zcm 0x0203000f00010200 --m 32 --n 64
    tcgen05-cts encode idesc --kind f16 --m 128 --n 256 --a-type bf16 --b-type bf16 --b-major MN

``decode`` prints one JSON object (snake_case spec names); ``encode`` prints the value in hex.
``--fields-only`` checks the field rules of Tables 42-44 but not the Table 39 shape/qualifier
legality (to read descriptors that public code builds for shapes the spec does not list, e.g.
CuTe's K = 96 cta_group::1 atoms, docs/clients-cute.md).  ``--a-major``/``--b-major`` K|MN are
CuTe's spelling of ``--transpose-a``/``--transpose-b`` false|true.
"""

from __future__ import annotations

import argparse
import json

from conformance.commands.cli import CliError, parse_bool, parse_int, parse_int_list
from reference import tables as T
from reference.instr_descriptor import InstrDescriptor, format_table
from reference.smem_descriptor import LBO_MODES, SmemDescriptor
from reference.zero_column_mask import ZeroColumnMaskDescriptor

TYPE_CHOICES = T.TYPE_WORDS


def register(sub) -> None:
    dec = sub.add_parser("decode", help="decode a descriptor value into its fields (JSON)")
    dsub = dec.add_subparsers(dest="what", metavar="{smem,idesc,zcm}", parser_class=type(dec))
    dsub.required = True
    p = dsub.add_parser("smem", help="shared memory descriptor (§9.7.16.4.1, Table 40)")
    p.add_argument("value", type=parse_int)
    p.set_defaults(func=_decode_smem)
    p = dsub.add_parser("idesc", help="instruction descriptor (§9.7.16.4.2, Tables 42-44)")
    p.add_argument("value", type=parse_int)
    p.add_argument("--kind", required=True, choices=T.KINDS)
    _legality_args(p)
    p.set_defaults(func=_decode_idesc)
    p = dsub.add_parser("zcm", help="zero-column mask descriptor (§9.7.16.4.3, Table 45)")
    p.add_argument("value", type=parse_int)
    p.add_argument("--m", type=parse_int, help="M (128, 64, 32): also print the generated masks")
    p.add_argument("--n", type=parse_int, help="N: also print the generated masks")
    p.set_defaults(func=_decode_zcm)

    enc = sub.add_parser("encode", help="encode descriptor fields into a value (hex)")
    esub = enc.add_subparsers(dest="what", metavar="{smem,idesc,zcm}", parser_class=type(enc))
    esub.required = True
    p = esub.add_parser("smem", help="shared memory descriptor (§9.7.16.4.1)")
    p.add_argument("--start-address", type=parse_int, default=0)
    p.add_argument("--leading-byte-offset", type=parse_int, default=0)
    p.add_argument("--stride-byte-offset", type=parse_int, default=0)
    p.add_argument("--base-offset", type=parse_int, default=0)
    p.add_argument("--lbo-mode", choices=LBO_MODES, default="relative")
    p.add_argument("--swizzle", choices=T.SWIZZLES, default="none")
    p.set_defaults(func=_encode_smem)
    p = esub.add_parser("idesc", help="instruction descriptor (§9.7.16.4.2)")
    p.add_argument("--kind", required=True, choices=T.KINDS)
    p.add_argument("--m", type=parse_int, required=True)
    p.add_argument("--n", type=parse_int, required=True)
    p.add_argument("--d-type", choices=TYPE_CHOICES)
    p.add_argument("--a-type", choices=TYPE_CHOICES)
    p.add_argument("--b-type", choices=TYPE_CHOICES)
    for flag in ("sparse", "saturate", "negate-a", "negate-b", "transpose-a", "transpose-b", "k96"):
        p.add_argument(f"--{flag}", type=parse_bool, nargs="?", const=True, default=False, metavar="true|false")
    for side in ("a", "b"):
        p.add_argument(f"--{side}-major", choices=T.MAJORS, default=None,
                       help=f"major-ness of {side.upper()} (CuTe UMMA::Major): MN means --transpose-{side}")
    p.add_argument("--sparsity-selector", type=parse_int, default=0)
    p.add_argument("--max-shift", type=parse_int, default=0)
    p.add_argument("--scale-type", choices=T.SCALE_TYPES)
    p.add_argument("--a-scale-id", type=parse_int, default=0)
    p.add_argument("--b-scale-id", type=parse_int, default=0)
    _legality_args(p)
    p.set_defaults(func=_encode_idesc)
    p = esub.add_parser("zcm", help="zero-column mask descriptor (§9.7.16.4.3)")
    p.add_argument("--start-count", type=parse_int_list, default=[0, 0, 0, 0], metavar="SC0,SC1,SC2,SC3")
    p.add_argument("--first-span", type=parse_int_list, default=[0, 0, 0, 0], metavar="FS0,FS1,FS2,FS3")
    p.add_argument("--non-zero-mask", type=parse_bool, nargs="?", const=True, default=False, metavar="true|false")
    p.add_argument("--skip-span", type=parse_int, default=0)
    p.add_argument("--use-span", type=parse_int, default=0)
    p.add_argument("--column-shift", type=parse_int, default=0)
    p.set_defaults(func=_encode_zcm)


def _legality_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cta-group", type=int, choices=(1, 2),
                   help="check Table 39 for this cta_group (default: legal for some cta_group)")
    p.add_argument("--ws", type=parse_bool, nargs="?", const=True, default=None, metavar="true|false",
                   help="check Table 39 for .ws or not (default: legal with or without)")
    p.add_argument("--fields-only", action="store_true",
                   help="check the field rules of Tables 42-44 only, not the Table 39 shape legality")


def _print_json(obj: dict) -> int:
    print(json.dumps(obj))
    return 0


def _decode_smem(args) -> int:
    return _print_json(SmemDescriptor.decode(args.value).to_json())


def _decode_idesc(args) -> int:
    desc = InstrDescriptor.decode(args.value, args.kind)
    if not args.fields_only:
        desc.check_legal(args.cta_group, args.ws)
    return _print_json(desc.to_json())


def _decode_zcm(args) -> int:
    desc = ZeroColumnMaskDescriptor.decode(args.value)
    out = desc.to_json()
    if (args.m is None) != (args.n is None):
        raise CliError("--m and --n go together: give both to print the generated masks")
    if args.m is not None:
        out["masks"] = [hex(sub) for sub in desc.submasks(args.m, args.n)]
        out["mask"] = hex(desc.mask(args.m, args.n))
    return _print_json(out)


def _encode_smem(args) -> int:
    desc = SmemDescriptor(start_address=args.start_address, leading_byte_offset=args.leading_byte_offset,
                          stride_byte_offset=args.stride_byte_offset, base_offset=args.base_offset,
                          lbo_mode=args.lbo_mode, swizzle=args.swizzle)
    print(f"0x{desc.encode():016x}")
    return 0


def _default_types(kind: str) -> tuple[str | None, str | None, str]:
    """Defaults where a kind leaves no choice (tf32, mxf4, mxf4nvf4; D type per kind)."""
    combos = T.TYPE_COMBOS[kind]
    a = combos[0].a_type if len({c.a_type for c in combos}) == 1 else None
    b = combos[0].b_type if len({c.b_type for c in combos}) == 1 else None
    d = "s32" if kind == "i8" else "f32"
    return a, b, d


def _encode_idesc(args) -> int:
    a_def, b_def, d_def = _default_types(args.kind)
    a_type, b_type = args.a_type or a_def, args.b_type or b_def
    if a_type is None or b_type is None:
        raise CliError(f"--a-type and --b-type are required for kind {args.kind}")
    scaled = args.kind in T.BLOCK_SCALED_KINDS
    if args.scale_type is not None and not scaled:
        raise CliError(f"--scale-type is not a field of the kind::{args.kind} format ({format_table(args.kind)})")
    transpose = {}
    for side in ("a", "b"):
        major, flag = getattr(args, f"{side}_major"), getattr(args, f"transpose_{side}")
        if major == "K" and flag:
            raise CliError(f"--{side}-major expects MN together with --transpose-{side} true, but got K")
        transpose[side] = flag or major == "MN"
    desc = InstrDescriptor(
        kind=args.kind, m=args.m, n=args.n, a_type=a_type, b_type=b_type, d_type=args.d_type or d_def,
        sparse=args.sparse, sparsity_selector=args.sparsity_selector, saturate=args.saturate,
        negate_a=args.negate_a, negate_b=args.negate_b, transpose_a=transpose["a"],
        transpose_b=transpose["b"], max_shift=args.max_shift,
        scale_type=args.scale_type if scaled else None,
        a_scale_id=args.a_scale_id, b_scale_id=args.b_scale_id, k96=args.k96,
    )
    if not args.fields_only:
        desc.check_legal(args.cta_group, args.ws)
    print(f"0x{desc.encode():08x}")
    return 0


def _encode_zcm(args) -> int:
    for name in ("start_count", "first_span"):
        if len(getattr(args, name)) > 4:
            raise CliError(f"--{name.replace('_', '-')} expects at most 4 comma-separated values, but got {len(getattr(args, name))}")
    pad = lambda xs: tuple(xs) + (0,) * (4 - len(xs))  # noqa: E731
    desc = ZeroColumnMaskDescriptor(start_count=pad(args.start_count), first_span=pad(args.first_span),
                                    non_zero_mask=args.non_zero_mask, skip_span=args.skip_span,
                                    use_span=args.use_span, column_shift=args.column_shift)
    print(f"0x{desc.encode():016x}")
    return 0
