"""``tcgen05-cts tmem-fragment`` and ``tcgen05-cts tmem-layout``: Tensor Memory maps as JSON.

tmem-fragment --shape SHAPE --num xN [--pack16] [--half-split OFFSET] [--op ld|st]
    {"registers": R, "map": [[thread, reg, lane, column, half], ...]}     (§9.7.16.2.3.1, §9.7.16.8)
    lane/column are offsets from taddr; half is the 16-bit register half with --pack16, else 0.
tmem-layout --m M --cta-group G [--sparse] [--ws] --n N [--lane-offset A]
    {"cells": [[row, col, cta, lane, column], ...]}                        (§9.7.16.10.5)
    where D[row][col] lives, lane/column relative to the D address.
tmem-scale-factors --mn MN --sf SF --scale-id ID [--reading Q-K96-SFW=R]
    {"span": columns, "cells": [[x, s, quarter, lane, column, byte], ...]}   (§9.7.16.10.7)
    where an MMA reads scale factor s of row/column x in each lane quarter, column and byte relative
    to the scale-factor address (CUTLASS's tmem_sf_frg layouts compare with this: docs/clients-cute.md).
Invalid shape/num combinations exit 2 with one line naming Table 47 (ld) or Table 48 (st).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from conformance.commands.cli import CliError, parse_int
from reference import tmem_mma_operands as TO
from reference.datapath_layouts import d_cells
from reference.spec_questions import following, parse_assignments
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


def scale_factor_cells(mn: int, sf: int, scale_id: int) -> tuple[int, np.ndarray]:
    """(span, ``int[4, mn, sf, 3]``): the (lane, column, byte) at which
    ``reference.tmem_mma_operands.read_scale_factors`` reads scale factor s of row/column x in lane
    quarter q, found by reading cells whose bytes name their own position (column*4 + byte; then lane)."""
    span = TO.scale_factor_span(mn, sf, scale_id)
    if span > 64:
        raise CliError(f"--mn/--sf expects at most 64 columns of scale factors, but got {span}")
    pos = (4 * np.arange(span)[:, None] + np.arange(4)[None, :]).astype(np.uint32)
    named = np.broadcast_to((pos << (8 * np.arange(4, dtype=np.uint32))).sum(axis=1, dtype=np.uint32), (128, span))
    lanes = np.broadcast_to(np.arange(128, dtype=np.uint32)[:, None] * np.uint32(0x01010101), (128, span))
    where = TO.read_scale_factors(named, mn, sf, scale_id).astype(int)
    lane = TO.read_scale_factors(lanes, mn, sf, scale_id).astype(int)
    return span, np.stack([lane, where // 4, where % 4], axis=-1)


def scale_factors_handler(args: argparse.Namespace) -> int:
    with following(parse_assignments(args.reading)):
        span, cells = scale_factor_cells(args.mn, args.sf, args.scale_id)
    q, x, s = np.meshgrid(np.arange(4), np.arange(args.mn), np.arange(args.sf), indexing="ij")
    rows = np.stack([x, s, q, cells[..., 0], cells[..., 1], cells[..., 2]], axis=-1).reshape(-1, 6)
    print(json.dumps({"span": span, "cells": rows.tolist()}, separators=(",", ":")))
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

    sfp = subparsers.add_parser("tmem-scale-factors", help="block scaling: where each scale factor is read (§9.7.16.10.7)")
    sfp.add_argument("--mn", required=True, type=parse_int, help="rows of A per CTA (SFA) or N (SFB)")
    sfp.add_argument("--sf", required=True, type=parse_int, help="scale factors per row: 1, 2, 3, 4 or 6 (Table 54)")
    sfp.add_argument("--scale-id", type=parse_int, default=0, help="SFA_ID / SFB_ID (byte offset)")
    sfp.add_argument("--reading", action="append", default=[], metavar="QID=R",
                     help="spec question reading, e.g. Q-K96-SFW=compact (docs/spec-questions.md)")
    sfp.set_defaults(func=scale_factors_handler)
