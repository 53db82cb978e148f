"""``tcgen05-cts tmem-fragment`` and ``tcgen05-cts tmem-layout``: Tensor Memory maps as JSON.

tmem-fragment --shape SHAPE --num xN [--pack16] [--half-split OFFSET] [--op ld|st]
    {"registers": R, "map": [[thread, reg, lane, column, half], ...]}     (§9.7.16.2.3.1, §9.7.16.8)
    lane/column are offsets from taddr; half is the 16-bit register half with --pack16, else 0.
tmem-layout --m M --cta-group G [--sparse] [--ws] --n N [--lane-offset A]
    {"cells": [[row, col, cta, lane, column], ...]}                        (§9.7.16.10.5)
    where D[row][col] lives, lane/column relative to the D address.
Invalid shape/num combinations exit 2 with one line naming Table 47 (ld) or Table 48 (st).
"""

from __future__ import annotations

import argparse
import json

from conformance.commands.cli import CliError, parse_int
from reference.datapath_layouts import d_cells
from reference.tmem_fragments import fragment_map


def _shape(text: str) -> str:
    return text[1:] if text.startswith(".") else text


def _num(text: str) -> int:
    body = text[1:] if text.startswith(".") else text
    body = body[1:] if body[:1] in ("x", "X") else body
    try:
        return int(body, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects .num as xN (x1, x2, ..., x128), but got {text!r}") from None


def fragment_handler(args: argparse.Namespace) -> int:
    half_split = args.half_split
    if args.shape == "16x32bx2" and half_split is None:
        half_split = args.num * (2 if args.pack16 else 1)          # halves abut (as CUTLASS passes it)
    fmap = fragment_map(args.shape, args.num, pack=args.pack16, half_split=half_split, op=args.op)
    print(json.dumps({"registers": fmap.registers, "map": fmap.entries.tolist()}, separators=(",", ":")))
    return 0


def layout_handler(args: argparse.Namespace) -> int:
    if args.cta_group not in (1, 2):
        raise CliError(f"--cta-group expects 1 or 2, but got {args.cta_group}")
    cells = d_cells(args.m, args.n, args.cta_group, sparse=args.sparse, ws=args.ws, lane_offset=args.lane_offset)
    print(json.dumps({"cells": [list(c) for c in cells]}, separators=(",", ":")))
    return 0


def register(subparsers) -> None:
    frag = subparsers.add_parser("tmem-fragment", help="tcgen05.ld/st fragment map (thread, reg) <-> (lane, column)",
                                 description=fragment_handler.__doc__ or __doc__)
    frag.add_argument("--shape", required=True, type=_shape, help=".32x32b .16x64b .16x128b .16x256b .16x32bx2")
    frag.add_argument("--num", required=True, type=_num, help="xN: x1, x2, ..., x128")
    frag.add_argument("--pack16", action="store_true", help=".pack::16b (ld) / .unpack::16b (st)")
    frag.add_argument("--half-split", type=parse_int, default=None,
                      help="immHalfSplitoff of .16x32bx2 in columns (default: the halves abut)")
    frag.add_argument("--op", choices=("ld", "st"), default="ld", help="tcgen05.ld (Table 47) or tcgen05.st (Table 48)")
    frag.set_defaults(func=fragment_handler)

    lay = subparsers.add_parser("tmem-layout", help="data-path layout A-G: where each D element lives")
    lay.add_argument("--m", required=True, type=parse_int)
    lay.add_argument("--cta-group", required=True, type=parse_int)
    lay.add_argument("--sparse", action="store_true")
    lay.add_argument("--ws", action="store_true")
    lay.add_argument("--n", required=True, type=parse_int)
    lay.add_argument("--lane-offset", type=parse_int, default=0, help="lane alignment of layouts C/F: 0 or 16")
    lay.set_defaults(func=layout_handler)
