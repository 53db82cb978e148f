"""``tcgen05-cts layout``: where each element of an operand tile lives in shared memory (§9.7.16.3).

    tcgen05-cts layout --major {K,MN} --swizzle {none,128B_base32B,128B,64B,32B} --dtype TYPE
                       --mn R --k C [--start-address A] [--kind KIND]
    tcgen05-cts layout --atom Layout_K_SW128_Atom --dtype TYPE --mn R --k C ...   (CuTe's atom names)
                       [--continuation-address ADDR] [--format {json,table}]

JSON (default): ``{"descriptor": {...}, "bit_offsets": [[...], ...], "image_bytes": N}`` —
the descriptor fields exactly as ``tcgen05-cts decode smem`` prints them, R lists of C bit
offsets of element (mn, k) from the start address, and the size of the tile's image.
``--format table`` prints a grid of byte offsets instead (``byte:bit`` for elements that do not
start on a byte).
"""

from __future__ import annotations

import json

from conformance.commands.cli import CliError, parse_int
from reference.smem_choice import choose_layout, image_bytes
from reference.smem_layout import STORAGE_BITS
from reference.tables import KINDS, MAJORS, SWIZZLES

# CuTe's UMMA layout atoms (cute/atom/mma_traits_sm100.hpp) -> (major-ness, swizzle); tiled to a shape
# with tile_to_shape (MN fastest) they are the compact canonical layouts of reference.smem_choice.
CUTE_ATOMS: dict[str, tuple[str, str]] = {
    f"Layout_{major}_{name}_Atom": (major, swizzle)
    for major in MAJORS for name, swizzle in (("INTER", "none"), ("SW32", "32B"), ("SW64", "64B"), ("SW128", "128B"))
}
CUTE_ATOMS["Layout_MN_SW128_32B_Atom"] = ("MN", "128B_base32B")


def register(subparsers) -> None:
    p = subparsers.add_parser("layout", help="shared-memory layout of an MMA operand tile (§9.7.16.3)",
                              description="Descriptor and per-element bit offsets of an operand tile in shared memory.")
    p.add_argument("--major", choices=MAJORS, help="K-major or MN-major (transposed)")
    p.add_argument("--swizzle", choices=SWIZZLES)
    p.add_argument("--atom", choices=tuple(CUTE_ATOMS), default=None,
                   help="CuTe UMMA layout atom name (instead of --major and --swizzle), tiled MN-fastest")
    p.add_argument("--dtype", required=True, choices=tuple(STORAGE_BITS), metavar="TYPE",
                   help="element type word: " + " ".join(STORAGE_BITS))
    p.add_argument("--mn", required=True, type=parse_int, metavar="R", help="rows: extent along M (A) or N (B)")
    p.add_argument("--k", required=True, type=parse_int, metavar="C", help="columns: extent along K")
    p.add_argument("--start-address", type=parse_int, default=0, metavar="A", help="shared memory start address (bytes)")
    p.add_argument("--kind", choices=KINDS, default=None,
                   help="MMA kind; selects the e2m1 storage (f8f6f4/mxf8f6f4: 16 per 16 B + padding; default packed)")
    p.add_argument("--continuation-address", type=parse_int, default=None, metavar="ADDR",
                   help="absolute leading-dimension mode: address of the part of a 48-byte K row past its 128-byte row")
    p.add_argument("--format", choices=("json", "table"), default="json")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.atom is not None:
        if args.major is not None or args.swizzle is not None:
            raise CliError(f"--atom expects no --major/--swizzle (it names both), but got --atom {args.atom} with them")
        args.major, args.swizzle = CUTE_ATOMS[args.atom]
    elif args.major is None or args.swizzle is None:
        raise CliError("layout expects --major and --swizzle (or --atom), but got only one or neither")
    layout = choose_layout(args.major, args.swizzle, args.dtype, args.mn, args.k, args.start_address,
                           kind=args.kind, continuation_address=args.continuation_address)
    offsets = layout.bit_offsets(args.mn, args.k)
    if args.format == "table":
        print(format_table(layout, offsets))
        return 0
    print(json.dumps({"descriptor": layout.descriptor().to_json(),
                      "bit_offsets": offsets.tolist(),
                      "image_bytes": image_bytes(layout, args.mn, args.k)}))
    return 0


def format_table(layout, offsets) -> str:
    """Grid of byte offsets from the start address: one line per mn, one column per k."""
    cells = [[f"{b // 8}" if b % 8 == 0 else f"{b // 8}:{b % 8}" for b in row] for row in offsets.tolist()]
    width = max(len(c) for row in cells for c in row)
    desc = layout.descriptor()
    head = (f"# {layout.major}-major {layout.swizzle} {layout.storage.dtype} ({layout.storage.bits}-bit,"
            f" {layout.storage.per_unit} per 16 B{', padded' if layout.storage.padded else ''}):"
            f" start {desc.start_address:#x} LBO {desc.leading_byte_offset:#x} ({desc.lbo_mode})"
            f" SBO {desc.stride_byte_offset:#x} base offset {desc.base_offset};"
            f" byte offsets from the start address, rows = mn, columns = k")
    k_head = " " * 6 + " ".join(f"{j:>{width}}" for j in range(len(cells[0])))
    lines = [head, k_head] + [f"{i:>5} " + " ".join(f"{c:>{width}}" for c in row) for i, row in enumerate(cells)]
    return "\n".join(lines)
